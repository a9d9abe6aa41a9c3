"""Studies and figures: find them, run them through the simulator, and
write their table and plot.

A study is a scenario file ``<experiment>/<study>.toml``; the package ships
its studies (:func:`studies_root`, so an installed wheel has them) and a
user's own directory can stand in (``--experiments DIR`` or
``$APPROXNET_EXPERIMENTS``). Its leading comment block is its description.
Running a study sweeps the parameters given (``jobs.0.msr=0.25,0.5,1``),
or the study's preset sweep (:data:`PRESETS`), or else runs the scenario
once; the result is ``table.csv`` / ``table.md`` (one row per point and job
class) and ``plot.png`` (a metric against the first numeric parameter, one
line per combination of the others) in the output directory.

A figure (:mod:`approxnet.figures`) is a seed paper's figure as labelled
runs of the shipped studies; :func:`run_figure` runs one (``quick``: CI
size) and writes the same three files.

    >>> from approxnet import repro
    >>> [s.name for s in repro.studies()]                          # doctest: +SKIP
    ['netapprox/demo', 'netapprox/fig5_fbkv', ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from . import figures, sim
from ._native import ScenarioError, sim_run

__all__ = [
    "PRESETS",
    "Study",
    "StudyResult",
    "FigureResult",
    "experiments_root",
    "find",
    "plot",
    "run",
    "run_figure",
    "run_plan",
    "studies",
    "studies_root",
    "write_table",
]

PRESETS: dict[str, dict[str, list[Any]]] = {
    # The small NetApprox comparison of `make demo`: JCT vs MSR per scheme.
    "netapprox/demo": {
        "jobs.0.scheme": ["atp-full", "dctcp-ss", "udp"],
        "jobs.0.msr": [0.25, 0.5, 1.0],
    },
}
"""Default sweeps of studies that have one (used when no parameter is given)."""


@dataclass(frozen=True)
class Study:
    """One scenario file under the experiments directory."""

    name: str
    """``<experiment>/<study>``, e.g. ``netapprox/demo``."""
    path: Path
    """The scenario file."""
    description: str
    """The file's leading comment block, joined into one paragraph."""

    @property
    def title(self) -> str:
        """The first line of the description, at most 90 characters (or the name)."""
        first = _first_line(self.path)
        if not first:
            return self.name
        return first if len(first) <= 90 else first[:87].rstrip() + "..."


@dataclass(frozen=True)
class StudyResult:
    """What :func:`run` produced."""

    study: Study
    table: pd.DataFrame
    out_dir: Path
    table_csv: Path
    table_md: Path
    plot_png: Path | None


def studies_root() -> Path:
    """The studies shipped in the package (``approxnet/studies``)."""
    return Path(__file__).resolve().parent / "studies"


def experiments_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where studies are looked up: ``explicit``, else
    ``$APPROXNET_EXPERIMENTS``, else the package's own (:func:`studies_root`)."""
    for cand in (explicit, os.environ.get("APPROXNET_EXPERIMENTS")):
        if cand:
            return Path(cand)
    return studies_root()


def _first_line(path: Path) -> str:
    try:
        for line in path.read_text(errors="replace").splitlines():
            s = line.strip()
            return s.lstrip("#").strip() if s.startswith("#") else ""
    except OSError:
        return ""
    return ""


def _description(path: Path) -> str:
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        s = line.strip()
        if not s.startswith("#"):
            break
        lines.append(s.lstrip("#").strip())
    return " ".join(x for x in lines if x)


def studies(root: str | os.PathLike[str] | None = None) -> list[Study]:
    """Every study under the experiments directory, sorted by name."""
    base = experiments_root(root)
    if not base.is_dir():
        return []
    out = []
    for p in sorted(base.glob("*/*.toml")):
        if not _is_scenario(p):
            continue  # e.g. testbed configs: not simulator scenarios
        name = f"{p.parent.name}/{p.stem}"
        out.append(Study(name=name, path=p, description=_description(p)))
    return out


def _is_scenario(path: Path) -> bool:
    """Whether a TOML file is a simulator scenario (it has a [topology] table)."""
    try:
        with path.open("rb") as f:
            return "topology" in tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return False


