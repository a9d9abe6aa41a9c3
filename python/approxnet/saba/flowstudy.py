"""Saba's thousand-host study in the flow-level model (seed 003 §8.4,
Figs. 10-11) as a library, for ``approxnet repro saba/flow-*``: synthetic
staged workloads profiled alone on one rack (host links capped at the 7
shares of §4.1, models of degree 1-3), then placed at random one instance
per server and run together under each scheme; speed-up = per-flow
max-min's completion time / the scheme's, per workload, averaged by
geometric mean (§8.1).

The same study as ``experiments/saba/sim_study.py`` (its CLI, its result
files): the same workloads (:func:`workload_specs`, seeded), placements
and schemes, so a preset of the same size gives the same numbers.

Schemes: ``app_maxmin`` (one queue per app per port, equal weights: the
paper's ideal max-min), ``sabaQ`` (Saba with Q queues per port, e.g.
``saba8``; ``saba_unlimited``; ``_dist`` appended: 4 controllers of the
distributed mode), ``homa_like`` and ``sincronia_like``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import SabaError
from .model import SHARES, SensitivityModel, fit, slowdowns
from .sim_backend import (
    CoflowOrder,
    FlowFair,
    Job,
    Policy,
    PortQueues,
    Routes,
    SabaPolicy,
    SrptLevels,
    Stage,
    routes_from_sim,
    run,
)

__all__ = [
    "Spec",
    "FlowStudy",
    "StudyRows",
    "MIXES",
    "workload_specs",
    "demand_caps",
    "make_job",
    "placement",
    "policy",
    "profile",
    "run_study",
    "geomean",
]

BYTES_PER_NS = 56.0 / 8.0
"""56 Gbit/s (§8.1) in bytes per ns: a stage's communication time -> bytes."""


@dataclass(frozen=True)
class Spec:
    """One synthetic workload: `stages` x (compute, then one flow to each
    of `shifts` ranks ahead carrying `comm_ms` / len(shifts) of the rank's
    top rate). `demand`: the rank's top sending rate as a fraction of its
    link (1 = line rate; below 1 its NIC egress is capped there, in the
    profile and at run time), so alone a stage's communication takes
    `comm_ms` whatever the demand. `overlap`: the communication runs
    during the computation (a stage takes the longer of the two)."""

    name: str
    stages: int
    compute_ms: float
    comm_ms: float
    shifts: tuple[int, ...]
    demand: float = 1.0
    overlap: bool = False


@dataclass(frozen=True)
class FlowStudy:
    """One size of the study (a preset)."""

    topology: Mapping[str, object]
    """approxnet-sim's ``[topology]`` table."""
    hosts: int
    rack: int
    """Hosts of the rack the workloads are profiled on (the first ones)."""
    seeds: tuple[int, ...] = (1,)
    schemes: tuple[str, ...] = ("app_maxmin", "saba8", "homa_like", "sincronia_like")
    workloads: int = 20
    fanout: int = 4
    workload_seed: int = 7
    batch: float = 0.0
    tol: float = 1e-6
    degree: int = 3
    comm_scale: float = 1.0
    mix: str = "uniform"
    solver: str = "exact"
    """The sharing solver (:func:`.sim_backend.run`): "exact" or "reference"."""

    def check(self) -> None:
        """`SabaError` naming the first bad field."""
        if self.workloads < 1 or self.hosts < 2 * self.workloads:
            raise SabaError(
                f"hosts ({self.hosts}) must give each of the {self.workloads} workloads 2+"
            )
        if not 2 <= self.rack <= self.hosts:
            raise SabaError(f"rack must be 2..hosts, got {self.rack}")
        if not 1 <= self.fanout <= 8:
            raise SabaError(f"fanout must be 1..8, got {self.fanout}")
        if self.degree not in (1, 2, 3):
            raise SabaError(f"degree must be 1, 2 or 3, got {self.degree}")
        if not self.comm_scale > 0:
            raise SabaError(f"comm_scale must be above 0, got {self.comm_scale}")
        if self.mix not in MIXES:
            raise SabaError(f"mix must be one of {', '.join(MIXES)}, got {self.mix!r}")
        if not self.seeds:
            raise SabaError("seeds must not be empty")
        if self.solver not in ("exact", "reference"):
            raise SabaError(f"solver must be 'exact' or 'reference', got {self.solver!r}")
        for s in self.schemes:
            _check_scheme(s)


