#!/usr/bin/env bash
# Where one ATP MSR = 1 run over the uncapped veth spends its time: the
# client and server each under `perf record -e cpu-clock -g` (no hardware
# counters needed), plus the receiving namespace's UDP counters (socket
# buffer drops) and the runtime's wake-up / syscall counts per GB.
#
#   sudo BIN=target-net/release/approxnet-perf benches/net/veth_profile.sh
#   DUR=4 LINE_RATE=40 ATP_ARGS=... ATP_SERVER_ARGS=... TOP=25
#
# Same namespaces and flags as veth_goodput.sh (one run, no TCP). Results:
# perf.data, the two JSON reports and perf's top symbols under $OUT
# (default results/tmp/veth_profile).
set -euo pipefail

DUR=${DUR:-4}
LINE_RATE=${LINE_RATE:-40}
SIZES=${SIZES:-fixed:65536}
MESSAGES=${MESSAGES:-64}
WINDOW=${WINDOW:-2}
ATP_ARGS=${ATP_ARGS:-}
ATP_SERVER_ARGS=${ATP_SERVER_ARGS:-}
FREQ=${FREQ:-2000}
TOP=${TOP:-25}
OUT=${OUT:-$(cd "$(dirname "$0")/../.." && pwd)/results/tmp/veth_profile}
# shellcheck source=benches/net/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"

ip netns exec "$B" perf record -q -e cpu-clock -F "$FREQ" -g -o "$OUT/server.perf" -- \
    "$BIN" server --bind "$IPB:7700" --idle 2 --line-rate-gbps "$LINE_RATE" ${ATP_SERVER_ARGS:-} --json \
    > "$OUT/atp_server.json" 2> "$OUT/server.err" &
SERVER_PID=$!
wait_listen u 7700
ip netns exec "$A" perf record -q -e cpu-clock -F "$FREQ" -g -o "$OUT/client.perf" -- \
    "$BIN" client --server "$IPB:7700" --duration "$DUR" --msr 1.0 --sizes "$SIZES" \
    --messages "$MESSAGES" --window "$WINDOW" --line-rate-gbps "$LINE_RATE" ${ATP_ARGS:-} --json \
    > "$OUT/atp_client.json" 2> "$OUT/client.err" || true
wait
SERVER_PID=
ip netns exec "$B" cat /proc/net/snmp | awk '/^Udp:/' > "$OUT/udp_server.txt"

for side in client server; do
    perf report -i "$OUT/$side.perf" --no-children --sort symbol -g none --stdio 2>/dev/null |
        grep -E '^ +[0-9]' | cut -c1-110 | sed -n "1,${TOP}p" > "$OUT/${side}_top.txt" || true
done

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
c = json.load(open(f"{out}/atp_client.json")); s = json.load(open(f"{out}/atp_server.json"))
gb = c["bytes_delivered"] / 1e9
print(f"ATP {c['goodput_gbps']:.2f} Gbps, loss {c['measured_loss']:.4f}, {gb:.2f} GB")
for name, d in (("client", c), ("server", s)):
    r = d["runtime"]
    print(f"{name}: {d['cpu_s']:.2f} CPU-s ({d['cpu_s'] / gb:.3f} /GB), per GB: "
          f"wake-ups {r['wakeups'] / gb:.0f}, send syscalls {r['send_syscalls'] / gb:.0f}, "
          f"recv syscalls {r['recv_syscalls'] / gb:.0f}, datagrams in {r['datagrams_received'] / gb:.0f}")
h, v = open(f"{out}/udp_server.txt").read().splitlines()[:2]
print("server namespace UDP:", dict(zip(h.split()[1:], v.split()[1:])))
for side in ("client", "server"):
    print(f"--- {side} (perf, cpu-clock, self time)")
    print(open(f"{out}/{side}_top.txt").read(), end="")
PY
