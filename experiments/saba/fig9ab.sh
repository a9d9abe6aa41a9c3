#!/usr/bin/env bash
# Fig. 9a-b on the namespace testbed (seed 003 §7.3): the homogeneous setup
# (every workload once on every host) at several dataset sizes on 4 hosts
# (the profiled count) and at several host counts at 1x, each cell run as
# Saba vs baseline and as baseline vs baseline (the noise floor).
# Repetition-major: every cell once, then every cell again, so drift in
# the host's load spreads over all cells; within a repetition the Saba
# pair and the noise pair swap order from cell to cell and repetition to
# repetition, and setups.py alternates the order inside a pair by index.
# Fig. 9c (the models' degree) is the same sweep over DEGREES at 4 hosts
# and 1x data: SIZES=1 HOSTS= DEGREES="1 2" (environment; defaults below).
# Needs root. Stops starting runs at STOP (UTC, HH:MM) if given.
#   sudo experiments/saba/fig9ab.sh OUT REPS [FIRST_REP] [STOP]
set -euo pipefail
out=${1:?out file}
reps=${2:?repetitions}
first=${3:-0}
stop=${4:-}
sizes=${SIZES-0.1 0.5 1 2 10}
hosts=${HOSTS-2 6 8}
degrees=${DEGREES-3}
py=.venv/bin/python
cells=()
for d in $degrees; do
  for s in $sizes; do cells+=("4 $s $d"); done
  for h in $hosts; do cells+=("$h 1 $d"); done
done
for ((r = first; r < first + reps; r++)); do
  for ((ci = 0; ci < ${#cells[@]}; ci++)); do
    read -r h s d <<<"${cells[ci]}"
    if (((r + ci) % 2 == 0)); then pair=(baseline,saba baseline,baseline2); else pair=(baseline,baseline2 baseline,saba); fi
    for m in "${pair[@]}"; do
      if [[ -n $stop && $(date -u +%H:%M) > $stop ]]; then echo "stop time $stop reached"; exit 0; fi
      echo "$(date -u +%T) rep $r hosts $h size $s degree $d modes $m load $(cut -d' ' -f1 /proc/loadavg)"
      nice $py experiments/saba/setups.py --homogeneous --hosts "$h" --scales "$s" \
        --degree "$d" --first "$r" --reps 1 --modes "$m" --out "$out"
    done
  done
done
