"""Studies under ``experiments/``: find them, run them through the
simulator, and write their table and plot.

A study is a scenario file ``experiments/<experiment>/<study>.toml``; its
leading comment block is its description. Running a study sweeps the
parameters given (``jobs.0.msr=0.25,0.5,1``), or the study's preset sweep
(:data:`PRESETS`), or else runs the scenario once; the result is
``table.csv`` / ``table.md`` (one row per point and job class) and
``plot.png`` (a metric against the first numeric parameter, one line per
combination of the others) in the output directory.

    >>> from approxnet import repro
    >>> [s.name for s in repro.studies()]                          # doctest: +SKIP
    ['netapprox/demo', 'netapprox/fig5_fbkv', ...]
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import sim
from ._native import ScenarioError

__all__ = [
    "PRESETS",
    "Study",
    "StudyResult",
    "experiments_root",
    "find",
    "plot",
    "run",
    "studies",
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


def experiments_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The experiments directory: ``explicit``, else ``$APPROXNET_EXPERIMENTS``,
    else ``./experiments``, else the one beside this source checkout."""
    for cand in (explicit, os.environ.get("APPROXNET_EXPERIMENTS")):
        if cand:
            return Path(cand)
    here = Path("experiments")
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "experiments"


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
