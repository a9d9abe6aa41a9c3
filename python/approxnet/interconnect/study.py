"""Seed 004 §5's execution-time study on the simulator's flow-level mode.

The networks of Table 1, the link modulations, the topologies of §5.6 and
the application skeletons of Table 2 are data shipped with the package
(``approxnet/studies/interconnect/study.toml``); this module turns one
(network, topology, application, protection level) point into a
flow-mode scenario with one staged job and runs it with the
``approxnet-sim`` binary (or, without one, the native module's simulator:
the same engine).

The approximate network's per-message bandwidth (§5.1.2,
``B~ = f_p / (t_p + f_p - t_p f_p) B``) is applied by scaling each
message's *size* by ``1 / factor``: a protected bit occupies ``1 / f_p``
symbol slots of the link, so a message of ``s`` bits uses the link for
``s (t_p / f_p + 1 - t_p)`` bit times whether it is alone or shares the
link. Scaling the size keeps that under max-min sharing (the link's
capacity is what all messages' symbols consume); a per-flow rate cap would
not (a capped flow leaves the rest of the link to others, as if its
protected bits were free).

    >>> from approxnet.interconnect import study
    >>> s = study.load()                                    # doctest: +SKIP
    >>> r = study.run_point(s, "approx", "df11", "fft")     # doctest: +SKIP
    >>> r.jct_us                                            # doctest: +SKIP
"""

from __future__ import annotations

import csv
import math
import os
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import approx_types, binaries
from . import channel

__all__ = [
    "Comm",
    "Compute",
    "Phase",
    "PointResult",
    "Study",
    "load",
    "message_counts",
    "run_point",
    "run_scenario",
    "scenario",
    "skeleton",
    "topology_hosts",
    "wire_factor",
]

#: the shipped study data (package data: an installed wheel has it)
STUDY_TOML = Path(__file__).resolve().parents[1] / "studies" / "interconnect" / "study.toml"

APPROX_MODES = ("none", "protected", "precise_free", "full")


@dataclass(frozen=True)
class Compute:
    """Computation on every rank, Gflop per rank."""

    gflop: float


@dataclass(frozen=True)
class Comm:
    """One communication step (the fluid mode's phase), in the simulator's
    built-in collectives where one fits, so a scenario says a collective
    in one line (docs/simulator-fluid.md):

    * ``flows``: explicit rank ``pairs``, one message each;
    * ``allreduce_rd``: recursive doubling, within runs of ``group``
      consecutive ranks (0: all ranks);
    * ``all_to_all_pairwise``: ``procs - 1`` steps, in step ``k`` rank
      ``i`` sends to ``i + k``;
    * ``transpose``: rank ``(r, c)`` of a ``side x side`` grid sends to
      ``(c, r)``;
    * ``scatter``: rank ``root`` sends to every other rank;
    * ``panel_bcast``: SUMMA's panel broadcast on a ``side x side`` grid,
      from column ``root`` along the rows and row ``root`` along the
      columns, binomially (``log2 side`` steps).

    ``bytes`` per message (for ``allreduce_rd``, the vector).
    ``approximable``: the payload is the application's approximate data
    type; otherwise precise."""

    kind: str
    bytes: float
    approximable: bool
    pairs: tuple[tuple[int, int], ...] = ()
    group: int = 0
    side: int = 0
    root: int = 0

    def steps(self, procs: int) -> list[list[tuple[int, int]]]:
        """The ``(src, dst)`` messages of each step among ``procs`` ranks
        (the simulator's rule, restated for counting and checking)."""
        if self.kind == "flows":
            return [list(self.pairs)]
        if self.kind == "allreduce_rd":
            g = self.group or procs
            return [[(i, i ^ d) for i in range(procs)] for d in _powers_below(g)]
        if self.kind == "all_to_all_pairwise":
            return [[(i, (i + k) % procs) for i in range(procs)] for k in range(1, procs)]
        if self.kind == "transpose":
            n = self.side
            return [[(r * n + c, c * n + r) for r in range(n) for c in range(n) if r != c]]
        if self.kind == "scatter":
            return [[(self.root, i) for i in range(procs) if i != self.root]]
        if self.kind == "panel_bcast":
            n, k = self.side, self.root
            out = []
            for d in _powers_below(n):
                moves = [(ln, (k + r) % n, (k + r + d) % n) for ln in range(n) for r in range(d)]
                row = [(ln * n + a, ln * n + b) for ln, a, b in moves]
                out.append(row + [(a * n + ln, b * n + ln) for ln, a, b in moves])
            return out
        raise ValueError(f"Comm.kind: {self.kind!r}, no such collective")

    def messages(self, procs: int) -> int:
        """Messages over all steps."""
        return sum(len(s) for s in self.steps(procs))

    def toml_keys(self) -> list[str]:
        """The phase's keys beside ``comm`` and ``kb``."""
        if self.kind == "flows":
            return ["pairs = [" + ", ".join(f"[{a}, {b}]" for a, b in self.pairs) + "]"]
        if self.kind == "allreduce_rd" and self.group:
            return [f"group = {self.group}"]
        if self.kind == "transpose":
            return [f"grid = [{self.side}, {self.side}]"]
        if self.kind == "scatter":
            return [f"root = {self.root}"]
        if self.kind == "panel_bcast":
            return [f"grid = [{self.side}, {self.side}]", f"root = {self.root}"]
        return []


