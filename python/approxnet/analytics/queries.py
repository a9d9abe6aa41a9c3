"""The operators: count, sum, mean, quantile and top-k over a :class:`Sample`.

A query answers with one :class:`~.estimators.Estimate` per key (``ALL``
for a scalar) and tells the adjust loop which sampling fraction each stratum
needs for every estimate to reach ``emax`` (:meth:`Query.required`, built
on :func:`~.accuracy.next_fraction`: seed 000 ``000_9eba2c5297757960.txt``
§6, "estimate the error based on the mean and variance of the received data
[and] adjust MSR to make the error closer to emax").

With groups (the sample is stratified by the query's ``by`` field, seed 000
§3.3.3) every key is its own stratum and gets its own fraction, so every
key meets ``emax`` (Fig. 16). Without groups the framework sees one stratum
and can only steer the error of the whole data set's estimate; per-key
estimates are then post-stratified and may miss ``emax`` for rare keys,
which is what Fig. 16 shows.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from . import estimators as est
from .accuracy import Accuracy, next_fraction
from .errors import AnalyticsError
from .estimators import Estimate
from .sample import ALL, Sample, split

__all__ = ["Count", "Mean", "MeanBy", "Quantile", "Query", "Sum", "TopK", "parse_query"]

#: Growth of a stratum's fraction while it has fewer than two samples (no variance yet).
PILOT_GROWTH = 2.0


def _grow(s: Sample, h: int) -> float:
    big_n = s.population.get(h, 0)
    if big_n == 0:
        return 1.0
    return min(1.0, max(PILOT_GROWTH * s.fraction(h), 2.0 / big_n))


class Query(ABC):
    """One operator of an analytics job."""

    name: str

    @abstractmethod
    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        """Estimates per key from what arrived."""

    @abstractmethod
    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        """Sampling fraction each stratum of ``s`` needs for ``emax``."""

    def exact(self, records: npt.NDArray[np.void], strata_field: str | None) -> dict[int, float]:
        """The exact answer over the whole data set."""
        full = Sample.full(records, strata_field)
        return {k: e.value for k, e in self.estimate(full, Accuracy(0.5)).items()}

    def achieved(self, got: dict[int, Estimate], truth: dict[int, float]) -> dict[int, float]:
        """Relative error per key of the exact answer (a key that was not
        estimated counts as infinitely wrong)."""
        return {k: (got[k].rel_error(t) if k in got else math.inf) for k, t in truth.items()}

    def check(self, s: Sample) -> None:
        """Raises :class:`AnalyticsError` when the query's fields are missing."""
        names = s.dtype.names or ()
        for f in self.fields():
            if f not in names:
                raise AnalyticsError(f"{self.name}: {f!r} is not a field of the records")

    @abstractmethod
    def fields(self) -> list[str]:
        """Record fields the query reads."""


def _uniform(s: Sample, f: float) -> dict[int, float]:
    """Proportional allocation: every stratum at fraction ``f``; once ``f``
    is not above the overall fraction (emax is met) no stratum asks for
    more than it has."""
    if f <= _overall_fraction(s):
        return {h: min(f, s.fraction(h)) for h in s.strata}
    return {h: max(f, s.fraction(h)) for h in s.strata}


def _overall_fraction(s: Sample) -> float:
    big_n = s.total_population
    return min(1.0, s.size / big_n) if big_n else 1.0


def _numeric(records: npt.NDArray[np.void], field: str) -> npt.NDArray[np.float64]:
    return est.as_values(records[field], field) if len(records) else np.empty(0)


@dataclass(frozen=True)
class MeanBy(Query):
    """Mean of ``field`` per value of ``by`` (e.g. mean distance per hour)."""

    field: str
    by: str
    name: str = "mean_by"

    def fields(self) -> list[str]:
        return [self.field, self.by]

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        self.check(s)
        if s.strata_field == self.by:
            out = {}
            for h in s.strata:
                r, big_n = s.records(h), s.population.get(h, 0)
                if big_n == 0:
                    continue
                out[h] = est.mean(r[self.field], big_n, acc) if len(r) else est.unknown(big_n, acc)
            return out
        if s.strata_field is not None:
            raise AnalyticsError(
                f"{self.name}: sample is stratified by {s.strata_field!r}, not {self.by!r}"
            )
        allr = s.all_records()
        if not len(allr):
            return {}
        big_n = s.total_population
        out = {}
        for k, r in split(allr, self.by).items():
            # Post-stratified: the key's size estimated as N * n_k / n.
            nk = max(len(r), round(big_n * len(r) / len(allr)))
            out[k] = est.mean(r[self.field], nk, acc)
        return out

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        if s.strata_field == self.by:
            got = self.estimate(s, acc)
            out = {}
            for h in s.strata:
                if s.n(h) < 2 or h not in got:
                    out[h] = _grow(s, h)
                else:
                    out[h] = next_fraction(s.fraction(h), got[h].rel_spread, acc.emax)
            return out
        # Without groups: only the error of the overall mean can be steered.
        return Mean(self.field).required(s, acc)


