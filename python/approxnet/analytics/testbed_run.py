"""The taxi demo across network namespaces (``approxnet testbed``).

Sources run as processes in the testbed's left hosts, the aggregator in
``h3`` behind the HTB-capped bottleneck trunk (docs/testbed.md; by default
``python/approxnet/testbed/examples/dumbbell.toml``: 1 Gbit/s, 8
strict-priority queues per port, bfifo leaves sized per seed 000 §5.2).
Each scheme starts its processes (``approxnet analytics node ...``), waits
until all are ready, releases the sources together and reads the
aggregator's JSON row. Needs root.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..testbed import procs
from .errors import AnalyticsError
from .nodes import Spec

__all__ = ["DEFAULT_CONFIG", "compare_testbed"]

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "testbed" / "examples" / "dumbbell.toml"
ATP_PORT = 7811
TCP_PORT = 7812


def _spec_args(spec: Spec) -> list[str]:
    a = [
        "--records",
        str(spec.records),
        "--sources",
        str(spec.sources),
        "--seed",
        str(spec.seed),
        "--emax",
        str(spec.emax),
        "--confidence",
        str(spec.confidence),
        "--line-rate-gbps",
        str(spec.line_rate_gbps),
        "--timeout",
        str(spec.timeout_s),
    ]
    if not spec.grouped:
        a.append("--no-groups")
    if spec.msr is not None:
        a += ["--msr", str(spec.msr)]
    if spec.round_msr is not None:
        a += ["--round-msr", str(spec.round_msr)]
    return a


def _node(*args: str) -> list[str]:
    return [sys.executable, "-m", "approxnet", "analytics", "node", *args]


def _kill(ps: Sequence[subprocess.Popen[str]]) -> None:
    for p in ps:
        procs.kill(p)


def run_scheme(
    tb: Any, spec: Spec, scheme: str, src_hosts: Sequence[str], agg_host: str, cc: str | None = None
) -> dict[str, Any]:
    """One scheme end to end; the aggregator's row (a dict)."""
    start_s = 60.0 + spec.records / 200_000  # data generation in every process
    dst = tb.address(agg_host)
    common = _spec_args(spec)
    started: list[subprocess.Popen[str]] = []
    try:
        if scheme.startswith("atp"):
            s = spec if scheme == "atp" else Spec(**{**spec.__dict__, "msr": 1.0})
            common = _spec_args(s)
            agg = procs.start(
                tb,
                agg_host,
                _node("aggregator", "--bind", f"{dst}:{ATP_PORT}", "--scheme", scheme, *common),
                limit_s=start_s,
            )
            srcs = [
                procs.start(
                    tb,
                    src_hosts[i % len(src_hosts)],
                    _node("source", "--index", str(i), "--connect", f"{dst}:{ATP_PORT}", *common),
                    limit_s=start_s,
                )
                for i in range(spec.sources)
            ]
        else:
            mode = scheme.split("-", 1)[1]
            agg = procs.start(
                tb,
                agg_host,
                _node("tcp-aggregator", "--port", str(TCP_PORT), "--mode", mode, *common),
                limit_s=start_s,
            )
            cc_args = ["--cc", cc] if cc else []
            srcs = [
                procs.start(
                    tb,
                    src_hosts[i % len(src_hosts)],
                    _node(
                        "tcp-source",
                        "--index",
                        str(i),
                        "--host",
                        dst,
                        "--port",
                        str(TCP_PORT),
                        "--mode",
                        mode,
                        *cc_args,
                        *common,
                    ),
                    limit_s=start_s,
                )
                for i in range(spec.sources)
            ]
        started = [agg, *srcs]
        for p in srcs:  # go
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        row = procs.finish(agg, spec.timeout_s + 30)
        for p in srcs:
            procs.finish(p, 30)
        return row
    finally:
        _kill(started)


BG_PORT = 7813


def _background(tb: Any, src: str, dst: str, mbps: float) -> list[subprocess.Popen[str]]:
    """Paced UDP from ``src`` to ``dst`` at ``mbps`` in queue 0 (non-approximate,
    highest priority) through the trunk, into a sink that never reads."""
    sink = procs.sink(tb, dst, BG_PORT, 600)
    try:
        cbr = procs.cbr(tb, src, dst, BG_PORT, mbps, 300, "0:0")
    except BaseException:
        procs.kill(sink)
        raise
    time.sleep(0.2)
    return [cbr, sink]


def compare_testbed(
    spec: Spec,
    schemes: Sequence[str],
    config: Path = DEFAULT_CONFIG,
    cc: str | None = None,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    bg_mbps: float = 0.0,
) -> list[dict[str, Any]]:
    """Brings the testbed up, runs every scheme (with ``bg_mbps`` of
    background traffic from the last left host to ``h4`` when > 0), tears
    it down."""
    from .. import testbed

    if os.geteuid() != 0:
        raise AnalyticsError("the testbed needs root (network namespaces, tc)")
    cfg = testbed.load(config)
    hosts = [h.name for h in cfg.hosts]
    if len(hosts) < 2:
        raise AnalyticsError("the testbed needs at least two hosts")
    agg_host = "h3" if "h3" in hosts else hosts[-1]
    src_hosts = [h for h in hosts if h != agg_host and h != "h4"] or hosts[:-1]
    rows = []
    try:
        with testbed.up(cfg) as tb:
            for scheme in schemes:
                bg = []
                if bg_mbps > 0:
                    if "h4" not in hosts:
                        raise AnalyticsError("background traffic needs a host h4")
                    bg = _background(tb, src_hosts[-1], "h4", bg_mbps)
                try:
                    row = run_scheme(tb, spec, scheme, src_hosts, agg_host, cc)
                finally:
                    _kill(bg)
                row["testbed"] = cfg.name
                row["bg_mbps"] = bg_mbps
                rows.append(row)
                if on_done is not None:
                    on_done(row)
    except testbed.TestbedError as e:  # a process failed or did not start
        raise AnalyticsError(str(e)) from e
    return rows
