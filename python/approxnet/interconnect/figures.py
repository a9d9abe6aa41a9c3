"""Seed 004 §5.3-5.7's execution-time figures (Fig. 6, 8, 9, 10, 11) as
plans over the study data (``approxnet/studies/interconnect/study.toml``):
which (network, topology, application) points each figure runs, how they
are normalised, and their tables. :func:`run` runs figures,
:func:`write` writes ``study[_quick].csv``, the plots and the Markdown
report; ``approxnet repro interconnect/fig6 [--quick]`` and
``experiments/interconnect/study.py`` are thin layers over both.

    >>> from approxnet.interconnect import figures
    >>> sorted(figures.FIGURES)
    ['fig10', 'fig11', 'fig6', 'fig8', 'fig9']
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from . import kernels as K
from . import study as S
from .exchange import Channel

__all__ = [
    "ANALYSES",
    "FIGURES",
    "FULL",
    "QUICK",
    "FigureFiles",
    "Plan",
    "Row",
    "Runner",
    "fft_quality",
    "read_csv",
    "report",
    "run",
    "run_analysis",
    "run_figure",
    "write",
    "write_csv",
]

MAIN = ["conventional", "fec_perfect", "approx"]
FIG6_NETS = [*MAIN, "full_approx", "approx_precise_free"]

FIGURES: dict[str, str] = {
    "fig6": "Seed 004 Fig. 6: execution time per application and network / conventional",
    "fig8": "Seed 004 Fig. 8: FFT time vs protection level, and the FFT's error",
    "fig9": "Seed 004 Fig. 9: execution time vs link bandwidth (modulation)",
    "fig10": "Seed 004 Fig. 10: execution time vs topology",
    "fig11": "Seed 004 Fig. 11: execution time vs switch delay",
}
"""The figures by name, with what each shows."""


@dataclass
class Row:
    """One simulated point of a figure."""

    fig: str
    app: str
    network: str
    topology: str
    topology_seed: int
    procs: int
    level: int
    gbps: float
    switch_delay_ns: float
    jct_us: float
    compute_us: float
    comm_us: float
    norm: float = float("nan")
    """jct / the reference point of the row's group (see `normalise`)."""


@dataclass
class Plan:
    """Which points each figure runs."""

    base: str  # topology of Fig. 6, 8, 9, 11
    fig6_apps: list[str]
    fig8_levels: list[int]
    fig9_apps: list[str]
    fig9_modulations: list[str]  # names in study.toml [modulations]
    fig10_apps: list[str]
    fig10_big: list[str]  # normalised to fig10_big[0]
    fig10_small: list[str]  # normalised to fig10_small[0]
    fig11_apps: list[str]
    fig11_delays: list[float]
    check_seeds: list[int]  # Fig. 6 again on the random topology with these seeds
    check_topology: str
    fft_side: int


FULL = Plan(
    base="df11",
    fig6_apps=["cg", "fft", "kmeans", "ftmm", "ftcg"],
    fig8_levels=[0, 8, 16, 24, 32, 40, 48, 56, 64],
    fig9_apps=["cg", "ftmm"],
    fig9_modulations=["OOK", "4-QAM", "16-QAM", "64-QAM", "256-QAM", "1024-QAM"],
    fig10_apps=["fft", "cg", "ftmm"],
    fig10_big=["df11", "r11", "r17", "tor8", "r8"],
    fig10_small=["tor6", "r6"],
    fig11_apps=["fft", "ftmm"],
    fig11_delays=[40.0, 60.0, 100.0],
    check_seeds=[2, 3],
    check_topology="r11",
    fft_side=1024,
)

QUICK = Plan(
    base="r4s16",
    fig6_apps=["cg", "fft", "kmeans", "ftmm", "ftcg"],
    fig8_levels=[0, 16, 32, 64],
    fig9_apps=["cg", "ftmm"],
    fig9_modulations=["4-QAM", "64-QAM", "1024-QAM"],
    fig10_apps=["fft", "cg"],
    fig10_big=[],
    fig10_small=["tor6", "r6"],
    fig11_apps=["fft"],
    fig11_delays=[40.0, 100.0],
    check_seeds=[2],
    check_topology="r4s16",
    fft_side=256,
)