@dataclass(frozen=True)
class Mean(Query):
    """Mean of ``field`` over the whole data set (stratified estimator)."""

    field: str
    name: str = "mean"

    def fields(self) -> list[str]:
        return [self.field]

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        self.check(s)
        big_n = s.total_population
        if big_n == 0 or s.size == 0:
            return {ALL: est.unknown(big_n, acc)}
        if len(s.strata) == 1:
            h = s.strata[0]
            return {ALL: est.mean(s.records(h)[self.field], big_n, acc)}
        m = var = var_inf = 0.0
        for h in s.strata:
            nh, bh = s.n(h), s.population.get(h, 0)
            if bh == 0:
                continue
            if nh == 0:
                return {ALL: est.unknown(big_n, acc)}
            x = _numeric(s.records(h), self.field)
            w = bh / big_n
            m += w * float(x.mean())
            v = w * w * (float(x.var(ddof=1)) if nh > 1 else math.inf) / nh
            var_inf += v
            if nh < bh:
                var += v * (1 - nh / bh)
        hw = acc.z * math.sqrt(var)
        spread = acc.z * math.sqrt(var_inf)
        return {ALL: Estimate(m, m - hw, m + hw, s.size, big_n, acc.confidence, spread)}

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        b = self.estimate(s, acc)[ALL].rel_spread
        if math.isinf(b):
            return {h: _grow(s, h) for h in s.strata}
        return _uniform(s, next_fraction(_overall_fraction(s), b, acc.emax))


@dataclass(frozen=True)
class Sum(Query):
    """Sum of ``field`` over the whole data set: ``N`` times the mean."""

    field: str
    name: str = "sum"

    def fields(self) -> list[str]:
        return [self.field]

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        e = Mean(self.field).estimate(s, acc)[ALL]
        return {ALL: e.scaled(float(s.total_population))}

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        return Mean(self.field).required(s, acc)


@dataclass(frozen=True)
class Count(Query):
    """Number of records per value of ``by`` (e.g. trips per pickup zone)."""

    by: str
    name: str = "count"

    def fields(self) -> list[str]:
        return [self.by]

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        self.check(s)
        strata = [h for h in s.strata if s.population.get(h, 0) > 0]
        if len(strata) == 1:
            h = strata[0]
            r = s.records(h)
            if not len(r):
                return {}
            big_n = s.population[h]
            keys, cnt = np.unique(r[self.by], return_counts=True)
            n = len(r)
            return {
                int(k): est._count(int(c), n, big_n, acc) for k, c in zip(keys, cnt, strict=True)
            }
        value: dict[int, float] = {}
        var: dict[int, float] = {}
        var_inf: dict[int, float] = {}
        n_all = s.size
        for h in strata:
            r, big_n = s.records(h), s.population[h]
            if not len(r):
                continue
            keys, cnt = np.unique(r[self.by], return_counts=True)
            nh = len(r)
            fpc = max(0.0, 1 - nh / big_n)
            for k, c in zip(keys.tolist(), cnt.tolist(), strict=True):
                p = c / nh
                value[k] = value.get(k, 0.0) + big_n * p
                v = big_n * big_n * p * (1 - p) / max(nh - 1, 1)
                var[k] = var.get(k, 0.0) + v * fpc
                var_inf[k] = var_inf.get(k, 0.0) + v
        out = {}
        for k in sorted(value):
            hw = acc.z * math.sqrt(var[k])
            v = value[k]
            out[int(k)] = Estimate(
                v,
                max(0.0, v - hw),
                v + hw,
                n_all,
                s.total_population,
                acc.confidence,
                acc.z * math.sqrt(var_inf[k]),
            )
        return out

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        return self._required(s, acc, self.estimate(s, acc))

    def _required(self, s: Sample, acc: Accuracy, got: dict[int, Estimate]) -> dict[int, float]:
        if s.size < 2 or not got:
            return {h: _grow(s, h) for h in s.strata}
        f0 = _overall_fraction(s)
        f = max(next_fraction(f0, e.rel_spread, acc.emax) for e in got.values())
        return _uniform(s, f)


