"""Runs an analytics job: sources -> approxnet -> aggregator.

* :func:`run_virtual`: every endpoint in one process, in virtual time,
  through the shared bottleneck of :class:`~.virtual.VirtualNet`
  (deterministic; what the tests and ``--mode virtual`` use).
* :func:`run_sockets`: real UDP sockets (``approxnet.net.SocketEndpoint``),
  one thread per endpoint, on loopback (``--mode loopback``).

Both return a :class:`Run`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._native import Config, Endpoint, Job
from .errors import AnalyticsError
from .roles import Aggregator, RoundStat, Settings, WindowResult, make_sources
from .session import AggregatorSide, SourceSide
from .virtual import Bottleneck, VirtualNet

__all__ = ["Run", "run_virtual"]

SINK = "10.0.100.1:5000"


@dataclass
class Run:
    """What one analytics run did."""

    scheme: str
    results: list[WindowResult]
    """One per window (one in batch mode)."""
    rounds: list[RoundStat]
    jct_s: float
    """Time from the first job sent to the last window's answer."""
    records: int
    """Records in the data set."""
    records_sent: int
    """Records the sources put into jobs."""
    records_arrived: int
    """Records that reached the aggregator."""
    messages_dropped: int
    """Data messages ATP abandoned (dropped in the network, within the slack)."""
    net: dict[str, int] = field(default_factory=dict)
    """Counters of the network (virtual bottleneck, or socket endpoint stats)."""
    bytes_sent: int = 0
    """Bytes the sources' jobs put on the wire (0 where the sources run in
    other processes)."""
    bytes_unsent: int = 0
    """Bytes of the sources' jobs never sent: the aggregator's "enough"
    (each job's MSR met) ended the job first (0 where the sources run in
    other processes)."""

    @property
    def sent_fraction(self) -> float:
        return self.records_sent / self.records if self.records else 0.0

    @property
    def bytes_saved_fraction(self) -> float:
        """Share of the jobs' bytes never sent because the receiver had enough."""
        total = self.bytes_sent + self.bytes_unsent
        return self.bytes_unsent / total if total else 0.0

    @property
    def arrived_fraction(self) -> float:
        return self.records_arrived / self.records if self.records else 0.0

    @property
    def bound(self) -> float:
        """Largest estimated relative error of any answer."""
        return max((r.bound for r in self.results), default=math.inf)


def _summarise(
    scheme: str,
    agg: Aggregator,
    sources: Sequence[Any],
    parts: Sequence[npt.NDArray[np.void]],
    dropped: int,
    net: dict[str, int],
) -> Run:
    """The run of a finished job: its JCT from the first round's start to
    the last result, the records of every partition."""
    first = agg.rounds[0].started_s if agg.rounds else 0.0
    return Run(
        scheme=scheme,
        results=agg.results,
        rounds=agg.rounds,
        jct_s=agg.results[-1].ended_s - first,
        records=sum(len(p) for p in parts),
        records_sent=sum(s.records_sent for s in sources),
        records_arrived=sum(r.records_arrived for r in agg.rounds),
        messages_dropped=dropped,
        bytes_sent=sum(getattr(s, "bytes_sent", 0) for s in sources),
        bytes_unsent=sum(getattr(s, "bytes_unsent", 0) for s in sources),
        net=net,
    )


def _handler(side: SourceSide) -> Callable[[str, Any], None]:
    return lambda _addr, e: side.on_event(e)


def run_virtual(
    parts: Sequence[npt.NDArray[np.void]],
    settings: Settings,
    bottleneck: Bottleneck | None = None,
    config: Config | None = None,
    seed: int = 0,
    limit_s: float = 600.0,
    scheme: str = "atp",
) -> Run:
    """Runs the job with one source per element of ``parts`` through a
    :class:`VirtualNet`; deterministic for a given ``seed``."""
    if not parts or not all(len(p) for p in parts):
        raise AnalyticsError("every source needs at least one record")
    dtype = parts[0].dtype
    net = VirtualNet(bottleneck or Bottleneck(), SINK, seed=seed)
    agg = Aggregator(settings, len(parts), dtype)
    agg_ep = Endpoint(config, seed)

    def clock() -> float:
        return net.now / 1e9

    def agg_send(conn: Any, job: Job) -> int:
        return agg_ep.send_job(net.now, conn, job)

    side = AggregatorSide(agg, agg_send, clock)
    net.add(SINK, agg_ep, lambda _a, e: side.on_event(e))
    sources = make_sources(parts, settings, seed)
    sides: list[SourceSide] = []
    for i, src in enumerate(sources):
        addr = f"10.0.{i // 250}.{i % 250 + 1}:5000"
        ep = Endpoint(config, seed * 1000 + i + 1)

        def send(conn: Any, job: Job, ep: Endpoint = ep) -> int:
            return ep.send_job(net.now, conn, job)

        s = SourceSide(src, send)
        sides.append(s)
        net.add(addr, ep, _handler(s))
        s.start(ep.connect(net.now, SINK))
    if not net.run(lambda: agg.finished, limit_s=limit_s):
        raise AnalyticsError(f"the job did not finish within {limit_s} virtual seconds")
    return _summarise(scheme, agg, sources, parts, side.dropped_messages, dict(net.counters))