def _powers_below(n: int) -> list[int]:
    out, d = [], 1
    while d < n:
        out.append(d)
        d <<= 1
    return out


Phase = Compute | Comm


@dataclass(frozen=True)
class Study:
    """The study data (study.toml) as read."""

    system: dict[str, Any]
    networks: dict[str, dict[str, Any]]
    modulations: dict[str, float]
    topologies: dict[str, dict[str, Any]]
    apps: dict[str, dict[str, Any]]


def _need(table: dict[str, Any], key: str, where: str) -> Any:
    if key not in table:
        raise ValueError(f"{where}: missing key {key!r}")
    return table[key]


def load(path: str | os.PathLike[str] = STUDY_TOML) -> Study:
    """Reads and checks the study file; a missing or bad key raises
    ValueError naming it."""
    with open(path, "rb") as f:
        d = tomllib.load(f)
    for sec in ("system", "networks", "modulations", "topologies", "apps"):
        _need(d, sec, str(path))
    for name, net in d["networks"].items():
        for k in ("gbps", "switch_delay_ns", "fec_ns", "approx"):
            _need(net, k, f"networks.{name}")
        if net["approx"] not in APPROX_MODES:
            raise ValueError(
                f"networks.{name}.approx: {net['approx']!r}, expected one of {APPROX_MODES}"
            )
        if not net["gbps"] > 0:
            raise ValueError(f"networks.{name}.gbps: {net['gbps']}, expected > 0")
    fp = _need(d["system"], "protected_factor", "system")
    if not 0 < fp <= 1:
        raise ValueError(f"system.protected_factor: {fp}, expected in (0, 1]")
    for name, app in d["apps"].items():
        for k in ("dtype", "level"):
            _need(app, k, f"apps.{name}")
        if name not in _SKELETONS:
            raise ValueError(f"apps.{name}: no skeleton; known: {', '.join(_SKELETONS)}")
    return Study(d["system"], d["networks"], d["modulations"], d["topologies"], d["apps"])


# ---------------------------------------------------------------- skeletons


def _grid(procs: int, app: str) -> int:
    side = math.isqrt(procs)
    if side * side != procs or side & (side - 1):
        raise ValueError(f"{app}: {procs} processes; the skeleton needs a square power of two")
    return side


def _log2(procs: int, app: str) -> int:
    if procs < 2 or procs & (procs - 1):
        raise ValueError(f"{app}: {procs} processes; the skeleton needs a power of two >= 2")
    return procs.bit_length() - 1


