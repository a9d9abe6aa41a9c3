"""Eq. 2 of seed 003 §5.1 for one switch output port: minimise
``Σ D_i(w_i)`` subject to ``Σ w_i = C_Saba`` and ``w_i >= floor_i``.

Two solvers with one signature:

* :func:`solve_reference` — SciPy's SLSQP (the paper used NLopt's SLSQP,
  §7.2), a local method;
* :func:`solve_fast` — the exact KKT solver of ``crates/saba`` (convex-
  envelope fallback with a certified bound where a model is not convex).

:func:`default_floors` is the floor rule the controller uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize

from .._native import saba_solve
from .errors import SabaError
from .model import MIN_SHARE

__all__ = ["Allocation", "solve_reference", "solve_fast", "solve", "default_floors"]

Solver = Literal["fast", "reference"]


@dataclass(frozen=True)
class Allocation:
    """Weights of one port, in the order of the models given."""

    weights: tuple[float, ...]
    objective: float
    method: str


def default_floors(n: int, capacity: float) -> list[float]:
    """Every app at least ``min(MIN_SHARE, C / (2 n))``: the lowest profiled
    share when that fits, else half of an equal split (so n apps always fit)."""
    if n == 0:
        return []
    return [min(MIN_SHARE, capacity / (2 * n))] * n


def _check(models: Sequence[Sequence[float]], floors: Sequence[float], capacity: float) -> None:
    if not np.isfinite(capacity) or capacity <= 0:
        raise SabaError(f"capacity must be a finite number above 0, got {capacity}")
    if len(floors) != len(models):
        raise SabaError(f"{len(floors)} floors given for {len(models)} models (one per model)")
    if sum(floors) > capacity * (1 + 1e-12):
        raise SabaError(f"the floors add up to {sum(floors)}, more than the capacity {capacity}")


def solve_reference(
    models: Sequence[Sequence[float]], floors: Sequence[float], capacity: float
) -> Allocation:
    """SLSQP from the equal split above the floors."""
    _check(models, floors, capacity)
    n = len(models)
    if n == 0:
        return Allocation((), 0.0, "slsqp")
    c = np.array([list(m) + [0.0] * (4 - len(m)) for m in models], dtype=float)
    lo = np.array(floors, dtype=float)
    x0 = lo + (capacity - lo.sum()) / n

    def fun(w: np.ndarray) -> float:
        return float(np.sum(c[:, 0] + w * (c[:, 1] + w * (c[:, 2] + w * c[:, 3]))))

    def jac(w: np.ndarray) -> np.ndarray:
        return np.asarray(c[:, 1] + w * (2 * c[:, 2] + 3 * w * c[:, 3]), dtype=float)

    res = minimize(
        fun,
        x0,
        jac=jac,
        method="SLSQP",
        bounds=[(f, capacity) for f in floors],
        constraints=[
            {"type": "eq", "fun": lambda w: float(w.sum() - capacity), "jac": lambda w: np.ones(n)}
        ],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    w = np.clip(res.x, lo, capacity)
    w = w + (capacity - w.sum()) / n  # restore the sum after clipping
    return Allocation(tuple(float(x) for x in w), fun(w), "slsqp")


def solve_fast(
    models: Sequence[Sequence[float]], floors: Sequence[float], capacity: float
) -> Allocation:
    """The exact solver of crates/saba."""
    weights, objective, _bound, method = saba_solve(
        [list(m) for m in models], list(floors), capacity
    )
    return Allocation(tuple(weights), objective, method)


def solve(
    models: Sequence[Sequence[float]],
    floors: Sequence[float],
    capacity: float,
    solver: Solver = "fast",
) -> Allocation:
    """Eq. 2 with the named solver."""
    if solver == "fast":
        return solve_fast(models, floors, capacity)
    if solver == "reference":
        return solve_reference(models, floors, capacity)
    raise SabaError(f"solver must be 'fast' or 'reference', got {solver!r}")