#: Workload mixes of :func:`workload_specs`.
MIXES = ("uniform", "paper", "demand", "overlap")

#: Communication fraction f of a stage (comm / (compute + comm) at line
#: rate) spanning the paper's testbed profiles: at 25 % of the link a
#: line-rate staged job slows by D(0.25) = 1 + 3 f, and seed 003 §2.1
#: (Fig. 1a) reports 1.1x (Sort) to 3.4x (LR) at 25 %, so f in
#: [0.1 / 3, 2.4 / 3]. The same form fits the paper's other line-rate
#: points: LR 1.3x at 75 % (§2.1, §4.2; f = 0.8 gives 1.27x), LR 172 ->
#: 447 s and PR 310 -> 427 s from 75 to 25 % (§2.3, Fig. 2: 2.59x and
#: 1.37x; f = 0.8 and 0.13 give 2.68x and 1.34x).
PAPER_F = ((1.1 - 1.0) / 3.0, (3.4 - 1.0) / 3.0)

#: Demand range of the ``demand`` mix (fraction of the link a rank can
#: send at). SQL in seed 003 §4.2 (Fig. 5): 1.2x at 25 %, 2.2x at 10 %,
#: which a line-rate staged job cannot give (D(0.25) = 1.2 -> D(0.1) = 1.6)
#: but one sending at most x = 0.36 of the link with f = 0.47 does
#: (D(b) = 1 - f + f x / b below x, 1 above).
DEMAND_RANGE = (0.25, 1.0)


def workload_specs(n: int = 20, fanout: int = 4, seed: int = 7, mix: str = "uniform") -> list[Spec]:
    """`n` synthetic workloads (§8.1: compute and communication stages, the
    amounts and stage counts varied so that sensitivities vary), 3-6
    stages, `fanout` distinct shifts of 1-8 ranks, by `mix`:

    * ``uniform`` (the study's own): compute and communication each
      10^U(-0.5, 1) ms, at line rate;
    * ``paper``: a stage of 10^U(-0.2, 1.3) ms split by a communication
      fraction f ~ U(PAPER_F) (the paper's testbed range, see PAPER_F), at
      line rate;
    * ``demand``: the ``uniform`` workloads, each rank sending at most a
      fraction U(DEMAND_RANGE) of its link (drawn from a second stream, so
      everything else is the ``uniform`` mix's);
    * ``overlap``: the ``uniform`` workloads, each with probability 1/2
      (a third stream) overlapping its communication with its computation
      — what makes PageRank insensitive in seed 003 §2.3 (Fig. 2b): such
      a workload sends as much, but is slowed only once its communication
      outlasts its computation."""
    if mix not in MIXES:
        raise SabaError(f"mix must be one of {', '.join(MIXES)}, got {mix!r}")
    rng = np.random.default_rng(seed)
    demand_rng = np.random.default_rng([seed, 1])
    overlap_rng = np.random.default_rng([seed, 2])
    specs = []
    for k in range(n):
        stages = int(rng.integers(3, 7))
        if mix == "paper":
            total = float(10 ** rng.uniform(-0.2, 1.3))
            f = float(rng.uniform(*PAPER_F))
            compute_ms, comm_ms = (1.0 - f) * total, f * total
        else:
            compute_ms = float(10 ** rng.uniform(-0.5, 1.0))
            comm_ms = float(10 ** rng.uniform(-0.5, 1.0))
        shifts = tuple(sorted(int(x) for x in rng.choice(np.arange(1, 9), fanout, replace=False)))
        demand = float(demand_rng.uniform(*DEMAND_RANGE)) if mix == "demand" else 1.0
        overlap = bool(overlap_rng.random() < 0.5) if mix == "overlap" else False
        specs.append(Spec(f"w{k:02d}", stages, compute_ms, comm_ms, shifts, demand, overlap))
    return specs


