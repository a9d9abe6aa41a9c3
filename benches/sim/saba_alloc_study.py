#!/usr/bin/env python3
"""Cost of Saba's per-port sharing on the instances of the 1,944-server
flow study itself (experiments/saba/sim_study.py --scale full --batch
0.02, seed 1), where benches/sim/saba_alloc_cost.py draws random ones.

Runs the study's placement under one scheme (``--scheme``, default
saba8) with the certified solver, and at the re-allocations numbered
``--at`` (counted from the start of that scheme's run) also solves the
same instance with the reference iteration (``fluidshare.allocate``) and
again with the certified solver (``fluidexact.solve``), timing both (CPU
seconds of this process) and comparing their rates: the largest
difference relative to the largest rate, and whether the certified
answer is a fixed point by the definition (``fixed_point_gap`` <= 1).
Stops after the last one. One JSON line per instance with ``--json``.

Usage: python3 benches/sim/saba_alloc_study.py [--scheme saba8]
       [--at 100,300,500,700,900] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from approxnet.saba import flowstudy, sim_backend  # noqa: E402
from approxnet.saba.fluidbound import bracket  # noqa: E402
from approxnet.saba.fluidexact import Solved, fixed_point_gap, solve  # noqa: E402
from approxnet.saba.fluidshare import Entries, allocate  # noqa: E402

HOSTS, RACK = 1944, 18  # seed 003 §8.1 (sim_study.py's "full" scale)


class Done(Exception):
    """Raised from the hook after the last instance."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scheme", default="saba8")
    ap.add_argument("--at", default="100,300,500,700,900")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="append one JSON line per instance here")
    a = ap.parse_args()
    at = sorted({int(x) for x in a.at.split(",")})
    specs = flowstudy.workload_specs(20, 4, 7)
    jobs = flowstudy.placement(specs, HOSTS, a.seed)
    pairs: set[tuple[int, int]] = set()
    for j in jobs + [flowstudy.make_job(s, list(range(RACK))) for s in specs]:
        pairs |= j.host_pairs()
    routes = sim_backend.routes_from_sim(sim_backend.PAPER_SPINE_LEAF, pairs)
    prof = flowstudy.profile(specs, routes, RACK)
    models = {n: list(fits[3].coeffs) for n, (_, fits) in prof.items()}
    pol = flowstudy.policy(a.scheme, jobs, models, routes, a.seed)
    count = 0

    def hook(e: Entries, **kw: Any) -> Solved:
        nonlocal count
        count += 1
        got = solve(e, **kw)
        if count in at:
            t0 = time.process_time()
            ref = allocate(e, tol=1e-6)
            cpu_ref = time.process_time() - t0
            t0 = time.process_time()
            new = solve(e)
            cpu_new = time.process_time() - t0
            row = {
                "scheme": a.scheme,
                "seed": a.seed,
                "realloc": count,
                "flows": e.flows,
                "entries": len(e.flow),
                "ref_passes": ref.iterations,
                "ref_cpu_s": round(cpu_ref, 4),
                "exact_passes": new.passes,
                "exact_cpu_s": round(cpu_new, 4),
                "exact_certified": new.exact,
                "newton_from_bracket": new.cold,
                "open_flows": int(bracket(e).open.sum()),
                "fixed_point": fixed_point_gap(e, new.rates) <= 1.0,
                "speedup": round(cpu_ref / max(cpu_new, 1e-9), 2),
                "max_rel_diff": float(np.max(np.abs(new.rates - ref.rates)) / ref.rates.max()),
            }
            print(json.dumps(row), flush=True)
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
            if count >= at[-1]:
                raise Done
        return got

    # the study's own loop, with the solver call observed (run() looks the
    # name up in its module at each re-allocation)
    setattr(sim_backend, "solve", hook)  # noqa: B010
    try:
        sim_backend.run(jobs, routes, pol, batch=0.02)
    except Done:
        pass


if __name__ == "__main__":
    main()
