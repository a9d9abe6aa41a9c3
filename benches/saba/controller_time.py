"""Controller calculation time (seed 003 §8.5, Fig. 12): eq. 2 for every
switch output port of a 1,944-server cluster, fast Rust solver vs the SLSQP
reference, in the same run on the same scenarios.

Cluster: 108 racks x 18 servers (seed 003 §8.1's 1,944 servers), each rack
switch joined to a non-blocking core by one up and one down port; a port is
a server's NIC egress, a rack switch's port to a server, a rack uplink or a
core port to a rack. A scenario places 32 instances of each of A active
apps on distinct random servers (§8.5) and opens a ring of connections
(instance j -> j+1); a port carries the apps with a connection through it.
Models: random convex non-increasing profiles of degree k (1-3).

Timed: the eq. 2 solves of all ports (fast: one `saba_solve_ports` call
on one thread and on all CPUs,
the best of 3 calls per scenario since the 2-core machine is shared;
reference: SLSQP per port), not the placement. The reference is slow at
large A, so it runs on `--ref-ports` randomly chosen ports there and its
whole-cluster time is estimated per port (marked "est.").

    .venv/bin/python benches/saba/controller_time.py --out results/saba/controller_time.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from approxnet._native import saba_solve_ports
from approxnet.saba.solver import default_floors, solve_reference

RACKS, PER_RACK, INSTANCES = 108, 18, 32
REPEATS = 3
HOSTS = RACKS * PER_RACK


def model(rng: np.random.Generator, k: int) -> list[float]:
    s, q, r = rng.uniform(0, [4, 6, 6])
    q, r = (q if k >= 2 else 0.0), (r if k >= 3 else 0.0)
    return [1 + s + q + r, -s - 2 * q - 3 * r, q + 3 * r, -r][: k + 1]


def ports_of(apps: int, rng: np.random.Generator) -> list[list[int]]:
    """App indices per port (ports with at least one app)."""
    at: dict[tuple[str, int], set[int]] = {}
    for a in range(apps):
        hosts = rng.choice(HOSTS, size=INSTANCES, replace=False)
        for j in range(INSTANCES):
            src, dst = int(hosts[j]), int(hosts[(j + 1) % INSTANCES])
            path = [("nic", src), ("tor_down", dst)]
            if src // PER_RACK != dst // PER_RACK:
                path += [("tor_up", src // PER_RACK), ("core_down", dst // PER_RACK)]
            for p in path:
                at.setdefault(p, set()).add(a)
    return [sorted(v) for _, v in sorted(at.items())]


def scenario(apps: int, k: int, seed: int, ref_ports: int) -> dict[str, float | int | bool | None]:
    rng = np.random.default_rng(seed)
    models = [model(rng, k) for _ in range(apps)]
    ports = ports_of(apps, rng)
    batch = [(p, default_floors(len(p), 1.0)) for p in ports]
    padded = [m + [0.0] * (4 - len(m)) for m in models]
    t_fast, t_fast1 = float("inf"), float("inf")
    for _ in range(REPEATS):  # the best of a few: the machine is shared
        t0 = time.perf_counter()
        fast = saba_solve_ports(padded, batch, 1.0, 1)
        t_fast1 = min(t_fast1, time.perf_counter() - t0)
        t0 = time.perf_counter()
        fast = saba_solve_ports(padded, batch, 1.0, 0)
        t_fast = min(t_fast, time.perf_counter() - t0)
    if ref_ports == 0:
        pick: list[int] = []
    elif len(ports) <= ref_ports:
        pick = list(range(len(ports)))
    else:
        pick = [int(i) for i in rng.choice(len(ports), ref_ports, replace=False)]
    t_ref, worst_w, worst_obj = 0.0, 0.0, 0.0
    for i in pick:
        apps_i, floors = batch[i]
        t0 = time.perf_counter()
        ref = solve_reference([models[a] for a in apps_i], floors, 1.0)
        t_ref += time.perf_counter() - t0
        w = np.array(fast[i])
        obj = sum(float(np.polyval(models[a][::-1], x)) for a, x in zip(apps_i, w, strict=True))
        worst_w = max(worst_w, float(np.max(np.abs(w - np.array(ref.weights)))))
        worst_obj = max(worst_obj, obj - ref.objective)
    sampled = len(pick) < len(ports)
    out: dict[str, float | int | bool | None] = {
        "apps": apps,
        "degree": k,
        "seed": seed,
        "ports": len(ports),
        "max_apps_per_port": max(len(p) for p in ports),
        "fast_s": t_fast,
        "fast_1thread_s": t_fast1,
        "ref_s": t_ref * len(ports) / len(pick) if pick else None,
        "ref_estimated": sampled,
        "max_weight_diff": worst_w,
        "max_objective_excess": worst_obj,
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--apps", default="1,10,100,250,500,1000")
    ap.add_argument("--degrees", default="1,2,3")
    ap.add_argument("--seeds", type=int, default=20, help="scenarios per (apps, degree)")
    ap.add_argument("--ref-seeds", type=int, default=2, help="of which also solved by SLSQP")
    ap.add_argument("--ref-ports", type=int, default=300, help="ports SLSQP solves per scenario")
    ap.add_argument("--out", type=Path, default=Path("results/saba/controller_time.json"))
    args = ap.parse_args()
    rows = []
    for apps in map(int, args.apps.split(",")):
        for k in map(int, args.degrees.split(",")):
            runs = [
                scenario(apps, k, 1000 * apps + 10 * k + s, args.ref_ports * (s < args.ref_seeds))
                for s in range(args.seeds)
            ]
            fast = np.array([r["fast_s"] for r in runs])
            fast1 = np.array([r["fast_1thread_s"] for r in runs])
            refd = [r for r in runs if r["ref_s"] is not None]
            ref = np.array([r["ref_s"] for r in refd])
            row = {
                "apps": apps,
                "degree": k,
                "scenarios": len(runs),
                "ports": int(np.mean([r["ports"] for r in runs])),
                "max_apps_per_port": int(max(float(r["max_apps_per_port"] or 0) for r in runs)),
                "fast_p50_s": float(np.percentile(fast, 50)),
                "fast_p99_s": float(np.percentile(fast, 99)),
                "fast_1thread_p50_s": float(np.percentile(fast1, 50)),
                "fast_1thread_p99_s": float(np.percentile(fast1, 99)),
                "threads": os.cpu_count(),
                "ref_scenarios": len(ref),
                "ref_mean_s": float(ref.mean()) if len(ref) else None,
                "ref_p99_s": float(np.percentile(ref, 99)) if len(ref) else None,
                "ref_estimated": any(bool(r["ref_estimated"]) for r in refd),
                "speedup_mean": float(ref.mean() / fast[: len(ref)].mean()) if len(ref) else None,
                "max_weight_diff": max(
                    (float(r["max_weight_diff"] or 0) for r in refd), default=None
                ),
                "max_objective_excess": max(
                    (float(r["max_objective_excess"] or 0) for r in refd), default=None
                ),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
