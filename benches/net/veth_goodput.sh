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
#
# A contended host on purpose: HOG=N runs N CPU spinners (python3 busy
# loops, each bounded to DUR + 30 s by itself and killed when each
# transport's run ends) beside each transport's run, TCP's and ATP's alike;
# HOG_CPU=1 pins them with taskset (default: unpinned). Per run the table
# also gives the CPU seconds the spinners got and those of the kernel's
# ksoftirqd threads (softirq work deferred there is charged to no
# transport process; "incl. ksoftirqd" adds it to the CPU per GB). The
# spinners' share covers each run's whole life (ATP's includes the
# server's 2 s idle end), so it compares blocks, not TCP with ATP. A
# "sched" line gives each process's time on a CPU, waiting for one and
# its time slices (/proc/PID/schedstat, sampled every 0.1 s to its exit);
# benches/net/veth_sched_summary.py takes medians over many runs.
#
#   sudo HOG=1 HOG_CPU=1 BIN=... DUR=4 REPS=3 LINE_RATE=40 benches/net/veth_goodput.sh
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
HOG=${HOG:-0}                     # CPU spinners beside each transport's run
HOG_CPU=${HOG_CPU:-}              # taskset CPU list for the spinners (empty: unpinned)
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

HOG_PIDS=()
# CPU seconds (user + system) of the given pids, from /proc/PID/stat.
cpu_of() {
    local tck=$(getconf CLK_TCK) sum=0 p f
    for p in "$@"; do
        if f=$(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null); then sum=$((sum + ${f% *} + ${f#* })); fi
    done
    python3 -c "print($sum / $tck)"
}
softirqd_cpu() { # ksoftirqd/N threads, all CPUs
    # shellcheck disable=SC2046
    cpu_of $(ps -eo pid=,comm= | awk '$2 ~ /^ksoftirqd\// {print $1}')
}
# Keeps the last /proc/PID/schedstat of a process (ns on a CPU, ns runnable
# but waiting for one, time slices) in a file until it exits: how much of
# its life a transport process ran, waited for a CPU or slept.
sched_watch() { # pid file
    local t0 now
    t0=$(date +%s%N)
    while kill -0 "$1" 2>/dev/null; do
        now=$(date +%s%N)
        if read -r run wait slices < "/proc/$1/schedstat" 2>/dev/null; then
            echo "$run $wait $slices $((now - t0))" > "$2"
        fi
        sleep 0.1
    done
}
hog_start() {
    HOG_T0=$(date +%s.%N)
    HOG_PIDS=()
    for _ in $(seq 1 "$HOG"); do
        ${HOG_CPU:+taskset -c "$HOG_CPU"} python3 -c \
            "import time; e = time.monotonic() + $DUR + 30
while time.monotonic() < e: pass" &
        HOG_PIDS+=($!)
    done
}
hog_stop() { # $1: file for the spinners' CPU seconds and their wall seconds
    if [ "${#HOG_PIDS[@]}" -gt 0 ]; then
        echo "$(cpu_of "${HOG_PIDS[@]}") $(python3 -c "import time; print(time.time() - $HOG_T0)")" > "$1"
        kill "${HOG_PIDS[@]}" 2>/dev/null || true
        wait "${HOG_PIDS[@]}" 2>/dev/null || true
    else
        echo "0 1" > "$1"
    fi
    HOG_PIDS=()
}
trap 'if [ "${#HOG_PIDS[@]}" -gt 0 ]; then kill "${HOG_PIDS[@]}" 2>/dev/null; fi; cleanup' EXIT

for rep in $(seq 1 "$REPS"); do
    softirqd_cpu > "$OUT/tcp_softirqd0_$rep"
    hog_start
    ip netns exec "$B" nice -n "$NICE" "$BIN" tcp-server --bind "$IPB:7701" --json > "$OUT/tcp_server_$rep.json" &
    SERVER_PID=$!
    sched_watch "$SERVER_PID" "$OUT/tcp_server_sched_$rep" &
    WATCH_PIDS=($!)
    wait_listen t 7701
    ip netns exec "$A" nice -n "$NICE" "$BIN" tcp-client --server "$IPB:7701" --duration "$DUR" --cc cubic --json \
        > "$OUT/tcp_client_$rep.json" &
    CLIENT_PID=$!
    sched_watch "$CLIENT_PID" "$OUT/tcp_client_sched_$rep" &
    WATCH_PIDS+=($!)
    wait "$CLIENT_PID"
    wait "$SERVER_PID"
    hog_stop "$OUT/tcp_hog_$rep"
    softirqd_cpu > "$OUT/tcp_softirqd1_$rep"

    softirqd_cpu > "$OUT/atp_softirqd0_$rep"
    hog_start

    ip netns exec "$B" nice -n "$NICE" "$BIN" server --bind "$IPB:7700" --idle 2 --line-rate-gbps "$LINE_RATE" ${ATP_SERVER_ARGS:-} --json \
        > "$OUT/atp_server_$rep.json" &
    SERVER_PID=$!
    sched_watch "$SERVER_PID" "$OUT/atp_server_sched_$rep" &
    WATCH_PIDS+=($!)
    wait_listen u 7700
    ip netns exec "$A" nice -n "$NICE" "$BIN" client --server "$IPB:7700" --duration "$DUR" --msr 1.0 \
        --sizes "$SIZES" --messages "$MESSAGES" --window "$WINDOW" --line-rate-gbps "$LINE_RATE" ${ATP_ARGS:-} --json \
        > "$OUT/atp_client_$rep.json" &
    CLIENT_PID=$!
    sched_watch "$CLIENT_PID" "$OUT/atp_client_sched_$rep" &
    WATCH_PIDS+=($!)
    wait "$CLIENT_PID" || true
    wait "$SERVER_PID"
    hog_stop "$OUT/atp_hog_$rep"
    softirqd_cpu > "$OUT/atp_softirqd1_$rep"
    wait "${WATCH_PIDS[@]}"   # their last samples are written before the summary reads them
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
    num = lambda name: float(open(f"{out}/{name}_{r}").read().split()[0])
    hog = lambda t: "%.2f" % (lambda c, w: c / w)(*map(float, open(f"{out}/{t}_hog_{r}").read().split()))
    sirq = {t: num(f"{t}_softirqd1") - num(f"{t}_softirqd0") for t in ("tcp", "atp")}
    print(f"run {r}: TCP cubic {tcp_gbps:6.2f} Gbps {tcp_cpu:5.2f} CPU-s/GB | "
          f"ATP MSR=1 {atp_gbps:6.2f} Gbps {atp_cpu:5.2f} CPU-s/GB loss {ac['measured_loss']:.4f} "
          f"retx {ac['retransmissions']} failed {ac['jobs_failed']} ratio {atp_gbps / tcp_gbps:.2f}")
    print(f"       ksoftirqd CPU-s TCP {sirq['tcp']:.2f} ATP {sirq['atp']:.2f}; incl. ksoftirqd CPU-s/GB "
          f"TCP {tcp_cpu + sirq['tcp'] / (ts['bytes'] / 1e9):.2f} ATP {atp_cpu + sirq['atp'] / max(ac['bytes_delivered'] / 1e9, 1e-9):.2f}; "
          f"spinners' CPU share (CPU-s per wall s, over the whole run) TCP {hog('tcp')} ATP {hog('atp')}")
    def sched(name):
        try:
            run, wait, slices, wall = map(int, open(f"{out}/{name}_sched_{r}").read().split())
        except (OSError, ValueError):
            return "n/a"
        return f"run {run / 1e9:.2f} s wait-for-CPU {wait / 1e9:.2f} s slices {slices}"
    print("       sched (to the last 0.1 s sample): " + "; ".join(
        f"{n.replace('_', ' ')} {sched(n)}" for n in ("tcp_client", "tcp_server", "atp_client", "atp_server")))
med = lambda i: st.median(r[i] for r in rows)
print(f"median: TCP {med(0):.2f} Gbps ({med(1):.2f} CPU-s/GB), ATP {med(2):.2f} Gbps "
      f"({med(3):.2f} CPU-s/GB), ATP/TCP = {med(2) / med(0):.2f}")
PY