@dataclass(frozen=True)
class TopK(Query):
    """The ``k`` most frequent values of ``by`` and their counts (rank)."""

    by: str
    k: int = 15
    name: str = "top_k"

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise AnalyticsError(f"k must be an integer >= 1, got {self.k!r}")

    def fields(self) -> list[str]:
        return [self.by]

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        counts = Count(self.by).estimate(s, acc)
        order = sorted(counts, key=lambda k: (-counts[k].value, k))[: self.k]
        return {k: counts[k] for k in order}

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        return Count(self.by)._required(s, acc, self.estimate(s, acc))

    def achieved(self, got: dict[int, Estimate], truth: dict[int, float]) -> dict[int, float]:
        """Per true top-k key: the relative error of its estimated count; for
        a key the estimate ranked below k, the relative gap between its true
        count and the smallest count the estimate kept (what it missed by)."""
        if not got:
            return dict.fromkeys(truth, math.inf)
        kth = min(e.value for e in got.values())
        return {
            k: (got[k].rel_error(t) if k in got else abs(t - kth) / t if t else math.inf)
            for k, t in truth.items()
        }

    @staticmethod
    def recall(got: dict[int, Estimate], truth: dict[int, float]) -> float:
        """Fraction of the true top-k keys that the estimate ranked in its top k."""
        return len(set(got) & set(truth)) / len(truth) if truth else 1.0


@dataclass(frozen=True)
class Quantile(Query):
    """The ``q``-quantile of ``field``, per value of ``by`` (or overall)."""

    field: str
    q: float = 0.5
    by: str | None = None
    name: str = "quantile"

    def __post_init__(self) -> None:
        q = self.q
        if isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 <= float(q) <= 1.0:
            raise AnalyticsError(f"q must be within [0, 1], got {q!r}")

    def fields(self) -> list[str]:
        return [self.field] + ([self.by] if self.by else [])

    def _parts(self, s: Sample) -> dict[int, tuple[npt.NDArray[np.void], int]]:
        if self.by is not None and s.strata_field == self.by:
            return {h: (s.records(h), s.population.get(h, 0)) for h in s.strata}
        if s.strata_field is not None and len(s.strata) > 1:
            raise AnalyticsError(
                f"{self.name}: a quantile over several strata of {s.strata_field!r} is not "
                f"supported; use by={s.strata_field!r} or an ungrouped run"
            )
        allr, big_n = s.all_records(), s.total_population
        if self.by is None:
            return {ALL: (allr, big_n)}
        return {
            k: (r, max(len(r), round(big_n * len(r) / len(allr))))
            for k, r in split(allr, self.by).items()
        }

    def estimate(self, s: Sample, acc: Accuracy) -> dict[int, Estimate]:
        self.check(s)
        out = {}
        for k, (r, big_n) in self._parts(s).items():
            if big_n == 0:
                continue
            out[k] = (
                est.quantile(r[self.field], float(self.q), big_n, acc)
                if len(r)
                else est.unknown(big_n, acc)
            )
        return out

    def required(self, s: Sample, acc: Accuracy) -> dict[int, float]:
        got = self.estimate(s, acc)
        if self.by is not None and s.strata_field == self.by:
            return {
                h: (
                    _grow(s, h)
                    if s.n(h) < 2 or h not in got
                    else next_fraction(s.fraction(h), got[h].rel_spread, acc.emax)
                )
                for h in s.strata
            }
        if s.size < 2 or not got:
            return {h: _grow(s, h) for h in s.strata}
        f0 = _overall_fraction(s)
        return _uniform(s, max(next_fraction(f0, e.rel_spread, acc.emax) for e in got.values()))


def parse_query(text: str) -> Query:
    """A query from its command-line form: ``mean:FIELD``, ``sum:FIELD``,
    ``mean_by:FIELD:BY``, ``count:BY``, ``top_k:BY:K``,
    ``quantile:FIELD:Q[:BY]``."""
    parts = text.split(":")
    kind, args = parts[0], parts[1:]
    try:
        if kind == "mean" and len(args) == 1:
            return Mean(args[0])
        if kind == "sum" and len(args) == 1:
            return Sum(args[0])
        if kind == "mean_by" and len(args) == 2:
            return MeanBy(args[0], args[1])
        if kind == "count" and len(args) == 1:
            return Count(args[0])
        if kind == "top_k" and len(args) == 2:
            return TopK(args[0], int(args[1]))
        if kind == "quantile" and len(args) in (2, 3):
            return Quantile(args[0], float(args[1]), args[2] if len(args) == 3 else None)
    except ValueError as e:
        raise AnalyticsError(f"query {text!r}: {e}") from None
    raise AnalyticsError(
        f"unknown query {text!r} (known: mean:F, sum:F, mean_by:F:BY, count:BY, top_k:BY:K, "
        "quantile:F:Q[:BY])"
    )
