"""Estimates with error bounds from a simple random sample.

Each function takes the values that arrived (a sample drawn without
replacement), the size ``population`` of the data they were drawn from and
an :class:`~.accuracy.Accuracy` (for its confidence level), and returns an
:class:`Estimate`: the point value and a confidence interval. Seed 000
(``000_9eba2c5297757960.txt``) §6 estimates the error "based on the mean
and variance of the received data" with sampling theory; the formulas are
the textbook ones (Cochran, *Sampling Techniques*, 3rd ed.):

* mean: ``x_bar +- z * s / sqrt(n) * sqrt(1 - n / N)`` (eq. 2.8, 2.19);
* total: ``N`` times the mean's estimate and interval;
* count of a predicate: ``N * p_hat`` with the Wilson score interval, its
  ``n`` replaced by the effective ``n / (1 - n / N)`` (finite population);
* quantile: the sample quantile, interval between the order statistics at
  ranks ``n q -+ z sqrt(n q (1 - q) (1 - n / N))`` (distribution free);
* top-k: the k keys with the largest estimated counts, each with its count's
  interval.

When the sample is the whole population (``n == N``) every interval has
width 0: the answer is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .accuracy import Accuracy
from .errors import AnalyticsError

__all__ = [
    "Estimate",
    "as_values",
    "unknown",
    "count",
    "mean",
    "quantile",
    "top_k",
    "total",
]


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its confidence interval."""

    value: float
    """The estimate."""
    low: float
    """Lower end of the interval."""
    high: float
    """Upper end of the interval."""
    n: int
    """Sample size it was computed from."""
    population: int
    """Size of the data the sample was drawn from."""
    confidence: float
    """Confidence level of the interval."""
    spread: float = math.nan
    """Half-width the interval would have without the finite population
    correction (as if the sample came from an infinite population); what
    the adjust loop scales (:func:`~.accuracy.next_fraction`)."""

    @property
    def half_width(self) -> float:
        """Largest distance from the value to an end of the interval."""
        return max(self.high - self.value, self.value - self.low)

    @property
    def rel_bound(self) -> float:
        """The estimated relative error: ``half_width / |value|`` (0 for an
        exact answer, infinite for a value of 0 with a non-empty interval)."""
        if math.isnan(self.value):
            return math.inf
        hw = self.half_width
        if hw == 0.0:
            return 0.0
        return hw / abs(self.value) if self.value != 0.0 else math.inf

    @property
    def rel_spread(self) -> float:
        """:attr:`spread` relative to ``|value|``."""
        if math.isnan(self.value) or math.isnan(self.spread):
            return math.inf
        if self.spread == 0.0:
            return 0.0
        return self.spread / abs(self.value) if self.value != 0.0 else math.inf

    def scaled(self, k: float) -> Estimate:
        """The estimate of ``k`` times the quantity."""
        lo, hi = sorted((self.low * k, self.high * k))
        return replace(self, value=self.value * k, low=lo, high=hi, spread=self.spread * abs(k))

    def rel_error(self, truth: float) -> float:
        """Achieved relative error against ``truth``."""
        if truth == 0.0:
            return 0.0 if self.value == 0.0 else math.inf
        return abs(self.value - truth) / abs(truth)

    def covers(self, truth: float) -> bool:
        """Whether the interval contains ``truth``."""
        return self.low <= truth <= self.high


def unknown(population: int, acc: Accuracy) -> Estimate:
    """The estimate of something of which nothing arrived."""
    return Estimate(math.nan, -math.inf, math.inf, 0, population, acc.confidence)


def as_values(values: Any, name: str = "values") -> npt.NDArray[np.float64]:
    """A 1-D float64 array of real numbers; :class:`AnalyticsError` for an
    empty array, a non-numeric dtype (bool, str, object, complex), NaN or
    infinity."""
    arr = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if arr.dtype.kind not in "iuf":
        raise AnalyticsError(
            f"{name} must be integers or floats, got dtype {arr.dtype} ({arr.dtype.kind!r})"
        )
    if arr.ndim != 1:
        raise AnalyticsError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise AnalyticsError(f"{name} is empty: nothing to estimate from")
    out = arr.astype(np.float64, copy=False)
    if not np.isfinite(out).all():
        raise AnalyticsError(f"{name} contains NaN or infinity")
    return out


