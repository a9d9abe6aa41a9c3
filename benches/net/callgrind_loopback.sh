#!/usr/bin/env bash
# Instructions per datagram of the runtime, load-independent: one side of
# a fixed ATP transfer over 127.0.0.1 runs under callgrind (the other
# natively), so the figure does not move with the host's load as CPU
# seconds do. The transfer: JOBS jobs of 64 x 64 KiB, MSR 1.
#
#   benches/net/callgrind_loopback.sh BIN [server|client] [RATE_GBPS]
#   e.g. benches/net/callgrind_loopback.sh target/release/approxnet-perf server 0.2
#
# At 0.2 Gbit/s the side under callgrind keeps up (small batches: ~10
# datagrams per recvmmsg on the server); at 2 it falls behind and reads
# ~300-500 per call (batches like the veth bench's). Prints the program's
# instructions, the datagrams its runtime counted and the ratio; the
# callgrind file and both JSON reports stay under $OUT.
set -euo pipefail
BIN=${1:?approxnet-perf binary}
SIDE=${2:-server}
RATE=${3:-0.2}
JOBS=${JOBS:-8}
PORT=${PORT:-47731}
OUT=${OUT:-$(cd "$(dirname "$0")/../.." && pwd)/results/tmp/callgrind_loopback}
mkdir -p "$OUT"
VG=(valgrind --tool=callgrind --callgrind-out-file="$OUT/$SIDE.callgrind")
SV=(); CV=()
case $SIDE in
    server) SV=("${VG[@]}") ;;
    client) CV=("${VG[@]}") ;;
    *) echo "side: server or client" >&2; exit 2 ;;
esac
"${SV[@]}" "$BIN" server --bind "127.0.0.1:$PORT" --jobs "$JOBS" --line-rate-gbps "$RATE" --json \
    > "$OUT/server.json" 2> "$OUT/server.err" &
SP=$!
# the server (perhaps under callgrind) needs a moment to bind
for _ in $(seq 1 100); do
    ss -uln | grep -q "127.0.0.1:$PORT " && break
    sleep 0.1
done
"${CV[@]}" "$BIN" client --server "127.0.0.1:$PORT" --jobs "$JOBS" --duration 600 \
    --line-rate-gbps "$RATE" --json > "$OUT/client.json" 2> "$OUT/client.err"
wait "$SP"
ir=$(callgrind_annotate --auto=no "$OUT/$SIDE.callgrind" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
python3 - "$OUT/$SIDE.json" "$SIDE" "$ir" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runtime"]
side, ir = sys.argv[2], int(sys.argv[3])
n = r["datagrams_received"] if side == "server" else r["datagrams_sent"]
what = "datagrams received" if side == "server" else "datagrams sent"
print(f"{side}: {ir:,} instructions, {n:,} {what}: {ir / n:,.0f} per datagram; "
      f"recvmmsg {r['recv_syscalls']} + {r['recv_empty']} empty, sendmmsg {r['send_syscalls']}, "
      f"wake-ups {r['wakeups']}")
PY
