"""The simulator from Python.

    >>> from approxnet import sim
    >>> res = sim.run("python/approxnet/studies/netapprox/demo.toml",
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
    "format_override",
    "parse_param",
    "point_name",
    "run_point",
    "run",
    "schemes",
    "sizes",
    "sweep",
    "sweep_ray",
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


def parse_param(spec: str) -> tuple[str, list[Any]]:
    """``"jobs.0.msr=0.25,0.5,1"`` -> ``("jobs.0.msr", [0.25, 0.5, 1.0])``.
    Values that parse as numbers become numbers; others stay strings."""
    key, sep, values = spec.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise ScenarioError(
            f"parameter {spec!r}: expected key.path=v1,v2,... e.g. jobs.0.msr=0.5,1"
        )
    out: list[Any] = []
    for v in values.split(","):
        v = v.strip().strip('"')
        if not v:
            raise ScenarioError(f"parameter {spec!r}: empty value")
        try:
            out.append(int(v))
        except ValueError:
            try:
                out.append(float(v))
            except ValueError:
                out.append(v)
    return key, out


def point_name(point: Mapping[str, Any]) -> str:
    """A directory name for one sweep point: ``scheme=udp,msr=0.5``."""
    if not point:
        return "base"
    parts = [f"{k.rsplit('.', 1)[-1]}={v}" for k, v in point.items()]
    return ",".join(parts).replace("/", "_").replace(" ", "_")


def run_point(
    scenario: str,
    is_path: bool,
    base_overrides: Sequence[str],
    point: Mapping[str, Any],
    out_dir: str | None,
) -> list[dict[str, Any]]:
    """Runs one sweep point; returns one row per job class, the point's
    parameters first. A top-level function so that worker processes (and
    Ray) can pickle it."""
    sets = list(base_overrides) + [format_override(k, v) for k, v in point.items()]
    if out_dir is None:
        with tempfile.TemporaryDirectory(prefix="approxnet-sweep-") as tmp:
            summary = json.loads(sim_run(scenario, is_path, tmp, sets, False))
    else:
        summary = json.loads(sim_run(scenario, is_path, out_dir, sets, False))
    rows = []
    for c in summary.get("classes", []):
        row: dict[str, Any] = dict(point)
        row.update({f"class_{k}" if k == "name" else k: v for k, v in c.items()})
        row["sim_s"] = summary.get("sim_s")
        row["wall_s"] = summary.get("wall_s")
        row["drops"] = summary.get("drops")
        rows.append(row)
    return rows


def sweep(
    scenario: str | os.PathLike[str],
    params: Mapping[str, Iterable[Any]],
    *,
    overrides: Sequence[str] = (),
    out: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    on_done: Any = None,
) -> pd.DataFrame:
    """Runs every combination of ``params`` in parallel worker processes
    and returns one row per (point, job class). With ``out``, each point's
    records go to ``out/<point name>/`` and the table to ``out/sweep.csv``.
    ``on_done(done, total)`` is called after each point (for progress bars).
    ``workers=1`` runs in this process."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    text = os.fspath(scenario)
    is_path = _is_path(scenario)
    if is_path and not Path(text).is_file():
        raise ScenarioError(f"cannot read scenario {text}: no such file")
    points = list(expand_grid(params))
    base = [str(o) for o in overrides]
    out_dir = Path(out) if out is not None else None

    def dest(p: Mapping[str, Any]) -> str | None:
        return str(out_dir / point_name(p)) if out_dir is not None else None

    results: dict[int, list[dict[str, Any]]] = {}
    total = len(points)
    n = workers if workers is not None else min(total, os.cpu_count() or 1)
    if n <= 1 or total <= 1:
        for i, p in enumerate(points):
            results[i] = run_point(text, is_path, base, p, dest(p))
            if on_done is not None:
                on_done(i + 1, total)
    else:
        with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as ex:
            futs = {
                ex.submit(run_point, text, is_path, base, p, dest(p)): i
                for i, p in enumerate(points)
            }
            try:
                for done, f in enumerate(as_completed(futs), start=1):
                    results[futs[f]] = f.result()
                    if on_done is not None:
                        on_done(done, total)
            except BaseException:
                ex.shutdown(wait=False, cancel_futures=True)
                raise
    rows = [r for i in range(total) for r in results[i]]
    df = pd.DataFrame(rows)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        df.to_csv(out_dir / "sweep.csv", index=False)
    return df


def sweep_ray(
    address: str,
    scenario: str | os.PathLike[str],
    params: Mapping[str, Iterable[Any]],
    *,
    overrides: Sequence[str] = (),
    on_done: Any = None,
) -> pd.DataFrame:
    """Like :func:`sweep`, on a Ray cluster at ``address`` (Ray must be
    installed: ``pip install 'ray[default]'``). Records stay on the workers;
    the table comes back."""
    import ray  # raises ImportError when Ray is not installed

    text = os.fspath(scenario)
    is_path = _is_path(scenario)
    if is_path:
        # Workers may not share this filesystem: ship the text.
        text = Path(text).read_text()
        is_path = False
    points = list(expand_grid(params))
    base = [str(o) for o in overrides]
    ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(run_point)
    refs = {remote.remote(text, is_path, base, p, None): i for i, p in enumerate(points)}
    results: dict[int, list[dict[str, Any]]] = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for r in ready:
            results[refs[r]] = ray.get(r)
        if on_done is not None:
            on_done(len(results), len(points))
    return pd.DataFrame([r for i in range(len(points)) for r in results[i]])