def _cg(app: dict[str, Any], procs: int, inner_approx: bool) -> list[Phase]:
    """NPB CG on a ``side x side`` grid (NPB's layout for a square power of
    two): per inner iteration the matrix-vector product (local compute, the
    row sum exchanged in ``log2 side`` steps of the whole segment, then the
    transpose exchange), and two dot products (``log2 side`` steps of one
    double within the row). One outer iteration = ``inner`` of those plus
    the residual (a product and a norm). CG: only the residual product's
    vectors are approximable (Table 2: 2 % of the messages); FT-CG: also
    every inner transpose (Table 2: 8 %)."""
    side = _grid(procs, "cg")
    steps = _log2(side, "cg") if side > 1 else 0
    na, nonzer, inner = int(app["na"]), int(app["nonzer"]), int(app["inner"])
    seg = na / side * 8.0  # bytes: a segment of doubles
    nnz = na * (nonzer + 1) ** 2  # NPB CG's nonzero count, to the order
    matvec = Compute(2.0 * nnz / procs / 1e9)
    vec_ops = Compute(10.0 * na / procs / 1e9)

    def product(approx_sum: bool, approx_t: bool) -> list[Phase]:
        out: list[Phase] = [matvec]
        if steps:
            out.append(Comm("allreduce_rd", seg, approx_sum, group=side))
            out.append(Comm("transpose", seg, approx_t, side=side))
        return out

    def dot() -> list[Phase]:
        return [Comm("allreduce_rd", 8.0, False, group=side)] if steps else []

    phases: list[Phase] = []
    for _ in range(inner):
        phases += product(False, inner_approx)
        phases += dot()
        phases.append(vec_ops)
        phases += dot()
    phases += product(True, True)
    phases += dot()
    return phases


def cg(app: dict[str, Any], procs: int) -> list[Phase]:
    """NPB CG, one outer iteration (see :func:`_cg`)."""
    return _cg(app, procs, inner_approx=False)


def ftcg(app: dict[str, Any], procs: int) -> list[Phase]:
    """ABFT CG (seed 004 [7]): CG's messages, checks on local invariants
    (no extra messages); the inner transposes are approximable too."""
    return _cg(app, procs, inner_approx=True)


def fft(app: dict[str, Any], procs: int) -> list[Phase]:
    """NPB FT, one iteration: evolve + a 3-D FFT (``6 N + 5 N log2 N``
    flop over ``N = side^3`` points), the slab transpose as MVAPICH's
    pairwise-exchange all-to-all (``procs - 1`` steps, in step ``k`` rank
    ``i`` sends its block to ``i + k``; approximable complex128), and the
    checksum all-reduce (one complex, precise)."""
    _log2(procs, "fft")
    n = int(app["side"]) ** 3
    block = n * 16.0 / procs / procs
    phases: list[Phase] = [Compute((6.0 * n + 5.0 * n * math.log2(n)) / procs / 1e9)]
    phases.append(Comm("all_to_all_pairwise", block, True))
    phases.append(Comm("allreduce_rd", 16.0, False))
    return phases


def kmeans(app: dict[str, Any], procs: int) -> list[Phase]:
    """Parallel Lloyd's K-means (seed 004 [44]): rank 0 scatters the float32
    points (approximable), then per iteration every rank assigns its points
    (``3 d k`` flop per point) and the per-cluster sums and counts
    (``k (d + 1)`` float32, approximable) are all-reduced, with a precise
    all-reduce of the number of changed labels (8 bytes)."""
    _log2(procs, "kmeans")
    pts, d, k = int(app["points"]), int(app["dims"]), int(app["clusters"])
    phases: list[Phase] = [Comm("scatter", pts / procs * d * 4.0, True, root=0)]
    for _ in range(int(app["iterations"])):
        phases.append(Compute(3.0 * d * k * pts / procs / 1e9))
        phases.append(Comm("allreduce_rd", k * (d + 1) * 4.0, True))
        phases.append(Comm("allreduce_rd", 8.0, False))
    return phases


