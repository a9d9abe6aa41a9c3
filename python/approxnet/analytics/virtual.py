"""An in-process network of sans-IO endpoints, in virtual time.

Several :class:`approxnet.Endpoint` values (sources) send through one shared
bottleneck port to another (the aggregator); the way back has only delay.
The bottleneck is the switch port of seed 000 (``000_9eba2c5297757960.txt``)
§5.2 as the testbed builds it (docs/testbed.md): ``queues`` strict-priority
queues chosen by each datagram's ``Transmit.queue``, queue ``q >= 1``
holding ``queues - q`` frames and queue 0 the rest of ``buffer_bytes``,
drop-tail; optional independent random loss. Time is integer nanoseconds,
randomness comes from ``seed``: the same run gives the same result, bit for
bit. It exists so that the analytics layer (and its tests) can run several
sources against one aggregator without sockets; :func:`approxnet.transfer`
covers one job between two endpoints.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._native import ConfigError, Endpoint, queue_limits

__all__ = ["Bottleneck", "VirtualNet"]

FRAME_OVERHEAD = 14 + 28  # Ethernet + IPv4 + UDP headers around an approxnet datagram


@dataclass(frozen=True)
class Bottleneck:
    """The shared port from the sources to the aggregator."""

    rate_gbps: float = 1.0
    delay_us: float = 20.0
    """One-way propagation delay (each direction)."""
    buffer_bytes: int = 256 * 1024
    queues: int = 8
    mtu: int = 1500
    loss: float = 0.0
    """Independent random loss of every datagram towards the aggregator."""

    def __post_init__(self) -> None:
        if not self.rate_gbps > 0 or self.rate_gbps > 1e4:
            raise ConfigError(f"rate_gbps must be within (0, 10000], got {self.rate_gbps}")
        if not 0 <= self.delay_us <= 1e6:
            raise ConfigError(f"delay_us must be within [0, 1e6], got {self.delay_us}")
        if not 1 <= self.queues <= 8:
            raise ConfigError(f"queues must be within 1 ..= 8, got {self.queues}")
        if not 0.0 <= self.loss < 1.0:
            raise ConfigError(f"loss must be within [0, 1), got {self.loss}")
        self.limits()  # raises ConfigError when the buffer is too small

    def limits(self) -> list[int]:
        """Bytes each queue holds (seed 000 §5.2: queue q >= 1 holds Q - q
        frames, queue 0 the rest): the core's rule, as the testbed builds it."""
        try:
            return queue_limits(self.queues, self.mtu + 14, self.buffer_bytes)
        except ConfigError as e:
            raise ConfigError(f"buffer_bytes: {e}") from None


class VirtualNet:
    """Endpoints on one virtual network; ``sink`` is the aggregator's address."""

    def __init__(self, bottleneck: Bottleneck, sink: str, seed: int = 0) -> None:
        self.b = bottleneck
        self.sink = sink
        self.now = 0
        self.eps: dict[str, Endpoint] = {}
        self.handlers: dict[str, Callable[[str, Any], None]] = {}
        self._heap: list[tuple[int, int, str, str, str, bytes]] = []
        self._seq = 0
        self._rng = random.Random(seed)
        self._limits = bottleneck.limits()
        self._queues: list[deque[tuple[str, bytes]]] = [deque() for _ in self._limits]
        self._bytes = [0] * len(self._limits)
        self._busy = False
        self._ns_per_byte = 8.0 / bottleneck.rate_gbps
        self._delay = round(bottleneck.delay_us * 1000)
        self.counters = {"offered": 0, "queue_drops": 0, "random_drops": 0, "delivered": 0}

    def add(self, addr: str, ep: Endpoint, on_event: Callable[[str, Any], None]) -> None:
        """Adds an endpoint at ``addr``; ``on_event(addr, event)`` gets its events."""
        self.eps[addr] = ep
        self.handlers[addr] = on_event

    def _push(self, t: int, kind: str, dst: str, src: str, data: bytes) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, dst, src, data))

    def _route(self, src: str, dst: str, data: bytes, queue: int) -> None:
        if dst != self.sink:
            self._push(self.now + self._delay, "deliver", dst, src, data)
            return
        self.counters["offered"] += 1
        if self.b.loss and self._rng.random() < self.b.loss:
            self.counters["random_drops"] += 1
            return
        q = min(queue, len(self._limits) - 1)
        size = len(data) + FRAME_OVERHEAD
        if self._bytes[q] + size > self._limits[q]:
            self.counters["queue_drops"] += 1
            return
        self._queues[q].append((src, data))
        self._bytes[q] += size
        if not self._busy:
            self._serve()

    def _serve(self) -> None:
        for q, dq in enumerate(self._queues):
            if dq:
                src, data = dq.popleft()
                size = len(data) + FRAME_OVERHEAD
                self._bytes[q] -= size
                done = self.now + max(1, round(size * self._ns_per_byte))
                self._busy = True
                self._push(done, "txdone", "", "", b"")
                self._push(done + self._delay, "deliver", self.sink, src, data)
                return
        self._busy = False

    def _flush(self) -> bool:
        moved = True
        any_moved = False
        while moved:
            moved = False
            for addr, ep in self.eps.items():
                while (t := ep.poll_transmit(self.now)) is not None:
                    self._route(addr, t.dst, t.data, t.queue)
                    moved = True
                while (e := ep.poll_event()) is not None:
                    self.handlers[addr](addr, e)
                    moved = True
            any_moved |= moved
        return any_moved

    def run(self, done: Callable[[], bool], limit_s: float = 60.0) -> bool:
        """Runs until ``done()`` or ``limit_s`` virtual seconds; returns ``done()``."""
        limit = self.now + round(limit_s * 1e9)
        while True:
            self._flush()
            if done():
                return True
            timers = [t for ep in self.eps.values() if (t := ep.poll_timeout()) is not None]
            nxt = min(timers, default=None)
            if self._heap and (nxt is None or self._heap[0][0] < nxt):
                nxt = self._heap[0][0]
            if nxt is None or nxt > limit:
                return done()
            self.now = max(self.now, nxt)
            while self._heap and self._heap[0][0] <= self.now:
                _, _, kind, dst, src, data = heapq.heappop(self._heap)
                if kind == "txdone":
                    self._serve()
                else:
                    self.counters["delivered"] += dst == self.sink
                    self.eps[dst].handle_datagram(self.now, src, data)
            for ep in self.eps.values():
                t = ep.poll_timeout()
                if t is not None and t <= self.now:
                    ep.handle_timeout(self.now)
