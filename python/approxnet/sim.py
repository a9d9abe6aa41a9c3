"""The simulator from Python.

    >>> from approxnet import sim
    >>> res = sim.run("experiments/netapprox/demo.toml",
    ...               overrides=["duration_ms=1.0", "jobs.0.stop_ms=0.5"])
    >>> res.classes[["name", "scheme", "msr", "jct_mean_us"]]      # doctest: +SKIP

A scenario is a TOML file (or TOML text); ``overrides`` are
``key.path=value`` strings exactly as ``approxnet-sim run --set`` takes them.
The simulator writes its usual record files (jobs.csv, flows.csv,
queues.csv, summary.json, ...) and :func:`run` reads them into pandas frames.
Same scenario and seed, same frames (except the ``wall_s`` timing).
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ._native import ScenarioError, sim_run, sim_schemes, sim_sizes

__all__ = [
    "ScenarioError",
    "SimResult",
    "expand_grid",
    "run",
    "schemes",
    "sizes",
]


@dataclass(frozen=True)
class SimResult:
    """One simulator run: the summary and the simulator's records as frames."""

    name: str
    """Scenario name."""
    summary: dict[str, Any]
    """summary.json as a dict (sim_s, wall_s, events, hops, drops, ...)."""
    classes: pd.DataFrame
    """One row per job class: scheme, msr, jobs, done, JCT mean / p50 / p99 (us), loss, ..."""
    jobs: pd.DataFrame
    """One row per job (jobs.csv)."""
    tables: dict[str, pd.DataFrame] = field(repr=False)
    """Every CSV the run wrote, by file stem: jobs, flows, queues, epochs, ..."""
    out_dir: Path | None = None
    """Where the files are (None when they went to a temporary directory)."""

    @property
    def flows(self) -> pd.DataFrame | None:
        """One row per flow (flows.csv), if written."""
        return self.tables.get("flows")

    @property
    def queues(self) -> pd.DataFrame | None:
        """Sampled queue backlogs (queues.csv), if any."""
        return self.tables.get("queues")


def _is_path(scenario: str | os.PathLike[str]) -> bool:
    if isinstance(scenario, os.PathLike):
        return True
    s = str(scenario)
    return "\n" not in s and "=" not in s


def _read_dir(name: str, summary: dict[str, Any], d: Path, keep: bool) -> SimResult:
    tables: dict[str, pd.DataFrame] = {}
    for csv in sorted(d.glob("*.csv")):
        try:
            tables[csv.stem] = pd.read_csv(csv)
        except pd.errors.EmptyDataError:
            tables[csv.stem] = pd.DataFrame()
    classes = pd.DataFrame(summary.get("classes", []))
    return SimResult(
        name=name,
        summary=summary,
        classes=classes,
        jobs=tables.get("jobs", pd.DataFrame()),
        tables=tables,
        out_dir=d if keep else None,
    )


def run(
    scenario: str | os.PathLike[str],
    *,
    overrides: Sequence[str] = (),
    out: str | os.PathLike[str] | None = None,
    flows: bool = True,
) -> SimResult:
    """Runs one scenario (a path, or TOML text) and returns its records.

    ``out`` keeps the record files in that directory; by default they go to a
    temporary directory that is removed once read. Raises
    :class:`~approxnet.ScenarioError` for a scenario that cannot be read,
    parsed or built (the message names the key and what is allowed).
    """
    overrides = [str(o) for o in overrides]
    is_path = _is_path(scenario)
    text = os.fspath(scenario)
    if is_path and not Path(text).is_file():
        raise ScenarioError(f"cannot read scenario {text}: no such file")
    if out is not None:
        d = Path(out)
        summary = json.loads(sim_run(text, is_path, str(d), overrides, flows))
        return _read_dir(summary.get("name", ""), summary, d, keep=True)
    with tempfile.TemporaryDirectory(prefix="approxnet-sim-") as tmp:
        summary = json.loads(sim_run(text, is_path, tmp, overrides, flows))
        return _read_dir(summary.get("name", ""), summary, Path(tmp), keep=False)


def schemes() -> list[str]:
    """Transport / scheme names a scenario's ``jobs.N.scheme`` accepts."""
    return list(sim_schemes())


def sizes() -> list[str]:
    """Message-size distribution names a scenario's ``jobs.N.sizes`` accepts."""
    return list(sim_sizes())


def expand_grid(params: Mapping[str, Iterable[Any]]) -> Iterator[dict[str, Any]]:
    """Every combination of the parameter values, in order:
    ``{"jobs.0.msr": [0.5, 1.0], "seed": [1, 2]}`` gives four dicts."""
    keys = list(params)
    for values in itertools.product(*(list(params[k]) for k in keys)):
        yield dict(zip(keys, values, strict=True))


def format_override(key: str, value: Any) -> str:
    """``key=value`` with the value written as TOML (strings quoted)."""
    if isinstance(value, bool):
        v = "true" if value else "false"
    elif isinstance(value, int | float):
        v = repr(value)
    else:
        v = json.dumps(str(value))
    return f"{key}={v}"
