"""Saba's thousand-host study in the flow-level model (seed 003 §8.4,
Figs. 10-11): 20 synthetic staged workloads, profiled alone on one rack
(18 hosts, host links capped at the 7 shares, degree-3 models), then 97
instances each placed at random on the 1,944-server 3-tier spine-leaf
at 56 Gbit/s (one instance per server) and run together under each
scheme; speed-up = the baseline's completion time / the scheme's, per
workload, averaged by geometric mean (§8.1).

    .venv/bin/python experiments/saba/sim_study.py --scale full --seeds 1 2 3
    .venv/bin/python experiments/saba/sim_study.py --scale small --seeds 1 2 3

Fig. 9's sensitivity (§7.3) in the same model: ``--degree K`` gives the
controller the degree-K models; ``--comm-scale X`` runs every job with
X times the communication it was profiled with (compute unchanged) — the
flow model's profile is exactly ``a + (1 - a) / b``, so scaling compute
and communication together (a plain dataset-size change) leaves it
unchanged, and only a shift of the compute / communication balance makes
the profile wrong.

    .venv/bin/python experiments/saba/sim_study.py --scale small --seeds 1 \
        --schemes saba8 --degree 1 --tag _k1

Writes results/saba/sim_{scale}_models.csv (profiles, R²),
results/saba/sim_{scale}_jct.csv (every job under every scheme and seed)
and results/saba/sim_{scale}_speedup.csv (geometric means).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from approxnet.saba import flowstudy
from approxnet.saba.flowstudy import Spec as Spec  # re-exported for sim_setups.py
from approxnet.saba.flowstudy import geomean
from approxnet.saba.flowstudy import make_job as make_job
from approxnet.saba.flowstudy import placement as placement
from approxnet.saba.model import SHARES, SensitivityModel
from approxnet.saba.sim_backend import (
    PAPER_SPINE_LEAF,
    CoflowOrder,
    FlowFair,
    Policy,
    PortQueues,
    Routes,
    SabaPolicy,
    SrptLevels,
    routes_from_sim,
    run,
)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "results" / "saba"

WORKLOADS = 20
FANOUT = 4


@dataclass(frozen=True)
class Scale:
    """A cluster: the simulator's [topology] table, servers, rack size."""

    topology: dict[str, object]
    hosts: int
    rack: int


#: seed 003 §8.1: 54 spine, 102 leaf, 108 ToR switches x 18 servers, 56 Gbps
SCALES = {
    "full": Scale(
        PAPER_SPINE_LEAF,
        1944,
        18,
    ),
    "small": Scale(
        {
            "kind": "spine_leaf3",
            "spines": 12,
            "leaves": 24,
            "tors": 24,
            "hosts_per_tor": 12,
            "host_gbps": 56.0,
        },
        288,
        12,
    ),
}


def workload_specs(seed: int = 7, mix: str = "uniform", fanout: int = FANOUT) -> list[Spec]:
    """The study's 20 synthetic workloads (`approxnet.saba.flowstudy`)."""
    return flowstudy.workload_specs(WORKLOADS, fanout, seed, mix)


@dataclass(frozen=True)
class Profiled:
    """A workload's profiled slowdowns and its degree 1-3 models."""

    samples: list[tuple[float, float]]
    fits: dict[int, SensitivityModel]


def profile(specs: list[Spec], routes: Routes, rack: int) -> dict[str, Profiled]:
    """`approxnet.saba.flowstudy.profile`: slowdowns and degree 1-3 fits."""
    return {
        name: Profiled(samples, fits)
        for name, (samples, fits) in flowstudy.profile(specs, routes, rack).items()
    }


