"""The two roles of an analytics job, written sans-IO.

A :class:`Source` holds records and answers each :class:`~.wire.Plan` with
one ATP job (its data for that round); an :class:`Aggregator` collects what
arrives, estimates, and decides the next plan: the adjust loop of seed 000
(``000_9eba2c5297757960.txt``) §6. Neither touches a socket or a clock: a
driver (:mod:`.virtual`, :mod:`.runner`) moves their jobs over an approxnet
endpoint and passes the time in.

Batch (§6, "Batch data-processing frameworks"): round 0 is a pilot of a
fraction ``pilot`` of every stratum, sent with the heuristic MSR
(:attr:`~.accuracy.Accuracy.initial_msr`). After each round, every query
says which fraction of each stratum its estimates need
(:meth:`~.queries.Query.required`, from the variance of what arrived); the
aggregator asks for the missing records, enlarged so that ATP may drop a
fraction ``1 - MSR0`` of them. It stops once every stratum has what its
estimates need, or everything was sent.

Streaming (§6, "Streaming data-processing frameworks"): one job per window,
every record of the window sent with an MSR per stratum that the previous
window's variance says is enough (the first window uses MSR0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._native import Job, must_deliver
from .accuracy import Accuracy, check_msr
from .errors import AnalyticsError
from .estimators import Estimate
from .queries import Query
from .sample import Sample, split
from .wire import DEFAULT, META_GROUP, Meta, Plan, group_of, pack, stratum_of, unpack

__all__ = [
    "Aggregator",
    "RoundStat",
    "Settings",
    "Source",
    "WindowResult",
    "first_plan",
    "make_sources",
]


@dataclass(frozen=True)
class Settings:
    """How an analytics job runs (shared by sources and aggregator)."""

    acc: Accuracy
    queries: tuple[Query, ...]
    strata_field: str | None = None
    """Record field whose values are the strata (one ATP group each); None: no groups."""
    per_message: int = 64
    """Records per message (64 x 16 B trips = 1 KiB, one packet)."""
    pilot: float = 0.05
    """Fraction of every stratum sent in the pilot round (batch)."""
    margin: float = 0.1
    """Extra records asked for beyond the estimated need (against variance noise)."""
    max_rounds: int = 8
    """Rounds at most (batch); the last one sends everything still needed."""
    msr: float | None = None
    """Fixed MSR for every group, no adjust loop (1.0: everything, reliably)."""
    round_msr: float | None = None
    """Batch: MSR of the rounds after the pilot (the slack ATP gets: the
    aggregator asks for ``deficit / round_msr`` records); None: the
    heuristic MSR0 of seed 000 §6 (:attr:`~.accuracy.Accuracy.initial_msr`)."""
    window_s: int | None = None
    """Streaming: window length in seconds of the records' ``t`` field."""
    windows: int = 1
    """Streaming: number of windows."""

    def __post_init__(self) -> None:
        if not self.queries:
            raise AnalyticsError("at least one query is needed")
        for name, v, lo in (
            ("per_message", self.per_message, 1),
            ("max_rounds", self.max_rounds, 2),
            ("windows", self.windows, 1),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise AnalyticsError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not 0.0 < self.pilot <= 1.0:
            raise AnalyticsError(f"pilot must be within (0, 1], got {self.pilot}")
        if not 0.0 <= self.margin <= 10.0:
            raise AnalyticsError(f"margin must be within [0, 10], got {self.margin}")
        if self.msr is not None:
            check_msr(self.msr)
        if self.round_msr is not None and check_msr(self.round_msr, "round_msr") == 0.0:
            raise AnalyticsError("round_msr must be > 0")
        if self.window_s is not None and (isinstance(self.window_s, bool) or self.window_s < 1):
            raise AnalyticsError(f"window_s must be an integer >= 1, got {self.window_s!r}")

    @property
    def streaming(self) -> bool:
        return self.window_s is not None


class Source:
    """One data source: its records, shuffled within each (window, stratum)."""

    def __init__(
        self, source_id: int, records: npt.NDArray[np.void], settings: Settings, seed: int = 0
    ) -> None:
        if records.dtype.names is None:
            raise AnalyticsError("records must be a structured numpy array")
        self.id = source_id
        self.settings = settings
        self.dtype = records.dtype
        rng = np.random.default_rng([seed, source_id])
        self.windows: dict[int, dict[int, npt.NDArray[np.void]]] = {}
        if settings.window_s is not None:
            w = (records["t"] // settings.window_s).astype(np.int64)
            by_window = {int(k): records[w == k] for k in np.unique(w)}
        else:
            by_window = {0: records}
        for win, recs in by_window.items():
            # Shuffled once: whatever prefix is sent, and whichever messages
            # ATP drops, what arrives is a random sample of the stratum.
            self.windows[win] = {
                h: r[rng.permutation(len(r))] for h, r in split(recs, settings.strata_field).items()
            }
        self.sent: dict[tuple[int, int], int] = {}
        self.jobs = 0
        self.records_sent = 0
        self.bytes_sent = 0
        self.bytes_unsent = 0
        """Bytes of this source's jobs on the wire, and bytes never sent
        because the aggregator's "enough" (the job's MSR met, seed 000 §3.3)
        ended a job first."""

    def job_for(self, plan: Plan) -> Job | None:
        """The data job answering ``plan`` (None for a stop plan)."""
        if plan.stop:
            return None
        k = self.settings.per_message
        strata = self.windows.get(plan.window, {})
        job = Job(1.0)
        meta: dict[int, tuple[int, int]] = {}
        parts: list[tuple[int, float, npt.NDArray[np.void]]] = []
        for h, recs in strata.items():
            big_n = len(recs)
            frac, msr = plan.entry(h)
            if plan.counts:  # msr is n0 for this source: n = n0 / (1 + n0 / N)
                msr = min(1.0, msr / (1.0 + msr / big_n) / big_n) if big_n else 1.0
            sent = self.sent.get((plan.window, h), 0)
            want = must_deliver(frac, big_n)
            if want > sent:
                want = min(big_n, sent + math.ceil((want - sent) / k) * k)
            chunk = recs[sent:want] if want > sent else recs[:0]
            meta[h] = (big_n, len(chunk))
            if len(chunk):
                parts.append((h, msr, chunk))
                self.sent[(plan.window, h)] = want
        job.message(META_GROUP, Meta(self.id, plan.round, plan.window, meta).encode())
        for h, msr, chunk in parts:
            g = group_of(h)
            job.group(g, msr)
            for payload in pack(chunk, k):
                job.message(g, payload)
            self.records_sent += len(chunk)
        self.jobs += 1
        return job


@dataclass
class RoundStat:
    """One round (batch) or window (streaming) as the aggregator saw it."""

    round: int
    window: int
    plan: dict[int, tuple[float, float]]
    """The plan the sources answered: stratum -> (cumulative fraction, MSR)."""
    records_sent: int = 0
    records_arrived: int = 0
    messages_arrived: int = 0
    messages_abandoned: int = 0
    started_s: float = 0.0
    ended_s: float = 0.0
    bound: float = math.inf
    """Largest estimated relative error over every key of every query after the round."""
    target: dict[int, float] = field(default_factory=dict)
    """Sampling fraction per stratum the estimates asked for after the round
    (the job-level MSR of the adjust loop)."""


@dataclass
class WindowResult:
    """The answer for one window (the whole data set in batch mode)."""

    window: int
    estimates: dict[str, dict[int, Estimate]]
    rounds: list[RoundStat]
    started_s: float
    ended_s: float
    population: int
    arrived: int

    @property
    def jct_s(self) -> float:
        return self.ended_s - self.started_s

    @property
    def bound(self) -> float:
        return max(
            (e.rel_bound for q in self.estimates.values() for e in q.values()), default=math.inf
        )


class Aggregator:
    """Collects records from ``sources`` sources and runs the adjust loop."""

    def __init__(self, settings: Settings, sources: int, dtype: np.dtype[np.void]) -> None:
        if sources < 1:
            raise AnalyticsError(f"sources must be >= 1, got {sources}")
        for q in settings.queries:
            for f in q.fields():
                if f not in (dtype.names or ()):
                    raise AnalyticsError(f"query {q.name}: {f!r} is not a field of the records")
        self.settings = settings
        self.sources = sources
        self.dtype = dtype
        self.round = 0
        self.window = 0
        self.sample = Sample(dtype, settings.strata_field)
        self.sent: dict[int, int] = {}
        self._pending: dict[tuple[object, int], list[tuple[int, npt.NDArray[np.void]]]] = {}
        self._meta: dict[tuple[object, int], Meta] = {}
        self._done: set[object] = set()
        self.results: list[WindowResult] = []
        self.rounds: list[RoundStat] = []
        self._window_start = 0.0
        self._prev_target: dict[int, float] | None = None
        self.finished = False
        self._plan = self._first_plan()

    # ---------------------------------------------------------------- plans

    def _first_plan(self) -> Plan:
        return first_plan(self.settings)

    def plan(self, now: float) -> Plan:
        """The plan of the round that starts now (the sources answer it)."""
        p = self._plan
        if not p.stop and (
            not self.rounds
            or (self.rounds[-1].round, self.rounds[-1].window) != (p.round, p.window)
        ):
            if not self.rounds or self.rounds[-1].window != p.window:
                self._window_start = now
            self.rounds.append(RoundStat(p.round, p.window, dict(p.entries), started_s=now))
        return p

    # ---------------------------------------------------------------- events

    def on_message(self, source: object, job: int, group: int, payload: bytes) -> None:
        """A message of a data job arrived whole."""
        if group == META_GROUP:
            self._meta[(source, job)] = Meta.decode(payload)
            return
        recs = unpack(payload, self.dtype)
        self._pending.setdefault((source, job), []).append((stratum_of(group), recs))

    def on_abandoned(self, source: object, job: int, group: int) -> None:
        """The sender gave up on a message (it was dropped and there was slack)."""
        if self.rounds:
            self.rounds[-1].messages_abandoned += 1

    def on_job_done(self, now: float, source: object, job: int) -> Plan | None:
        """A data job is complete at the aggregator; returns the next plan
        once every source's job of the round is in (None before)."""
        meta = self._meta.pop((source, job), None)
        if meta is None:
            raise AnalyticsError(f"data job {job} of {source!r} completed without its metadata")
        parts = self._pending.pop((source, job), [])
        st = self.rounds[-1]
        if meta.round != st.round or meta.window != st.window:
            raise AnalyticsError(f"job of round {meta.round} arrived during round {st.round}")
        if st.round == 0 or self.settings.streaming:
            for h, (big_n, _) in meta.strata.items():
                self.sample.add_population(h, big_n)
        for h, (_, c) in meta.strata.items():
            self.sent[h] = self.sent.get(h, 0) + c
            st.records_sent += c
        for h, recs in parts:
            self.sample.add(h, recs)
            st.records_arrived += len(recs)
            st.messages_arrived += 1
        self._done.add(source)
        if len(self._done) < self.sources:
            return None
        self._done.clear()
        st.ended_s = now
        self._plan = self._next_plan(now, st)
        return self._plan

    # ---------------------------------------------------------------- the loop

    def estimates(self) -> dict[str, dict[int, Estimate]]:
        """Every query's estimates from what arrived in the current window."""
        return {q.name: q.estimate(self.sample, self.settings.acc) for q in self.settings.queries}

    def _target(self) -> dict[int, float]:
        acc = self.settings.acc
        target: dict[int, float] = {}
        for q in self.settings.queries:
            for h, f in q.required(self.sample, acc).items():
                target[h] = max(target.get(h, 0.0), f)
        return target

    def _next_plan(self, now: float, st: RoundStat) -> Plan:
        s = self.settings
        est = self.estimates()
        st.bound = max((e.rel_bound for q in est.values() for e in q.values()), default=math.inf)
        if s.msr is None:
            st.target = self._target()
        if s.streaming:
            return self._next_window(now, est, st)
        if s.msr is not None:
            return self._finish(now, est)
        if st.round + 1 >= s.max_rounds:
            return self._finish(now, est)
        entries: dict[int, tuple[float, float]] = {}
        last = st.round + 2 >= s.max_rounds
        m0 = s.round_msr if s.round_msr is not None else s.acc.initial_msr
        for h, f in st.target.items():
            big_n = self.sample.population.get(h, 0)
            if big_n == 0:
                continue
            sent = self.sent.get(h, 0)
            if f <= self.sample.fraction(h):
                continue  # the stratum's estimates already meet emax
            need = min(big_n, math.ceil(f * big_n * (1.0 + s.margin)))
            deficit = need - self.sample.n(h)
            left = big_n - sent
            if deficit <= 0 or left <= 0:
                continue
            chunk = left if last else min(left, math.ceil(deficit / m0))
            entries[h] = ((sent + chunk) / big_n, min(1.0, deficit / chunk))
        if not entries:
            return self._finish(now, est)
        entries[DEFAULT] = (0.0, 1.0)
        return Plan(st.round + 1, self.window, False, entries)

    def _next_window(self, now: float, est: dict[str, dict[int, Estimate]], st: RoundStat) -> Plan:
        s = self.settings
        self._record(now, est)
        counts = s.msr is None
        if s.msr is not None:
            msr_of = {DEFAULT: s.msr}
        else:
            # Next window: the sample size this window's variance asks for,
            # as Cochran's n0 (infinite population) per source; each source
            # applies its own window size (the window sizes change).
            msr_of = {}
            for h, f in st.target.items():
                big_n = self.sample.population.get(h, 0)
                n0 = math.inf if f >= 1.0 else f * big_n / (1.0 - f)
                msr_of[h] = min(1e12, n0 * (1.0 + s.margin) / self.sources)
            msr_of[DEFAULT] = max(msr_of.values(), default=1e12)
        self.window += 1
        self.sample = Sample(self.dtype, s.strata_field)
        self.sent = {}
        if self.window >= s.windows:
            self.finished = True
            return Plan(st.round + 1, self.window, True)
        entries = {h: (1.0, m) for h, m in msr_of.items()}
        return Plan(st.round + 1, self.window, False, entries, counts)

    def _record(self, now: float, est: dict[str, dict[int, Estimate]]) -> None:
        rounds = [r for r in self.rounds if r.window == self.window]
        self.results.append(
            WindowResult(
                self.window,
                est,
                rounds,
                self._window_start,
                now,
                self.sample.total_population,
                self.sample.size,
            )
        )

    def _finish(self, now: float, est: dict[str, dict[int, Estimate]]) -> Plan:
        self._record(now, est)
        self.finished = True
        return Plan(self.rounds[-1].round + 1, self.window, True)


def first_plan(settings: Settings) -> Plan:
    """Round 0, which sources start with before hearing from the aggregator:
    the pilot (batch), window 0 (streaming), or everything at the fixed MSR."""
    if settings.msr is not None:
        return Plan(0, 0, False, {DEFAULT: (1.0, settings.msr)})
    if settings.streaming:
        return Plan(0, 0, False, {DEFAULT: (1.0, settings.acc.initial_msr)})
    return Plan(0, 0, False, {DEFAULT: (settings.pilot, settings.acc.initial_msr)})


def make_sources(
    parts: Sequence[npt.NDArray[np.void]], settings: Settings, seed: int = 0
) -> list[Source]:
    """One :class:`Source` per part of the data."""
    return [Source(i, p, settings, seed) for i, p in enumerate(parts)]
