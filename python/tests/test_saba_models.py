"""Saba sensitivity models (eq. 1), their validation and the SQLite table."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from approxnet import ApproxnetError
from approxnet.saba import (
    SHARES,
    Entry,
    ModelError,
    SensitivityTable,
    TableError,
    fit,
    slowdowns,
    validate,
)


def lr_like() -> list[tuple[float, float]]:
    """Communication-bound: compute 1 s + transfer 2 s at full bandwidth."""
    return slowdowns({s: 1.0 + 2.0 / s for s in SHARES})


def test_slowdown_is_relative_to_the_full_link() -> None:
    d = dict(lr_like())
    assert d[1.0] == 1.0
    assert d[0.5] == pytest.approx(5.0 / 3.0)


def test_r2_grows_with_degree_and_cubic_fits_well() -> None:
    samples = lr_like()
    r2 = [fit(samples, k).r2 for k in (1, 2, 3)]
    assert r2[0] < r2[1] < r2[2] <= 1.0
    assert r2[2] > 0.85
    m = fit(samples, 3)
    assert m.degree == 3 and len(m.padded()) == 4
    assert m(0.5) == pytest.approx(5.0 / 3.0, rel=0.25)
    validate(m.coeffs, max_rise=1e-4)  # the constrained fit never rises


def test_unconstrained_cubic_of_a_hyperbolic_profile_rises() -> None:
    # compute + comm / b: plain least squares overshoots (why fit() constrains)
    with pytest.raises(ModelError, match="increases with bandwidth"):
        fit(lr_like(), 3, monotone=False)


def test_exact_polynomial_is_recovered() -> None:
    samples = [(s, 3.0 - 2.0 * s) for s in SHARES]
    m = fit(samples, 1)
    assert m.coeffs == pytest.approx((3.0, -2.0))
    assert m.r2 == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("coeffs", "needle"),
    [
        ([1.0, math.nan], "c1 is not a finite number"),
        ([math.inf], "c0 is not a finite number"),
        ([], "1 to 4 coefficients"),
        ([1.0, 0.0, 0.0, 0.0, 1.0], "1 to 4 coefficients"),
        ([1.0, 0.5], "increases with bandwidth"),
        ([3.0, -8.0, 6.0], "increases with bandwidth"),
    ],
)
def test_bad_models_are_refused(coeffs: list[float], needle: str) -> None:
    with pytest.raises(ModelError, match=needle):
        validate(coeffs)


def test_model_errors_are_approxnet_errors() -> None:
    with pytest.raises(ApproxnetError, match="increase with bandwidth"):
        fit([(s, 1.0 + s) for s in SHARES], 1)  # slowdown rising with bandwidth


def test_bad_profiles_are_refused() -> None:
    with pytest.raises(ModelError, match="share 1.0"):
        slowdowns({0.5: 2.0})
    with pytest.raises(ModelError, match="must be > 0"):
        slowdowns({0.5: -1.0, 1.0: 1.0})
    with pytest.raises(ModelError, match="degree must be"):
        fit(lr_like(), 4)
    with pytest.raises(ModelError, match="at least 4 samples"):
        fit(lr_like()[:3], 3)


def test_table_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "sens.db"
    table = SensitivityTable(path)
    samples = lr_like()
    table.put(Entry("lr", fit(samples, 3), tuple(samples), "10k", 8, "testbed"))
    table.put(Entry("lr", fit(samples, 1), tuple(samples)))
    table.close()
    again = SensitivityTable(path)  # survives reopening
    e = again.get("lr", 3)
    assert e.model.coeffs == pytest.approx(fit(samples, 3).coeffs)
    assert (e.dataset, e.nodes, e.source) == ("10k", 8, "testbed")
    assert again.workloads() == ["lr"]
    assert [x.model.degree for x in again.entries()] == [1, 3]
    with pytest.raises(TableError, match="no degree-2 model of workload 'lr'"):
        again.get("lr", 2)
    with pytest.raises(TableError, match="workloads: lr"):
        again.get("pr")


def test_monotone_fit_of_a_steep_profile_where_slsqp_stalls_at_the_optimum() -> None:
    # a flow-model profile (f = 0.66 of a stage at line rate) on which
    # SLSQP ends with "positive directional derivative for linesearch" at
    # ftol 1e-14: the optimum to rounding, which the fit must accept
    samples = [
        (0.05, 13.524658378964535),
        (0.1, 6.93273291635162),
        (0.25, 2.977577638783874),
        (0.5, 1.6591925462612915),
        (0.75, 1.219730848753764),
        (0.9, 1.0732436162512546),
        (1.0, 1.0),
    ]
    m = fit(samples, 2)
    validate(m.coeffs, max_rise=1e-6)
    # the quadratic's vertex at b = 1 (the constraint binds), R² of the
    # least-squares fit under it
    assert m.coeffs[1] == pytest.approx(-2.0 * m.coeffs[2], rel=1e-6)
    assert 0.7 < m.r2 < 0.8