def ftmm(app: dict[str, Any], procs: int) -> list[Phase]:
    """ABFT matrix multiply (seed 004 [43]) as SUMMA on a ``side x side``
    grid: for each of ``side`` panels, A's block broadcast along the rows
    and B's along the columns (binomial, together), then ``2 b^3`` flop
    (``b = n / side``); the checksums travel inside the blocks; one precise
    all-reduce (8 bytes) of the verification result at the end."""
    side = _grid(procs, "ftmm")
    b = int(app["n"]) / side
    phases: list[Phase] = []
    for k in range(side):
        if side > 1:
            phases.append(Comm("panel_bcast", b * b * 8.0, True, side=side, root=k))
        phases.append(Compute(2.0 * b**3 / 1e9))
    phases.append(Comm("allreduce_rd", 8.0, False))
    return phases


_SKELETONS = {"cg": cg, "fft": fft, "kmeans": kmeans, "ftmm": ftmm, "ftcg": ftcg}


def skeleton(study: Study, app: str, procs: int) -> list[Phase]:
    """The phases of ``app`` at ``procs`` processes."""
    if app not in study.apps:
        raise ValueError(f"unknown application {app!r}; known: {', '.join(study.apps)}")
    return _SKELETONS[app](study.apps[app], procs)


def message_counts(phases: Sequence[Phase], procs: int) -> tuple[int, int, float, float]:
    """``(messages, approximable messages, bytes, approximable bytes)``."""
    msgs = approx = 0
    byts = abytes = 0.0
    for p in phases:
        if isinstance(p, Compute):
            continue
        m = p.messages(procs)
        msgs += m
        byts += m * p.bytes
        if p.approximable:
            approx += m
            abytes += m * p.bytes
    return msgs, approx, byts, abytes


# ---------------------------------------------------------------- scenarios


def wire_factor(study: Study, network: str, app: str, approximable: bool, level: int) -> float:
    """How many times its size a message occupies the link: 1 on an
    error-free or fully approximate network; on the approximate one
    ``1 / B~`` (§5.1.2) with ``t_p`` the protected fraction of the data
    type at ``level`` for approximable messages, ``t_p = 1`` for precise
    ones (or 1 with ``approx = "precise_free"``)."""
    mode = study.networks[network]["approx"]
    if mode in ("none", "full"):
        return 1.0
    fp = float(study.system["protected_factor"])
    if approximable:
        tp = approx_types.protected_fraction(study.apps[app]["dtype"], level)
        return 1.0 / channel.average_bandwidth_factor(tp, fp)
    return 1.0 if mode == "precise_free" else 1.0 / fp


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return repr(v)


def scenario(
    study: Study,
    network: str,
    topology: str,
    app: str,
    *,
    level: int | None = None,
    gbps: float | None = None,
    switch_delay_ns: float | None = None,
    topology_seed: int = 1,
    phases: Sequence[Phase] | None = None,
    ranks: int | None = None,
) -> str:
    """The flow-mode scenario (TOML text) of one point; ``level`` defaults
    to the application's Table 2 level, ``gbps`` and ``switch_delay_ns`` to
    the network's (the FEC delay is added to every switch's). ``phases``
    (e.g. a traced run's, :mod:`.trace`) replace the application's
    skeleton, on the first ``ranks`` hosts (default: every host; the
    application still names the data type)."""
    if network not in study.networks:
        raise ValueError(f"unknown network {network!r}; known: {', '.join(study.networks)}")
    if topology not in study.topologies:
        raise ValueError(f"unknown topology {topology!r}; known: {', '.join(study.topologies)}")
    net = study.networks[network]
    topo = dict(study.topologies[topology])
    procs = _hosts(topo)
    if ranks is not None:
        if not 1 <= ranks <= procs:
            raise ValueError(f"ranks: {ranks}, expected 1 ..= {procs} (the topology's hosts)")
        procs = ranks
    lvl = int(study.apps[app]["level"]) if level is None else level
    rate = float(net["gbps"] if gbps is None else gbps)
    sd = float(net["switch_delay_ns"] if switch_delay_ns is None else switch_delay_ns)
    lines = [
        'mode = "flow"',
        f'name = "{app}-{network}-{topology}"',
        "duration_ms = 1000000.0",
        "seed = 1",
        "[topology]",
        *(f"{k} = {_toml_value(v)}" for k, v in topo.items()),
        f"host_gbps = {rate!r}",
        f"core_gbps = {rate!r}",
        f"link_delay_us = {float(study.system['link_delay_us'])!r}",
        f"switch_delay_ns = {sd + float(net['fec_ns'])!r}",
    ]
    if topo["kind"] == "random_regular":
        lines.append(f"topology_seed = {topology_seed}")
    lines += [
        "[[staged]]",
        f'name = "{app}"',
        f"hosts = {list(range(procs))}",
        "iterations = 1",
        f"host_gflops = {float(study.system['host_gflops'])!r}",
    ]
    factor = {a: wire_factor(study, network, app, a, lvl) for a in (False, True)}
    for p in skeleton(study, app, procs) if phases is None else phases:
        lines.append("[[staged.phases]]")
        if isinstance(p, Compute):
            lines.append(f"compute_gflop = {p.gflop!r}")
            continue
        lines.append(f'comm = "{p.kind}"')
        lines.append(f"kb = {p.bytes * factor[p.approximable] / 1000.0!r}")
        lines += p.toml_keys()
    return "\n".join(lines) + "\n"


