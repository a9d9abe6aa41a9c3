"""Saba in the flow-level simulator (seed 003 §8.4): staged
compute / communicate jobs on the simulator's topologies and routes,
their flows sharing every link by per-port weighted queues
(:mod:`.fluidshare`), the queues and weights coming from the Saba
controller (:class:`.controller.Controller`, centralized or distributed)
or from a baseline policy.

* **Routes** are the simulator's own: :func:`routes_from_sim` runs
  ``approxnet-sim`` in flow mode on a trace of the host pairs needed with
  ``fluid.record_paths`` and reads every pair's egress ports and every
  link's capacity (so paths are exactly the fluid mode's ECMP choices).
* **Jobs** are bulk-synchronous like the fluid mode's ``[[staged]]``: a
  stage is a compute delay then one flow per (rank, rank) pair (or, for
  an overlapped stage, both at once, the stage ending when both are done);
  the next stage starts when every flow of the stage has arrived. A
  sender below line rate is a cap on its host's egress link
  (:meth:`Routes.capped_egress`). No path latency
  (the study's flows are megabytes at 56 Gbit/s; the topology is given
  zero link delay).
* **Policies** say, per (flow, link), the priority level, the queue and
  its weight: :class:`FlowFair` (per-flow max-min: the baseline),
  :class:`PortQueues` (one queue per app per port at equal weights — the
  paper's "ideal max-min" — or the Saba controller's queues:
  :class:`SabaPolicy`), :class:`SrptLevels` (a Homa-like scheme) and
  :class:`CoflowOrder` (a Sincronia-like one). What the last two are,
  exactly, is in their docs.

Why not the simulator's fluid engine itself: its weights are per flow
and the same on every link, while Saba's are per port and per queue (a
queue's weight is shared by all the flows of its apps on that port). The
sharing here is checked against the simulator's exact max-min in the
equal-weight case (python/tests/test_saba_sim_backend.py).
"""

from __future__ import annotations

import csv
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from .controller import Controller, publish_mapping
from .errors import SabaError, TopologyError
from .fluidexact import solve
from .fluidshare import Entries, allocate
from .store import Store
from .topology import Port

__all__ = [
    "PAPER_SPINE_LEAF",
    "Routes",
    "routes_from_sim",
    "SimTopology",
    "Stage",
    "Job",
    "Flows",
    "Policy",
    "FlowFair",
    "PortQueues",
    "SabaPolicy",
    "SrptLevels",
    "CoflowOrder",
    "RunResult",
    "run",
]

PAPER_SPINE_LEAF: dict[str, object] = {
    "kind": "spine_leaf3",
    "spines": 54,
    "leaves": 102,
    "tors": 108,
    "hosts_per_tor": 18,
    "host_gbps": 56.0,
}
"""Seed 003 §8.1's fabric: 54 spine, 102 leaf, 108 ToR switches x 18
servers (1,944), 56 Gbps — the ``[topology]`` table of approxnet-sim."""

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]


@dataclass
class Routes:
    """Links (capacity in bytes per ns, the node each leaves) and the
    egress ports of each host pair's path."""

    capacity: F64
    node: list[str]
    peer: list[str]
    paths: dict[tuple[int, int], I64]

    def path(self, src: int, dst: int) -> I64:
        """Egress ports from host `src` to host `dst`."""
        try:
            return self.paths[(src, dst)]
        except KeyError:
            raise TopologyError(f"no route recorded for h{src} -> h{dst}") from None

    def scaled_hosts(self, share: float) -> Routes:
        """The same network with every host link (either direction) at
        `share` of its capacity: the profiler's cap (seed 003 §4.1)."""
        cap = self.capacity.copy()
        for i, (n, p) in enumerate(zip(self.node, self.peer, strict=True)):
            if n.startswith("h") or p.startswith("h"):
                cap[i] *= share
        return Routes(cap, self.node, self.peer, self.paths)

    def host_egress(self, host: int) -> int:
        """The link host `host` sends on (its NIC's egress)."""
        i = self._egress().get(host)
        if i is None:
            raise TopologyError(f"no egress link recorded for host h{host}")
        return i

    def _egress(self) -> dict[int, int]:
        return {int(n[1:]): i for i, n in enumerate(self.node) if n[:1] == "h" and n[1:].isdigit()}

    def capped_egress(self, caps: Mapping[int, float]) -> Routes:
        """The same network with host h's egress link at most ``caps[h]``
        (bytes per ns): the ranks there cannot send faster, whatever the
        network gives them (a demand below line rate)."""
        cap = self.capacity.copy()
        egress = self._egress()
        for h, c in caps.items():
            if not c > 0:
                raise SabaError(f"egress cap of host h{h} must be above 0, got {c}")
            if h not in egress:
                raise TopologyError(f"no egress link recorded for host h{h}")
            cap[egress[h]] = min(cap[egress[h]], c)
        return Routes(cap, self.node, self.peer, self.paths)


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(v)


