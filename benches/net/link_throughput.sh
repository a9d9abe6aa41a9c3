#!/usr/bin/env bash
# Throughput of the error-prone link relay (approxnet-link) itself: one
# kernel-TCP flow (1,500-byte frames: TUN devices have no offloads) from
# namespace A to B through the relay at BER 0 with no link rate, against
# the same flow over a veth pair with offloads off (also 1,500-byte frames)
# in the same run. The relay must not be the bottleneck of the SAP studies.
#
#   sudo benches/net/link_throughput.sh              # DUR=5 REPS=3
#   CHANNEL=ber:1e-6 MODE=integrity benches/net/link_throughput.sh
#
# Traffic stays in two namespaces this script creates and removes, bounded
# by DUR seconds per run. Results: JSON per run under $OUT and a table.
set -euo pipefail

DUR=${DUR:-5}
REPS=${REPS:-3}
CHANNEL=${CHANNEL:-ber:0}
MODE=${MODE:-integrity}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/results/tmp/link_throughput}
TARGET=$ROOT/target-net/release
(cd "$ROOT" && CARGO_TARGET_DIR="$ROOT/target-net" cargo build -q --release -p approxnet-net \
    --bin approxnet-perf --bin approxnet-link)
PERF=$TARGET/approxnet-perf
LINK=$TARGET/approxnet-link
A=anxlt-a
B=anxlt-b
RELAY_PID=
SERVER_PID=
cleanup() {
    for p in $RELAY_PID $SERVER_PID; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$A" 2>/dev/null || true
    ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
mkdir -p "$OUT"

fresh() {
    cleanup
    RELAY_PID=
    SERVER_PID=
    for ns in "$A" "$B"; do
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    done
}

# One TCP flow A -> B (10.78.0.1 -> 10.78.0.2) for DUR s; prints Gbit/s.
flow() { # tag
    ip netns exec "$B" "$PERF" tcp-server --bind 10.78.0.2:7701 --json > "$OUT/$1_server.json" &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
        ip netns exec "$B" cat /proc/net/tcp | awk '{print $2}' | grep -qi ':1E15$' && break
        sleep 0.05
    done
    ip netns exec "$A" "$PERF" tcp-client --server 10.78.0.2:7701 --duration "$DUR" --json > "$OUT/$1_client.json"
    wait "$SERVER_PID"
    SERVER_PID=
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['goodput_gbps'])" "$OUT/$1_server.json"
}

for rep in $(seq 1 "$REPS"); do
    fresh
    ip link add anxlt0 netns "$A" type veth peer name anxlt1 netns "$B"
    ip -n "$A" addr add 10.78.0.1/30 dev anxlt0
    ip -n "$B" addr add 10.78.0.2/30 dev anxlt1
    for x in "$A anxlt0" "$B anxlt1"; do
        set -- $x
        ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null
        ip -n "$1" link set "$2" up
    done
    veth=$(flow "veth_$rep")

    fresh
    "$LINK" --a-netns "$A" --a-dev anxlt0 --b-netns "$B" --b-dev anxlt1 --mode "$MODE" \
        --channel "$CHANNEL" --stats "$OUT/relay_$rep.json" > "$OUT/relay_$rep.out" &
    RELAY_PID=$!
    for _ in $(seq 1 100); do grep -q ready "$OUT/relay_$rep.out" 2>/dev/null && break; sleep 0.05; done
    ip -n "$A" addr add 10.78.0.1 peer 10.78.0.2 dev anxlt0
    ip -n "$B" addr add 10.78.0.2 peer 10.78.0.1 dev anxlt1
    ip -n "$A" link set anxlt0 txqueuelen 1000 up
    ip -n "$B" link set anxlt1 txqueuelen 1000 up
    relay=$(flow "relay_$rep")
    kill "$RELAY_PID"; wait "$RELAY_PID" || true; RELAY_PID=
    python3 - "$OUT/relay_$rep.json" "$DUR" "$veth" "$relay" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["a_to_b"]
dur, veth, relay = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
mean = s["bytes"] / max(s["frames"], 1)
print(f"veth {veth:6.2f} Gbit/s | relay {relay:6.2f} Gbit/s TCP goodput, "
      f"{s['frames'] / dur / 1e3:6.1f} kframes/s of {mean:.0f} B mean "
      f"({s['bytes'] * 8 / dur / 1e9:.2f} Gbit/s of frames) | relay/veth {relay / veth:.2f}")
PY
done
