"""Seed 001 §3.1 (001_254954cce2026753.txt) in approxnet's simulator:
distributed training on a 4:1 leaf-spine with background traffic, the four
models of Table 2 as synchronisation patterns, parameter server and ring
all-reduce, over TCP, DCTCP, UDP, ATP reliable, ATP bounded (MSR 1 - x1),
DCTCP-EarlySend and dropping at the application (:data:`SCHEMES`).

The scenarios (``dml/leafspine``, ``dml/quick``) and the models
(``models.toml``) ship with the package. :func:`figure_plan` gives each
figure's runs (``approxnet repro dml-table1 | dml-fig3 | dml-fig4
[--quick]``), :func:`run` runs any part of the study and :func:`report`
writes a figure's tables and plots.

    >>> from approxnet import dml
    >>> [r.run.label for r in dml.figure_plan("dml-table1", quick=True)][:2]
    ['mf-ps-tcp', 'mf-ps-dctcp']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .collect import collect, finished, longer
from .plan import COLLECTIVES, SCHEMES, DmlRun, Scheme, models, plan
from .plots import plot_fig3, plot_fig4, plot_fig4c, plot_table1
from .tables import write_fig3, write_fig4, write_fig4c, write_table1, write_tail

__all__ = [
    "COLLECTIVES",
    "FIGURE_SCHEMES",
    "SCHEMES",
    "DmlRun",
    "Scheme",
    "figure_plan",
    "models",
    "plan",
    "report",
    "run",
]

FIGURE_SCHEMES: dict[str, tuple[str, ...]] = {
    "dml-table1": ("tcp", "dctcp"),
    "dml-fig3": ("tcp", "dctcp", "udp", "atp-bounded", "dctcp-es", "appdrop-tcp", "appdrop-dctcp"),
    "dml-fig4": ("tcp", "dctcp", "atp", "atp-bounded", "dctcp-es"),
    "dml-all": tuple(s.key for s in SCHEMES),
}
"""The schemes each figure needs (every model, PS and ring)."""


def figure_plan(name: str, quick: bool = False) -> list[DmlRun]:
    """The runs of figure ``name`` (a :data:`FIGURE_SCHEMES` key)."""
    if name not in FIGURE_SCHEMES:
        raise KeyError(f"no seed 001 figure {name!r} (known: {', '.join(FIGURE_SCHEMES)})")
    return plan(schemes=FIGURE_SCHEMES[name], quick=quick)


def run(
    runs: Sequence[DmlRun],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    binary: str | os.PathLike[str] | None = None,
    on_run: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs ``runs`` (records under ``out/<label>/``; a run whose training
    did not finish is run again twice as long, up to three times) and
    returns (one row per run, the MLP transfers); writes runs.csv and
    transfers_mlp.csv to ``out``."""
    from ..repro import run_plan

    out_dir = Path(out)

    def again(r: Any, summary: Any) -> Any:
        if finished(summary):
            return None
        return type(r)(r.label, r.study, longer(r.sets))

    def done(label: str, summary: Any) -> None:
        if on_run is not None:
            on_run(label)

    final = run_plan(
        [r.run for r in runs], out_dir, workers=workers, binary=binary, on_run=done, retry=again
    )
    durations = {
        label: float([s for s in r.sets if s.startswith("duration_ms=")][-1].split("=", 1)[1])
        for label, (r, _) in final.items()
    }
    table, transfers = collect(runs, out_dir, durations)
    table.to_csv(out_dir / "runs.csv", index=False)
    transfers.to_csv(out_dir / "transfers_mlp.csv", index=False)
    return table, transfers


def report(
    name: str, table: pd.DataFrame, transfers: pd.DataFrame, out: str | os.PathLike[str]
) -> tuple[str, Path | None]:
    """Writes figure ``name``'s markdown tables and plots to ``out``
    (``dml-all``: every one) and returns (its main table as markdown, its
    main plot). Runs whose training did not finish are left out."""
    d = Path(out)
    done = table.dropna(subset=["iter_us"]) if "iter_us" in table else table.iloc[:0]
    if done.empty or "tcp" not in set(done.scheme):
        return "", None
    texts: list[str] = []
    png: Path | None = None
    if name in ("dml-table1", "dml-all"):
        texts.append(write_table1(done, d))
        png = plot_table1(done, d / ("plot.png" if name == "dml-table1" else "table1.png"))
    if name in ("dml-fig3", "dml-all"):
        texts.append(write_fig3(done, d))
        png = plot_fig3(done, d / ("plot.png" if name == "dml-fig3" else "fig3.png"))
    if name in ("dml-fig4", "dml-all"):
        texts.append(write_fig4(done, d))
        texts.append(write_fig4c(transfers, d))
        plot_fig4c(transfers, d / "fig4c.png")
        png = plot_fig4(done, d / ("plot.png" if name == "dml-fig4" else "fig4.png"))
    texts.append(write_tail(done, d))
    return "\n".join(t for t in texts if t), png
