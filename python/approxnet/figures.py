"""The seed figures the simulator reproduces: one plan per figure.

A figure is a list of labelled runs, each a study (a scenario file shipped
in :mod:`approxnet.studies`) with ``--set`` overrides; ``quick`` shrinks
the fabric and the run to CI size (k = 4 fat-tree, 16 hosts, 6 ms) where
that is meaningful. :mod:`approxnet.repro` runs a plan and writes its table
and plot; ``experiments/netapprox/run.py`` runs the same plans for the
result files the docs quote.

    >>> from approxnet import figures
    >>> [r.label for r in figures.plan("fig10", quick=True)]
    ['atp-full-0.5']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["FIGURES", "Figure", "Run", "figure", "figure_of_study", "plan"]

MSRS = (0.125, 0.25, 0.5, 0.75, 1.0)
"""The MSRs seed 000 section 7.1 sweeps (Figs. 5-9, 12)."""

BASELINES = (
    "atp-full",
    "dctcp-ss",
    "dctcp-es",
    "pfabric-ss",
    "pfabric-es",
    "aeolus-ss",
    "aeolus-es",
    "udp",
)
"""ATP and every baseline of the NetApprox comparison (Figs. 5 and 6)."""

VARIANTS = ("atp-base", "atp-rc", "atp-mrdf", "atp-full")
"""The ablation of seed 000 Fig. 12: Base -> rate control -> MRDF -> Full."""

LOADS = {"fig5": (0.1, 0.2, 0.3), "fig6": (0.3, 0.5, 0.7), "fig12": (0.2,), "fig12hd": (0.5,)}
"""Offered loads swept per figure (a fraction of a host link, application
bytes). Seed 000 gives no load and calls FBKV the lighter workload (section
7.1.1), so FBKV is swept lower than FBHD."""

BOUND_SPEEDUP = 100
"""How much faster than the study's links the ideal network of the bound
figures is (``fig5bound``, ``fig6bound``)."""

QUICK = ("topology.k=4", "topology.hosts=16", "duration_ms=6.0", "jobs.0.stop_ms=3.0")
"""CI size. FBKV jobs take ~1 ms to produce their 50 messages: runs last
3 ms past the last arrival so that no scheme's jobs are cut off."""


@dataclass(frozen=True)
class Run:
    """One simulator run of a figure."""

    label: str
    """Unique within the figure, e.g. ``atp-full-0.5-L0.2``."""
    study: str
    """The scenario, ``<experiment>/<study>`` under :mod:`approxnet.studies`."""
    sets: tuple[str, ...]
    """``--set KEY=VALUE`` overrides."""


@dataclass(frozen=True)
class Figure:
    """A figure of a seed paper and what it shows."""

    name: str
    """``fig5``, ``fig12hd``, ..."""
    study: str
    """The main scenario of the figure."""
    title: str
    """What the paper's figure shows, in one line."""
    quick_changes: bool = True
    """False where the figure's fabric is already small (a dumbbell)."""
    kind: str = "jobs"
    """``jobs``: a table of job classes (JCT vs MSR); ``training``: the seed
    001 study's own tables and plots (:mod:`approxnet.dml`)."""


