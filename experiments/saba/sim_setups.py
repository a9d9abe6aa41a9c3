"""Fig. 8b in the flow-level model: the CDF of Saba's average speed-up over
random cluster setups (seed 003 §7.2; the paper ran 500 setups).

A setup, drawn as experiments/saba/setups.py draws one on the testbed:
`--jobs` jobs drawn with replacement from sim_study.py's 20 synthetic
workloads, each with an instance count drawn from `--instances`, its
instances on distinct servers chosen at random (§7.2: at most one
instance of a job per server; different jobs may share a server). The
cluster is sim_study.py's `--scale` (default small: 288 servers, 56 Gbps
spine-leaf). Every setup runs under per-flow max-min (the baseline) and
under Saba (`--queues` queues per port, 16 PLs, the degree-3 models
profiled on one rack as in sim_study.py). A job's speed-up = baseline
time / Saba time; a setup's average speed-up is the mean over its jobs
(Fig. 8b). One JSON line per setup in `--out` (appended; `--first`
skips setups already done), until `--setups` or `--budget-s` is reached;
experiments/saba/setups_report.py reads them (table, CDF plot).

    .venv/bin/python experiments/saba/sim_setups.py --setups 500 --budget-s 1800 \\
        --out results/saba/sim_setups.jsonl
    .venv/bin/python experiments/saba/setups_report.py results/saba/sim_setups.jsonl \\
        --plot results/saba/sim_setups.png

`--scale testbed`: the paper's testbed and its draw (seed 003 §8.1-8.2,
approxnet.saba.setupdraw): `--servers` (32) servers on one 56 Gbps
switch, 16 jobs, 4-32 instances, each job's data (its compute and
communication per stage) x 0.1, 1 or 10, at most `--per-server` (16)
jobs a server, models profiled on the first `--rack` (8) servers; the
rows also carry each job's data scale and the setup's geometric mean.
`--oracle` (a diagnostic, not Saba): eq. 2 on each job's exact profile
(sim_oracle.py).

    .venv/bin/python experiments/saba/sim_setups.py --scale testbed --setups 500 \\
        --out results/saba/sim_setups_testbed.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import sim_oracle
import sim_study as study

from approxnet.saba import controller, flowstudy, sim_backend
from approxnet.saba.errors import SabaError
from approxnet.saba.flowstudy import geomean
from approxnet.saba.setupdraw import (
    SetupDraw,
    baseline_and_saba,
    draw_setup,
    one_switch,
    scaled_job,
)
from approxnet.saba.sim_backend import Job, Routes, routes_from_sim


def draw(
    rng: np.random.Generator,
    specs: list[study.Spec],
    jobs: int,
    hosts: int,
    instances: tuple[int, int],
) -> list[tuple[study.Spec, list[int]]]:
    """One random setup: (workload, its servers) per job."""
    out = []
    for _ in range(jobs):
        spec = specs[int(rng.integers(0, len(specs)))]
        m = int(rng.integers(instances[0], min(instances[1], hosts) + 1))
        out.append((spec, [int(h) for h in rng.choice(hosts, m, replace=False)]))
    return out


def named(name: str, spec: study.Spec, hosts: list[int]) -> Job:
    """sim_study.py's job of `spec` on `hosts`, under its own name."""
    job = study.make_job(spec, hosts)
    return Job(name, job.hosts, job.stages)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=[*sorted(study.SCALES), "testbed"], default="small")
    ap.add_argument("--setups", type=int, default=500)
    ap.add_argument("--first", type=int, default=0, help="skip the setups before this one")
    ap.add_argument("--jobs", type=int, help="jobs per setup (default 8; testbed 16)")
    ap.add_argument(
        "--instances", type=int, nargs=2, help="instances of a job, LO HI (8 64; testbed 4 32)"
    )
    ap.add_argument("--servers", type=int, help="testbed: servers on the switch (default 32)")
    ap.add_argument(
        "--data-scales", type=float, nargs="+", help="testbed: dataset sizes (0.1 1 10)"
    )
    ap.add_argument("--per-server", type=int, help="testbed: jobs a server holds (16)")
    ap.add_argument("--rack", type=int, help="testbed: servers the profiler uses (8)")
    ap.add_argument("--mix", choices=flowstudy.MIXES, default="uniform", help="workload mix")
    ap.add_argument("--queues", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=float, default=0.02)
    ap.add_argument("--solver", choices=("exact", "reference"), default="exact")
    ap.add_argument(
        "--oracle",
        action="store_true",
        help="a diagnostic, not Saba: eq. 2 on each job's exact profile (sim_oracle.py)",
    )
    ap.add_argument("--budget-s", type=float, default=float("inf"), help="stop after this")
    ap.add_argument("--out", default=str(study.OUT / "sim_setups.jsonl"))
    args = ap.parse_args(argv)
    testbed_only = ("servers", "data_scales", "per_server", "rack")
    if args.scale != "testbed":
        given = [f"--{k.replace('_', '-')}" for k in testbed_only if getattr(args, k) is not None]
        if given:
            ap.error(f"{', '.join(given)}: only with --scale testbed")
        args.jobs = 8 if args.jobs is None else args.jobs
        args.instances = (8, 64) if args.instances is None else tuple(args.instances)
        if args.jobs < 1 or not 2 <= args.instances[0] <= args.instances[1]:
            ap.error("--jobs must be >= 1 and --instances LO HI with 2 <= LO <= HI")
    else:
        args.servers = 32 if args.servers is None else args.servers
        args.rack = 8 if args.rack is None else args.rack
        args.draw = SetupDraw(
            jobs=16 if args.jobs is None else args.jobs,
            instances=(4, 32) if args.instances is None else tuple(args.instances),
            data_scales=(0.1, 1.0, 10.0) if args.data_scales is None else tuple(args.data_scales),
            per_server=16 if args.per_server is None else args.per_server,
        )
        try:
            args.draw.check(args.servers)
        except SabaError as e:
            ap.error(str(e))
        if not 2 <= args.rack <= args.servers:
            ap.error(f"--rack must be 2..servers ({args.servers}), got {args.rack}")
        if args.mix == "demand":
            ap.error("--mix demand caps a server's NIC per job; testbed servers hold several jobs")
    if args.oracle and args.mix == "overlap":
        ap.error("--oracle: the overlap mix's profile is not sim_oracle.py's closed form")
    if args.queues < 1:
        ap.error(f"--queues must be >= 1, got {args.queues}")
    if not 0 <= args.first <= args.setups:
        ap.error(f"--first must be 0..setups ({args.setups}), got {args.first}")
    return args


