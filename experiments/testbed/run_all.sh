#!/usr/bin/env bash
# Runs the four testbed experiments with their default (small) sizes, as
# root, writing experiments/testbed/results/. About 3-5 minutes on the 2-core
# dev VM. Each experiment builds its own namespace testbed and removes it.
#
#   sudo experiments/testbed/run_all.sh            # PYTHON defaults to .venv/bin/python
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
export PYTHONPATH=$ROOT/python
cd "$ROOT"
if [ ! -x target/release/approxnet-perf ] && [ ! -x target-net/release/approxnet-perf ] \
    && [ -z "${APPROXNET_PERF:-}" ]; then
    cargo build --release -p approxnet-net --bin approxnet-perf
fi
T=experiments/testbed
start=$(date +%s)
uptime
"$PY" $T/exp1_msr_jct.py
"$PY" $T/exp2_incast.py
"$PY" $T/exp3_dynamic_priority.py
"$PY" $T/exp3_dynamic_priority.py --config $T/dumbbell_200m.toml --bg-mbps 150 \
    --line-rate-gbps 0.2 --messages 64 --out $T/results/exp3_dynamic_priority_200m
"$PY" $T/exp4_nonapprox_fct.py
"$PY" $T/report.py > $T/results/tables.md
uptime
echo "all four experiments in $(( $(date +%s) - start )) s; tables in $T/results/tables.md"