def demand_caps(specs: Sequence[Spec], jobs: Sequence[Job], routes: Routes) -> dict[int, float]:
    """Egress caps (bytes per ns, for :meth:`Routes.capped_egress`) of the
    hosts of the jobs whose workload sends below line rate (``jobs[i]``
    runs ``specs[i]``); a host running two capped instances is an error
    (the cap is its NIC's)."""
    caps: dict[int, float] = {}
    for spec, job in zip(specs, jobs, strict=True):
        if not 0.0 < spec.demand <= 1.0:
            raise SabaError(f"{spec.name}: demand must be in (0, 1], got {spec.demand}")
        if spec.demand == 1.0:
            continue
        for h in job.hosts:
            if h in caps:
                raise SabaError(f"host h{h} runs two demand-capped instances")
            caps[h] = spec.demand * float(routes.capacity[routes.host_egress(h)])
    return caps


def make_job(spec: Spec, hosts: Sequence[int], comm_scale: float = 1.0) -> Job:
    """`spec` on `hosts` (rank i on hosts[i]), communication x `comm_scale`."""
    n = len(hosts)
    pairs = tuple((i, (i + s) % n) for i in range(n) for s in spec.shifts if (i + s) % n != i)
    per_flow = spec.comm_ms * comm_scale * 1e6 * BYTES_PER_NS * spec.demand / len(spec.shifts)
    stage = Stage(spec.compute_ms * 1e6, pairs, per_flow, spec.overlap)
    return Job(spec.name, tuple(hosts), (stage,) * spec.stages)


def placement(specs: Sequence[Spec], hosts: int, seed: int, comm_scale: float = 1.0) -> list[Job]:
    """Instances at random, one per server (§8.1), hosts // len(specs) each."""
    per = hosts // len(specs)
    perm = np.random.default_rng(seed).permutation(hosts)
    return [
        make_job(s, [int(h) for h in perm[i * per : (i + 1) * per]], comm_scale)
        for i, s in enumerate(specs)
    ]


def geomean(xs: Sequence[float]) -> float:
    """Geometric mean (§8.1's average of speed-ups)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _check_scheme(name: str) -> None:
    if name in ("app_maxmin", "homa_like", "sincronia_like"):
        return
    rest = name.removeprefix("saba").removesuffix("_dist")
    if name.startswith("saba") and (rest == "_unlimited" or rest.isdigit() and int(rest) >= 1):
        return
    raise SabaError(
        f"unknown scheme {name!r} (app_maxmin, sabaQ, saba_unlimited, ..._dist, "
        "homa_like, sincronia_like)"
    )


def policy(
    scheme: str,
    jobs: Sequence[Job],
    models: Mapping[str, Sequence[float]],
    routes: Routes,
    seed: int,
) -> Policy:
    """The policy of one scheme (module doc) for `jobs`."""
    _check_scheme(scheme)
    if scheme == "app_maxmin":
        return PortQueues.per_app(jobs, routes)
    if scheme == "homa_like":
        sizes = [st.bytes for j in jobs for st in j.stages for _ in st.pairs]
        return SrptLevels(sizes, levels=8)
    if scheme == "sincronia_like":
        return CoflowOrder(levels=8)
    rest = scheme[4:]
    dist = rest.endswith("_dist")
    rest = rest.removesuffix("_dist")
    queues = None if rest == "_unlimited" else int(rest)
    return SabaPolicy(jobs, models, routes, queues=queues, controllers=4 if dist else 1, seed=seed)


@dataclass
class StudyRows:
    """The study's tables (lists of plain dicts)."""

    models: list[dict[str, Any]]
    """Per workload: its spec, profiled slowdowns, R² k = 1-3, cubic coefficients."""
    jct: list[dict[str, Any]]
    """Per seed, scheme (``flow_maxmin``: the baseline) and workload: ns."""
    speedup: list[dict[str, Any]]
    """Per seed and scheme: geometric mean, min and max speed-up."""


