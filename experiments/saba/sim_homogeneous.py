"""Saba in the flow model on seed 003 §8.3's homogeneous setup: one
instance of every workload on every server of one rack ("all nodes run
all workloads together", studies 1-3, the setup of Fig. 9), so the ports
the apps share are the servers' own links, where each app's demand is its
whole NIC — the premise of eq. 2, whose D is profiled with the NIC capped
(§4.1). In the thousand-host study (one workload per server, §8.1) the
shared ports are fabric ports where an app has ~1 of its flows
(experiments/saba/weight_demand.py).

Per mix (flowstudy.MIXES but ``demand``, whose cap is per NIC) and
workload seed: the 20 workloads profiled alone on the rack, then run
together on it under per-flow max-min (the baseline), per-app queues
(``app_maxmin``), Saba with 8 queues and the Sincronia-like order;
speed-up = baseline time / scheme's, geometric mean over the workloads.

    .venv/bin/python experiments/saba/sim_homogeneous.py --mixes uniform paper \\
        --workload-seeds 7 8 9

Writes results/saba/sim_homogeneous.csv (one row per mix, workload seed,
scheme and workload), then prints per run eq. 2's own objective: the sum
over the workloads of their slowdown against running alone (``--report``:
only that, from the CSV).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import sim_study as study

from approxnet.saba import flowstudy
from approxnet.saba.flowstudy import geomean
from approxnet.saba.sim_backend import FlowFair, routes_from_sim, run

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"
SCHEMES = ("app_maxmin", "saba8", "sincronia_like")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mixes", nargs="+", default=["uniform", "paper"], choices=("uniform", "paper", "overlap")
    )
    ap.add_argument("--workload-seeds", type=int, nargs="+", default=[7])
    ap.add_argument("--batch", type=float, default=0.02)
    ap.add_argument("--out", default=str(OUT / "sim_homogeneous.csv"))
    ap.add_argument("--report", action="store_true", help="only the summary of --out")
    args = ap.parse_args(argv)
    if args.report:
        return report(Path(args.out))
    sc = study.SCALES["small"]
    rows: list[dict[str, object]] = []
    for mix in args.mixes:
        for ws in args.workload_seeds:
            specs = study.workload_specs(ws, mix)
            jobs = [study.make_job(s, list(range(sc.rack))) for s in specs]
            routes = routes_from_sim(sc.topology, set().union(*(j.host_pairs() for j in jobs)))
            prof = flowstudy.profile(specs, routes, sc.rack)
            models = {n: list(fits[3].coeffs) for n, (_, fits) in prof.items()}
            base = run(jobs, routes, FlowFair(), batch=args.batch)
            for scheme in SCHEMES:
                pol = flowstudy.policy(scheme, jobs, models, routes, seed=1)
                r = run(jobs, routes, pol, batch=args.batch)
                sp = [base.jct_ns[j.name] / r.jct_ns[j.name] for j in jobs]
                rows += [
                    {
                        "mix": mix,
                        "workload_seed": ws,
                        "scheme": scheme,
                        "workload": j.name,
                        "d25": dict(prof[j.name][0])[0.25],
                        "base_jct_ns": base.jct_ns[j.name],
                        "jct_ns": r.jct_ns[j.name],
                        "speedup": s,
                    }
                    for j, s in zip(jobs, sp, strict=True)
                ]
                print(
                    f"{mix} ws{ws} {scheme}: geo. mean {geomean(sp):.3f} "
                    f"(min {min(sp):.3f}, max {max(sp):.3f})",
                    flush=True,
                )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return report(Path(args.out))


def report(path: Path) -> int:
    """Sum of slowdowns against the job alone (stages x (compute + comm),
    or the longer of the two where they overlap),
    per mix, workload seed and scheme, and the geometric-mean speed-up."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    print("| mix | workload seed | scheme | sum of slowdowns (baseline -> scheme) | speed-up |")
    print("|---|---|---|---|---|")
    for key in sorted({(r["mix"], int(r["workload_seed"]), r["scheme"]) for r in rows}):
        mix, ws, scheme = key
        alone = {
            s.name: s.stages
            * (max(s.compute_ms, s.comm_ms) if s.overlap else s.compute_ms + s.comm_ms)
            * 1e6
            for s in study.workload_specs(ws, mix)
        }
        rs = [r for r in rows if (r["mix"], int(r["workload_seed"]), r["scheme"]) == key]
        base = sum(float(r["base_jct_ns"]) / alone[r["workload"]] for r in rs)
        got = sum(float(r["jct_ns"]) / alone[r["workload"]] for r in rs)
        sp = geomean([float(r["speedup"]) for r in rs])
        print(f"| {mix} | {ws} | {scheme} | {base:.1f} -> {got:.1f} | {sp:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
