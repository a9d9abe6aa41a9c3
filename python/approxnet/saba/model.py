"""Sensitivity models (seed 003 §4.1, eq. 1): the slowdown of an
application as a polynomial in its share ``b`` of link bandwidth,
``D(b) = c0 + c1 b + ... + ck b^k`` with ``k`` in 1..3, fitted by least
squares to profiled ``(share, slowdown)`` samples, with R² as its accuracy
(§4.2). Shares are fractions of the link (0.05 = 5 %).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .errors import ModelError

__all__ = [
    "SHARES",
    "MIN_SHARE",
    "MAX_RISE",
    "SensitivityModel",
    "fit",
    "slowdowns",
    "r_squared",
    "validate",
]

#: The bandwidth shares the profiler runs at (seed 003 §7.1: 5, 10, 25, 50,
#: 75, 90 and 100 % of link capacity).
SHARES: tuple[float, ...] = (0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 1.00)
#: Lowest share a model is defined (and checked) on: the lowest profiled one.
MIN_SHARE = SHARES[0]
#: How much a model may rise with bandwidth anywhere on [MIN_SHARE, 1]
#: before it is refused (slowdown units; a fit of a flat, noisy profile
#: wiggles by a few hundredths).
MAX_RISE = 0.05
_GRID = np.linspace(MIN_SHARE, 1.0, 241)


@dataclass(frozen=True)
class SensitivityModel:
    """A fitted, validated eq. 1 model."""

    #: c0..ck, lowest power first.
    coeffs: tuple[float, ...]
    #: Coefficient of determination on the samples it was fitted to.
    r2: float

    @property
    def degree(self) -> int:
        """k of eq. 1."""
        return len(self.coeffs) - 1

    def __call__(self, share: float) -> float:
        """D(share)."""
        return float(np.polynomial.polynomial.polyval(share, self.coeffs))

    def padded(self) -> list[float]:
        """The coefficients padded with zeros to degree 3 (what the solver and
        the clustering take)."""
        return list(self.coeffs) + [0.0] * (4 - len(self.coeffs))


def slowdowns(times: Mapping[float, float]) -> list[tuple[float, float]]:
    """Completion times per share -> ``(share, slowdown)``, the slowdown being
    the ratio to the completion time at the full link (§4.1)."""
    for share, t in times.items():
        if not (0.0 < share <= 1.0):
            raise ModelError(f"share {share} is outside (0, 1]")
        if not (math.isfinite(t) and t > 0.0):
            raise ModelError(f"completion time at share {share} must be > 0 s, got {t}")
    if 1.0 not in times:
        raise ModelError("no completion time at share 1.0 (the unthrottled run)")
    base = times[1.0]
    return [(s, times[s] / base) for s in sorted(times)]


def r_squared(coeffs: Sequence[float], samples: Sequence[tuple[float, float]]) -> float:
    """R² of a model on samples (1 = explains every sample)."""
    b = np.array([s for s, _ in samples], dtype=float)
    d = np.array([v for _, v in samples], dtype=float)
    pred = np.polynomial.polynomial.polyval(b, list(coeffs))
    ss_res = float(np.sum((d - pred) ** 2))
    ss_tot = float(np.sum((d - d.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res < 1e-18 else 0.0
    return 1.0 - ss_res / ss_tot


def fit(
    samples: Sequence[tuple[float, float]], degree: int, monotone: bool = True
) -> SensitivityModel:
    """Least-squares fit of eq. 1 of the given degree (1..3) to
    ``(share, slowdown)`` samples, validated.

    Plain least squares is used when its polynomial never rises with
    bandwidth. Otherwise, with `monotone` (the default), the fit is
    constrained to ``D'(b) <= 0`` on [MIN_SHARE, 1] (SLSQP on the four
    coefficients): a job whose time is ``compute + comm / b`` has a
    hyperbolic profile, and an unconstrained cubic through the seven
    profiled shares overshoots and *rises* between ~0.5 and ~0.85, which the
    controller would exploit. Without `monotone` such a fit is refused.
    """
    if degree not in (1, 2, 3):
        raise ModelError(f"degree must be 1, 2 or 3, got {degree}")
    if len(samples) < degree + 1:
        raise ModelError(
            f"a degree-{degree} fit needs at least {degree + 1} samples, got {len(samples)}"
        )
    b = np.array([s for s, _ in samples], dtype=float)
    d = np.array([v for _, v in samples], dtype=float)
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(d))):
        raise ModelError("samples must be finite numbers")
    coeffs = tuple(float(c) for c in np.polynomial.polynomial.polyfit(b, d, degree))
    try:
        validate(coeffs)
    except ModelError:
        if not monotone:
            raise
        trend = float(np.polynomial.polynomial.polyfit(b, d, 1)[1])
        if trend * float(b.max() - b.min()) > MAX_RISE:
            raise ModelError(
                f"the profiled slowdowns increase with bandwidth (linear trend {trend:+.3f} "
                "per unit share); more bandwidth must not slow a workload down"
            ) from None
        coeffs = _monotone_fit(b, d, degree)
        validate(coeffs)
    return SensitivityModel(coeffs, r_squared(coeffs, samples))


def _monotone_fit(b: np.ndarray, d: np.ndarray, degree: int) -> tuple[float, ...]:
    """Least squares subject to a non-positive slope on the model's domain."""
    vander = np.vander(b, degree + 1, increasing=True)
    grid = np.linspace(MIN_SHARE, 1.0, 60)
    powers = np.arange(1, degree + 1)
    # D'(g) = sum_k k c_k g^(k-1); constraint -D'(g) >= 0 at every grid point
    slope = np.zeros((len(grid), degree + 1))
    slope[:, 1:] = powers * grid[:, None] ** (powers - 1)
    linear = np.polynomial.polynomial.polyfit(b, d, 1)
    x0 = np.zeros(degree + 1)
    x0[:2] = linear if linear[1] <= 0 else [float(d.mean()), 0.0]
    res = minimize(
        lambda c: float(np.sum((vander @ c - d) ** 2)),
        x0,
        jac=lambda c: 2.0 * vander.T @ (vander @ c - d),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda c: -(slope @ c), "jac": lambda c: -slope}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    # SLSQP's exit 8 ("positive directional derivative for linesearch")
    # means no step along its search direction lowers the objective: at
    # ftol 1e-14 on an objective of ~30 (a steep, 13x-at-5 % profile) that
    # is the optimum to rounding; accepted when the slope constraint holds
    scale = max(1.0, float(np.abs(slope @ res.x).max()))
    stalled = res.status == 8 and float((slope @ res.x).max()) <= 1e-9 * scale
    if not (res.success or stalled):
        raise ModelError(f"the monotone fit of degree {degree} failed: {res.message}")
    return tuple(float(c) for c in res.x)


