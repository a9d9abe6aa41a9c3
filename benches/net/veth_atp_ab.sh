#!/usr/bin/env bash
# ATP-only A/B/... comparison on the uncapped veth (same namespaces and
# flags as veth_goodput.sh, no TCP runs): each round runs every config once,
# in the given order in odd rounds and reversed in even ones (so a drifting
# host load spreads evenly), and prints per run the goodput, CPU seconds per
# GB of client and server, their context switches per GB (voluntary v /
# involuntary i, from /usr/bin/time) and the runtime's counters per GB.
# For lever-by-lever checks where CPU per GB is the figure; goodput against
# kernel TCP is veth_abba.sh's.
#
#   CONFIGS="base|/work/runs/x/approxnet-perf||;nocoal|target-net/release/approxnet-perf|--rx-coalesce-us 0|--rx-coalesce-us 0" \
#       ROUNDS=4 benches/net/veth_atp_ab.sh
#   config = name|binary|client options|server options; configs separated by ';'.
#   DUR (4), LINE_RATE (40), SIZES (fixed:65536); raw JSON under $OUT.
set -euo pipefail
CONFIGS=${CONFIGS:?set CONFIGS, see the header}
ROUNDS=${ROUNDS:-2}
DUR=${DUR:-4}
LINE_RATE=${LINE_RATE:-40}
SIZES=${SIZES:-fixed:65536}
OUT=${OUT:-$(cd "$(dirname "$0")/../.." && pwd)/results/tmp/veth_atp_ab}
IFS=';' read -ra CFGS <<< "$CONFIGS"
IFS='|' read -r _ BIN _ _ <<< "${CFGS[0]}"   # veth_pair.sh checks it
# shellcheck source=benches/net/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
TIME_FMT="%e %U %S %c %w"

for r in $(seq 1 "$ROUNDS"); do
    order=("${CFGS[@]}")
    if [ $((r % 2)) = 0 ]; then
        order=()
        for ((i = ${#CFGS[@]} - 1; i >= 0; i--)); do order+=("${CFGS[$i]}"); done
    fi
    for c in "${order[@]}"; do
        IFS='|' read -r name bin cargs sargs <<< "$c"
        [ -x "$bin" ] || { echo "config $name: $bin is not an executable" >&2; exit 2; }
        f="$OUT/${name}_$r"
        # shellcheck disable=SC2086
        ip netns exec "$B" /usr/bin/time -f "$TIME_FMT" -o "${f}_s.time" "$bin" server --bind "$IPB:7700" \
            --idle 2 --line-rate-gbps "$LINE_RATE" $sargs --json > "${f}_s.json" &
        SERVER_PID=$!
        wait_listen u 7700
        # shellcheck disable=SC2086
        ip netns exec "$A" /usr/bin/time -f "$TIME_FMT" -o "${f}_c.time" "$bin" client --server "$IPB:7700" \
            --duration "$DUR" --msr 1.0 --sizes "$SIZES" --messages 64 --window 2 \
            --line-rate-gbps "$LINE_RATE" $cargs --json > "${f}_c.json" || true
        wait || true
        SERVER_PID=
        python3 - "$f" "$name" "$r" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY' || true
import json, sys
f, name, r, load = sys.argv[1:]
c, s = json.load(open(f + "_c.json")), json.load(open(f + "_s.json"))
tc, ts = open(f + "_c.time").read().split(), open(f + "_s.time").read().split()
gb = max(c["bytes_delivered"] / 1e9, 1e-9)
ctx = lambda t: f"{int(t[4]) / gb:.0f}v+{int(t[3]) / gb:.0f}i"
rc, rs = c["runtime"], s["runtime"]
print(f"{name:10} r{r} load {load:5} {c['goodput_gbps']:6.2f} Gbps  CPU-s/GB client {c['cpu_s'] / gb:.3f} "
      f"server {s['cpu_s'] / gb:.3f} total {(c['cpu_s'] + s['cpu_s']) / gb:.3f}  ctx switches/GB client {ctx(tc)} "
      f"server {ctx(ts)}  per GB: server wake-ups {rs['wakeups'] / gb:.0f} naps {rs.get('naps', 0) / gb:.0f} "
      f"ACK sends {rs['send_syscalls'] / gb:.0f}, client GSO sends {rc['gso_messages'] / gb:.0f}  "
      f"loss {c['measured_loss']:.4f} failed {c['jobs_failed']}", flush=True)
PY
    done
done
