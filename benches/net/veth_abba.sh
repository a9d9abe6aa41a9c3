#!/usr/bin/env bash
# ABBA comparison of two approxnet-perf builds (or two option sets) on the
# veth bench, for a shared host whose load drifts: veth_goodput.sh runs
# in the order A B B A (ROUNDS times), and the summary gives, per side, the
# median CPU seconds per GB (ATP and kernel TCP, the primary figure: less
# sensitive to the load than rates), the median ATP/TCP goodput ratio and
# the runtime's wake-ups / sleeps / syscalls per GB, with the load average
# at each block.
#
#   sudo A=/work/runs/before/approxnet-perf B=target-net/release/approxnet-perf \
#        benches/net/veth_abba.sh
#   A_ARGS / B_ARGS: extra ATP options for both client and server of that side
#   (e.g. A_ARGS="--busy-poll-us 0"); DUR, REPS, LINE_RATE, ... as veth_goodput.sh.
#
# A_LINE_RATE / B_LINE_RATE: ATP's Rmax (Gbit/s) for that side, default
# LINE_RATE (e.g. to check whether the pacer or the CPU limits ATP).
# HOG=N (HOG_CPU=list): CPU spinners beside every run of both sides, as in
# veth_goodput.sh: a contended host on purpose; run the ABBA with and
# without it to see a change's effect on both.
#
# Raw JSON per block under $OUT/<n>_<side>/, the summary on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
A=${A:?set A to the baseline approxnet-perf}
B=${B:?set B to the new approxnet-perf}
A_ARGS=${A_ARGS:-}
B_ARGS=${B_ARGS:-}
ROUNDS=${ROUNDS:-1}
export DUR=${DUR:-4} REPS=${REPS:-3} LINE_RATE=${LINE_RATE:-40}
export HOG=${HOG:-0} HOG_CPU=${HOG_CPU:-}
A_LINE_RATE=${A_LINE_RATE:-$LINE_RATE}
B_LINE_RATE=${B_LINE_RATE:-$LINE_RATE}
OUT=${OUT:-$(cd "$HERE/../.." && pwd)/results/tmp/veth_abba}
SUMMARY_ONLY=${SUMMARY_ONLY:-0}   # 1: summarise an earlier $OUT again
if [ "$SUMMARY_ONLY" != 1 ]; then rm -rf "$OUT"; fi
mkdir -p "$OUT"

n=0
[ "$SUMMARY_ONLY" = 1 ] && ROUNDS=0
for _ in $(seq 1 "$ROUNDS"); do
    for side in A B B A; do
        n=$((n + 1))
        if [ "$side" = A ]; then bin=$A; extra=$A_ARGS; rate=$A_LINE_RATE; else bin=$B; extra=$B_ARGS; rate=$B_LINE_RATE; fi
        dir="$OUT/${n}_$side"
        mkdir -p "$dir"
        cut -d' ' -f1 /proc/loadavg > "$dir/load_before"
        date -u +%H:%M:%S > "$dir/time"
        BIN=$bin OUT=$dir LINE_RATE=$rate ATP_ARGS="${ATP_ARGS:-} $extra" ATP_SERVER_ARGS="${ATP_SERVER_ARGS:-} $extra" \
            "$HERE/veth_goodput.sh" > "$dir/stdout" 2>&1
        cut -d' ' -f1 /proc/loadavg > "$dir/load_after"
        echo "block $n ($side) done (HOG=$HOG): $(tail -n 1 "$dir/stdout")"
    done
done

python3 - "$OUT" "$REPS" <<'PY'
import glob, json, os, statistics as st, sys
out, reps = sys.argv[1], int(sys.argv[2])
per = {"A": [], "B": []}
print("block side time  load     ATP/TCP per run      ATP CPU-s/GB TCP CPU-s/GB  ATP Gbps TCP Gbps"
      "  wake-ups/GB (cli/srv)  sleeps + naps/GB srv  recv syscalls/GB srv (data + empty)")
for d in sorted(glob.glob(f"{out}/*_*"), key=lambda p: int(os.path.basename(p).split("_")[0])):
    n, side = os.path.basename(d).split("_")
    load = f"{open(d + '/load_before').read().strip()}-{open(d + '/load_after').read().strip()}"
    runs = []
    for r in range(1, reps + 1):
        j = lambda name: json.load(open(f"{d}/{name}_{r}.json"))
        tc, ts, ac, asv = j("tcp_client"), j("tcp_server"), j("atp_client"), j("atp_server")
        gb = max(ac["bytes_delivered"] / 1e9, 1e-9)
        runs.append(dict(
            ratio=ac["goodput_gbps"] / ts["goodput_gbps"], atp=ac["goodput_gbps"], tcp=ts["goodput_gbps"],
            atp_cpu=(ac["cpu_s"] + asv["cpu_s"]) / gb,
            tcp_cpu=(tc["cpu_s"] + ts["cpu_s"]) / (ts["bytes"] / 1e9),
            wk_c=ac["runtime"]["wakeups"] / gb, wk_s=asv["runtime"]["wakeups"] / gb,
            sl_s=asv["runtime"].get("sleeps", float("nan")) / gb,
            nap_s=asv["runtime"].get("naps", 0) / gb,
            rs_s=asv["runtime"]["recv_syscalls"] / gb,
            em_s=asv["runtime"].get("recv_empty", float("nan")) / gb))
    per[side] += runs
    m = lambda k: st.median(x[k] for x in runs)
    print(f"{n:>5} {side:>4} {open(d + '/time').read().strip()} {load:>9}  "
          f"{' / '.join('%.2f' % x['ratio'] for x in runs):<20} {m('atp_cpu'):12.3f} {m('tcp_cpu'):12.3f}"
          f"  {m('atp'):8.2f} {m('tcp'):8.2f}  {m('wk_c'):9.0f} / {m('wk_s'):7.0f}  {m('sl_s'):8.0f} + {m('nap_s'):<6.0f}"
          f"  {m('rs_s'):8.0f} + {m('em_s'):.0f}")
print()
for side in ("A", "B"):
    runs = per[side]
    m = lambda k: st.median(x[k] for x in runs)
    print(f"{side}: {len(runs)} runs, median ATP CPU-s/GB {m('atp_cpu'):.3f} (TCP {m('tcp_cpu'):.3f}, "
          f"ATP/TCP CPU {m('atp_cpu') / m('tcp_cpu'):.2f}x), ATP/TCP goodput median {m('ratio'):.2f}, "
          f"worst {min(x['ratio'] for x in runs):.2f}; server wake-ups/GB {m('wk_s'):.0f}, sleeps/GB {m('sl_s'):.0f}, "
          f"naps/GB {m('nap_s'):.0f}")
a, b = (st.median(x["atp_cpu"] for x in per[s]) for s in ("A", "B"))
print(f"B vs A: ATP CPU-s/GB {100 * (b / a - 1):+.1f} %")
PY