def write(
    scale: str, tag: str, jct_rows: list[list[object]], speed_rows: list[list[object]]
) -> None:
    """The per-job and the averaged CSVs so far (rewritten after each run)."""
    with open(OUT / f"sim_{scale}{tag}_jct.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seed", "scheme", "workload", "jct_ns"])
        w.writerows(jct_rows)
    with open(OUT / f"sim_{scale}{tag}_speedup.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seed", "scheme", "geomean_speedup", "min", "max"])
        w.writerows(speed_rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="small")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--batch", type=float, default=0.0, help="completion batching (0 = exact)")
    ap.add_argument(
        "--schemes",
        default="app_maxmin,saba8,saba2,saba4,saba16,saba_unlimited,saba8_dist,homa_like,sincronia_like",
    )
    ap.add_argument("--workload-seed", type=int, default=7)
    ap.add_argument("--tol", type=float, default=1e-6, help="sharing iteration tolerance")
    ap.add_argument("--tag", default="", help="suffix of the output files' names")
    ap.add_argument(
        "--solver",
        choices=("exact", "reference"),
        default="exact",
        help="sharing solver: fluidexact.solve (certified) or fluidshare.allocate",
    )

    ap.add_argument(
        "--mix",
        choices=flowstudy.MIXES,
        default="uniform",
        help="workload mix (flowstudy.workload_specs): the study's own, the paper's "
        "testbed range, or demand-limited",
    )
    ap.add_argument(
        "--fanout", type=int, default=FANOUT, help="peers each rank sends to per stage (1-8)"
    )
    ap.add_argument("--degree", type=int, choices=(1, 2, 3), default=3, help="models' degree")
    ap.add_argument(
        "--comm-scale", type=float, default=1.0, help="runtime communication x the profiled"
    )
    args = ap.parse_args(argv)
    if not args.comm_scale > 0:
        ap.error("--comm-scale must be > 0")
    sc = SCALES[args.scale]
    if not 1 <= args.fanout <= 8:
        ap.error("--fanout must be 1..8")
    specs = workload_specs(args.workload_seed, args.mix, args.fanout)
    hosts, rack = sc.hosts, sc.rack
    pairs: set[tuple[int, int]] = set()
    for seed in args.seeds:
        for j in placement(specs, hosts, seed):
            pairs |= j.host_pairs()
    for j in [make_job(s, list(range(rack))) for s in specs]:
        pairs |= j.host_pairs()
    t0 = time.time()
    routes = routes_from_sim(sc.topology, pairs)
    print(f"routes: {len(pairs)} pairs, {len(routes.capacity)} links ({time.time() - t0:.1f} s)")
    prof = profile(specs, routes, rack)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / f"sim_{args.scale}{args.tag}_models.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["workload", "stages", "compute_ms", "comm_ms", "demand"]
            + [f"slowdown_{s:g}" for s in SHARES]
            + ["r2_k1", "r2_k2", "r2_k3", "c0", "c1", "c2", "c3"]
        )
        for s in specs:
            p = prof[s.name]
            w.writerow(
                [s.name, s.stages, f"{s.compute_ms:.3f}", f"{s.comm_ms:.3f}", f"{s.demand:.3f}"]
                + [f"{d:.4f}" for _, d in p.samples]
                + [f"{p.fits[k].r2:.4f}" for k in (1, 2, 3)]
                + [f"{c:.6g}" for c in p.fits[3].padded()]
            )
    models = {n: list(p.fits[args.degree].coeffs) for n, p in prof.items()}
    schemes = [s for s in args.schemes.split(",") if s]
    jct_rows: list[list[object]] = []
    speed_rows: list[list[object]] = []
    for seed in args.seeds:
        jobs = placement(specs, hosts, seed, args.comm_scale)
        # a demand below line rate is a cap on the NIC's egress (one
        # instance per server, so the cap is the workload's)
        net = routes.capped_egress(flowstudy.demand_caps(specs, jobs, routes))
        sizes = [st.bytes for j in jobs for st in j.stages for _ in st.pairs]
        t0 = time.time()
        base = run(jobs, net, FlowFair(), batch=args.batch, tol=args.tol, solver=args.solver)
        print(
            f"seed {seed} flow_maxmin: {time.time() - t0:.1f} s, {base.solves} solves, "
            f"{base.iterations} iterations",
            flush=True,
        )
        for j in jobs:
            jct_rows.append([seed, "flow_maxmin", j.name, f"{base.jct_ns[j.name]:.1f}"])
        for scheme in schemes:
            t0 = time.time()
            if scheme == "app_maxmin":
                pol: Policy = PortQueues.per_app(jobs, net)
            elif scheme.startswith("saba"):
                rest = scheme[4:]
                dist = rest.endswith("_dist")
                rest = rest.removesuffix("_dist")
                q = None if rest == "_unlimited" else int(rest)
                pol = SabaPolicy(
                    jobs, models, net, queues=q, controllers=4 if dist else 1, seed=seed
                )
            elif scheme == "homa_like":
                pol = SrptLevels(sizes, levels=8)
            elif scheme == "sincronia_like":
                pol = CoflowOrder(levels=8)
            else:
                raise SystemExit(f"unknown scheme {scheme!r}")
            setup = time.time() - t0
            r = run(jobs, net, pol, batch=args.batch, tol=args.tol, solver=args.solver)
            sp = [base.jct_ns[j.name] / r.jct_ns[j.name] for j in jobs]
            for j in jobs:
                jct_rows.append([seed, scheme, j.name, f"{r.jct_ns[j.name]:.1f}"])
            speed_rows.append(
                [seed, scheme, f"{geomean(sp):.4f}", f"{min(sp):.4f}", f"{max(sp):.4f}"]
            )
            write(args.scale, args.tag, jct_rows, speed_rows)
            print(
                f"seed {seed} {scheme}: geomean speed-up {geomean(sp):.3f} "
                f"(min {min(sp):.3f}, max {max(sp):.3f}); setup {setup:.1f} s, run "
                f"{time.time() - t0 - setup:.1f} s, {r.solves} solves, {r.iterations} passes, "
                f"{r.uncertified} uncertified",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
