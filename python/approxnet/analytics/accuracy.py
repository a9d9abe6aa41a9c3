"""The user's accuracy request and its translation into sampling rates.

Seed 000 (``/work/shared/seeds/000_9eba2c5297757960.txt``) section 3.3.1:
the user gives ``emax``, the maximum acceptable error of a job; section
3.3.2: the framework translates it into a minimal message sampling rate
(MSR) and keeps adjusting it from the received data; section 6: start from a
heuristic ("MSR = 0.9 for emax = 10 %"), then estimate the error "based on
the mean and variance of the received data" with sampling theory and move
MSR so that the error gets close to ``emax``.

Here the error of an estimate is its *relative* confidence half-width
(``|CI| / 2 / |value|``) at the user's confidence level; the paper gives no
confidence level, we make it explicit (default 0.95).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from .._native import JobError, must_deliver
from .errors import AnalyticsError

__all__ = ["Accuracy", "check_msr", "next_fraction"]


def _finite(name: str, v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise AnalyticsError(f"{name} must be a number, got {type(v).__name__}")
    f = float(v)
    if math.isnan(f):
        raise AnalyticsError(f"{name} must be a number, got NaN")
    return f


def check_msr(msr: object, name: str = "msr") -> float:
    """``msr`` as a float in [0, 1]; :class:`approxnet.JobError` otherwise
    (the error the core raises for the same value)."""
    if isinstance(msr, bool) or not isinstance(msr, int | float):
        raise JobError(f"{name} must be a number within [0, 1], got {type(msr).__name__}")
    f = float(msr)
    try:
        must_deliver(f, 0)  # the core's rule: [0, 1], NaN refused
    except JobError as e:
        raise JobError(f"{name}: {e}") from None
    return f


@dataclass(frozen=True)
class Accuracy:
    """What the user asks for: relative error at most ``emax`` with
    probability ``confidence`` (per estimate: per key with groups).

    >>> Accuracy(0.05).z > 1.95
    True
    """

    emax: float
    """Largest acceptable relative error, > 0 (seed 000 §3.3.1)."""
    confidence: float = 0.95
    """Probability that an estimate lies within ``emax`` of the truth, in (0, 1)."""

    def __post_init__(self) -> None:
        e = _finite("emax", self.emax)
        if not e > 0 or math.isinf(e):
            raise AnalyticsError(f"emax must be a finite number > 0, got {self.emax}")
        c = _finite("confidence", self.confidence)
        if not 0.0 < c < 1.0:
            raise AnalyticsError(f"confidence must be within (0, 1), got {self.confidence}")
        object.__setattr__(self, "emax", e)
        object.__setattr__(self, "confidence", c)

    @property
    def z(self) -> float:
        """Two-sided standard normal quantile of the confidence level."""
        return NormalDist().inv_cdf(0.5 + self.confidence / 2.0)

    @property
    def initial_msr(self) -> float:
        """The starting MSR before any data arrived.

        Seed 000 §6 gives one point of the heuristic, "MSR = 0.9 for
        emax = 10 %"; we read it as ``MSR0 = 1 - emax``, kept within
        [0.5, 1] (our choice: the paper gives no other point).
        """
        return min(1.0, max(0.5, 1.0 - self.emax))


def next_fraction(fraction: float, spread: float, emax: float) -> float:
    """The sampling fraction at which an estimate reaches relative error
    ``emax``, given its relative error ``spread`` without the finite
    population correction, measured at sampling fraction ``fraction``.

    For simple random sampling without replacement the variance of a mean
    (and of a total, a proportion, a quantile asymptotically) is
    ``sigma^2 / n * (1 - n / N)`` (Cochran, *Sampling Techniques*, 3rd ed.,
    eq. 2.8; the "well understood sampling theory" that seed 000 §6 uses to
    "estimate the error based on the mean and variance of the received
    data"). With ``spread = z sigma / (sqrt(n) |mean|)`` from ``n = f N``
    samples, the bound at ``n' = f' N`` is
    ``spread * sqrt(n / n') * sqrt(1 - n' / N)``; setting it to ``emax``::

        f' = f / ((emax / spread)^2 + f)

    (Cochran's ``n = n0 / (1 + n0 / N)`` with ``n0 = n (spread / emax)^2``).
    It may be below ``fraction``: fewer records would have done. Returns 1
    when nothing is known yet (``spread`` infinite or NaN).
    """
    if math.isinf(spread) or math.isnan(spread) or fraction <= 0.0:
        return 1.0
    if spread == 0.0:
        return 0.0
    return min(1.0, fraction / ((emax / spread) ** 2 + fraction))