FIGURES: dict[str, Figure] = {
    f.name: f
    for f in (
        Figure("fig5", "netapprox/fig5_fbkv", "Seed 000 Fig. 5 / 7: FBKV JCT and queue vs MSR"),
        Figure("fig6", "netapprox/fig6_fbhd", "Seed 000 Fig. 6 / 8: FBHD JCT and queue vs MSR"),
        Figure("fig9", "netapprox/fig9_incast", "Seed 000 Fig. 9: incast JCT vs MSR"),
        Figure(
            "fig10",
            "netapprox/fig10_timeline",
            "Seed 000 Fig. 10: TLR, rate and queue of one job over time",
            quick_changes=False,
        ),
        Figure(
            "fig11",
            "netapprox/fig11_shift",
            "Seed 000 Fig. 11: FixTLR / FixPrio / Full under a queue shift",
            quick_changes=False,
        ),
        Figure("fig12", "netapprox/fig5_fbkv", "Seed 000 Fig. 12: ablation on FBKV"),
        Figure("fig12hd", "netapprox/fig6_fbhd", "Seed 000 Fig. 12's ablation on FBHD"),
        Figure("fig13", "netapprox/fig13_nonapprox", "Seed 000 Fig. 13: non-approximate co-runner"),
        Figure("fig14", "netapprox/fig14_fairness", "Seed 000 Fig. 14: fairness between jobs"),
        Figure("iw", "netapprox/fig5_fbkv", "The baselines' initial window, 2 (ns-2) vs 10"),
        Figure("fbhdgap", "netapprox/fig6_fbhd", "FBHD's production gap, 39 / 78 / 156 us"),
        Figure("fig5bound", "netapprox/fig5_fbkv", "Fig. 5's jobs, ideal network: the JCT floor"),
        Figure("fig6bound", "netapprox/fig6_fbhd", "Fig. 6's jobs, ideal network: the JCT floor"),
        Figure(
            "tbexp1",
            "netapprox/testbed_exp1",
            "The testbed's experiment 1 (production-limited job, tiny queues)",
            quick_changes=False,
        ),
        Figure("dml", "netapprox/dml_seed001", "Seed 001 section 3.1: bounded loss on DCTCP-ES"),
        Figure("dmltrain", "netapprox/dml_training", "Seed 001: parameter-server training jobs"),
        Figure(
            "dml-table1",
            "dml/leafspine",
            "Seed 001 Table 1: JCT slowdown from the tail transfer (TCP, DCTCP)",
            kind="training",
        ),
        Figure(
            "dml-fig3",
            "dml/leafspine",
            "Seed 001 Fig. 3: app-level drop, PS vs ring, TCP / UDP / bounded",
            kind="training",
        ),
        Figure(
            "dml-fig4",
            "dml/leafspine",
            "Seed 001 Fig. 4: bounded-loss speed-up per model, 4c: transfer CDF",
            kind="training",
        ),
    )
}
"""Every figure, by name."""


def figure(name: str) -> Figure:
    """The figure called ``name``; a ``KeyError`` naming the known ones."""
    try:
        return FIGURES[name]
    except KeyError:
        raise KeyError(f"no figure {name!r} (known: {', '.join(FIGURES)})") from None


def figure_of_study(study: str) -> Figure | None:
    """The figure a study file is named for (``netapprox/fig5_fbkv`` ->
    ``fig5``), if any."""
    stem = study.rsplit("/", 1)[-1]
    for f in FIGURES.values():
        if f.study == study and (stem == f.name or stem.startswith(f.name + "_")):
            return f
    return None


def _sweep(
    study: str,
    schemes: Sequence[str],
    msrs: Sequence[float],
    *,
    job: int = 0,
    extra: Sequence[str] = (),
    loads: Sequence[float | None] = (None,),
) -> Iterator[Run]:
    for load in loads:
        for s in schemes:
            for m in msrs:
                sets = [f'jobs.{job}.scheme="{s}"', f"jobs.{job}.msr={m}", *extra]
                if s.startswith("pfabric"):
                    sets.append('switch.buffer_preset="pfabric"')
                label = f"{s}-{m}"
                if load is not None:
                    sets.append(f"jobs.{job}.load={load}")
                    label += f"-L{load}"
                yield Run(label, study, tuple(sets))


def _bound(study: str, loads: Sequence[float], extra: Sequence[str]) -> Iterator[Run]:
    """The JCT floor of a figure's jobs: the same arrivals, sizes and
    production times (the job arrival rate is load x link rate / job bytes,
    so the load shrinks as the links speed up) sent as produced by UDP over
    links BOUND_SPEEDUP times faster with a buffer that never drops. A job
    cannot finish before its ceil(MSR N)-th message is produced and has
    crossed the fabric, so no transport on the real links beats this
    run's JCT, job by job."""
    import tomllib
    from pathlib import Path

    path = Path(__file__).parent / "studies" / f"{study}.toml"
    gbps = float(tomllib.loads(path.read_text())["topology"]["host_gbps"])
    fast = (
        'jobs.0.scheme="udp"',
        f"topology.host_gbps={gbps * BOUND_SPEEDUP:g}",
        "switch.buffer_kb=1000000.0",
    )
    for load in loads:
        for m in MSRS:
            sets = (*fast, f"jobs.0.msr={m}", *extra, f"jobs.0.load={load / BOUND_SPEEDUP:g}")
            yield Run(f"bound-{m}-L{load}", study, sets)


