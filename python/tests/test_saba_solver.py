"""Eq. 2 (seed 003 §5.1): the fast Rust solver against SciPy's SLSQP on
random seeded instances, and the PL mapping of §5.3."""

from __future__ import annotations

import numpy as np
import pytest

from approxnet import ApproxnetError
from approxnet._native import saba_solve_ports
from approxnet.saba import SabaError, default_floors, solve, solve_fast, solve_reference
from approxnet.saba.mapping import PlHierarchy, apps_to_pls, queue_weights


def shape(s: float, q: float, r: float) -> list[float]:
    """D(b) = 1 + s x + q x^2 + r x^3 with x = 1 - b, in powers of b (convex
    and non-increasing on [0, 1] for s, q, r >= 0)."""
    return [1 + s + q + r, -s - 2 * q - 3 * r, q + 3 * r, -r]


def instance(rng: np.random.Generator, degree: int) -> tuple[list[list[float]], float]:
    n = int(rng.integers(1, 25))
    models = []
    for _ in range(n):
        s, q, r = rng.uniform(0, [4, 6, 6])
        c = shape(s, q if degree >= 2 else 0.0, r if degree >= 3 else 0.0)
        models.append(c[: degree + 1])
    return models, float(rng.uniform(0.3, 1.0))


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_fast_and_reference_agree_and_meet_the_constraints(degree: int) -> None:
    rng = np.random.default_rng(1000 + degree)
    for _ in range(30):
        models, cap = instance(rng, degree)
        floors = default_floors(len(models), cap)
        fast = solve_fast(models, floors, cap)
        ref = solve_reference(models, floors, cap)
        for a in (fast, ref):
            assert sum(a.weights) == pytest.approx(cap, abs=1e-9)
            assert all(w >= f - 1e-9 for w, f in zip(a.weights, floors, strict=True))
        assert fast.method == "kkt"
        assert abs(fast.objective - ref.objective) <= 1e-3
        assert fast.objective <= ref.objective + 1e-9  # exact: never worse


def test_more_sensitive_app_gets_more() -> None:
    lr, pr = shape(2.0, 2.0, 0.0), shape(0.3, 0.1, 0.0)
    a = solve([lr, pr], [0.05, 0.05], 1.0)
    assert a.weights[0] > 0.8 > 0.2 > a.weights[1]


def test_nonconvex_model_uses_the_fallback() -> None:
    # concave stretch then convex: still meets the constraints, never worse than SLSQP
    models = [[3.0, -1.0, -4.0, 3.0], shape(1.0, 1.0, 1.0)]
    fast = solve_fast(models, [0.05, 0.05], 1.0)
    ref = solve_reference(models, [0.05, 0.05], 1.0)
    assert fast.method == "convex-envelope"
    assert sum(fast.weights) == pytest.approx(1.0)
    assert fast.objective <= ref.objective + 1e-6


def test_batch_solve_matches_single() -> None:
    rng = np.random.default_rng(7)
    models = [shape(*rng.uniform(0, [4, 6, 6])) for _ in range(30)]
    ports = [([0, 3, 5], [0.05] * 3), ([1, 2, 3, 4, 29], [0.05] * 5), ([], [])]
    out = saba_solve_ports(models, ports, 1.0)
    for (apps, floors), w in zip(ports, out, strict=True):
        assert w == pytest.approx(list(solve_fast([models[a] for a in apps], floors, 1.0).weights))


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: solve_fast([[1.0, float("nan")]], [0.0], 1.0), "model 0: coefficient c1"),
        (lambda: solve_fast([[2.0, -1.0]], [0.0], 0.0), "capacity must be"),
        (lambda: solve_fast([[2.0, -1.0]] * 2, [0.6, 0.6], 1.0), "floors add up"),
        (lambda: solve_reference([[2.0, -1.0]] * 2, [0.6, 0.6], 1.0), "floors add up"),
        (lambda: solve([[2.0, -1.0]], [0.0], 1.0, "newton"), "solver must be"),  # type: ignore[arg-type]
        (lambda: saba_solve_ports([[2.0, -1.0]], [([3], [0.0])], 1.0), "app index 3"),
    ],
)
def test_bad_instances_name_the_problem(call: object, needle: str) -> None:
    with pytest.raises(SabaError, match=needle):
        call()  # type: ignore[operator]
    assert issubclass(SabaError, ApproxnetError)


def test_pls_by_kmeans_and_hierarchy() -> None:
    coeffs = {
        "lr1": shape(3.0, 3.0, 0.0),
        "lr2": shape(3.1, 3.0, 0.0),
        "sort": shape(0.1, 0.0, 0.0),
        "wc": shape(0.12, 0.0, 0.0),
        "pr": shape(0.8, 0.5, 0.0),
    }
    pl, centroids = apps_to_pls(coeffs, 3, seed=0)
    assert pl["lr1"] == pl["lr2"] == 0  # most sensitive first
    assert pl["sort"] == pl["wc"] == 2
    assert pl["pr"] == 1
    assert apps_to_pls(coeffs, 3, seed=0) == (pl, centroids)  # deterministic
    h = PlHierarchy(centroids, min_queues=1)
    assert h.levels[0] == [(0,), (1,), (2,)]
    assert h.levels[1] == [(0,), (1, 2)]  # pr and the insensitive pair are closer
    assert h.queues_for([0, 1, 2], 2) == [(0,), (1, 2)]
    assert h.queues_for([1, 2], 2) == [(1,), (2,)]
    q = queue_weights(h.queues_for([0, 1, 2], 2), pl, {"lr1": 0.5, "pr": 0.3, "wc": 0.2})
    assert q.weights == pytest.approx((0.5, 0.5))
    with pytest.raises(SabaError, match="cannot be merged into 1 queues"):
        PlHierarchy(centroids, min_queues=2).queues_for([0, 1, 2], 1)