def find(name: str, root: str | os.PathLike[str] | None = None) -> Study:
    """The study called ``name``: ``experiment/study``, a unique ``study``
    stem, a whole experiment with one study, or a path to a scenario file."""
    p = Path(name)
    if p.suffix == ".toml" and p.is_file():
        return Study(name=f"{p.parent.name}/{p.stem}", path=p, description=_description(p))
    all_ = studies(root)
    exact = [s for s in all_ if s.name == name]
    if exact:
        return exact[0]
    by_stem = [s for s in all_ if s.path.stem == name or s.path.parent.name == name]
    if len(by_stem) == 1:
        return by_stem[0]
    known = ", ".join(s.name for s in all_) or "none"
    if by_stem:
        which = ", ".join(s.name for s in by_stem)
        raise ScenarioError(f"study {name!r} is ambiguous: {which}")
    raise ScenarioError(f"no study {name!r} under {experiments_root(root)} (available: {known})")


def write_table(df: pd.DataFrame, csv_path: Path, md_path: Path) -> None:
    """Writes the table as CSV and as a Markdown table."""
    df.to_csv(csv_path, index=False)
    cols = list(df.columns)

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    md_path.write_text("\n".join(lines) + "\n")


def plot(
    df: pd.DataFrame,
    params: Sequence[str],
    path: Path,
    *,
    metric: str = "jct_mean_us",
    title: str = "",
) -> Path | None:
    """Plots ``metric`` against the first numeric parameter, one line per
    combination of the other parameters and job class; a bar chart when no
    parameter is numeric. Returns the PNG path, or None for an empty table."""
    if df.empty or metric not in df.columns:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    numeric = [p for p in params if p in df.columns and pd.api.types.is_numeric_dtype(df[p])]
    if numeric:
        x = numeric[0]
        keys = [p for p in params if p != x and p in df.columns] + ["class_name"]
        for label, g in df.groupby(keys, sort=False):
            g = g.sort_values(x)
            lab = ", ".join(str(v) for v in (label if isinstance(label, tuple) else (label,)))
            ax.plot(g[x], g[metric], marker="o", label=lab)
        ax.set_xlabel(x)
        ax.legend(fontsize=8)
    else:
        labels = [
            ", ".join(str(r[p]) for p in list(params) + ["class_name"] if p in df.columns)
            for _, r in df.iterrows()
        ]
        ax.bar(range(len(df)), df[metric])
        ax.set_xticks(range(len(df)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(metric)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def run(
    study: Study,
    out: str | os.PathLike[str],
    *,
    params: Mapping[str, Sequence[Any]] | None = None,
    overrides: Sequence[str] = (),
    workers: int | None = None,
    metric: str = "jct_mean_us",
    on_done: Callable[[int, int], None] | None = None,
) -> StudyResult:
    """Runs ``study`` (its sweep: ``params``, else its preset, else one run)
    and writes table.csv, table.md and plot.png under ``out``."""
    grid = dict(params) if params else dict(PRESETS.get(study.name, {}))
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    table = sim.sweep(
        study.path,
        grid,
        overrides=overrides,
        out=out_dir / "runs",
        workers=workers,
        on_done=on_done,
    )
    csv_path, md_path = out_dir / "table.csv", out_dir / "table.md"
    write_table(table, csv_path, md_path)
    png = plot(table, list(grid), out_dir / "plot.png", metric=metric, title=study.title)
    return StudyResult(study, table, out_dir, csv_path, md_path, png)


@dataclass(frozen=True)
class FigureResult:
    """What :func:`run_figure` produced."""

    figure: figures.Figure
    table: pd.DataFrame
    """One row per run and job class (training jobs: one per training)."""
    rows: list[dict[str, Any]]
    """The same rows as the simulator reported them (no float coercion)."""
    out_dir: Path
    table_csv: Path
    table_md: Path
    plot_png: Path | None


def figure_rows(
    label: str, sets: Sequence[str], summary: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The table rows of one figure run from its ``summary.json``: one per
    job class (and one per training job), with the run's label and load."""
    load = next((x.split("=", 1)[1] for x in sets if x.startswith("jobs.0.load=")), "")
    shared = {
        "queue_mean_bytes": summary.get("queue_mean_bytes"),
        "queue_p99_bytes": summary.get("queue_p99_bytes"),
        "drops": summary.get("drops"),
        "wall_s": summary.get("wall_s"),
    }
    rows: list[dict[str, Any]] = []
    for t in summary.get("trainings", []):
        rows.append(
            {
                "run": label,
                "cls": t["name"],
                "scheme": "training",
                "msr": "",
                "load": "",
                "jobs": t["of"],
                "done": t["iterations"],
                "jct_mean_us": t["jct_us"],
                "jct_p50_us": "",
                "jct_p99_us": t["iter_mean_us"],
                "loss_rate": 0,
                "max_job_loss": 0,
                "delivered_fraction": "",
                **shared,
            }
        )
    for c in summary.get("classes", []):
        rows.append(
            {
                "run": label,
                "cls": c["name"],
                "scheme": c["scheme"],
                "msr": c["msr"],
                "load": load,
                "jobs": c["jobs"],
                "done": c["done"],
                "jct_mean_us": c["jct_mean_us"],
                "jct_p50_us": c["jct_p50_us"],
                "jct_p99_us": c["jct_p99_us"],
                "loss_rate": c["loss_rate"],
                "max_job_loss": c["max_job_loss"],
                "delivered_fraction": c["delivered_fraction"],
                **shared,
            }
        )
    return rows


def run_labelled(
    scenario: str, sets: Sequence[str], out_dir: str, binary: str | None = None
) -> dict[str, Any]:
    """Runs one scenario file with ``sets`` and returns its summary; the
    records go to ``out_dir``. ``binary``: an approxnet-sim executable to
    run instead of the native module (the checkout's sweeps use the freshly
    built tool). A top-level function so worker processes can pickle it."""
    if binary is None:
        summary: dict[str, Any] = json.loads(sim_run(scenario, True, out_dir, list(sets), False))
        return summary
    cmd = [binary, "run", scenario, "--out", out_dir, "--quiet", "--no-flows"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "summary.json")) as f:
        loaded: dict[str, Any] = json.load(f)
    return loaded


def run_plan(
    runs: Sequence[figures.Run],
    out_dir: Path,
    *,
    workers: int | None = None,
    binary: str | os.PathLike[str] | None = None,
    on_run: Callable[[str, dict[str, Any]], None] | None = None,
    retry: Callable[[figures.Run, dict[str, Any]], figures.Run | None] | None = None,
    attempts: int = 4,
) -> dict[str, tuple[figures.Run, dict[str, Any]]]:
    """Runs every run of a plan (records under ``out_dir/<label>/``; in
    ``workers`` processes) and returns each label's last run and summary.
    ``retry(run, summary)`` may return a changed run to run instead (e.g.
    longer, when its training did not finish), up to ``attempts`` runs in
    all; ``on_run(label, summary)`` is called as each run is final."""
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    exe = os.fspath(binary) if binary is not None else None
    paths = {r.study: str(find(r.study, studies_root()).path) for r in runs}
    final: dict[str, tuple[figures.Run, dict[str, Any]]] = {}
    tries: dict[str, int] = {}

    def settle(r: figures.Run, summary: dict[str, Any]) -> figures.Run | None:
        tries[r.label] = tries.get(r.label, 0) + 1
        again = retry(r, summary) if retry is not None else None
        if again is not None and tries[r.label] < attempts:
            return again
        final[r.label] = (r, summary)
        if on_run is not None:
            on_run(r.label, summary)
        return None

    n = workers if workers is not None else min(len(runs), os.cpu_count() or 1)
    if n <= 1 or len(runs) <= 1:
        for r0 in runs:
            r: figures.Run | None = r0
            while r is not None:
                r = settle(r, run_labelled(paths[r.study], r.sets, str(out_dir / r.label), exe))
        return final
    with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as ex:

        def submit(r: figures.Run) -> Future[dict[str, Any]]:
            return ex.submit(run_labelled, paths[r.study], r.sets, str(out_dir / r.label), exe)

        pending = {submit(r): r for r in runs}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    again = settle(pending.pop(f), f.result())
                    if again is not None:
                        pending[submit(again)] = again
        except BaseException:
            ex.shutdown(wait=False, cancel_futures=True)
            raise
    return final


def run_figure(
    name: str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    only: Sequence[str] = (),
    sets: Sequence[str] = (),
    workers: int | None = None,
    binary: str | os.PathLike[str] | None = None,
    on_run: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> FigureResult:
    """Runs figure ``name``'s plan (:func:`approxnet.figures.plan`; ``only``:
    just these run labels; ``sets``: overrides added to every run) and
    writes each run's records to ``out/<label>/``
    and table.csv, table.md and plot.png to ``out``. ``on_run(label, rows)``
    is called as each run finishes (progress)."""
    fig = figures.figure(name)
    runs = figures.plan(name, quick)
    if only:
        known = {r.label for r in runs}
        unknown = [x for x in only if x not in known]
        if unknown:
            raise ScenarioError(
                f"figure {name} has no run {unknown[0]!r} (runs: {', '.join(sorted(known))})"
            )
        runs = [r for r in runs if r.label in set(only)]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if fig.kind == "training":
        return _run_training_figure(fig, out_dir, quick, runs, sets, workers, binary, on_run)
    if sets:
        runs = [figures.Run(r.label, r.study, (*r.sets, *sets)) for r in runs]
    rows_of: dict[str, list[dict[str, Any]]] = {}

    def done(label: str, summary: dict[str, Any]) -> None:
        rows_of[label] = figure_rows(label, final_sets[label], summary)
        if on_run is not None:
            on_run(label, rows_of[label])

    final_sets = {r.label: r.sets for r in runs}
    run_plan(runs, out_dir, workers=workers, binary=binary, on_run=done)
    rows = [row for r in runs for row in rows_of[r.label]]
    table = pd.DataFrame(rows)
    csv_path, md_path = out_dir / "table.csv", out_dir / "table.md"
    write_table(table, csv_path, md_path)
    png = plot_figure(table, out_dir / "plot.png", title=fig.title)
    return FigureResult(fig, table, rows, out_dir, csv_path, md_path, png)


def _run_training_figure(
    fig: figures.Figure,
    out_dir: Path,
    quick: bool,
    runs: Sequence[figures.Run],
    sets: Sequence[str],
    workers: int | None,
    binary: str | os.PathLike[str] | None,
    on_run: Callable[[str, list[dict[str, Any]]], None] | None,
) -> FigureResult:
    """A seed 001 figure (:mod:`approxnet.dml`): its runs, then its own
    tables (table.csv: one row per run; table.md: the figure's tables) and
    plot."""
    from . import dml

    labels = {r.label for r in runs}
    plan = [d for d in dml.figure_plan(fig.name, quick) if d.run.label in labels]
    if sets:
        plan = [replace(d, run=replace(d.run, sets=(*d.run.sets, *sets))) for d in plan]

    def step(label: str) -> None:
        if on_run is not None:
            on_run(label, [])

    table, transfers = dml.run(plan, out_dir, workers=workers, binary=binary, on_run=step)
    csv_path, md_path = out_dir / "table.csv", out_dir / "table.md"
    table.to_csv(csv_path, index=False)
    text, png = dml.report(fig.name, table, transfers, out_dir)
    md_path.write_text(f"# {fig.title}\n\n{text}")
    return FigureResult(fig, table, table.to_dict("records"), out_dir, csv_path, md_path, png)


def plot_figure(df: pd.DataFrame, path: Path, *, title: str = "") -> Path | None:
    """Mean JCT against MSR, one line per scheme and job class, one panel
    per offered load; a bar per run where the runs do not sweep the MSR."""
    if df.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    msr = pd.to_numeric(df["msr"], errors="coerce")
    loads = [x for x in dict.fromkeys(df["load"].astype(str))]
    if msr.nunique() > 1:
        fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 4), squeeze=False)
        for ax, load in zip(axes[0], loads, strict=True):
            part = df[df["load"].astype(str) == load].assign(msr_x=msr)
            for (scheme, cls), g in part.groupby(["scheme", "cls"], sort=False):
                g = g.sort_values("msr_x")
                ax.plot(g["msr_x"], g["jct_mean_us"], marker="o", label=f"{scheme} ({cls})")
            ax.set_xlabel("MSR")
            ax.set_ylabel("mean JCT (us)")
            ax.set_title(f"load {load}" if load else "", fontsize=9)
            ax.grid(alpha=0.3)
        axes[0][-1].legend(fontsize=7)
    else:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        labels = [f"{r.run} ({r.cls})" for r in df.itertuples()]
        ax.bar(range(len(df)), pd.to_numeric(df["jct_mean_us"], errors="coerce"))
        ax.set_xticks(range(len(df)), labels, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("mean JCT (us)")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
