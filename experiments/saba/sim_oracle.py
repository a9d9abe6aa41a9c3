"""A diagnostic, not Saba: the flow study with eq. 2 solved on each
workload's *exact* profile instead of its cubic model (docs/experiments/
saba.md, "Fidelity check" (f)). Everything else is the 8-queue Saba of
the study: the apps register their cubic models, K-means and the PL
hierarchy use them, a queue's weight is the sum of its apps' weights; only
the per-port weights come from the true profile of a staged job,
``D(w) = 1 - f + f max(1, x / w)`` (communication fraction f, demand x),
minimised under the controller's own floors (convex: KKT with bisection
on the multiplier). It separates what the seed's polynomial model costs
from what per-port weighting itself does.

    .venv/bin/python experiments/saba/sim_oracle.py --mixes uniform paper demand --seeds 1 2 3
    .venv/bin/python experiments/saba/sim_oracle.py --homogeneous --mixes uniform paper

Writes results/saba/sim_oracle{_homogeneous}{tag}.csv: per mix, seed,
scheme (flow_maxmin, saba8 with cubic models, saba8_oracle; with
``--unlimited`` saba_unlimited and saba_unlimited_oracle) and workload,
the job time.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import sim_study as study

from approxnet.saba import controller as ctl
from approxnet.saba import flowstudy, sim_backend
from approxnet.saba.flowstudy import geomean
from approxnet.saba.sim_backend import FlowFair, SabaPolicy, routes_from_sim, run
from approxnet.saba.solver import default_floors

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"

#: app name -> (communication fraction f, demand x) of the run in progress
TRUE: dict[str, tuple[float, float]] = {}


def exact_weights(apps: Sequence[str], floors: Sequence[float], cap: float) -> list[float]:
    """argmin Σ D_i(w_i), Σ w = cap, w >= floor, for D_i = 1 - f + f max(1, x / w):
    w_i(λ) = clamp(sqrt(f x / λ), floor, x) (marginal -f x / w² below x, 0
    above), λ by bisection; weight left over when every app sits at its
    demand goes to them in proportion to their demands."""
    fx = [TRUE[a][0] * TRUE[a][1] for a in apps]
    top = [max(TRUE[a][1], lo) for a, lo in zip(apps, floors, strict=True)]

    def at(lam: float) -> list[float]:
        return [
            min(hi, max(lo, math.sqrt(v / lam))) for v, lo, hi in zip(fx, floors, top, strict=True)
        ]

    if sum(top) <= cap:
        w = list(top)
        spare = cap - sum(w)
        return [x + spare * x / sum(w) for x in w]
    lo_l, hi_l = 1e-12, 1e12
    for _ in range(200):
        mid = math.sqrt(lo_l * hi_l)
        if sum(at(mid)) > cap:
            lo_l = mid
        else:
            hi_l = mid
    w = at(hi_l)
    return [x * cap / sum(w) for x in w]


class OracleController(ctl.Controller):
    """The controller with eq. 2 on the exact profiles (module doc)."""

    def _solve(self, per_port: list[list[str]]) -> list[list[float]]:
        return [
            exact_weights(apps, default_floors(len(apps), self.capacity), self.capacity)
            for apps in per_port
        ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mixes", nargs="+", default=["uniform"], choices=flowstudy.MIXES)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--workload-seed", type=int, default=7)
    ap.add_argument("--homogeneous", action="store_true", help="§8.3's setup (sim_homogeneous)")
    ap.add_argument("--batch", type=float, default=0.02)
    ap.add_argument(
        "--unlimited", action="store_true", help="one queue per app (saba_unlimited) instead of 8"
    )
    ap.add_argument("--tag", default="", help="suffix of the output file's name")
    args = ap.parse_args(argv)
    if "overlap" in args.mixes:
        ap.error("the overlap mix's profile is not the closed form used here")
    if args.homogeneous and "demand" in args.mixes:
        ap.error("--homogeneous: the demand mix caps NICs that all apps share there")
    sc = study.SCALES["small"]
    rows: list[dict[str, object]] = []
    for mix in args.mixes:
        specs = study.workload_specs(args.workload_seed, mix)
        TRUE.clear()
        TRUE.update({s.name: (s.comm_ms / (s.comm_ms + s.compute_ms), s.demand) for s in specs})
        rack_jobs = [study.make_job(s, list(range(sc.rack))) for s in specs]
        seeds = [1] if args.homogeneous else args.seeds
        placements = {
            seed: rack_jobs if args.homogeneous else study.placement(specs, sc.hosts, seed)
            for seed in seeds
        }
        pairs = set().union(
            *(j.host_pairs() for js in [rack_jobs, *placements.values()] for j in js)
        )
        routes = routes_from_sim(sc.topology, pairs)
        prof = flowstudy.profile(specs, routes, sc.rack)
        models = {n: list(fits[3].coeffs) for n, (_, fits) in prof.items()}
        for seed, jobs in placements.items():
            caps = {} if args.homogeneous else flowstudy.demand_caps(specs, jobs, routes)
            net = routes.capped_egress(caps)
            base = run(jobs, net, FlowFair(), batch=args.batch)
            res = {"flow_maxmin": base.jct_ns}
            q, name = (None, "saba_unlimited") if args.unlimited else (8, "saba8")
            for scheme, cls in ((name, ctl.Controller), (f"{name}_oracle", OracleController)):
                setattr(sim_backend, "Controller", cls)  # noqa: B010 (a patch)
                try:
                    pol = SabaPolicy(jobs, models, net, queues=q, seed=seed)
                finally:
                    setattr(sim_backend, "Controller", ctl.Controller)  # noqa: B010
                res[scheme] = run(jobs, net, pol, batch=args.batch).jct_ns
                sp = [base.jct_ns[j.name] / res[scheme][j.name] for j in jobs]
                print(
                    f"{mix} seed {seed} {scheme}: geo. mean {geomean(sp):.3f} "
                    f"(min {min(sp):.3f}, max {max(sp):.3f})",
                    flush=True,
                )
            rows += [
                {"mix": mix, "seed": seed, "scheme": s, "workload": n, "jct_ns": t}
                for s, jct in res.items()
                for n, t in jct.items()
            ]
    name = f"sim_oracle{'_homogeneous' if args.homogeneous else ''}{args.tag}.csv"
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
