"""Numerical error of values sent through the approximate channel (seed
004 §4.2.2, Fig. 5): the mean absolute and relative error of an array after
one pass through the channel, measured, and its expectation computed
bit by bit from the values themselves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import approx_types

__all__ = ["NumericalError", "expected_error", "numerical_error"]


@dataclass(frozen=True)
class NumericalError:
    """The error one pass through the channel left in an array."""

    level: int
    """Protection level."""
    flips: int
    """Bits flipped."""
    changed: int
    """Elements that changed."""
    non_finite: int
    """Elements that became inf or NaN (left out of the means)."""
    mean_abs: float
    """Total absolute error over finite results / elements sent."""
    mean_rel: float
    """Total relative error ``|y - x| / |x|`` over finite results / elements sent."""


def numerical_error(
    x: npt.NDArray[np.float64], level: int, ber: float, seed: int
) -> NumericalError:
    """Sends the float64 array ``x`` through the channel once and measures
    the error: the paper's "mean error, the total accumulated error divided
    by total sent data" (§4.2.2), absolute and relative."""
    y, stats = approx_types.transmit(x, level, ber, seed)
    finite = np.isfinite(y)
    n = max(x.size, 1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # scaled by n before summing, so errors near the float64 maximum
        # (exponent flips) still sum to a finite mean; a relative error past
        # the maximum (a huge change of a tiny value) makes the mean inf
        diff = np.abs(np.where(finite, y, x) - x)
        share = diff / n
        rel = np.where(x != 0, share / np.abs(x), share)
    return NumericalError(
        level=level,
        flips=stats.unprotected_flips + stats.protected_flips,
        changed=int(np.count_nonzero(y.view(np.uint64) != x.view(np.uint64))),
        non_finite=int(x.size - np.count_nonzero(finite)),
        mean_abs=float(share.sum()),
        mean_rel=float(rel.sum()),
    )


def _bit_effects(x: npt.NDArray[np.float64]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """Mean absolute and relative change of ``x`` when bit ``b`` (0 = least
    significant) of every element flips; non-finite results count as 0 (as
    :func:`numerical_error` leaves them out) -- index 63 is the sign."""
    bits = x.view(np.uint64)
    abs_eff = np.zeros(64)
    rel_eff = np.zeros(64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for b in range(64):
            y = (bits ^ np.uint64(1 << b)).view(np.float64)
            d = np.where(np.isfinite(y), np.abs(y - x), 0.0) / max(x.size, 1)
            abs_eff[b] = d.sum()
            rel_eff[b] = np.where(x != 0, d / np.abs(x), d).sum()
    return abs_eff, rel_eff


def expected_error(
    x: npt.NDArray[np.float64], levels: list[int], ber: float
) -> list[tuple[int, float, float]]:
    """``(level, E mean_abs, E mean_rel)`` for each level: with
    independent flips at a small ``ber``, the expected error per element is
    ``ber`` times the sum over unprotected bits of the mean change a flip
    of that bit causes (double flips in one element are ignored)."""
    abs_eff, rel_eff = _bit_effects(x)
    out = []
    for level in levels:
        free = slice(0, 64 - level)  # unprotected bits: the low 64 - level
        out.append((level, ber * float(abs_eff[free].sum()), ber * float(rel_eff[free].sum())))
    return out
