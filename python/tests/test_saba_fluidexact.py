"""The exact per-port weighted sharing solver (saba/fluidexact.py) against
the reference iteration (saba/fluidshare.py) and against the definition of
the fixed point, checked flow by flow."""

from __future__ import annotations

import numpy as np
import pytest
from saba_instances import crossed, drawn

from approxnet.saba.fluidbound import bracket
from approxnet.saba.fluidexact import _per_flow_maxmin, certify, progressive_filling, solve
from approxnet.saba.fluidshare import Entries, _local, allocate


def is_fixed_point(e: Entries, rates: np.ndarray, tol: float = 1e-7) -> bool:
    """Flow by flow, from the definition: with every other flow asking for
    its rate and this one for everything, no link on its path gives it
    less than its rate and some link gives it no more; no link is over
    its capacity."""
    load = np.bincount(e.link, weights=rates[e.flow], minlength=len(e.capacity))
    if np.any(load > e.capacity * (1 + tol)):
        return False
    slack = tol * max(float(e.capacity.max()) * 1e-3, 1.0)
    for f in range(e.flows):
        mine = e.flow == f
        demand = np.where(mine, np.inf, rates[e.flow])
        got = _local(e, demand)[mine]
        if got.min() < rates[f] - slack * max(rates[f], 1.0):
            return False
        if got.min() > rates[f] + slack * max(rates[f], 1.0):
            return False
    return True


def test_matches_the_reference_where_its_answer_is_exact() -> None:
    """Equal weights (max-min) and the per-port-weight instances the
    reference settles in exact rounds: the same rates within 1e-6."""
    rng = np.random.default_rng(11)
    compared = uncertified = 0
    for k in range(120):
        e = drawn(rng, (3, 25), (2, 60), (1, 6), (1, 3), "equal" if k % 2 == 0 else "port")
        # max_iter=0: the reference's exact rounds only (infinite rates
        # where they did not finish and its iteration would have had to)
        ref = allocate(e, max_iter=0)
        got = solve(e)
        uncertified += not got.exact
        if np.all(np.isfinite(ref.rates)):
            assert got.exact
            compared += 1
            scale = np.maximum(ref.rates, 1e-9 * e.capacity.max())
            assert np.max(np.abs(got.rates - ref.rates) / scale) < 1e-6
    assert compared >= 60
    assert uncertified <= 3  # the rest: solve fell back to the reference


def test_every_answer_is_a_fixed_point_by_definition() -> None:
    rng = np.random.default_rng(12)
    exact = 0
    for _ in range(40):
        e = drawn(rng, (3, 15), (2, 25), (1, 5), (1, 3), "port")
        got = solve(e)
        if got.exact:
            exact += 1
            assert is_fixed_point(e, got.rates)
    assert exact >= 38


def test_crossed_weights_the_reference_leaves_links_idle() -> None:
    """Two flows over the same two links, weights 0.9 / 0.1 on one and
    0.1 / 0.9 on the other: every split that fills the links is a fixed
    point; the reference iteration stops at 1.05 + 1.05 of 10 (each link
    thinks the other holds the flows), which is not one."""
    e = crossed()
    ref = allocate(e)
    assert ref.rates.sum() < 2.2
    assert not is_fixed_point(e, ref.rates)
    got = solve(e)
    assert got.exact
    assert got.rates.sum() == pytest.approx(10.0, rel=1e-9)
    assert 1.0 <= got.rates.min() and got.rates.max() <= 9.0
    assert is_fixed_point(e, got.rates)


def test_certificate_refuses_wrong_rates() -> None:
    e = Entries(
        np.array([0, 1, 2]),
        np.zeros(3, dtype=np.int64),
        np.zeros(3, dtype=np.int64),
        np.array([0, 1, 2]),
        np.array([0.6, 0.3, 0.1]),
        np.array([10.0]),
        3,
    )
    every = np.ones(3, dtype=bool)
    assert certify(e, np.array([6.0, 3.0, 1.0]), every)[0]
    assert not certify(e, np.array([5.0, 4.0, 1.0]), every)[0]
    assert not certify(e, np.array([6.0, 3.0, 0.5]), every)[0]  # link not full
    assert not certify(e, np.array([6.0, 3.0, np.nan]), every)[0]
    assert np.allclose(solve(e).rates, [6.0, 3.0, 1.0], rtol=1e-12)
    warm = solve(e, cold=False)  # one link: the bracket decides it, no Newton
    assert warm.exact and warm.steps == 0
    assert np.allclose(warm.rates, [6.0, 3.0, 1.0], rtol=1e-12)


def test_bad_entries_are_refused() -> None:
    e = Entries(
        np.array([0]),
        np.array([0]),
        np.array([0]),
        np.array([0]),
        np.array([0.0]),
        np.array([1.0]),
        1,
    )
    with pytest.raises(ValueError, match="weights must be > 0"):
        solve(e)


def test_above_newton_max_only_the_bracket_or_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past NEWTON_MAX flows no linear system is solved: a closed bracket
    is still an exact answer, an open one gives the reference's rates,
    marked uncertified."""
    from approxnet.saba import fluidexact

    monkeypatch.setattr(fluidexact, "NEWTON_MAX", 1)
    one_link = Entries(
        np.array([0, 1]),
        np.zeros(2, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.array([0, 1]),
        np.array([0.75, 0.25]),
        np.array([8.0]),
        2,
    )
    got = solve(one_link)
    assert got.exact and got.steps == 0
    assert np.allclose(got.rates, [6.0, 2.0], rtol=1e-12)
    got = solve(crossed())
    assert not got.exact and got.steps == 0
    assert np.array_equal(got.rates, allocate(crossed()).rates)


def test_per_flow_maxmin_by_progressive_filling_equals_the_bracket() -> None:
    """One queue per entry, equal weights, one level (the baseline): solve
    takes progressive filling, whose rates are the bracket's (closed:
    max-min is unique) and a fixed point by the definition; with two
    flows in one queue, or two levels, it is not taken."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        links, flows = int(rng.integers(2, 12)), int(rng.integers(1, 40))
        paths = [
            rng.choice(links, int(rng.integers(1, min(3, links) + 1)), replace=False)
            for _ in range(flows)
        ]
        ef = np.concatenate([np.full(len(p), i) for i, p in enumerate(paths)]).astype(np.int64)
        el = np.concatenate(paths).astype(np.int64)
        n = len(ef)
        e = Entries(
            ef,
            el,
            np.zeros(n, dtype=np.int64),
            np.arange(n, dtype=np.int64),
            np.full(n, 2.0),
            rng.uniform(1.0, 10.0, links),
            flows,
        )
        assert _per_flow_maxmin(e)
        rates, rounds = progressive_filling(e)
        br = bracket(e)
        assert not br.open.any()
        assert np.max(np.abs(rates - br.lo) / br.lo) < 1e-12
        assert solve(e).rates.tolist() == rates.tolist()
        assert 1 <= rounds <= links
        assert is_fixed_point(e, rates)
        if n >= 2:
            shared = Entries(
                ef, el, e.level, np.r_[0, np.arange(n - 1)], e.qweight[:-1], e.capacity, flows
            )
            assert not _per_flow_maxmin(shared)
            two = Entries(
                ef,
                el,
                np.r_[1, np.zeros(n - 1, dtype=np.int64)],
                e.queue,
                e.qweight,
                e.capacity,
                flows,
            )
            assert not _per_flow_maxmin(two)
