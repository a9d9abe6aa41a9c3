#!/usr/bin/env bash
# ATP goodput (MSR = 1) vs kernel TCP (cubic), one flow each, over an
# uncapped veth pair between two network namespaces this script creates and
# removes. Also reports CPU seconds per GB (client + server processes).
#
#   sudo benches/net/veth_goodput.sh            # defaults below
#   DUR=5 REPS=3 LINE_RATE=20 benches/net/veth_goodput.sh
#
# Traffic stays inside the two namespaces (10.231.0.1 <-> 10.231.0.2) and
# is bounded in time (DUR seconds per run). Results: one JSON line per run
# under $OUT (default results/tmp/veth_goodput) and a table on stdout.
set -euo pipefail

DUR=${DUR:-5}
NICE=${NICE:-0}                    # e.g. -10: both transports get more CPU on a busy host
REPS=${REPS:-3}
LINE_RATE=${LINE_RATE:-20}      # ATP's Rmax in Gbps (the veth path has no fixed rate)
SIZES=${SIZES:-fixed:65536}
MESSAGES=${MESSAGES:-64}
ATP_ARGS=${ATP_ARGS:-}            # extra approxnet-perf client options
ATP_SERVER_ARGS=${ATP_SERVER_ARGS:-}  # extra approxnet-perf server options (e.g. --udplite)
WINDOW=${WINDOW:-2}
OUT=${OUT:-$(cd "$(dirname "$0")/../.." && pwd)/results/tmp/veth_goodput}
# shellcheck source=benches/net/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
# MTU=9000: jumbo frames on the veth; ATP's datagrams follow (MTU - 28).
if [ -n "${MTU:-}" ]; then
    ip -n "$A" link set "$IFA" mtu "$MTU"
    ip -n "$B" link set "$IFB" mtu "$MTU"
    ATP_ARGS="${ATP_ARGS:-} --mtu $((MTU - 28))"
    ATP_SERVER_ARGS="${ATP_SERVER_ARGS:-} --mtu $((MTU - 28))"
fi

for rep in $(seq 1 "$REPS"); do
    ip netns exec "$B" nice -n "$NICE" "$BIN" tcp-server --bind "$IPB:7701" --json > "$OUT/tcp_server_$rep.json" &
    SERVER_PID=$!
    wait_listen t 7701
    ip netns exec "$A" nice -n "$NICE" "$BIN" tcp-client --server "$IPB:7701" --duration "$DUR" --cc cubic --json \
        > "$OUT/tcp_client_$rep.json"
    wait

    ip netns exec "$B" nice -n "$NICE" "$BIN" server --bind "$IPB:7700" --idle 2 --line-rate-gbps "$LINE_RATE" ${ATP_SERVER_ARGS:-} --json \
        > "$OUT/atp_server_$rep.json" &
    SERVER_PID=$!
    wait_listen u 7700
    ip netns exec "$A" nice -n "$NICE" "$BIN" client --server "$IPB:7700" --duration "$DUR" --msr 1.0 \
        --sizes "$SIZES" --messages "$MESSAGES" --window "$WINDOW" --line-rate-gbps "$LINE_RATE" ${ATP_ARGS:-} --json \
        > "$OUT/atp_client_$rep.json" || true
    wait
done

python3 - "$OUT" "$REPS" <<'PY'
import json, sys, statistics as st
out, reps = sys.argv[1], int(sys.argv[2])
rows = []
for r in range(1, reps + 1):
    tc = json.load(open(f"{out}/tcp_client_{r}.json")); ts = json.load(open(f"{out}/tcp_server_{r}.json"))
    ac = json.load(open(f"{out}/atp_client_{r}.json")); asv = json.load(open(f"{out}/atp_server_{r}.json"))
    tcp_gbps = ts["goodput_gbps"]
    tcp_cpu = (tc["cpu_s"] + ts["cpu_s"]) / (ts["bytes"] / 1e9)
    atp_gbps = ac["goodput_gbps"]
    atp_cpu = (ac["cpu_s"] + asv["cpu_s"]) / max(ac["bytes_delivered"] / 1e9, 1e-9)
    rows.append((tcp_gbps, tcp_cpu, atp_gbps, atp_cpu, ac["measured_loss"], ac["retransmissions"], ac["jobs_failed"]))
    print(f"run {r}: TCP cubic {tcp_gbps:6.2f} Gbps {tcp_cpu:5.2f} CPU-s/GB | "
          f"ATP MSR=1 {atp_gbps:6.2f} Gbps {atp_cpu:5.2f} CPU-s/GB loss {ac['measured_loss']:.4f} "
          f"retx {ac['retransmissions']} failed {ac['jobs_failed']} ratio {atp_gbps / tcp_gbps:.2f}")
med = lambda i: st.median(r[i] for r in rows)
print(f"median: TCP {med(0):.2f} Gbps ({med(1):.2f} CPU-s/GB), ATP {med(2):.2f} Gbps "
      f"({med(3):.2f} CPU-s/GB), ATP/TCP = {med(2) / med(0):.2f}")
PY
