"""Controller calculation time (seed 003 §8.5, Fig. 12): eq. 2 for every
switch output port of a cluster, the fast Rust solver vs the SLSQP
reference on the same scenarios (``benches/saba/controller_time.py`` and
``approxnet repro saba/controller-time``).

Cluster: `racks` racks x `per_rack` servers (§8.1: 108 x 18 = 1,944),
each rack switch joined to a non-blocking core by one up and one down
port; a port is a server's NIC egress, a rack switch's port to a server,
a rack uplink or a core port to a rack. A scenario places `instances` (32
in §8.5) instances of each of A active apps on distinct random servers
and opens a ring of connections (instance j -> j+1); a port carries the
apps with a connection through it. Models: random convex non-increasing
profiles of degree k (1-3).

Timed: the eq. 2 solves of all ports (fast: one ``saba_solve_ports`` call
on one thread and on all CPUs, the best of `repeats` calls since the
machine is shared; reference: SLSQP per port), not the placement. The
reference is slow at large A, so it may run on `ref_ports` randomly
chosen ports and its whole-cluster time be estimated per port (marked
``ref_estimated``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._native import saba_solve_ports
from .errors import SabaError
from .solver import default_floors, solve_reference

__all__ = ["Cluster", "PAPER_CLUSTER", "model", "ports_of", "scenario", "summarize", "sweep"]


@dataclass(frozen=True)
class Cluster:
    """Racks x servers and the instances per app."""

    racks: int = 108
    per_rack: int = 18
    instances: int = 32

    @property
    def hosts(self) -> int:
        return self.racks * self.per_rack

    def check(self) -> None:
        """`SabaError` naming the first bad field."""
        if self.racks < 1 or self.per_rack < 1:
            raise SabaError(f"racks and per_rack must be >= 1, got {self.racks}, {self.per_rack}")
        if not 2 <= self.instances <= self.hosts:
            raise SabaError(f"instances must be 2..{self.hosts} (the hosts), got {self.instances}")


PAPER_CLUSTER = Cluster()
"""§8.1's 1,944 servers, §8.5's 32 instances per app."""


def model(rng: np.random.Generator, k: int) -> list[float]:
    """A random convex non-increasing profile of degree `k` with D(1) = 1."""
    s, q, r = rng.uniform(0, [4, 6, 6])
    q, r = (q if k >= 2 else 0.0), (r if k >= 3 else 0.0)
    return [1 + s + q + r, -s - 2 * q - 3 * r, q + 3 * r, -r][: k + 1]


def ports_of(apps: int, rng: np.random.Generator, cluster: Cluster) -> list[list[int]]:
    """App indices per port (ports with at least one app)."""
    at: dict[tuple[str, int], set[int]] = {}
    per = cluster.per_rack
    for a in range(apps):
        hosts = rng.choice(cluster.hosts, size=cluster.instances, replace=False)
        for j in range(cluster.instances):
            src, dst = int(hosts[j]), int(hosts[(j + 1) % cluster.instances])
            path = [("nic", src), ("tor_down", dst)]
            if src // per != dst // per:
                path += [("tor_up", src // per), ("core_down", dst // per)]
            for p in path:
                at.setdefault(p, set()).add(a)
    return [sorted(v) for _, v in sorted(at.items())]


def scenario(
    apps: int,
    k: int,
    seed: int,
    ref_ports: int,
    cluster: Cluster = PAPER_CLUSTER,
    repeats: int = 3,
) -> dict[str, Any]:
    """One placement of `apps` apps with degree-`k` models, timed."""
    rng = np.random.default_rng(seed)
    models = [model(rng, k) for _ in range(apps)]
    ports = ports_of(apps, rng, cluster)
    batch = [(p, default_floors(len(p), 1.0)) for p in ports]
    padded = [m + [0.0] * (4 - len(m)) for m in models]
    t_fast, t_fast1 = float("inf"), float("inf")
    fast: list[list[float]] = []
    for _ in range(repeats):  # the best of a few: the machine is shared
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
    return {
        "apps": apps,
        "degree": k,
        "seed": seed,
        "ports": len(ports),
        "max_apps_per_port": max(len(p) for p in ports),
        "fast_s": t_fast,
        "fast_1thread_s": t_fast1,
        "ref_s": t_ref * len(ports) / len(pick) if pick else None,
        "ref_estimated": len(pick) < len(ports),
        "max_weight_diff": worst_w,
        "max_objective_excess": worst_obj,
    }


def summarize(apps: int, k: int, runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One row of Fig. 12: percentiles over the scenarios of (apps, k)."""
    fast = np.array([r["fast_s"] for r in runs])
    fast1 = np.array([r["fast_1thread_s"] for r in runs])
    refd = [r for r in runs if r["ref_s"] is not None]
    ref = np.array([r["ref_s"] for r in refd])
    return {
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
        "max_weight_diff": max((float(r["max_weight_diff"] or 0) for r in refd), default=None),
        "max_objective_excess": max(
            (float(r["max_objective_excess"] or 0) for r in refd), default=None
        ),
    }


def sweep(
    apps: Sequence[int],
    degrees: Sequence[int],
    seeds: int,
    ref_seeds: int,
    ref_ports: int,
    cluster: Cluster = PAPER_CLUSTER,
    repeats: int = 3,
) -> list[dict[str, Any]]:
    """Fig. 12's rows: `seeds` scenarios per (apps, degree), the first
    `ref_seeds` of them also solved by SLSQP (on up to `ref_ports` ports)."""
    cluster.check()
    for a in apps:
        if a < 1:
            raise SabaError(f"apps must be >= 1, got {a}")
    for k in degrees:
        if k not in (1, 2, 3):
            raise SabaError(f"degree must be 1, 2 or 3, got {k}")
    if seeds < 1 or not 0 <= ref_seeds <= seeds or ref_ports < 0 or repeats < 1:
        raise SabaError(
            f"need seeds >= 1, 0 <= ref_seeds <= seeds, ref_ports >= 0, repeats >= 1; got "
            f"{seeds}, {ref_seeds}, {ref_ports}, {repeats}"
        )
    rows = []
    for a in apps:
        for k in degrees:
            runs = [
                scenario(a, k, 1000 * a + 10 * k + s, ref_ports * (s < ref_seeds), cluster, repeats)
                for s in range(seeds)
            ]
            rows.append(summarize(a, k, runs))
    return rows
