"""Where Saba's eq. 2 weights favour each workload in the flow-level
study, against the workload's speed-up: per workload, the fraction of its
shared ports (two or more apps) where its weight is above an equal split,
next to its speed-up under `saba_unlimited` (one seed of
experiments/saba/sim_study.py, whose CSVs it reads).

    .venv/bin/python experiments/saba/sim_weights.py --scale small --seed 1
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import sim_study as study

from approxnet.saba.sim_backend import SabaPolicy, routes_from_sim

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="small", choices=sorted(study.SCALES))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scheme", default="saba_unlimited")
    args = ap.parse_args(argv)
    sc = study.SCALES[args.scale]
    jobs = study.placement(study.workload_specs(), sc.hosts, args.seed)
    routes = routes_from_sim(sc.topology, set().union(*(j.host_pairs() for j in jobs)))
    with open(OUT / f"sim_{args.scale}_models.csv") as f:
        models = {
            r["workload"]: [float(r[c]) for c in ("c0", "c1", "c2", "c3")]
            for r in csv.DictReader(f)
        }
    pol = SabaPolicy(jobs, models, routes, queues=None, seed=args.seed)
    fav: dict[str, int] = defaultdict(int)
    cnt: dict[str, int] = defaultdict(int)
    at_floor = total = 0
    for cfg in pol.ctls[0].port_configs():
        w = dict(cfg.app_weights)
        if len(w) < 2:
            continue
        for a, wa in w.items():
            cnt[a] += 1
            total += 1
            fav[a] += wa > 1.0 / len(w) + 1e-9
            at_floor += wa <= 0.0501
    with open(OUT / f"sim_{args.scale}_jct.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["seed"] == str(args.seed)]
    base = {r["workload"]: float(r["jct_ns"]) for r in rows if r["scheme"] == "flow_maxmin"}
    got = {r["workload"]: float(r["jct_ns"]) for r in rows if r["scheme"] == args.scheme}
    print(f"shared ports: app weights at the 0.05 floor: {at_floor / total:.2f}")
    print(f"| workload | favoured at (fraction of its shared ports) | {args.scheme} speed-up |")
    print("|---|---|---|")
    pts = sorted((fav[a] / cnt[a], a, base[a] / got[a]) for a in cnt)
    for f_, a, s in pts:
        print(f"| {a} | {f_:.2f} | {s:.3f} |")
    x = np.array([p[0] for p in pts])
    y = np.array([p[2] for p in pts])
    print(f"correlation {float(np.corrcoef(x, y)[0, 1]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
