#!/usr/bin/env bash
# Runs the four testbed experiments with their default (small) sizes, as
# root, writing experiments/testbed/results/. About 4-6 minutes on the 2-core
# dev VM. Each experiment builds its own namespace testbed and removes it.
#
#   sudo experiments/testbed/run_all.sh            # PYTHON defaults to .venv/bin/python
#   sudo OUT=/tmp/x experiments/testbed/run_all.sh # results elsewhere
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
export PYTHONPATH=$ROOT/python
cd "$ROOT"
# approxnet.binaries: the one lookup of built tools ($APPROXNET_PERF, PATH, target dirs)
if ! "$PY" -c 'import sys; from approxnet import binaries
sys.exit(binaries.find("approxnet-perf") is None)'; then
    cargo build --release -p approxnet-net --bin approxnet-perf
fi
T=experiments/testbed
R=${OUT:-$T/results}
mkdir -p "$R"
start=$(date +%s)
fails=0
run() { "$PY" "$@" || { echo "FAILED (exit $?): $*"; fails=$((fails + 1)); }; }
uptime
run $T/exp1_msr_jct.py --out "$R/exp1_msr_jct"
run $T/exp1_msr_jct.py --config $T/dumbbell_200m.toml --line-rate-gbps 0.2 --bg-mbps 60 \
    --jobs 8 --messages 16 --produce-mbps 100 --out "$R/exp1_msr_jct_200m"
run $T/exp2_incast.py --out "$R/exp2_incast"
run $T/exp3_dynamic_priority.py --out "$R/exp3_dynamic_priority"
run $T/exp3_dynamic_priority.py --config $T/dumbbell_200m.toml --bg-mbps 150 \
    --line-rate-gbps 0.2 --messages 512 --out "$R/exp3_dynamic_priority_200m"
run $T/exp4_nonapprox_fct.py --out "$R/exp4_nonapprox_fct"
run $T/exp4_nonapprox_fct.py --config $T/dumbbell_200m.toml --line-rate-gbps 0.2 \
    --out "$R/exp4_nonapprox_fct_200m"
"$PY" $T/report.py "$R" > "$R/tables.md"
uptime
echo "all four experiments in $(( $(date +%s) - start )) s, $fails failed; tables in $R/tables.md"
ip netns list | grep -E '^anx-x(dumb|slow|inc)-' && echo "namespaces left behind!" && exit 1
exit $((fails > 0))