def validate(coeffs: Sequence[float], max_rise: float = MAX_RISE) -> None:
    """Refuses a model the controller cannot use: no coefficients or more
    than four, a NaN / infinite coefficient, or a slowdown that *rises*
    with bandwidth by more than ``max_rise`` anywhere on [MIN_SHARE, 1]
    (more bandwidth must never be predicted to slow an application down)."""
    if not 1 <= len(coeffs) <= 4:
        raise ModelError(f"a model has 1 to 4 coefficients (degree 0-3), got {len(coeffs)}")
    for i, c in enumerate(coeffs):
        if not isinstance(c, int | float) or not math.isfinite(c):
            raise ModelError(f"coefficient c{i} is not a finite number: {c!r}")
    values = np.polynomial.polynomial.polyval(_GRID, list(coeffs))
    low_so_far = np.minimum.accumulate(values)
    rise = values - low_so_far
    worst = int(np.argmax(rise))
    if rise[worst] > max_rise:
        start = int(np.argmin(values[: worst + 1]))
        raise ModelError(
            f"model increases with bandwidth: D({_GRID[start]:.2f}) = {values[start]:.3f} "
            f"but D({_GRID[worst]:.2f}) = {values[worst]:.3f} (rise {rise[worst]:.3f} > {max_rise})"
        )
