"""The offline profiler (seed 003 §4.1, §7.1) on the namespace testbed:
run a workload at each bandwidth share {5, 10, 25, 50, 75, 90, 100} % of
link capacity — every host's egress HTB class capped to share x link
(``tc class change``) — measure its completion time, turn the times into
slowdowns, fit eq. 1 at degrees 1-3 with R², and store the models in the
sensitivity table.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..testbed import parse, shell
from ..testbed.config import Config
from ..testbed.layout import frame_bytes
from ..testbed.lifecycle import Testbed
from ..testbed.procs import reap
from .model import SHARES, SensitivityModel, fit, slowdowns
from .table import Entry, SensitivityTable
from .workloads import Workload, mark_rules, worker_argv

__all__ = ["Profile", "cluster", "cap_hosts", "run_once", "run_together", "profile"]


@dataclass(frozen=True)
class Profile:
    """What profiling one workload gave."""

    workload: str
    times: dict[float, float]
    samples: list[tuple[float, float]]
    models: dict[int, SensitivityModel]


def cluster(name: str, nodes: int, link: str = "200mbit") -> Config:
    """`nodes` hosts on one switch, every link `link`."""
    return parse(
        {"testbed": {"name": name}, "host": [{"name": f"n{i}", "rate": link} for i in range(nodes)]}
    )


def cap_hosts(config: Config, share: float) -> None:
    """Every host's egress capped to `share` of its link (HTB class 1:1)."""
    frame = frame_bytes(config)
    for h in config.hosts:
        rate = max(8_000, round(h.rate_bps * share))
        burst = max(2 * frame, round(rate / 8 * config.burst_s))
        shell.run(
            [
                "tc", "-n", config.namespace(h.name), "class", "change", "dev", "eth0",
                "parent", "1:", "classid", "1:1", "htb", "rate", f"{rate}bit",
                "ceil", f"{rate}bit", "burst", str(burst), "cburst", str(burst),
            ]
        )  # fmt: skip


def run_once(tb: Testbed, w: Workload, port: int, timeout: float = 300.0) -> float:
    """One run of `w` on every host of `tb`; its completion time (s)."""
    return run_together(tb, [(w, port, 0)], timeout)[0]


def run_together(
    tb: Testbed,
    jobs: Sequence[tuple[Workload, int, int]],
    timeout: float = 300.0,
    placement: Sequence[Sequence[str]] | None = None,
    reports: list[list[dict[str, Any]]] | None = None,
) -> list[float]:
    """Runs the (workload, port, DSCP) jobs at once, each on every host of
    `tb` or on the hosts `placement` gives it; their completion times (s),
    in order; `reports`, if given, receives each job's per-worker JSON
    reports (start, end and what the workload computed). Every worker sets
    up (start-up, input, connections) and then waits at a common start
    gate, so the jobs' measured phases overlap even when their start-up
    costs differ (torch's import takes seconds)."""
    every = [h.name for h in tb.config.hosts]
    where = [list(p) for p in placement] if placement is not None else [every] * len(jobs)
    if len(where) != len(jobs):
        raise ValueError("one placement per job")
    marked = [dscp for w, _, dscp in jobs if w.kind == "lr" and dscp]
    if marked:
        for h in every:
            shell.run(
                ["ip", "netns", "exec", tb.namespace(h), "nft", "-f", "-"], stdin=mark_rules(marked)
            )
    gate_dir = tempfile.mkdtemp(prefix="saba-gate-")
    procs = []
    for (w, port, dscp), hosts in zip(jobs, where, strict=True):
        addrs = [tb.address(h) for h in hosts]
        procs.append(
            [
                tb.exec(
                    h,
                    worker_argv(w, i, addrs, port, dscp, gate=gate_dir),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for i, h in enumerate(hosts)
            ]
        )
    outs: list[list[str]] = [[] for _ in jobs]
    errs: list[list[str]] = [[] for _ in jobs]
    try:
        _open_gate(gate_dir, sum(len(g) for g in procs), [p for g in procs for p in g], timeout)
        for k, group in enumerate(procs):
            for p in group:
                out, err = p.communicate(timeout=timeout)
                outs[k].append(out)
                errs[k].append(err)
    finally:
        reap(p for group in procs for p in group)
        shutil.rmtree(gate_dir, ignore_errors=True)
    times = []
    for (w, _, _), group, out, err in zip(jobs, procs, outs, errs, strict=True):
        bad = [(p, e) for p, e in zip(group, err, strict=True) if p.returncode != 0]
        if bad:
            last = (bad[0][1].strip().splitlines() or [""])[-1]
            raise RuntimeError(f"workload {w.name} failed (exit {bad[0][0].returncode}): {last}")
        marks = [json.loads(o.strip().splitlines()[-1]) for o in out]
        if reports is not None:
            reports.append(marks)
        times.append(float(max(m["end"] for m in marks) - min(m["start"] for m in marks)))
    return times


def _open_gate(
    directory: str, workers: int, procs: Sequence[subprocess.Popen[str]], timeout: float
) -> None:
    """Creates ``go`` once `workers` ready files are there; fails early when a
    worker exits before (its error is reported by the caller)."""
    d = Path(directory)
    deadline = time.monotonic() + timeout
    while len(list(d.glob("ready-*"))) < workers:
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            break  # the caller collects the exit codes
        time.sleep(0.01)  # polls the workers' ready files
    (d / "go").touch()


def profile(
    tb: Testbed,
    w: Workload,
    shares: Sequence[float] = SHARES,
    table: SensitivityTable | None = None,
    dataset: str = "1x",
    progress: Callable[[float, float], None] | None = None,
    reps: int = 1,
) -> Profile:
    """Profiles `w` at each share (the median of `reps` runs, to damp a
    shared host's noise); stores degree 1-3 models in `table`."""
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    times: dict[float, float] = {}
    try:
        for k, share in enumerate(shares):
            cap_hosts(tb.config, share)
            runs = sorted(run_once(tb, w, 7900 + 10 * k + r) for r in range(reps))
            times[share] = (
                runs[len(runs) // 2] if reps % 2 else sum(runs[reps // 2 - 1 : reps // 2 + 1]) / 2
            )
            if progress is not None:
                progress(share, times[share])
    finally:
        cap_hosts(tb.config, 1.0)
    samples = slowdowns(times)
    models = {k: fit(samples, k) for k in (1, 2, 3)}
    if table is not None:
        for m in models.values():
            table.put(Entry(w.name, m, tuple(samples), dataset, len(tb.config.hosts), "testbed"))
    return Profile(w.name, times, samples, models)
