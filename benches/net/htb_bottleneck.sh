#!/usr/bin/env bash
# Utilisation of a 1 Gbit/s HTB bottleneck: kernel TCP (cubic), ATP with
# MSR = 1 and ATP with MSR = 0.5, one flow at a time, over a veth pair
# between two namespaces this script creates and removes. The bottleneck
# is an HTB class (rate = ceil = $RATE) with a bfifo leaf of $QUEUE_BYTES
# on the sender side's veth. Utilisation = bytes the HTB class sent
# (`tc -s class`) / (capacity x run time); goodput = bytes delivered to
# the application / run time.
#
#   benches/net/htb_bottleneck.sh                    # RATE=1gbit DUR=5
#   RATE=1gbit DUR=5 ATP_LINE_RATE=1 benches/net/htb_bottleneck.sh
set -euo pipefail

RATE=${RATE:-1gbit}
RATE_BPS=${RATE_BPS:-1000000000}
DUR=${DUR:-5}
NICE=${NICE:-0}                    # e.g. -10: both transports get more CPU on a busy host
QUEUE_BYTES=${QUEUE_BYTES:-262144}   # bfifo leaf: 256 KB (~2 ms at 1 Gbit/s)
# HTB burst / cburst in bytes: 1 ms of the rate, as the testbed's classes
# (testbed.burst_ms). tc's default (~1.4 KB at 1 Gbit/s) is smaller than one
# 64 KB GSO packet, and the class then runs ~4 % under its rate however full
# its queue (kernel TCP measured 0.960 vs 0.999 Gbit/s steady with 16 KB+).
BURST=${BURST:-$((RATE_BPS / 8 / 1000))}
ATP_LINE_RATE=${ATP_LINE_RATE:-1}   # ATP's Rmax in Gbps (the sender's NIC rate)
MSRS=${MSRS:-"1.0 0.5"}
ATP_ARGS=${ATP_ARGS:-}               # extra approxnet-perf client options
ATP_SERVER_ARGS=${ATP_SERVER_ARGS:-} # extra approxnet-perf server options
OUT=${OUT:-$(cd "$(dirname "$0")/../.." && pwd)/results/tmp/htb_bottleneck}
# shellcheck source=benches/net/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
# Veth offloads would let 64 KB GSO super-packets through HTB as one; keep
# them (HTB accounts bytes, not packets) but make the bottleneck explicit.
ip netns exec "$A" tc qdisc add dev "$IFA" root handle 1: htb default 10
ip netns exec "$A" tc class add dev "$IFA" parent 1: classid 1:1 htb rate "$RATE" ceil "$RATE" \
    burst "$BURST" cburst "$BURST"
ip netns exec "$A" tc class add dev "$IFA" parent 1:1 classid 1:10 htb rate "$RATE" ceil "$RATE" \
    burst "$BURST" cburst "$BURST"
ip netns exec "$A" tc qdisc add dev "$IFA" parent 1:10 handle 10: bfifo limit "$QUEUE_BYTES"

class_bytes() { # bytes sent by class 1:10 so far
    ip netns exec "$A" tc -s class show dev "$IFA" classid 1:10 | awk '/Sent/ {print $2; exit}'
}
class_drops() {
    ip netns exec "$A" tc -s qdisc show dev "$IFA" | awk '/bfifo/ {f=1} f && /dropped/ {gsub(",","",$7); print $7; exit}'
}
record() { # name bytes_before drops_before client_json
    local after drops now
    after=$(class_bytes); drops=$(class_drops)
    echo "{\"run\":\"$1\",\"class_bytes\":$((after - $2)),\"bfifo_drops\":$((drops - $3)),\"client\":$(cat "$4")}" >> "$OUT/runs.jsonl"
}

: > "$OUT/runs.jsonl"
b0=$(class_bytes); d0=$(class_drops)
ip netns exec "$B" nice -n "$NICE" "$BIN" tcp-server --bind "$IPB:7701" --json > "$OUT/tcp_server.json" &
SERVER_PID=$!
wait_listen t 7701
ip netns exec "$A" nice -n "$NICE" "$BIN" tcp-client --server "$IPB:7701" --duration "$DUR" --cc cubic --json > "$OUT/tcp_client.json"
wait
record tcp-cubic "$b0" "$d0" "$OUT/tcp_client.json"

for msr in $MSRS; do
    b0=$(class_bytes); d0=$(class_drops)
    ip netns exec "$B" nice -n "$NICE" "$BIN" server --bind "$IPB:7700" --idle 2 ${ATP_SERVER_ARGS:-} --json > "$OUT/atp_server_$msr.json" &
    SERVER_PID=$!
    wait_listen u 7700
    ip netns exec "$A" nice -n "$NICE" "$BIN" client --server "$IPB:7700" --duration "$DUR" --msr "$msr" \
        --line-rate-gbps "$ATP_LINE_RATE" ${ATP_ARGS:-} --json > "$OUT/atp_client_$msr.json" || true
    wait
    record "atp-msr-$msr" "$b0" "$d0" "$OUT/atp_client_$msr.json"
done

python3 - "$OUT/runs.jsonl" "$RATE_BPS" <<'PY'
import json, sys
cap = float(sys.argv[2])
for line in open(sys.argv[1]):
    r = json.loads(line); c = r["client"]
    secs = c["elapsed_s"]
    util = r["class_bytes"] * 8 / secs / cap
    good = c["goodput_gbps"] * 1e9 / cap
    extra = ""
    if "measured_loss" in c:
        g = ", ".join(f"g{x['id']} {x['delivered_fraction']:.3f}" for x in c["groups"])
        extra = f" loss {c['measured_loss']:.4f} retx {c['retransmissions']} delivered [{g}] failed {c['jobs_failed']}"
    print(f"{r['run']:>14}: utilisation {util:6.1%}  goodput {good:6.1%} of capacity  bfifo drops {r['bfifo_drops']}{extra}")
PY