def cluster_setups(
    args: argparse.Namespace,
) -> tuple[list[list[Job]], list[list[float]], Routes, dict[str, list[float]]]:
    """Every setup's jobs, their dataset scales, the routes and the models
    (the degree-3 fits of each workload's profile on the rack)."""
    specs = study.workload_specs(mix=args.mix)
    rng = np.random.default_rng(args.seed)
    pairs: set[tuple[int, int]] = set()
    if args.scale == "testbed":
        drawn = [draw_setup(rng, specs, args.draw, args.servers) for _ in range(args.setups)]
        jobs_of = [[scaled_job(f"j{k}-{d.spec.name}", d) for k, d in enumerate(s)] for s in drawn]
        scales = [[d.data_scale for d in s] for s in drawn]
        topology: Mapping[str, object] = one_switch(args.servers)
        pairs = {(a, b) for a in range(args.servers) for b in range(args.servers) if a != b}
        rack = args.rack
    else:
        sc = study.SCALES[args.scale]
        setups = [draw(rng, specs, args.jobs, sc.hosts, args.instances) for _ in range(args.setups)]
        jobs_of = [
            [named(f"j{k}-{spec.name}", spec, hosts) for k, (spec, hosts) in enumerate(s)]
            for s in setups
        ]
        scales = [[1.0] * len(s) for s in setups]
        topology, rack = sc.topology, sc.rack
        for js in jobs_of[args.first :]:
            for j in js:
                pairs |= j.host_pairs()
        for j in [study.make_job(s, list(range(sc.rack))) for s in specs]:
            pairs |= j.host_pairs()
    routes = routes_from_sim(topology, pairs)
    prof = study.profile(specs, routes, rack)
    models = {n: list(p.fits[3].coeffs) for n, p in prof.items()}
    return jobs_of, scales, routes, models


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    jobs_of, scales, routes, models = cluster_setups(args)
    # the oracle's exact profiles: communication fraction and demand per workload
    truth = {
        s.name: (s.comm_ms / (s.comm_ms + s.compute_ms), s.demand)
        for s in study.workload_specs(mix=args.mix)
    }
    t_start = time.time()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for i in range(args.first, args.setups):
        if time.time() - t_start > args.budget_s:
            print(f"budget reached after setup {i - 1}", flush=True)
            break
        js = jobs_of[i]
        t0 = time.time()
        load_before = os.getloadavg()[0]
        own = {j.name: models[j.name.split("-", 1)[1]] for j in js}
        if args.oracle:
            sim_oracle.TRUE.clear()
            sim_oracle.TRUE.update({j.name: truth[j.name.split("-", 1)[1]] for j in js})
            setattr(sim_backend, "Controller", sim_oracle.OracleController)  # noqa: B010
        try:
            base, saba = baseline_and_saba(
                js,
                routes,
                own,
                queues=args.queues,
                seed=args.seed,
                batch=args.batch,
                solver=args.solver,
            )
        finally:
            setattr(sim_backend, "Controller", controller.Controller)  # noqa: B010
        sp = [base.jct_ns[j.name] / saba.jct_ns[j.name] for j in js]
        job_rows: list[dict[str, object]] = [
            {"name": j.name, "workload": j.name.split("-", 1)[1], "instances": len(j.hosts)}
            for j in js
        ]
        row: dict[str, object] = {
            "setup": i,
            "seed": args.seed,
            "scale": args.scale,
            "queues": args.queues,
            "solver": args.solver,
            "jobs": job_rows,
            "speedup": {j.name: round(x, 5) for j, x in zip(js, sp, strict=True)},
            "avg_speedup": round(float(np.mean(sp)), 5),
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
            "uncertified": base.uncertified + saba.uncertified,
            "wall_s": round(time.time() - t0, 1),
        }
        if args.scale == "testbed":
            for jrow, scale in zip(job_rows, scales[i], strict=True):
                jrow["data_scale"] = scale
            row |= {
                "servers": args.servers,
                "rack": args.rack,
                "mix": args.mix,
                "geo_speedup": round(geomean(sp), 5),
            }
        if args.oracle:
            row["oracle"] = True
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"setup {i}: avg speed-up {row['avg_speedup']:.3f} ({row['wall_s']} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
