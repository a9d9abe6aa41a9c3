"""The offline profiler (seed 003 §4.1, §7.1) on the namespace testbed:
run a workload at each bandwidth share {5, 10, 25, 50, 75, 90, 100} % of
link capacity — every host's egress HTB class capped to share x link
(``tc class change``) — measure its completion time, turn the times into
slowdowns, fit eq. 1 at degrees 1-3 with R², and store the models in the
sensitivity table.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..testbed import parse, shell
from ..testbed.config import Config
from ..testbed.layout import frame_bytes
from ..testbed.lifecycle import Testbed
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
    tb: Testbed, jobs: Sequence[tuple[Workload, int, int]], timeout: float = 300.0
) -> list[float]:
    """Runs the (workload, port, DSCP) jobs at once, each on every host of
    `tb`; their completion times (s), in order."""
    hosts = [h.name for h in tb.config.hosts]
    addrs = [tb.address(h) for h in hosts]
    marked = [dscp for w, _, dscp in jobs if w.kind == "lr" and dscp]
    if marked:
        for h in hosts:
            shell.run(
                ["ip", "netns", "exec", tb.namespace(h), "nft", "-f", "-"], stdin=mark_rules(marked)
            )
    procs = [
        [
            tb.exec(
                h,
                worker_argv(w, i, addrs, port, dscp),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i, h in enumerate(hosts)
        ]
        for w, port, dscp in jobs
    ]
    outs: list[list[str]] = [[] for _ in jobs]
    try:
        for k, group in enumerate(procs):
            for p in group:
                out, _err = p.communicate(timeout=timeout)
                outs[k].append(out)
    finally:
        for p in (p for group in procs for p in group):
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdout, p.stderr):
                if f is not None:
                    f.close()
    times = []
    for (w, _, _), group, out in zip(jobs, procs, outs, strict=True):
        bad = [p for p in group if p.returncode != 0]
        if bad:
            raise RuntimeError(f"workload {w.name} failed (exit {bad[0].returncode})")
        marks = [json.loads(o.strip().splitlines()[-1]) for o in out]
        times.append(float(max(m["end"] for m in marks) - min(m["start"] for m in marks)))
    return times


def profile(
    tb: Testbed,
    w: Workload,
    shares: Sequence[float] = SHARES,
    table: SensitivityTable | None = None,
    dataset: str = "1x",
    progress: Callable[[float, float], None] | None = None,
) -> Profile:
    """Profiles `w` at each share; stores degree 1-3 models in `table`."""
    times: dict[float, float] = {}
    try:
        for k, share in enumerate(shares):
            cap_hosts(tb.config, share)
            times[share] = run_once(tb, w, 7900 + k)
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