def _procs_of(st: S.Study, topo: str) -> int:
    return S.topology_hosts(st, topo)


class Runner:
    """Runs points and keeps their rows."""

    def __init__(self, st: S.Study, sim: str | None) -> None:
        self.st, self.sim, self.rows = st, sim, list[Row]()

    def point(
        self,
        fig: str,
        app: str,
        net: str,
        topo: str,
        *,
        level: int | None = None,
        gbps: float | None = None,
        sd: float | None = None,
        seed: int = 1,
    ) -> Row:
        n = self.st.networks[net]
        lvl = int(self.st.apps[app]["level"]) if level is None else level
        r = S.run_point(
            self.st,
            net,
            topo,
            app,
            sim=self.sim,
            level=lvl,
            gbps=gbps,
            switch_delay_ns=sd,
            topology_seed=seed,
        )
        row = Row(
            fig,
            app,
            net,
            topo,
            seed,
            _procs_of(self.st, topo),
            lvl,
            float(n["gbps"] if gbps is None else gbps),
            float(n["switch_delay_ns"] if sd is None else sd),
            r.jct_us,
            r.compute_us,
            r.comm_us,
        )
        self.rows.append(row)
        return row


def normalise(rows: list[Row], ref: Row) -> None:
    for r in rows:
        r.norm = r.jct_us / ref.jct_us


def fig6(run: Runner, p: Plan) -> None:
    for topo, seed, fig in [(p.base, 1, "6")] + [
        (p.check_topology, s, "6check") for s in p.check_seeds
    ]:
        rows = [run.point(fig, a, n, topo, seed=seed) for a in p.fig6_apps for n in FIG6_NETS]
        conv = {r.app: r for r in rows if r.network == "conventional"}
        for app in p.fig6_apps:
            normalise([r for r in rows if r.app == app], conv[app])


def fig8(run: Runner, p: Plan) -> None:
    rows = [run.point("8", "fft", n, p.base) for n in ("conventional", "fec_perfect")]
    rows += [run.point("8", "fft", "approx", p.base, level=lv) for lv in p.fig8_levels]
    normalise(rows, rows[0])


def fig9(run: Runner, p: Plan) -> None:
    for app in p.fig9_apps:
        conv = run.point("9", app, "conventional", p.base)
        rows = [conv]
        rows += [
            run.point("9", app, n, p.base, gbps=run.st.modulations[m])
            for n in ("fec_perfect", "approx")
            for m in p.fig9_modulations
        ]
        normalise(rows, conv)


def fig10(run: Runner, p: Plan) -> None:
    for group in (p.fig10_big, p.fig10_small):
        if not group:
            continue
        for app in p.fig10_apps:
            rows = [run.point("10", app, n, t) for t in group for n in MAIN]
            normalise(rows, rows[0])  # conventional on the group's first topology


def fig11(run: Runner, p: Plan) -> None:
    for app in p.fig11_apps:
        rows = [run.point("11", app, n, p.base, sd=d) for d in p.fig11_delays for n in MAIN]
        # conventional at 60 ns (the paper's default), else at the first delay
        conv = [r for r in rows if r.network == "conventional"]
        normalise(rows, next((r for r in conv if r.switch_delay_ns == 60.0), conv[0]))