def plan(name: str, quick: bool = False) -> list[Run]:
    """The runs of figure ``name`` (see :data:`FIGURES`)."""
    fig = figure(name)
    if fig.kind == "training":
        from . import dml

        return [r.run for r in dml.figure_plan(name, quick)]
    q = QUICK if quick else ()
    if name in ("fig5", "fig6"):
        return list(_sweep(fig.study, BASELINES, MSRS, extra=q, loads=LOADS[name]))
    if name in ("fig5bound", "fig6bound"):
        return list(_bound(fig.study, LOADS[name.removesuffix("bound")], q))
    if name == "tbexp1":
        schemes = ("atp-full", "dctcp-es", "dctcp-ss", "udp")
        return [
            Run(f"{r.label}-s{seed}", r.study, (*r.sets, f"seed={seed}"))
            for seed in (1, 2, 3)
            for r in _sweep(fig.study, schemes, MSRS)
        ]
    if name == "iw":
        return [
            Run(f"{r.label}-iw{iw}", r.study, (*r.sets, f"transport.init_cwnd_pkts={iw}"))
            for iw in (2, 10)
            for r in _sweep(fig.study, ("dctcp-ss", "dctcp-es", "atp-full"), (0.25, 0.5), extra=q)
        ]
    if name == "fbhdgap":
        # FBHD's production gap has no published model: mean 39 / 78 / 156 us
        return [
            Run(f"{r.label}-gap{gap}", r.study, (*r.sets, f'jobs.0.gaps="exp:{gap}"'))
            for gap in (39, 78, 156)
            for r in _sweep(fig.study, ("atp-full", "dctcp-ss", "dctcp-es"), (0.25, 0.5), extra=q)
        ]
    if name == "fig9":
        return list(_sweep(fig.study, ("atp-full", "dctcp-ss", "dctcp-es"), MSRS, extra=q))
    if name == "fig10":
        return [Run("atp-full-0.5", fig.study, ())]
    if name == "fig11":
        # one long job under background that starts in its queue and moves up halfway
        schemes = ("dctcp-es", "atp-fixtlr", "atp-fixprio", "atp-full")
        return list(_sweep(fig.study, schemes, MSRS))
    if name in ("fig12", "fig12hd"):
        return list(_sweep(fig.study, VARIANTS, MSRS, extra=q, loads=LOADS[name]))
    if name == "fig13":
        total = 0.5
        return [
            Run(
                f"{s}-approx{ratio}",
                fig.study,
                (
                    f'jobs.1.scheme="{s}"',
                    f"jobs.0.load={total * (1 - ratio)}",
                    f"jobs.1.load={total * ratio}",
                    "jobs.1.msr=0.5",
                ),
            )
            for s in ("atp-full", "dctcp-es")
            for ratio in (0.25, 0.5, 0.75)
        ]
    if name == "fig14":
        runs = []
        for s in ("atp-full", "atp-fixprio", "atp-fixtlr"):
            per_job = tuple(f'jobs.{i}.scheme="{s}"' for i in range(3))
            runs.append(Run(s, fig.study, per_job))
            alone = (*per_job, "jobs.1.load=0.0", "jobs.2.load=0.0")
            runs.append(Run(s + "-alone", fig.study, alone))
        return runs
    if name == "dml":
        short = ("duration_ms=5.0", "jobs.0.stop_ms=3.0", "jobs.1.stop_ms=3.0") if quick else ()
        runs = [Run("dctcp", fig.study, ('jobs.1.scheme="dctcp"', "jobs.1.msr=1.0", *short))]
        for b in (0.10, 0.15, 0.20, 0.25, 0.30, 0.35):
            runs.append(Run(f"bounded-{b}", fig.study, (f"jobs.1.msr={1 - b:.2f}", *short)))
        return runs
    if name == "dmltrain":
        runs = []
        for b in (0.0, 0.10, 0.20, 0.30):
            bound: list[str] = []
            if b > 0:
                for i in range(8):
                    bound += [f'training.{i}.scheme="dctcp-es"', f"training.{i}.msr={1 - b:.2f}"]
            if quick:
                bound += ["duration_ms=10.0", "jobs.0.stop_ms=8.0"]
                bound += [f"training.{i}.iterations=3" for i in range(8)]
            runs.append(Run(f"bound-{b}", fig.study, tuple(bound)))
        return runs
    raise AssertionError(f"figure {name!r} has no plan")  # every FIGURES entry has one