def _population(population: object, n: int) -> int:
    if isinstance(population, bool) or not isinstance(population, int | np.integer):
        raise AnalyticsError(f"population must be an integer, got {type(population).__name__}")
    p = int(population)
    if p < n:
        raise AnalyticsError(f"population ({p}) is smaller than the sample ({n})")
    return p


def _fpc(n: int, big_n: int) -> float:
    return max(0.0, 1.0 - n / big_n)


def mean(values: Any, population: int, acc: Accuracy) -> Estimate:
    """Mean of the population from a sample of it."""
    x = as_values(values)
    n = x.size
    big_n = _population(population, n)
    m = float(x.mean())
    fpc = _fpc(n, big_n)
    spread = acc.z * float(x.std(ddof=1)) / math.sqrt(n) if n >= 2 else math.inf
    hw = 0.0 if fpc == 0.0 else spread * math.sqrt(fpc)
    return Estimate(m, m - hw, m + hw, n, big_n, acc.confidence, spread)


def total(values: Any, population: int, acc: Accuracy) -> Estimate:
    """Sum over the population: ``N`` times the mean."""
    e = mean(values, population, acc)
    return e.scaled(float(e.population))


def count(mask: Any, population: int, acc: Accuracy) -> Estimate:
    """How many of the population satisfy a predicate, from the sample's
    boolean ``mask`` (Wilson score interval, finite population corrected)."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise AnalyticsError(f"mask must be a boolean array, got dtype {m.dtype}")
    if m.ndim != 1 or m.size == 0:
        raise AnalyticsError(f"mask must be a non-empty 1-D array, got shape {m.shape}")
    n = m.size
    big_n = _population(population, n)
    return _count(int(m.sum()), n, big_n, acc)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    hw = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - hw), min(1.0, centre + hw)


def _count(hits: int, n: int, big_n: int, acc: Accuracy) -> Estimate:
    p = hits / n
    fpc = _fpc(n, big_n)
    lo, hi = (p, p) if fpc == 0.0 else _wilson(p, n / fpc, acc.z)
    ilo, ihi = _wilson(p, n, acc.z)
    spread = max(ihi - p, p - ilo) * big_n
    return Estimate(p * big_n, lo * big_n, hi * big_n, n, big_n, acc.confidence, spread)


def quantile(values: Any, q: float, population: int, acc: Accuracy) -> Estimate:
    """The ``q``-quantile (0 <= q <= 1) of the population; the point value is
    the sample's inverted-CDF quantile (an element of the sample)."""
    if isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 <= float(q) <= 1.0:
        raise AnalyticsError(f"q must be within [0, 1], got {q!r}")
    x = np.sort(as_values(values))
    n = x.size
    big_n = _population(population, n)
    q = float(q)
    k = min(n - 1, max(0, math.ceil(q * n) - 1))
    v = float(x[k])
    fpc = _fpc(n, big_n)

    def interval(f: float) -> tuple[float, float]:
        ranks = acc.z * math.sqrt(n * q * (1 - q) * f)
        lo_k = math.floor(q * n - ranks) - 1
        hi_k = math.ceil(q * n + ranks) - 1
        # Outside the sample the interval is unbounded on that side.
        lo = float(x[lo_k]) if lo_k >= 0 else -math.inf
        hi = float(x[hi_k]) if hi_k <= n - 1 else math.inf
        return min(lo, v), max(hi, v)

    ilo, ihi = interval(1.0)
    spread = max(ihi - v, v - ilo)
    lo, hi = (v, v) if fpc == 0.0 else interval(fpc)
    return Estimate(v, lo, hi, n, big_n, acc.confidence, spread)


def top_k(keys: Any, k: int, population: int, acc: Accuracy) -> list[tuple[int, Estimate]]:
    """The ``k`` keys (integers) with the largest estimated counts, largest
    first (ties: smaller key first), each with its count's estimate."""
    arr = np.asarray(keys)
    if arr.dtype.kind not in "iu":
        raise AnalyticsError(f"keys must be integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise AnalyticsError(f"keys must be a non-empty 1-D array, got shape {arr.shape}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise AnalyticsError(f"k must be an integer >= 1, got {k!r}")
    n = arr.size
    big_n = _population(population, n)
    uniq, cnt = np.unique(arr, return_counts=True)
    order = np.lexsort((uniq, -cnt))[:k]
    return [(int(uniq[i]), _count(int(cnt[i]), n, big_n, acc)) for i in order]