def topology_hosts(study: Study, topology: str) -> int:
    """Hosts (= processes) of a study topology."""
    return _hosts(study.topologies[topology])


def _hosts(topo: dict[str, Any]) -> int:
    kind = topo["kind"]
    per = int(topo["hosts_per_switch"])
    if kind == "dragonfly":
        return int(topo["groups"]) * int(topo["routers_per_group"]) * per
    if kind == "torus":
        return math.prod(int(x) for x in topo["dims"]) * per
    if kind == "random_regular":
        return int(topo["switches"]) * per
    raise ValueError(f"topology kind {kind!r}: no host count rule here")


@dataclass(frozen=True)
class PointResult:
    """One simulated run of a staged job."""

    jct_us: float
    compute_us: float
    comm_us: float
    flows: int


def run_scenario(text: str, sim: str | os.PathLike[str] | None = None) -> PointResult:
    """Runs the scenario text with the ``approxnet-sim`` binary (``sim``,
    else the one found as usual, else the native module) and reads its
    staged job's row; raises RuntimeError when the run fails or the job
    did not finish."""
    exe = binaries.find("approxnet-sim", sim)
    if exe is None and (sim is not None or os.environ.get(binaries.env_var("approxnet-sim"))):
        exe = binaries.require("approxnet-sim", sim)  # a named tool is missing: raises
    with tempfile.TemporaryDirectory(prefix="approxnet-ic-") as tmp:
        path = Path(tmp) / "scenario.toml"
        path.write_text(text)
        out = Path(tmp) / "out"
        if exe is None:
            from .._native import ScenarioError, sim_run

            try:
                sim_run(str(path), True, str(out), [], False)
            except ScenarioError as e:
                raise RuntimeError(f"the simulator refused the scenario: {e}") from None
        else:
            proc = subprocess.run(
                [str(exe), "run", str(path), "--out", str(out), "--quiet", "--no-flows"],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"approxnet-sim failed: {proc.stderr.strip()}")
        with open(out / "staged.csv") as f:
            row = next(iter(csv.DictReader(f)))
    if row["done_iterations"] != row["iterations"]:
        raise RuntimeError("the staged job did not finish within duration_ms")
    return PointResult(
        jct_us=float(row["jct_ns"]) / 1e3,
        compute_us=float(row["compute_ns"]) / 1e3,
        comm_us=float(row["comm_ns"]) / 1e3,
        flows=int(row["flows"]),
    )


def run_point(
    study: Study,
    network: str,
    topology: str,
    app: str,
    *,
    sim: str | os.PathLike[str] | None = None,
    **kw: Any,
) -> PointResult:
    """:func:`scenario` then :func:`run_scenario`."""
    return run_scenario(scenario(study, network, topology, app, **kw), sim)


def iter_levels(dtype: str) -> Iterator[int]:
    """Protection levels 0, 8, ... up to the word size of ``dtype`` (per
    part for complex types)."""
    bits = {"float16": 16, "bfloat16": 16, "float32": 32, "complex64": 32}.get(dtype, 64)
    yield from range(0, bits + 1, 8)
