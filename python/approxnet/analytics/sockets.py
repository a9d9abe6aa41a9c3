"""The analytics roles over real UDP sockets (``approxnet.net.SocketEndpoint``).

The runtime moves the protocol only while a call waits, so every endpoint
gets a loop on ``next_event`` that hands events to its side
(:mod:`.session`). :func:`run_loopback` runs the aggregator and the sources
as threads of one process (each call releases the GIL);
:func:`serve_aggregator` and :func:`serve_source` are the same loops for
separate processes (the testbed runs each in its own network namespace).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._native import Config, Job
from ..net import SocketEndpoint
from .errors import AnalyticsError
from .roles import Aggregator, Settings, Source
from .runner import Run, _summarise
from .session import AggregatorSide, SourceSide

__all__ = ["run_loopback", "serve_aggregator", "serve_source"]

STEP_S = 0.05


def _drive(
    ep: SocketEndpoint,
    on_event: Callable[[Any], None],
    done: Callable[[], bool],
    deadline: float,
    what: str,
) -> None:
    while not done():
        if time.monotonic() > deadline:
            raise AnalyticsError(f"{what}: not done before the deadline")
        e = ep.next_event(timeout_s=STEP_S)
        if e is not None:
            on_event(e)


def serve_aggregator(
    ep: SocketEndpoint,
    settings: Settings,
    sources: int,
    dtype: np.dtype[np.void],
    timeout_s: float = 120.0,
    ready: Callable[[], None] | None = None,
) -> tuple[Aggregator, AggregatorSide]:
    """Runs the aggregator on ``ep`` until the job is answered and every
    source got its stop plan."""
    agg = Aggregator(settings, sources, dtype)
    side = AggregatorSide(agg, lambda c, j: ep.send_job(c, j), time.monotonic)
    if ready is not None:
        ready()
    deadline = time.monotonic() + timeout_s
    _drive(ep, side.on_event, lambda: agg.finished, deadline, "aggregator")
    ep.finish(timeout_s=max(1.0, deadline - time.monotonic()))
    return agg, side


def serve_source(
    ep: SocketEndpoint, source: Source, aggregator: str, timeout_s: float = 120.0
) -> SourceSide:
    """Connects to ``aggregator`` and answers its plans until told to stop."""
    deadline = time.monotonic() + timeout_s

    def send(c: Any, j: Job) -> int:
        return ep.send_job(c, j)

    side = SourceSide(source, send)
    side.start(ep.connect(aggregator, timeout_s=min(10.0, timeout_s)))
    _drive(ep, side.on_event, lambda: side.done, deadline, f"source {source.id}")
    ep.close(side.conn)
    ep.finish(timeout_s=max(1.0, deadline - time.monotonic()))
    return side


def run_loopback(
    parts: Sequence[npt.NDArray[np.void]],
    settings: Settings,
    config: Config | None = None,
    host: str = "127.0.0.1",
    seed: int = 0,
    timeout_s: float = 120.0,
    udplite: bool = False,
    scheme: str = "atp",
) -> Run:
    """Sources and aggregator as threads, each with its own UDP socket on ``host``."""
    if not parts or not all(len(p) for p in parts):
        raise AnalyticsError("every source needs at least one record")
    agg_ep = SocketEndpoint(f"{host}:0", config=config, udplite=udplite, seed=seed)
    src_eps = [
        SocketEndpoint(f"{host}:0", config=config, udplite=udplite, seed=seed * 1000 + i + 1)
        for i in range(len(parts))
    ]
    sources = [Source(i, p, settings, seed) for i, p in enumerate(parts)]
    errors: list[BaseException] = []
    out: dict[str, Any] = {}
    started = threading.Event()

    def agg_main() -> None:
        try:
            out["agg"] = serve_aggregator(
                agg_ep, settings, len(parts), parts[0].dtype, timeout_s, ready=started.set
            )
        except BaseException as e:  # re-raised in the caller's thread
            errors.append(e)
            started.set()

    def src_main(i: int) -> None:
        try:
            serve_source(src_eps[i], sources[i], agg_ep.local_addr, timeout_s)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=agg_main, daemon=True)]
    threads[0].start()
    started.wait(10.0)
    threads += [
        threading.Thread(target=src_main, args=(i,), daemon=True) for i in range(len(parts))
    ]
    for t in threads[1:]:
        t.start()
    for t in threads:
        t.join(timeout_s + 15.0)
    if errors:
        raise errors[0]
    if any(t.is_alive() for t in threads) or "agg" not in out:
        raise AnalyticsError(f"the loopback run did not finish within {timeout_s} s")
    agg, side = out["agg"]
    stats = agg_ep.stats()
    return _summarise(
        scheme, agg, sources, parts, side.dropped_messages, {k: int(v) for k, v in stats.items()}
    )
