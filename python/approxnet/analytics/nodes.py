"""Process entry points for runs across hosts (the testbed).

Each process regenerates the same data set from ``(records, seed)`` and
takes its share (:func:`~.taxi.partition`), so nothing but the protocol
crosses the network. A process prints ``ready`` once set up; sources then
wait for a line on stdin (the orchestrator's "go", so that every source
starts together) and every process prints one JSON line when done. Run
through ``approxnet analytics node ...``.
"""

from __future__ import annotations

import socket
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._native import Config
from .accuracy import Accuracy
from .baselines import plan_fractions, tcp_aggregate, tcp_source
from .demo import default_queries, row_of_run, tcp_row, truths
from .roles import Settings, Source
from .runner import Run
from .taxi import generate, partition

__all__ = ["Spec", "aggregator", "source", "tcp_aggregator", "tcp_source_main"]


@dataclass(frozen=True)
class Spec:
    """What every process of one run agrees on."""

    records: int
    sources: int
    seed: int
    emax: float
    confidence: float = 0.95
    grouped: bool = True
    msr: float | None = None
    round_msr: float | None = None
    line_rate_gbps: float = 1.0
    timeout_s: float = 120.0

    def settings(self) -> Settings:
        return Settings(
            Accuracy(self.emax, self.confidence),
            default_queries(),
            strata_field="hour" if self.grouped else None,
            msr=self.msr,
            round_msr=self.round_msr,
        )

    def data(self) -> npt.NDArray[np.void]:
        return generate(self.records, seed=self.seed)

    def config(self) -> Config:
        return Config(line_rate_gbps=self.line_rate_gbps)


def _ready() -> None:
    print("ready", flush=True)


def _go() -> None:
    sys.stdin.readline()


def aggregator(spec: Spec, bind: str, scheme: str) -> dict[str, Any]:
    """Runs the ATP aggregator on ``bind``; returns the scheme's row."""
    from ..net import SocketEndpoint
    from .sockets import serve_aggregator

    settings = spec.settings()
    data = spec.data()
    ep = SocketEndpoint(bind, config=spec.config(), seed=spec.seed)
    agg, side = serve_aggregator(ep, settings, spec.sources, data.dtype, spec.timeout_s, _ready)
    first = agg.rounds[0].started_s
    run = Run(
        scheme,
        agg.results,
        agg.rounds,
        agg.results[-1].ended_s - first,
        len(data),
        sum(r.records_sent for r in agg.rounds),
        sum(r.records_arrived for r in agg.rounds),
        side.dropped_messages,
        {k: int(v) for k, v in ep.stats().items()},
    )
    truth = truths(data, settings.queries, settings.strata_field)
    return row_of_run(run, "testbed", settings.queries, truth, spec.emax).flat()


def source(spec: Spec, index: int, connect: str) -> dict[str, Any]:
    """Runs source ``index``: connects to the aggregator at ``connect``."""
    from ..net import SocketEndpoint
    from .sockets import serve_source

    part = partition(spec.data(), spec.sources)[index]
    src = Source(index, part, spec.settings(), spec.seed)
    ep = SocketEndpoint("0.0.0.0:0", config=spec.config(), seed=spec.seed * 1000 + index + 1)
    _ready()
    _go()
    side = serve_source(ep, src, connect, spec.timeout_s)
    return {"source": index, "jobs": side.jobs_sent, "records_sent": src.records_sent}


def tcp_aggregator(spec: Spec, port: int, mode: str) -> dict[str, Any]:
    """The TCP aggregator (``ss``, ``es``, ``all``)."""
    settings = spec.settings()
    data = spec.data()
    parts = partition(data, spec.sources)
    fractions = plan_fractions(parts, settings, spec.seed)
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("0.0.0.0", port))
    lst.listen(spec.sources)
    _ready()
    try:
        res = tcp_aggregate(
            lst, spec.sources, data.dtype, settings, fractions, mode, spec.timeout_s
        )
    finally:
        lst.close()
    truth = truths(data, settings.queries, settings.strata_field)
    row = tcp_row(
        f"tcp-{mode}",
        "testbed",
        res,
        res.records_arrived,
        len(data),
        settings.queries,
        truth,
        settings.acc,
    )
    return row.flat()


def tcp_source_main(
    spec: Spec, index: int, host: str, port: int, mode: str, cc: str | None
) -> dict[str, Any]:
    """A TCP source (SS / ES / all)."""
    settings = spec.settings()
    parts = partition(spec.data(), spec.sources)
    fractions = plan_fractions(parts, settings, spec.seed)
    _ready()
    _go()
    t0 = time.monotonic()
    sent = tcp_source(
        (host, port), parts[index], settings, fractions, mode, spec.seed, index, cc, spec.timeout_s
    )
    return {"source": index, "records_sent": sent, "seconds": time.monotonic() - t0}
