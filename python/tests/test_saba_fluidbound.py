"""The bracket of every fixed point of the flow model's per-port weighted
sharing (saba/fluidbound.py): open shares against their definition, the
bracket against fixed points found by other means, the flows it decides
against the reference iteration, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from saba_instances import crossed, drawn, instance

from approxnet.saba.fluidbound import bracket, open_local, phi
from approxnet.saba.fluidexact import fixed_point_gap, solve
from approxnet.saba.fluidshare import Entries, _local, allocate


def test_open_share_is_the_local_allocation_with_one_demand_unbounded() -> None:
    """Entry by entry: open_local equals the link's local allocation
    recomputed with only that entry's demand set to infinity (levels,
    queues with several flows, infinite and finite demands)."""
    rng = np.random.default_rng(21)
    checked = 0
    for k in range(60):
        e = drawn(rng, (1, 5), (1, 9), (1, 4), 1 + k % 2, "port")
        demand = rng.random(len(e.flow)) * 5.0
        demand[rng.random(len(e.flow)) < 0.2] = np.inf
        got = open_local(e, demand)
        for i in range(len(e.flow)):
            one = demand.copy()
            one[i] = np.inf
            want = _local(e, one)[i]
            assert got[i] == pytest.approx(want, rel=1e-9, abs=1e-12)
            checked += 1
    assert checked > 200


def test_crossed_weights_bracket_every_split() -> None:
    """Every split of the two links is a fixed point; the bracket holds
    them all ([1, 9] each: neither flow can get less than its 0.1 share
    of a link) and closes neither flow."""
    e = crossed()
    br = bracket(e)
    assert br.open.all()
    assert br.lo == pytest.approx([1.0, 1.0], rel=1e-12)
    assert br.hi == pytest.approx([9.0, 9.0], rel=1e-12)
    for a in (1.0, 3.0, 5.0, 9.0):
        split = np.array([a, 10.0 - a])
        assert fixed_point_gap(e, split) <= 1.0
        assert phi(e, split) == pytest.approx(split, rel=1e-12)
    assert fixed_point_gap(e, np.array([1.05, 1.05])) > 1.0  # the reference's stop


def test_equal_weights_bracket_closes_to_max_min() -> None:
    """One flow per queue, equal weights: per-flow max-min, which the
    full-link rule reaches exactly (progressive filling); the reference
    iteration gives the same rates."""
    rng = np.random.default_rng(22)
    for _ in range(40):
        flows = int(rng.integers(2, 40))
        e = instance(rng, int(rng.integers(2, 20)), flows, flows, 1, "equal")
        e = Entries(
            e.flow,
            e.link,
            e.level,
            np.arange(len(e.flow)),
            np.ones(len(e.flow)),
            e.capacity,
            e.flows,
        )
        br = bracket(e)
        assert not br.open.any()
        ref = allocate(e)
        assert np.max(np.abs(br.lo - ref.rates) / ref.rates.max()) < 1e-9
        assert fixed_point_gap(e, br.lo) <= 1.0


def test_every_fixed_point_lies_in_the_bracket() -> None:
    """The certified answers of the solver (from Newton steps or the
    polished reference) lie in [lo, hi]; so do the reference iteration's
    where it ended at a fixed point."""
    rng = np.random.default_rng(23)
    inside = 0
    for k in range(30):
        e = drawn(rng, (3, 20), (2, 50), (1, 6), (1, 3), ("equal", "app", "port")[k % 3])
        br = bracket(e)
        assert np.all(br.lo <= br.hi * (1 + 1e-12))
        warm = solve(e, max_iter=300, cold=False).rates
        for rates in (solve(e).rates, warm, allocate(e, max_iter=300).rates):
            if fixed_point_gap(e, rates) <= 1.0:
                assert np.all(rates >= br.lo * (1 - 1e-9) - 1e-12)
                # the same absolute 1e-12 above as below: a linear solve can
                # leave a starved flow at ~4e-16 where hi is 0
                assert np.all(rates <= br.hi * (1 + 1e-9) + 1e-12)
                inside += 1
    assert inside >= 50


def test_decided_flows_match_the_reference() -> None:
    """Where the reference iteration converged, the flows the bracket
    decided have the reference's rates within its tolerance (1e-4 of the
    largest rate), with per-port and per-app weights and two levels."""
    rng = np.random.default_rng(24)
    compared = 0
    for k in range(40):
        e = drawn(rng, (3, 25), (2, 60), (1, 6), (1, 3), ("app", "port")[k % 2])
        ref = allocate(e, max_iter=300)
        if not ref.change <= 1e-6 or fixed_point_gap(e, ref.rates) > 1e5:
            continue  # the reference stopped short (not at a fixed point)
        br = bracket(e)
        closed = ~br.open
        if closed.any():
            scale = float(ref.rates.max())
            assert np.max(np.abs(br.lo[closed] - ref.rates[closed])) < 1e-4 * scale
            compared += int(closed.sum())
        got = solve(e)
        if got.exact and not br.open.any():
            assert np.max(np.abs(got.rates - ref.rates)) < 1e-4 * float(ref.rates.max())
    assert compared >= 300


def test_bad_entries_are_refused() -> None:
    e = crossed()
    bad = Entries(e.flow, e.link, e.level, e.queue, e.qweight, np.array([10.0, 0.0]), 2)
    with pytest.raises(ValueError, match="capacities must be > 0"):
        bracket(bad)
    short = Entries(e.flow, e.link[:3], e.level, e.queue, e.qweight, e.capacity, 2)
    with pytest.raises(ValueError, match="link has 3 rows"):
        bracket(short)
    assert fixed_point_gap(e, np.array([np.nan, 5.0])) == float("inf")
    assert fixed_point_gap(e, np.array([-1.0, 11.0])) == float("inf")