def fft_quality(levels: list[int], side: int, seeds: int = 3) -> dict[int, float]:
    """Median over seeds of the FFT's mean relative error (the first half's
    kernel, fig7_quality.py's metric) at BER 1e-5 for each level."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(side, side)) + 1j * rng.normal(size=(side, side))
    ref = K.fft2(z, Channel(1e-5, None))
    out = {}
    for lv in levels:
        errs = []
        for s in range(1, seeds + 1):
            y = K.fft2(z, Channel(1e-5, lv, seed=s))
            ok = bool(np.all(np.isfinite(y)))
            errs.append(float(np.abs(y - ref).mean() / np.abs(ref).mean()) if ok else float("inf"))
        out[lv] = float(np.median(errs))
    return out


def write_csv(rows: list[Row], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))


def read_csv(out: Path, suffix: str) -> tuple[list[Row], dict[int, float]]:
    types = {f.name: f.type for f in fields(Row)}
    rows = []
    with open(out / f"study{suffix}.csv") as f:
        for d in csv.DictReader(f):
            conv = {"int": int, "float": float}
            rows.append(Row(**{k: conv.get(str(types[k]), str)(v) for k, v in d.items()}))
    quality: dict[int, float] = {}
    q = out / f"fig8_quality{suffix}.csv"
    if q.exists():
        with open(q) as f:
            for d in csv.DictReader(f):
                quality[int(d["level"])] = float(d["fft_mean_rel_error"])
    return rows, quality


def label(st: S.Study, net: str) -> str:
    return str(st.networks[net].get("label", net))


def md_fig6(st: S.Study, rows: list[Row], fig: str) -> list[str]:
    out: list[str] = []
    rs = [r for r in rows if r.fig == fig]
    for seed in sorted({r.topology_seed for r in rs}):
        sub = [r for r in rs if r.topology_seed == seed]
        if not sub:
            continue
        out.append(
            f"\nFig. {fig} ({sub[0].topology}, seed {seed}, {sub[0].procs} processes): "
            "execution time / conventional (conventional JCT in us)\n"
        )
        out.append("| app | conv. JCT | " + " | ".join(label(st, n) for n in FIG6_NETS) + " |")
        out.append("|---" * (len(FIG6_NETS) + 2) + "|")
        for app in dict.fromkeys(r.app for r in sub):
            a = {r.network: r for r in sub if r.app == app}
            cells = " | ".join(f"{a[n].norm:.3f}" for n in FIG6_NETS)
            out.append(f"| {st.apps[app]['label']} | {a['conventional'].jct_us:,.0f} | {cells} |")
    return out


def md_generic(st: S.Study, rows: list[Row], fig: str, key: str) -> list[str]:
    rs = [r for r in rows if r.fig == fig]
    if not rs:
        return []
    out: list[str] = []
    out.append(f"\nFig. {fig}: execution time, normalised (see the doc)\n")
    out.append(f"| app | network | {key} | JCT (us) | normalised |")
    out.append("|---|---|---|---|---|")
    for r in rs:
        out.append(
            f"| {st.apps[r.app]['label']} | {label(st, r.network)} | {getattr(r, key)} | "
            f"{r.jct_us:,.1f} | {r.norm:.3f} |"
        )
    return out


def report(st: S.Study, rows: list[Row], quality: dict[int, float]) -> str:
    """The Markdown tables of every figure in ``rows``."""
    out = md_fig6(st, rows, "6") + md_fig6(st, rows, "6check")
    for f, key in (("8", "level"), ("9", "gbps"), ("10", "topology"), ("11", "switch_delay_ns")):
        out += md_generic(st, rows, f, key)
    if quality:
        out.append(
            "\nFFT quality (median of 3 seeds): "
            + ", ".join(f"{k}: {v:.2e}" for k, v in quality.items())
        )
    return "\n".join(out) + "\n"


_STEPS: dict[str, Callable[[Runner, Plan], None]] = {
    "6": fig6,
    "8": fig8,
    "9": fig9,
    "10": fig10,
    "11": fig11,
}


def run(
    figs: Sequence[str],
    *,
    quick: bool = False,
    study: str | os.PathLike[str] | None = None,
    sim: str | os.PathLike[str] | None = None,
    on_fig: Callable[[str], None] | None = None,
) -> tuple[S.Study, list[Row], dict[int, float]]:
    """Runs figures ``figs`` (``fig6`` or ``6``, ...) at full size or
    ``quick`` (64 processes); returns the study, the rows and (with Fig. 8)
    the FFT's error per protection level. ``sim``: an approxnet-sim binary
    (default: found as usual, else the native module)."""
    keys = [f.removeprefix("fig") for f in figs]
    for k in keys:
        if k not in _STEPS:
            raise ValueError(f"no interconnect figure {k!r}; known: {', '.join(FIGURES)}")
    st = S.load() if study is None else S.load(study)
    plan = QUICK if quick else FULL
    runner = Runner(st, None if sim is None else str(sim))
    for k in _STEPS:
        if k in keys:
            _STEPS[k](runner, plan)
            if on_fig is not None:
                on_fig("fig" + k)
    quality = fft_quality(plan.fig8_levels, plan.fft_side) if "8" in keys else {}
    return st, runner.rows, quality


def write(
    st: S.Study, rows: list[Row], quality: dict[int, float], out: Path, suffix: str = ""
) -> dict[str, Path]:
    """Writes ``study{suffix}.csv``, ``fig8_quality{suffix}.csv`` (with
    Fig. 8), ``report{suffix}.md`` and each figure's plot under ``out``;
    returns the plots by figure name."""
    from . import plots

    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / f"study{suffix}.csv")
    if quality:
        with open(out / f"fig8_quality{suffix}.csv", "w") as fh:
            fh.write("level,fft_mean_rel_error\n")
            for lv, e in quality.items():
                fh.write(f"{lv},{e!r}\n")
    (out / f"report{suffix}.md").write_text(report(st, rows, quality))
    return plots.plot(st, rows, out, suffix, quality)


@dataclass(frozen=True)
class FigureFiles:
    """What :func:`run_figure` wrote."""

    table_csv: Path
    table_md: Path
    plot_png: Path | None
    report: str


def run_figure(
    name: str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    sim: str | os.PathLike[str] | None = None,
) -> FigureFiles:
    """Runs one figure (``fig6`` ... ``fig11``) and writes ``table.csv``
    (its rows), ``table.md`` (its report) and ``plot.png`` under ``out``,
    as :func:`approxnet.repro.run_figure` does for the NetApprox figures."""
    from . import plots

    if name not in FIGURES:
        raise ValueError(f"no interconnect figure {name!r}; known: {', '.join(FIGURES)}")
    st, rows, quality = run([name], quick=quick, sim=sim)
    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    write_csv(rows, dest / "table.csv")
    text = report(st, rows, quality)
    (dest / "table.md").write_text(text)
    png = plots.plot(st, rows, dest, "", quality).get(name)
    if png is not None:
        png = png.replace(dest / "plot.png")
    return FigureFiles(dest / "table.csv", dest / "table.md", png, text)


ANALYSES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "fig3": (
        "fig3_ber",
        "Seed 004 Fig. 3 / §4.2.1: BER vs Eb/N0; the M/2, M/4 and 2-hop error rates",
        (),
    ),
    "fig5": (
        "fig5_numerical_error",
        "Seed 004 Fig. 5: error of doubles vs protection level at BER 1e-5",
        ("--n", "200000", "--step", "4"),
    ),
    "fig7": (
        "fig7_quality",
        "Seed 004 Fig. 7 / §5.4: CG, FFT and K-means quality vs protection level",
        ("--quick", "--seeds", "1"),
    ),
}
"""The analytical and result-quality figures (no simulator): name ->
(module of :mod:`approxnet.interconnect`, what it shows, ``--quick``
arguments)."""


def run_analysis(name: str, out: str | os.PathLike[str], *, quick: bool = False) -> list[Path]:
    """Runs Fig. 3, 5 or 7 (:data:`ANALYSES`) with its output under
    ``out``; returns the files in ``out``."""
    import importlib

    if name not in ANALYSES:
        raise ValueError(f"no interconnect analysis {name!r}; known: {', '.join(ANALYSES)}")
    module, _, quick_args = ANALYSES[name]
    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    main: Callable[[list[str]], None] = importlib.import_module(f"{__package__}.{module}").main
    main([*(quick_args if quick else ()), "--out", str(dest)])
    return sorted(p for p in dest.iterdir() if p.is_file())
