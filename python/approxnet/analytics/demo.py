"""The taxi demo: hourly mean trip distance and the top-15 pickup zones.

Seed 000 (``000_9eba2c5297757960.txt``) §7.2.1: "Avg of hourly ride
distance" and "Rank to find the top 15 taxi pickup locations", compared
there with DCTCP-SS / DCTCP-ES (Fig. 15). Here, for one data set split over
several sources, each scheme's JCT, how much data it sent and got, and the
achieved error of every answer against the exact one:

* ``atp``: the adjust loop over ATP (:mod:`.roles`), one group per hour;
* ``atp-msr1``: everything over ATP with MSR 1 (reliable, in order);
* ``tcp-ss`` / ``tcp-es``: SampleSend / EarlySend over kernel TCP with the
  fractions the estimators ask for (:func:`~.baselines.plan_fractions`);
* ``tcp-all``: everything over kernel TCP.

``virtual`` runs in virtual time through :class:`~.virtual.VirtualNet`
(ATP schemes only: there is no kernel TCP in virtual time); ``loopback``
over real sockets on 127.0.0.1; the testbed mode is in :mod:`.testbed_run`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .._native import Config
from .accuracy import Accuracy
from .errors import AnalyticsError
from .estimators import Estimate
from .queries import MeanBy, Query, TopK
from .roles import Settings
from .runner import Run, run_virtual
from .virtual import Bottleneck

__all__ = ["SCHEMES", "Row", "default_queries", "evaluate", "compare", "row_of_run"]

SCHEMES = ("atp", "atp-msr1", "tcp-ss", "tcp-es", "tcp-all")
ATP_SCHEMES = ("atp", "atp-msr1")


def default_queries(k: int = 15) -> tuple[Query, ...]:
    """Hourly mean trip distance and the top-``k`` pickup zones (seed 000 §7.2.1)."""
    return (MeanBy("distance", "hour"), TopK("zone", k))


@dataclass
class Row:
    """One scheme's outcome."""

    scheme: str
    mode: str
    jct_s: float
    sent_fraction: float
    """Records sent / records in the data set."""
    arrived_fraction: float
    """Records that reached the aggregator / records in the data set."""
    dropped_messages: int
    """Data messages lost in the network and abandoned by ATP (0 for TCP)."""
    rounds: int
    bound: float
    """Largest estimated relative error (what the aggregator believed)."""
    max_error: float
    """Largest achieved relative error over every key of every query."""
    mean_error: float
    within: float
    """Fraction of all keys whose achieved error is <= emax."""
    errors: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Per query: (max, mean) achieved relative error."""
    recall: float = math.nan
    """Top-k: fraction of the true top k found."""

    def flat(self) -> dict[str, Any]:
        d = asdict(self)
        errs = d.pop("errors")
        for q, (mx, mn) in errs.items():
            d[f"{q}_max_error"], d[f"{q}_mean_error"] = mx, mn
        return d


def evaluate(
    estimates: dict[str, dict[int, Estimate]],
    queries: Sequence[Query],
    truth: dict[str, dict[int, float]],
    emax: float,
) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Per query (max, mean) achieved error; fraction within ``emax``; top-k recall."""
    errs: dict[str, tuple[float, float]] = {}
    all_e: list[float] = []
    recall = math.nan
    for q in queries:
        e = q.achieved(estimates.get(q.name, {}), truth[q.name])
        v = list(e.values())
        errs[q.name] = (max(v, default=0.0), float(np.mean(v)) if v else 0.0)
        all_e += v
        if isinstance(q, TopK):
            recall = TopK.recall(estimates.get(q.name, {}), truth[q.name])
    within = sum(x <= emax for x in all_e) / len(all_e) if all_e else 1.0
    return errs, within, recall


def truths(
    records: npt.NDArray[np.void], queries: Sequence[Query], strata_field: str | None
) -> dict[str, dict[int, float]]:
    """The exact answers (the whole data set as the sample)."""
    return {q.name: q.exact(records, strata_field) for q in queries}


def row_of_run(
    run: Run, mode: str, queries: Sequence[Query], truth: dict[str, dict[int, float]], emax: float
) -> Row:
    est = run.results[-1].estimates
    errs, within, recall = evaluate(est, queries, truth, emax)
    all_max = max((mx for mx, _ in errs.values()), default=0.0)
    mean = float(np.mean([mn for _, mn in errs.values()])) if errs else 0.0
    return Row(
        run.scheme,
        mode,
        run.jct_s,
        run.sent_fraction,
        run.arrived_fraction,
        run.messages_dropped,
        len(run.rounds),
        run.bound,
        all_max,
        mean,
        within,
        errs,
        recall,
    )


def compare(
    records: npt.NDArray[np.void],
    sources: int,
    acc: Accuracy,
    mode: str = "virtual",
    schemes: Sequence[str] = SCHEMES,
    seed: int = 0,
    grouped: bool = True,
    queries: Sequence[Query] | None = None,
    bottleneck: Bottleneck | None = None,
    config: Config | None = None,
    on_done: Callable[[Row], None] | None = None,
    round_msr: float | None = None,
) -> list[Row]:
    """Runs every scheme on the same data; one :class:`Row` each."""
    from . import taxi

    if mode not in ("virtual", "loopback"):
        raise AnalyticsError(f"mode must be virtual or loopback here, got {mode!r}")
    bad = [s for s in schemes if s not in SCHEMES]
    if bad:
        raise AnalyticsError(f"unknown scheme {bad[0]!r} (known: {', '.join(SCHEMES)})")
    qs = tuple(queries or default_queries())
    strata = "hour" if grouped else None
    settings = Settings(acc, qs, strata_field=strata, round_msr=round_msr)
    parts = taxi.partition(records, sources)
    truth = truths(records, qs, strata)
    rows: list[Row] = []
    fractions: dict[int, float] | None = None
    for scheme in schemes:
        if scheme in ATP_SCHEMES:
            st = settings if scheme == "atp" else replace(settings, msr=1.0)
            if mode == "virtual":
                run = run_virtual(parts, st, bottleneck, config, seed, scheme=scheme)
            else:
                from .sockets import run_loopback

                run = run_loopback(parts, st, config, seed=seed, scheme=scheme)
            row = row_of_run(run, mode, qs, truth, acc.emax)
        elif mode == "virtual":
            continue
        else:
            from .baselines import plan_fractions, run_tcp_loopback

            if fractions is None:
                fractions = plan_fractions(parts, settings, seed)
            tcp_mode = scheme.split("-", 1)[1]
            res, sent = run_tcp_loopback(parts, settings, fractions, tcp_mode, seed=seed)
            row = tcp_row(scheme, mode, res, sent, len(records), qs, truth, acc)
        rows.append(row)
        if on_done is not None:
            on_done(row)
    return rows


def tcp_row(
    scheme: str,
    mode: str,
    res: Any,
    sent: int,
    total: int,
    qs: Sequence[Query],
    truth: dict[str, dict[int, float]],
    acc: Accuracy,
) -> Row:
    """A :class:`Row` from a TCP aggregator's result."""
    est = {q.name: q.estimate(res.sample, acc) for q in qs}
    errs, within, recall = evaluate(est, qs, truth, acc.emax)
    bound = max((e.rel_bound for d in est.values() for e in d.values()), default=math.inf)
    return Row(
        scheme,
        mode,
        res.jct_s,
        sent / total,
        res.records_arrived / total,
        0,
        1,
        bound,
        max(mx for mx, _ in errs.values()),
        float(np.mean([m for _, m in errs.values()])),
        within,
        errs,
        recall,
    )
