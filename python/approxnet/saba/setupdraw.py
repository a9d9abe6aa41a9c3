"""Fig. 8b's random cluster setups in the flow model, at the paper's
testbed configuration (seed 003 §8.1 "Testbed", §8.2 "Main results").

The testbed (§8.1): 32 servers, each with one 56 Gbit/s NIC, all on one
InfiniBand switch; C_Saba = 100 %; 8 VLs (queues) for Saba. Here:
:data:`TESTBED`, the simulator's one-switch topology (``dumbbell``
without a bottleneck link: every host on switch ``sw0``), 56 Gbit/s.

A cluster setup (§8.2): 16 jobs drawn with replacement from the profiled
workloads; each job's dataset size drawn from {0.1, 1, 10}x the profiled
one; its instance count from 0.5x-4x the profiler's 8 nodes (4-32); its
instances "randomly distributed among servers with two constraints: 1)
at most one instance of a given job is assigned to a server, and 2) each
server accommodates at most 16 jobs". :func:`draw_setup` draws exactly
that (:class:`SetupDraw`'s defaults); a job's dataset scale multiplies
both its compute and its communication per stage (:func:`scaled_job`) —
a job on 10x the data computes and sends 10x as much per stage.

With 16 jobs a setup, the 16-jobs-per-server cap cannot bind (a server
holds at most one instance of each job); it is drawn as stated anyway so
that larger ``jobs`` keep it: each job's servers are drawn uniformly
among those still below the cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import SabaError
from .flowstudy import Spec, make_job
from .sim_backend import FlowFair, Job, Routes, RunResult, SabaPolicy, Stage, run

__all__ = [
    "TESTBED",
    "one_switch",
    "SetupDraw",
    "DrawnJob",
    "draw_setup",
    "scaled_job",
    "baseline_and_saba",
]


def one_switch(servers: int, gbps: float = 56.0) -> dict[str, object]:
    """approxnet-sim's ``[topology]`` table of `servers` hosts on one
    switch at `gbps` (a ``dumbbell`` without a bottleneck link: the
    simulator puts every host on switch ``sw0``; senders and receivers
    are only names there, any host may send to any other)."""
    if servers < 2:
        raise SabaError(f"servers must be >= 2, got {servers}")
    if not gbps > 0:
        raise SabaError(f"gbps must be above 0, got {gbps}")
    return {"kind": "dumbbell", "senders": servers - 1, "receivers": 1, "host_gbps": gbps}


#: seed 003 §8.1: 32 servers, one 56 Gbps InfiniBand switch
TESTBED = one_switch(32)


@dataclass(frozen=True)
class SetupDraw:
    """How one setup is drawn (defaults: seed 003 §8.2)."""

    jobs: int = 16
    """Jobs per setup, drawn with replacement from the workloads."""
    instances: tuple[int, int] = (4, 32)
    """Instance count of a job, uniform in [lo, hi] (0.5x-4x of 8 nodes)."""
    data_scales: tuple[float, ...] = (0.1, 1.0, 10.0)
    """Dataset size of a job x the profiled one, drawn uniformly."""
    per_server: int = 16
    """At most this many jobs on one server."""

    def check(self, servers: int) -> None:
        """`SabaError` naming the first bad field."""
        if self.jobs < 1:
            raise SabaError(f"jobs must be >= 1, got {self.jobs}")
        lo, hi = self.instances
        if not 2 <= lo <= hi:
            raise SabaError(f"instances must be LO HI with 2 <= LO <= HI, got {lo} {hi}")
        if hi > servers:
            raise SabaError(f"instances: HI ({hi}) must be <= servers ({servers})")
        if not self.data_scales:
            raise SabaError("data_scales must not be empty")
        for s in self.data_scales:
            if not (math.isfinite(s) and s > 0):
                raise SabaError(f"data_scales must be finite and above 0, got {s}")
        if self.per_server < 1:
            raise SabaError(f"per_server must be >= 1, got {self.per_server}")


@dataclass(frozen=True)
class DrawnJob:
    """One job of a setup: its workload, dataset scale and servers."""

    spec: Spec
    data_scale: float
    hosts: tuple[int, ...]


def draw_setup(
    rng: np.random.Generator, specs: Sequence[Spec], draw: SetupDraw, servers: int
) -> list[DrawnJob]:
    """One random setup (module doc). A job whose instance count exceeds
    the servers still below the per-server cap is an error (only possible
    when ``jobs`` > ``per_server``)."""
    draw.check(servers)
    if not specs:
        raise SabaError("no workloads to draw from")
    load = np.zeros(servers, dtype=np.int64)
    out = []
    for k in range(draw.jobs):
        spec = specs[int(rng.integers(0, len(specs)))]
        scale = float(draw.data_scales[int(rng.integers(0, len(draw.data_scales)))])
        m = int(rng.integers(draw.instances[0], draw.instances[1] + 1))
        free = np.flatnonzero(load < draw.per_server)
        if len(free) < m:
            raise SabaError(
                f"job {k}: {m} instances but only {len(free)} servers below "
                f"per_server = {draw.per_server}"
            )
        hosts = [int(h) for h in rng.choice(free, m, replace=False)]
        load[hosts] += 1
        out.append(DrawnJob(spec, scale, tuple(hosts)))
    return out


def scaled_job(name: str, job: DrawnJob) -> Job:
    """The flow model's job of `job` under `name`: the workload's stages
    with compute and bytes x its dataset scale (:func:`.flowstudy.make_job`)."""
    base = make_job(job.spec, job.hosts, comm_scale=job.data_scale)
    stages = tuple(
        Stage(st.compute_ns * job.data_scale, st.pairs, st.bytes, st.overlap) for st in base.stages
    )
    return Job(name, base.hosts, stages)


def baseline_and_saba(
    jobs: Sequence[Job],
    routes: Routes,
    models: Mapping[str, Sequence[float]],
    *,
    queues: int = 8,
    seed: int = 1,
    batch: float = 0.02,
    solver: str = "exact",
) -> tuple[RunResult, RunResult]:
    """One setup run twice (§8.2): under per-flow max-min (the baseline)
    and under Saba with `queues` queues per port, each job registering
    ``models[job name]``. A job's speed-up is the first's time over the
    second's."""
    base = run(jobs, routes, FlowFair(), batch=batch, solver=solver)
    pol = SabaPolicy(jobs, models, routes, queues=queues, seed=seed)
    return base, run(jobs, routes, pol, batch=batch, solver=solver)
