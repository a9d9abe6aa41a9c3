#!/usr/bin/env bash
# Every issue-19 goal in one run, two trees alternating against the anchors.
# usage: benches/issue19_goals.sh OLD_DIR NEW_DIR OUTDIR
#   each *_DIR holds approxnet-sim, approxnet-perf and endpoint_cost (copied
#   from target/release and target/release/examples of the tree measured).
# Anchors: HTSIM = htsim_tcp built by benches/sim/htsim_build.py (default
# /tmp/htsim/sim/datacenter/htsim_tcp); NS3 = the ns-3 dumbbell binary built
# by benches/ns3/contention.py's build_ns3 (default target-ns3/contention).
# The veth ABBA needs root. Run on a quiet host: nothing else running.
set -eu
OLD=$1 NEW=$2 OUT=$3
HTSIM=${HTSIM:-/tmp/htsim/sim/datacenter/htsim_tcp}
NS3=${NS3:-target-ns3/contention}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*" | tee -a "$OUT/log"; }
log htsim
python3 benches/sim/htsim_compare.py --htsim "$HTSIM" --bin "$OLD/approxnet-sim,$NEW/approxnet-sim" --repeat 5 > "$OUT/htsim.txt" 2>&1
log ns3
python3 benches/ns3/dumbbell_speed.py --ns3-bin "$NS3" --bin "$OLD/approxnet-sim,$NEW/approxnet-sim" --repeat 3 --scale 10 > "$OUT/ns3.txt" 2>&1
for side in NEW OLD NEW; do
  log "k12 $side"
  dir=$NEW; [ $side = OLD ] && dir=$OLD
  /usr/bin/time -f "$side %e s wall %U s user %M KB" "$dir/approxnet-sim" run python/approxnet/studies/netapprox/fig5_fbkv.toml \
    --set 'jobs.0.scheme="atp-full"' --out "$OUT/k12" --quiet 2>> "$OUT/k12.txt" >/dev/null
done
log core
for _ in 1 2 3; do for dir in "$OLD" "$NEW"; do echo "$dir: $("$dir/endpoint_cost" 50 2000 1 | tail -1)"; done; done > "$OUT/core.txt" 2>&1
log veth
A="$OLD/approxnet-perf" B="$NEW/approxnet-perf" A_LINE_RATE=100 B_LINE_RATE=100 ROUNDS=2 OUT="$OUT/veth" \
  benches/net/veth_abba.sh > "$OUT/veth.txt" 2>&1
log done