def routes_from_sim(
    topology: Mapping[str, object],
    pairs: Iterable[tuple[int, int]],
    sim: str | Path | None = None,
    seed: int = 1,
) -> Routes:
    """Every pair's path and every link, as ``approxnet-sim`` routes them
    (flow mode, ``fluid.record_paths``). `topology` is a scenario's
    ``[topology]`` table (link_delay_us is forced to 0)."""
    from .. import binaries

    exe = binaries.require("approxnet-sim", sim)
    pairs = sorted(set(pairs))
    if not pairs:
        raise SabaError("routes_from_sim: no host pairs")
    topo = {**topology, "link_delay_us": 0.0}
    with tempfile.TemporaryDirectory(prefix="saba-routes-") as tmp:
        d = Path(tmp)
        with open(d / "pairs.csv", "w") as f:
            f.write("src,dst,bytes,start_ns\n")
            f.writelines(f"{s},{t},1,0\n" for s, t in pairs)
        lines = ['mode = "flow"', "duration_ms = 1000.0", f"seed = {seed}", "[topology]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in topo.items()]
        lines += ["[fluid]", 'flows_csv = "pairs.csv"', "record_paths = true"]
        (d / "routes.toml").write_text("\n".join(lines) + "\n")
        subprocess.run(
            [str(exe), "run", "routes.toml", "--out", "out", "--quiet"], cwd=d, check=True
        )
        node: list[str] = []
        peer: list[str] = []
        gbps: list[float] = []
        with open(d / "out" / "links.csv") as f:
            for i, row in enumerate(csv.DictReader(f)):
                if int(row["port"]) != i:
                    raise SabaError(f"links.csv: port ids are not 0..n (row {i})")
                node.append(row["node"])
                peer.append(row["peer"])
                gbps.append(float(row["gbps"]))
        paths: dict[tuple[int, int], I64] = {}
        with open(d / "out" / "flows.csv") as f:
            for row in csv.DictReader(f):
                key = (int(row["src"]), int(row["dst"]))
                paths[key] = np.array([int(p) for p in row["path"].split()], dtype=np.int64)
    missing = [p for p in pairs if p not in paths]
    if missing:
        raise SabaError(
            f"approxnet-sim recorded no path for {len(missing)} pair(s), e.g. {missing[0]}"
        )
    return Routes(np.array(gbps) / 8.0, node, peer, paths)


class SimTopology:
    """The controller's view (:class:`.topology.Topology`) of simulated
    routes: hosts ``h0``, ``h1``, ...; port ``NODE:pID``."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes
        n = 1 + max(max(s, d) for s, d in routes.paths) if routes.paths else 0
        self._hosts = [f"h{i}" for i in range(n)]

    def hosts(self) -> Sequence[str]:
        return self._hosts

    @staticmethod
    def host_index(name: str) -> int:
        """``h12`` -> 12."""
        if not (name.startswith("h") and name[1:].isdigit()):
            raise TopologyError(f"not a simulated host name: {name!r}")
        return int(name[1:])

    def path(self, src: str, dst: str) -> list[Port]:
        s, d = self.host_index(src), self.host_index(dst)
        if s == d:
            raise TopologyError(f"source and destination are the same host {src!r}")
        r = self.routes
        return [Port(r.node[p], f"p{p}", round(float(r.capacity[p]) * 8e9)) for p in r.path(s, d)]

    @staticmethod
    def port_id(key: str) -> int:
        """``tor3:p17`` -> 17."""
        return int(key.rsplit(":p", 1)[1])


@dataclass(frozen=True)
class Stage:
    """Compute for `compute_ns`, then send `bytes` for each (rank, rank)
    pair; the stage ends when they have all arrived. With `overlap` the
    flows start with the computation and the stage ends when both are
    done (communication hidden behind computation, as PageRank's in seed
    003 §2.3, Fig. 2b)."""

    compute_ns: float
    pairs: tuple[tuple[int, int], ...]
    bytes: float
    overlap: bool = False


@dataclass(frozen=True)
class Job:
    """An application instance set: rank i runs on ``hosts[i]``."""

    name: str
    hosts: tuple[int, ...]
    stages: tuple[Stage, ...]

    def host_pairs(self) -> set[tuple[int, int]]:
        """The (src, dst) host pairs its flows use."""
        return {
            (self.hosts[a], self.hosts[b])
            for st in self.stages
            for a, b in st.pairs
            if self.hosts[a] != self.hosts[b]
        }


@dataclass
class Flows:
    """The active flows at one instant (what a policy sees)."""

    job: I64
    size: F64
    remaining: F64
    stage_key: I64  # job * 1_000_000 + stage: the coflow a flow belongs to
    entry_flow: I64
    entry_link: I64

    @property
    def count(self) -> int:
        """Number of active flows."""
        return len(self.job)


class Policy(Protocol):
    """Per (flow, link) entry: priority level, queue id, and the queues'
    weights."""

    def entries(self, flows: Flows, routes: Routes) -> tuple[I64, I64, F64]: ...

    def job_done(self, job: int) -> None: ...


class FlowFair:
    """Per-flow max-min: every flow its own queue, equal weights (an ideal
    per-flow congestion control; the paper's baseline approximates it)."""

    def entries(self, flows: Flows, routes: Routes) -> tuple[I64, I64, F64]:
        n = len(flows.entry_flow)
        return np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64), np.ones(n)

    def job_done(self, job: int) -> None:
        return None


class PortQueues:
    """Per-port queues: ``table[(port, job)] = (queue, weight)``; the flows
    of one queue on one port share it equally. A (port, job) missing from
    the table is an error (a flow the controller was not told about)."""

    def __init__(self, table: Mapping[tuple[int, int], tuple[int, float]], jobs: int) -> None:
        self.jobs = jobs
        self.set_table(table)

    def set_table(self, table: Mapping[tuple[int, int], tuple[int, float]]) -> None:
        """Replaces the queue table (a reallocation)."""
        self._q: dict[int, tuple[int, float]] = {}
        for (port, job), (queue, weight) in table.items():
            if not weight > 0:
                raise SabaError(f"queue weight at port {port} for job {job} must be > 0")
            self._q[port * self.jobs + job] = (queue, weight)

    def entries(self, flows: Flows, routes: Routes) -> tuple[I64, I64, F64]:
        keys = flows.entry_link * self.jobs + flows.job[flows.entry_flow]
        uk, inv = np.unique(keys, return_inverse=True)
        qk = np.empty(len(uk), dtype=np.int64)
        qw = np.empty(len(uk))
        for i, k in enumerate(uk.tolist()):
            got = self._q.get(k)
            if got is None:
                port, job = divmod(k, self.jobs)
                raise SabaError(f"no queue for job {job} at port {port}")
            qk[i] = (k // self.jobs) * max(self.jobs, 64) + got[0]
            qw[i] = got[1]
        queues, qinv = np.unique(qk, return_inverse=True)
        weight = np.zeros(len(queues))
        weight[qinv] = qw
        return np.zeros(len(keys), dtype=np.int64), qinv[inv].astype(np.int64), weight

    def job_done(self, job: int) -> None:
        return None

    @classmethod
    def per_app(cls, jobs: Sequence[Job], routes: Routes) -> PortQueues:
        """One queue per app on every port, equal weights: the paper's
        "ideal max-min" (§8.4 study 4: each workload in a dedicated queue,
        served round robin)."""
        table: dict[tuple[int, int], tuple[int, float]] = {}
        for j, job in enumerate(jobs):
            for s, d in job.host_pairs():
                for p in routes.path(s, d).tolist():
                    table[(p, j)] = (j, 1.0)
        return cls(table, len(jobs))


class SabaPolicy(PortQueues):
    """The Saba controller's per-port queues and weights. Apps register
    with their models, open one connection per host pair they use, and
    deregister when their job ends (§6's lifecycle), which re-allocates.
    `queues` None = unlimited (each app its own queue at its eq. 2
    weight); `controllers` > 1 = the distributed mode (§5.4): the app ->
    PL mapping published offline from `published` models (default: the
    jobs' own), switches split among the controllers by name."""

    def __init__(
        self,
        jobs: Sequence[Job],
        models: Mapping[str, Sequence[float]],
        routes: Routes,
        *,
        queues: int | None = 8,
        levels: int = 16,
        controllers: int = 1,
        published: Mapping[str, Sequence[float]] | None = None,
        seed: int = 0,
    ) -> None:
        self.job_names = [j.name for j in jobs]
        self.unlimited = queues is None
        topo = SimTopology(routes)
        q = 16 if queues is None else queues
        if controllers < 1:
            raise SabaError(f"controllers must be >= 1, got {controllers}")
        if controllers == 1:
            self.ctls = [Controller(topo, levels=levels, queues=q, seed=seed)]
        else:
            shared = Store()
            publish_mapping(shared, dict(published or models), levels=levels, seed=seed)
            nodes = sorted(set(routes.node))
            self.ctls = [
                Controller(
                    topo,
                    levels=levels,
                    queues=q,
                    seed=seed,
                    switches=nodes[k::controllers],
                    shared_pls=shared,
                )
                for k in range(controllers)
            ]
        for name in self.job_names:
            if name not in models:
                raise SabaError(f"no sensitivity model for app {name!r}")
            for c in self.ctls:
                c.register(name, list(models[name]))
        for job in jobs:
            for s, d in sorted(job.host_pairs()):
                for c in self.ctls:
                    c.open_connection(job.name, f"h{s}", f"h{d}")
        super().__init__(self._table(), len(jobs))

    def _table(self) -> dict[tuple[int, int], tuple[int, float]]:
        index = {n: i for i, n in enumerate(self.job_names)}
        table: dict[tuple[int, int], tuple[int, float]] = {}
        for c in self.ctls:
            for cfg in c.port_configs():
                port = SimTopology.port_id(cfg.key)
                if self.unlimited:
                    for k, (app, w) in enumerate(cfg.app_weights):
                        table[(port, index[app])] = (k, w)
                else:
                    for qc in cfg.queues:
                        for app in qc.apps:
                            table[(port, index[app])] = (qc.queue, qc.weight)
        return table

    def job_done(self, job: int) -> None:
        for c in self.ctls:
            c.deregister(self.job_names[job])
        self.set_table(self._table())


class SrptLevels:
    """Homa-like: strict priority by *remaining* bytes (shortest first),
    re-ranked at every event, on `levels` levels whose cut-offs are the
    equal-count quantiles of all flow sizes of the run; flows of a level
    share by per-flow max-min. Homa's receiver-driven grants, overcommit
    and unscheduled bytes are not modelled (seed 003 §8.4 study 5 ran
    Homa's own simulator)."""

    def __init__(self, sizes: Sequence[float], levels: int = 8) -> None:
        s = np.sort(np.asarray(sizes, dtype=float))
        if len(s) == 0 or levels < 1:
            raise SabaError("SrptLevels needs flow sizes and levels >= 1")
        self.cuts = np.unique(np.quantile(s, np.arange(1, levels) / levels))

    def entries(self, flows: Flows, routes: Routes) -> tuple[I64, I64, F64]:
        lvl = np.searchsorted(self.cuts, flows.remaining, side="left").astype(np.int64)
        n = len(flows.entry_flow)
        return lvl[flows.entry_flow], np.arange(n, dtype=np.int64), np.ones(n)

    def job_done(self, job: int) -> None:
        return None


class CoflowOrder:
    """Sincronia-like: each job's stage (its flows) is a coflow; the
    active coflows are ordered smallest-bottleneck-first (the most bytes
    any one link carries for the coflow, over that link's capacity, from
    the bytes still to send — Sincronia's BSSI ordering reduced to its
    first step, no weights), re-ordered at every event, and the first
    ``levels - 1`` get one strict priority level each, the rest share the
    last; per-flow max-min within a level. Clairvoyant, as Sincronia is."""

    def __init__(self, levels: int = 8) -> None:
        if levels < 1:
            raise SabaError("CoflowOrder needs levels >= 1")
        self.levels = levels

    def entries(self, flows: Flows, routes: Routes) -> tuple[I64, I64, F64]:
        ck, cinv = np.unique(flows.stage_key, return_inverse=True)
        e_c = cinv[flows.entry_flow]
        key = e_c * len(routes.capacity) + flows.entry_link
        uk, kinv = np.unique(key, return_inverse=True)
        load = np.bincount(kinv, weights=flows.remaining[flows.entry_flow]).astype(float)
        load /= routes.capacity[uk % len(routes.capacity)]
        bottleneck = np.zeros(len(ck))
        np.maximum.at(bottleneck, uk // len(routes.capacity), load)
        rank = np.empty(len(ck), dtype=np.int64)
        rank[np.lexsort((ck, bottleneck))] = np.arange(len(ck))
        lvl = np.minimum(rank, self.levels - 1)
        n = len(flows.entry_flow)
        return lvl[e_c], np.arange(n, dtype=np.int64), np.ones(n)

    def job_done(self, job: int) -> None:
        return None


#: Re-allocations in a row whose Newton steps from the bracket failed
#: before `run` stops trying them (see run).
COLD_MISSES = 3


@dataclass
class RunResult:
    """Completion time per job (ns) and what the run cost."""

    jct_ns: dict[str, float]
    events: int
    solves: int
    iterations: int
    worst_change: float = 0.0
    uncertified: int = 0  # exact solver: re-allocations the reference finished
    log: list[str] = field(default_factory=list)


def run(
    jobs: Sequence[Job],
    routes: Routes,
    policy: Policy,
    batch: float = 0.0,
    tol: float = 1e-6,
    solver: str = "exact",
) -> RunResult:
    """Runs the jobs together from t = 0 until all are done. `batch`: a
    flow due within ``batch`` x (its time so far) after an event completes
    at that event (0 = exact; otherwise each flow's completion is early by
    at most that fraction of its duration, and flows of one stage that end
    nearly together cost one re-allocation instead of many). `tol`: the
    sharing iteration's tolerance where it is needed (:func:`.allocate`).
    `solver`: "exact" (:func:`.fluidexact.solve`, a certified fixed point)
    or "reference" (:func:`.fluidshare.allocate`, the iteration)."""
    if solver not in ("exact", "reference"):
        raise SabaError(f"solver must be 'exact' or 'reference', got {solver!r}")
    if not 0.0 <= batch < 1.0:
        raise SabaError(f"batch must be in [0, 1), got {batch}")
    for job in jobs:
        if not job.stages:
            raise SabaError(f"job {job.name!r} has no stages")
        for st in job.stages:
            if not (st.compute_ns >= 0 and st.bytes > 0):
                raise SabaError(f"job {job.name!r}: compute_ns must be >= 0 and bytes > 0")
            for a, b in st.pairs:
                if not (0 <= a < len(job.hosts) and 0 <= b < len(job.hosts)):
                    raise SabaError(f"job {job.name!r}: pair ({a}, {b}) names no rank")
    n_jobs = len(jobs)
    stage = [0] * n_jobs
    compute_end = [jobs[j].stages[0].compute_ns for j in range(n_jobs)]
    pending = [0] * n_jobs  # flows of the current stage not yet arrived
    computing = [False] * n_jobs  # an overlapped stage's computation still running
    done: dict[str, float] = {}
    f_job: list[int] = []
    f_size: list[float] = []
    f_rem: list[float] = []
    f_key: list[int] = []
    f_start: list[float] = []
    f_path: list[I64] = []
    rates = np.zeros(0)
    dirty = True
    t = 0.0
    misses = 0
    res = RunResult({}, 0, 0, 0)

    def start_comm(j: int) -> None:
        st = jobs[j].stages[stage[j]]
        hosts = jobs[j].hosts
        n = 0
        for a, b in st.pairs:
            if hosts[a] == hosts[b]:
                continue  # same host: no network
            f_job.append(j)
            f_size.append(st.bytes)
            f_rem.append(st.bytes)
            f_key.append(j * 1_000_000 + stage[j])
            f_start.append(t)
            f_path.append(routes.path(hosts[a], hosts[b]))
            n += 1
        pending[j] = n
        if n == 0 and not computing[j]:
            finish_stage(j)

    def finish_stage(j: int) -> None:
        nonlocal dirty
        stage[j] += 1
        if stage[j] == len(jobs[j].stages):
            done[jobs[j].name] = t
            compute_end[j] = np.inf
            policy.job_done(j)
            dirty = True
        else:
            compute_end[j] = t + jobs[j].stages[stage[j]].compute_ns
            begin_overlap(j)

    def begin_overlap(j: int) -> None:
        nonlocal dirty
        if jobs[j].stages[stage[j]].overlap:
            computing[j] = True
            start_comm(j)
            dirty = True

    for j in range(n_jobs):
        begin_overlap(j)

    while len(done) < n_jobs:
        # compute phases ending now
        for j in range(n_jobs):
            if compute_end[j] <= t:
                compute_end[j] = np.inf
                if computing[j]:  # overlapped: the flows started with it
                    computing[j] = False
                    if pending[j] == 0:
                        finish_stage(j)
                else:
                    start_comm(j)
                dirty = True
        if len(done) == n_jobs:
            break
        if dirty and f_job:
            ef = np.concatenate([np.full(len(p), i, dtype=np.int64) for i, p in enumerate(f_path)])
            el = np.concatenate(f_path)
            flows = Flows(
                np.array(f_job, dtype=np.int64),
                np.array(f_size),
                np.array(f_rem),
                np.array(f_key, dtype=np.int64),
                ef,
                el,
            )
            level, queue, qweight = policy.entries(flows, routes)
            ent = Entries(ef, el, level, queue, qweight, routes.capacity, len(f_job))
            if solver == "exact":
                # after COLD_MISSES re-allocations in a row whose Newton
                # steps from the bracket did not certify, go from the
                # bracket straight to the reference + polish (every 8th
                # still tries Newton)
                ex = solve(ent, tol=tol, cold=misses < COLD_MISSES or res.solves % 8 == 0)
                misses = 0 if ex.cold else misses + 1
                rates, passes, change = ex.rates, ex.passes, ex.change
                res.uncertified += not ex.exact
            else:
                alloc = allocate(ent, tol=tol)
                rates, passes, change = alloc.rates, alloc.iterations, alloc.change
            res.solves += 1
            res.iterations += passes
            res.worst_change = max(res.worst_change, change)
            dirty = False
        res.events += 1
        next_compute = min(compute_end) if compute_end else np.inf
        rem = np.array(f_rem)
        with np.errstate(divide="ignore"):
            due = rem / rates if f_job else np.zeros(0)
        next_flow = float(due.min()) if f_job else np.inf
        t_next = min(next_compute, t + next_flow)
        if not np.isfinite(t_next):
            raise SabaError("the simulation stalled (a flow with rate 0)")
        dt = t_next - t
        if f_job:
            rem = rem - rates * dt
            slack = batch * (t_next - np.array(f_start)) + 1e-9 * max(dt, 1.0)
            finished = due <= dt + slack
        else:
            finished = np.zeros(0, dtype=bool)
        t = t_next
        if finished.any():
            keep = np.flatnonzero(~finished)
            gone = [f_job[i] for i in np.flatnonzero(finished).tolist()]
            f_job[:] = [f_job[i] for i in keep]
            f_size[:] = [f_size[i] for i in keep]
            f_rem[:] = rem[keep].tolist()
            f_key[:] = [f_key[i] for i in keep]
            f_start[:] = [f_start[i] for i in keep]
            f_path[:] = [f_path[i] for i in keep]
            rates = rates[keep]
            dirty = True
            for j in gone:
                pending[j] -= 1
                if pending[j] == 0 and not computing[j]:
                    finish_stage(j)
        else:
            f_rem[:] = rem.tolist()
    res.jct_ns = done
    return res
