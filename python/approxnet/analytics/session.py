"""Event handlers that connect the sans-IO roles to an approxnet endpoint.

Both drivers (the virtual network of :mod:`.virtual` and real UDP sockets)
feed endpoint events in and carry the jobs out through a ``send(conn, job)``
callable. The aggregator cannot speak first (approxnet's handshake is a
stateless cookie: a server learns of a connection from its first JOB), so
each source starts with round 0 (:func:`~.roles.first_plan`) and the
aggregator answers over the same connections with plans, jobs of one
message with MSR 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._native import (
    Accepted,
    ConnectionLost,
    Job,
    JobComplete,
    MessageAbandoned,
    MessageDelivered,
)
from .errors import AnalyticsError
from .roles import Aggregator, Source, first_plan
from .wire import META_GROUP, Plan

__all__ = ["AggregatorSide", "SourceSide"]

Send = Callable[[Any, Job], int]


class SourceSide:
    """Drives one :class:`Source` over one connection to the aggregator."""

    def __init__(self, source: Source, send: Send) -> None:
        self.source = source
        self.send = send
        self.conn: Any = None
        self.done = False
        self.jobs_sent = 0

    def start(self, conn: Any) -> None:
        """The connection is open: send round 0."""
        self.conn = conn
        self._answer(first_plan(self.source.settings))

    def _answer(self, plan: Plan) -> None:
        job = self.source.job_for(plan)
        if job is None:
            self.done = True
            return
        self.send(self.conn, job)
        self.jobs_sent += 1

    def on_event(self, e: Any) -> None:
        if isinstance(e, MessageDelivered) and e.group == META_GROUP:
            self._answer(Plan.decode(e.payload))
        elif isinstance(e, ConnectionLost):
            raise AnalyticsError(f"source {self.source.id}: connection lost ({e.reason})")
        elif isinstance(e, JobComplete) and not e.ok:
            raise AnalyticsError(f"source {self.source.id}: job {e.job} failed: {e.failure}")
        elif isinstance(e, JobComplete) and e.role == "sender" and e.report is not None:
            self.source.bytes_sent += e.report.bytes
            self.source.bytes_unsent += e.report.unsent_bytes


class AggregatorSide:
    """Drives the :class:`Aggregator` over the connections its sources open."""

    def __init__(self, agg: Aggregator, send: Send, clock: Callable[[], float]) -> None:
        self.agg = agg
        self.send = send
        self.clock = clock
        self.conns: list[Any] = []
        self.dropped_messages = 0
        self.started = False

    def on_event(self, e: Any) -> None:
        if isinstance(e, Accepted):
            self.conns.append(e.connection)
            if not self.started:
                self.started = True
                self.agg.plan(self.clock())
        elif isinstance(e, MessageDelivered):
            if not e.damaged:
                self.agg.on_message(e.connection, e.job, e.group, e.payload)
        elif isinstance(e, MessageAbandoned):
            self.dropped_messages += 1
            self.agg.on_abandoned(e.connection, e.job, e.group)
        elif isinstance(e, JobComplete) and e.role == "receiver":
            if not e.ok:
                raise AnalyticsError(f"aggregator: data job {e.job} failed: {e.failure}")
            plan = self.agg.on_job_done(self.clock(), e.connection, e.job)
            if plan is not None:
                self.agg.plan(self.clock())
                msg = Job(1.0).message(META_GROUP, plan.encode())
                for c in self.conns:
                    self.send(c, msg)
        elif isinstance(e, ConnectionLost):
            raise AnalyticsError(f"aggregator: a source's connection was lost ({e.reason})")

    @property
    def finished(self) -> bool:
        return self.agg.finished