def profile(
    specs: Sequence[Spec], routes: Routes, rack: int
) -> dict[str, tuple[list[tuple[float, float]], dict[int, SensitivityModel]]]:
    """Each workload alone on the first `rack` hosts, host links capped at
    each profiled share (§4.1, §8.4: rack-scale profiling): its slowdowns
    and their degree 1-3 fits, by workload name."""
    out = {}
    for spec in specs:
        job = make_job(spec, list(range(rack)))
        caps = demand_caps([spec], [job], routes)
        times = {}
        for share in SHARES:
            r = run([job], routes.scaled_hosts(share).capped_egress(caps), FlowFair())
            times[share] = r.jct_ns[job.name] / 1e9
        samples = slowdowns(times)
        out[spec.name] = (samples, {k: fit(samples, k) for k in (1, 2, 3)})
    return out


def run_study(
    study: FlowStudy,
    log: Callable[[str], None] = lambda _m: None,
    progress: Callable[[StudyRows], None] | None = None,
) -> StudyRows:
    """Profiles, then runs every seed's placement under the baseline and
    each scheme. `progress`, if given, sees the rows so far after the
    profiles and after each scheme's run (to write them as they come)."""
    study.check()
    specs = workload_specs(study.workloads, study.fanout, study.workload_seed, study.mix)
    pairs: set[tuple[int, int]] = set()
    for seed in study.seeds:
        for j in placement(specs, study.hosts, seed):
            pairs |= j.host_pairs()
    for j in [make_job(s, list(range(study.rack))) for s in specs]:
        pairs |= j.host_pairs()
    t0 = time.time()
    routes = routes_from_sim(study.topology, pairs)
    log(f"routes: {len(pairs)} pairs, {len(routes.capacity)} links ({time.time() - t0:.1f} s)")
    prof = profile(specs, routes, study.rack)
    rows = StudyRows([], [], [])
    for s in specs:
        samples, fits = prof[s.name]
        row: dict[str, Any] = {
            "workload": s.name,
            "stages": s.stages,
            "compute_ms": s.compute_ms,
            "comm_ms": s.comm_ms,
            "demand": s.demand,
        }
        row.update({f"slowdown_{b:g}": d for b, d in samples})
        row.update({f"r2_k{k}": fits[k].r2 for k in (1, 2, 3)})
        row.update({f"c{i}": c for i, c in enumerate(fits[3].padded())})
        rows.models.append(row)
    if progress is not None:
        progress(rows)
    models = {n: list(fits[study.degree].coeffs) for n, (_, fits) in prof.items()}
    for seed in study.seeds:
        jobs = placement(specs, study.hosts, seed, study.comm_scale)
        net = routes.capped_egress(demand_caps(specs, jobs, routes))
        t0 = time.time()
        base = run(jobs, net, FlowFair(), batch=study.batch, tol=study.tol, solver=study.solver)
        rows.jct += [
            {
                "seed": seed,
                "scheme": "flow_maxmin",
                "workload": j.name,
                "jct_ns": base.jct_ns[j.name],
            }
            for j in jobs
        ]
        log(
            f"seed {seed} flow_maxmin: {time.time() - t0:.1f} s, {base.solves} solves, "
            f"{base.iterations} iterations"
        )
        for scheme in study.schemes:
            t0 = time.time()
            pol = policy(scheme, jobs, models, net, seed)
            setup = time.time() - t0
            r = run(jobs, net, pol, batch=study.batch, tol=study.tol, solver=study.solver)
            sp = [base.jct_ns[j.name] / r.jct_ns[j.name] for j in jobs]
            rows.jct += [
                {"seed": seed, "scheme": scheme, "workload": j.name, "jct_ns": r.jct_ns[j.name]}
                for j in jobs
            ]
            rows.speedup.append(
                {
                    "seed": seed,
                    "scheme": scheme,
                    "geomean_speedup": geomean(sp),
                    "min": min(sp),
                    "max": max(sp),
                }
            )
            if progress is not None:
                progress(rows)
            log(
                f"seed {seed} {scheme}: geomean speed-up {geomean(sp):.3f} "
                f"(min {min(sp):.3f}, max {max(sp):.3f}); setup {setup:.1f} s, run "
                f"{time.time() - t0 - setup:.1f} s, {r.solves} solves, {r.iterations} passes, "
                f"{r.uncertified} uncertified"
            )
    return rows
