"""Saba's simulator backend: per-port weighted queue sharing
(fluidshare), the staged-job runner, the policies, and agreement with the
simulator's own fluid mode where both apply (equal weights = max-min)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import numpy as np
import pytest

from approxnet import binaries
from approxnet.saba.errors import SabaError
from approxnet.saba.fluidshare import Entries, allocate, waterfill
from approxnet.saba.sim_backend import (
    CoflowOrder,
    FlowFair,
    Job,
    PortQueues,
    Routes,
    SabaPolicy,
    SrptLevels,
    Stage,
    routes_from_sim,
    run,
)

needs_sim = pytest.mark.skipif(
    binaries.find("approxnet-sim") is None, reason="approxnet-sim binary not built"
)

LEAF_SPINE = {
    "kind": "leaf_spine",
    "leaves": 2,
    "spines": 2,
    "hosts_per_leaf": 4,
    "host_gbps": 8.0,
    "oversubscription": 2.0,
}


def entries(
    paths: list[list[int]],
    cap: list[float],
    queue: list[list[int]] | None = None,
    weight: list[float] | None = None,
    level: list[int] | None = None,
) -> Entries:
    fl = np.array([f for f, p in enumerate(paths) for _ in p], dtype=np.int64)
    ln = np.array([x for p in paths for x in p], dtype=np.int64)
    if queue is None:
        q = np.arange(len(fl), dtype=np.int64)
        w = np.ones(len(fl))
    else:
        q = np.array([x for qs in queue for x in qs], dtype=np.int64)
        assert weight is not None
        w = np.array(weight)
    lv = (
        np.zeros(len(fl), dtype=np.int64)
        if level is None
        else np.array([level[f] for f in fl.tolist()], dtype=np.int64)
    )
    return Entries(fl, ln, lv, q, w, np.array(cap, dtype=float), len(paths))


def exact_maxmin(paths: list[list[int]], cap: list[float]) -> np.ndarray:
    """Progressive filling, written plainly (for the test only)."""
    r = np.zeros(len(paths))
    frozen = np.zeros(len(paths), dtype=bool)
    left = np.array(cap, dtype=float)
    while not frozen.all():
        cnt = np.zeros(len(cap))
        for f, p in enumerate(paths):
            if not frozen[f]:
                cnt[p] += 1
        inc = np.where(cnt > 0, left / np.maximum(cnt, 1), np.inf)
        d = inc.min()
        for f, p in enumerate(paths):
            if not frozen[f]:
                r[f] += d
                left[p] -= d
        full = np.abs(left) < 1e-9 * max(cap)
        for f, p in enumerate(paths):
            if full[p].any():
                frozen[f] = True
    return r


def test_waterfill_gives_leftover_to_the_unsatisfied() -> None:
    got = waterfill(
        np.array([0, 0, 1, 1]),
        np.array([1.0, 1.0, 3.0, 1.0]),
        np.array([np.inf, 0.2, np.inf, np.inf]),
        np.array([1.0, 2.0]),
    )
    assert np.allclose(got, [0.8, 0.2, 1.5, 0.5])


def test_queue_weights_split_a_port_and_idle_share_goes_to_the_rest() -> None:
    # three apps' queues at weights 0.6 / 0.3 / 0.1 on one 10-unit link
    e = entries([[0], [0], [0]], [10.0], [[0], [1], [2]], [0.6, 0.3, 0.1])
    assert np.allclose(allocate(e).rates, [6.0, 3.0, 1.0], rtol=1e-4)
    # the third app idle: the other two take its share 2 : 1 (work-conserving)
    e = entries([[0], [0]], [10.0], [[0], [1]], [0.6, 0.3])
    assert np.allclose(allocate(e).rates, [20 / 3, 10 / 3], rtol=1e-4)
    # a queue's share is split among its flows, not multiplied by them
    e = entries([[0], [0], [0]], [12.0], [[0], [0], [1]], [0.5, 0.5])
    assert np.allclose(allocate(e).rates, [3.0, 3.0, 6.0], rtol=1e-4)


def test_what_a_queue_cannot_use_elsewhere_goes_to_the_other_queue() -> None:
    # flow 0 (queue 0, weight 0.9 on link 0) is held to 1 by link 1
    e = entries([[0, 1], [0]], [10.0, 1.0], [[0, 2], [1]], [0.9, 0.1, 1.0])
    assert np.allclose(allocate(e).rates, [1.0, 9.0], rtol=1e-4)


def test_strict_levels() -> None:
    e = entries([[0], [0, 1], [1]], [10.0, 4.0], level=[1, 0, 1])
    assert np.allclose(allocate(e).rates, [6.0, 4.0, 0.0], atol=1e-6)


def test_equal_weights_are_maxmin_on_random_instances() -> None:
    rng = np.random.default_rng(3)
    for _ in range(15):
        n_links, n_flows = 25, 50
        cap = rng.uniform(1, 10, n_links).tolist()
        paths = [
            rng.choice(n_links, int(rng.integers(1, 5)), replace=False).tolist()
            for _ in range(n_flows)
        ]
        got = allocate(entries(paths, cap))
        want = exact_maxmin(paths, cap)
        assert np.max(np.abs(got.rates - want) / want) < 1e-4
        load = np.bincount(
            [x for p in paths for x in p],
            weights=[got.rates[f] for f, p in enumerate(paths) for _ in p],
            minlength=n_links,
        )
        assert np.all(load <= np.array(cap) * (1 + 1e-9))


def test_bad_entries_are_refused() -> None:
    e = entries([[0]], [1.0], [[0]], [0.0])
    with pytest.raises(ValueError, match="weights must be > 0"):
        allocate(e)
    e = entries([[0]], [0.0])
    with pytest.raises(ValueError, match="capacities"):
        allocate(e)


def star(hosts: int, gbps: float = 8.0) -> Routes:
    """Hosts on one switch: link 2h = h up, 2h + 1 = switch down to h."""
    node = [x for h in range(hosts) for x in (f"h{h}", "s0")]
    peer = [x for h in range(hosts) for x in ("s0", f"h{h}")]
    paths = {
        (a, b): np.array([2 * a, 2 * b + 1], dtype=np.int64)
        for a in range(hosts)
        for b in range(hosts)
        if a != b
    }
    return Routes(np.full(2 * hosts, gbps / 8.0), node, peer, paths)


def test_staged_job_time_and_profile_cap() -> None:
    r = star(4)
    job = Job("a", (0, 1, 2, 3), (Stage(1000.0, ((0, 1), (1, 2), (2, 3), (3, 0)), 1000.0),) * 2)
    # 1 us compute, then 1000 B at 1 B/ns per flow, twice
    assert run([job], r, FlowFair()).jct_ns["a"] == pytest.approx(4000.0)
    assert run([job], r.scaled_hosts(0.5), FlowFair()).jct_ns["a"] == pytest.approx(6000.0)


def test_run_refuses_bad_jobs() -> None:
    with pytest.raises(SabaError, match="names no rank"):
        run([Job("a", (0, 1), (Stage(0.0, ((0, 5),), 10.0),))], star(2), FlowFair())
    with pytest.raises(SabaError, match="batch"):
        run([Job("a", (0, 1), (Stage(0.0, ((0, 1),), 10.0),))], star(2), FlowFair(), batch=2.0)


def two_apps() -> tuple[Routes, list[Job], dict[str, list[float]]]:
    """Two apps whose flows meet on switch port s0 -> h0."""
    r = star(3)
    steep = Job("steep", (1, 0), (Stage(0.0, ((0, 1),), 8000.0),))
    flat = Job("flat", (2, 0), (Stage(0.0, ((0, 1),), 4000.0),))
    models = {"steep": [10.0, -9.0], "flat": [1.5, -0.5]}
    return r, [steep, flat], models


def test_saba_gives_the_steeper_model_the_larger_weight_and_weights_sum_to_one() -> None:
    r, jobs, models = two_apps()
    pol = SabaPolicy(jobs, models, r, queues=8)
    port = 1  # s0 -> h0
    w_steep = pol._q[port * pol.jobs + 0][1]
    w_flat = pol._q[port * pol.jobs + 1][1]
    assert w_steep > w_flat
    assert w_steep + w_flat == pytest.approx(1.0)
    for c in pol.ctls:
        for cfg in c.port_configs():
            assert sum(q.weight for q in cfg.queues) == pytest.approx(1.0)
    res = run(jobs, r, pol)
    fair = run(jobs, r, FlowFair())
    assert res.jct_ns["steep"] < fair.jct_ns["steep"]
    # work-conserving: flat ends when the port has carried both apps' bytes
    assert res.jct_ns["flat"] == pytest.approx(12000.0)
    assert pol.ctls[0].apps() == []  # both deregistered when their jobs ended


def test_per_app_queues_equal_weights_are_per_flow_fair_with_one_flow_each() -> None:
    r, jobs, _ = two_apps()
    a = run(jobs, r, PortQueues.per_app(jobs, r)).jct_ns
    b = run(jobs, r, FlowFair()).jct_ns
    assert a == pytest.approx(b)


def test_distributed_controllers_give_the_centralized_weights() -> None:
    r, jobs, models = two_apps()
    a = SabaPolicy(jobs, models, r, queues=8)
    b = SabaPolicy(jobs, models, r, queues=8, controllers=2)
    assert a._q.keys() == b._q.keys()
    for k, (q, w) in a._q.items():
        assert b._q[k][0] == q
        assert b._q[k][1] == pytest.approx(w)


def test_srpt_and_coflow_levels_favour_the_smaller() -> None:
    r = star(3)
    big = Job("big", (1, 0), (Stage(0.0, ((0, 1),), 8000.0),))
    small = Job("small", (2, 0), (Stage(0.0, ((0, 1),), 1000.0),))
    for pol in (SrptLevels([1000.0, 8000.0], levels=2), CoflowOrder(levels=2)):
        got = run([big, small], r, pol).jct_ns
        assert got["small"] == pytest.approx(1000.0)
        assert got["big"] == pytest.approx(9000.0)


@needs_sim
def test_routes_and_maxmin_agree_with_the_simulator_fluid_mode(tmp_path: Path) -> None:
    """Two staged jobs on a leaf-spine at equal weights: the backend's job
    times equal approxnet-sim's (its exact max-min) on the same routes."""
    hosts_a, hosts_b = [0, 1, 4, 5], [2, 3, 6, 7]
    pairs_a = [[0, 2], [1, 3], [2, 0], [3, 1], [0, 3]]
    pairs_b = [[0, 2], [1, 2], [3, 0]]
    jobs = [
        Job("a", tuple(hosts_a), (Stage(5000.0, tuple((x, y) for x, y in pairs_a), 2e5),) * 3),
        Job("b", tuple(hosts_b), (Stage(1000.0, tuple((x, y) for x, y in pairs_b), 5e5),) * 2),
    ]
    pairs = set().union(*(j.host_pairs() for j in jobs))
    routes = routes_from_sim(LEAF_SPINE, pairs)
    mine = run(jobs, routes, FlowFair()).jct_ns
    lines = ['mode = "flow"', "duration_ms = 100.0", "seed = 1", "[topology]"]
    lines += [
        f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in LEAF_SPINE.items()
    ]
    lines += ["link_delay_us = 0.0"]
    for name, hosts, prs, comp, kb, it in (
        ("a", hosts_a, pairs_a, 5.0, 200.0, 3),
        ("b", hosts_b, pairs_b, 1.0, 500.0, 2),
    ):
        lines += [
            "[[staged]]",
            f'name = "{name}"',
            f"hosts = {hosts}",
            f"iterations = {it}",
            "[[staged.phases]]",
            f"compute_us = {comp}",
            "[[staged.phases]]",
            'comm = "flows"',
            f"kb = {kb}",
            f"pairs = {prs}",
        ]
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    sim = binaries.find("approxnet-sim")
    subprocess.run([str(sim), "run", "s.toml", "--out", "out", "--quiet"], cwd=tmp_path, check=True)
    with open(tmp_path / "out" / "staged.csv") as f:
        theirs = {row["name"]: float(row["jct_ns"]) for row in csv.DictReader(f)}
    assert theirs.keys() == mine.keys()
    for k in mine:
        assert mine[k] == pytest.approx(theirs[k], rel=1e-4)


def test_per_port_weights_reach_a_fixed_point_on_random_instances() -> None:
    """Random per-port queue weights (which can leave no link whose flows
    all have their least share there, so the iteration runs): rates are
    feasible, and every flow has a link that would not give it more if it
    asked (its local share there, the others at their rates, is its rate)."""
    from approxnet.saba.fluidshare import _local

    rng = np.random.default_rng(11)
    iterated = 0
    for _ in range(12):
        n_links, n_flows = 12, 24
        cap = rng.uniform(1, 10, n_links).tolist()
        paths = [
            rng.choice(n_links, int(rng.integers(1, 4)), replace=False).tolist()
            for _ in range(n_flows)
        ]
        n = sum(len(p) for p in paths)
        queue = [[int(x)] for x in range(n)]
        e = entries(paths, cap, queue, rng.uniform(0.05, 1.0, n).tolist())
        got = allocate(e)
        iterated += got.iterations > 3
        r = got.rates
        load = np.bincount(e.link, weights=r[e.flow], minlength=n_links)
        assert np.all(load <= np.array(cap) * (1 + 1e-9))
        for f in range(n_flows):
            demand = r[e.flow].copy()
            demand[e.flow == f] = np.inf
            mine = _local(e, demand)[e.flow == f]
            assert mine.min() <= r[f] * (1 + 1e-3)
    assert iterated > 0  # the instances did exercise the iteration


def test_capped_egress_limits_a_sender_and_profiles_flat_above_its_demand() -> None:
    r = star(2)
    job = Job("a", (0, 1), (Stage(0.0, ((0, 1),), 1000.0),))
    capped = r.capped_egress({0: 0.25})
    assert run([job], capped, FlowFair()).jct_ns["a"] == pytest.approx(4000.0)
    # the profiler's share and the demand cap: the lower one holds
    assert run([job], r.scaled_hosts(0.5).capped_egress({0: 0.25}), FlowFair()).jct_ns[
        "a"
    ] == pytest.approx(4000.0)
    assert run([job], r.scaled_hosts(0.1).capped_egress({0: 0.25}), FlowFair()).jct_ns[
        "a"
    ] == pytest.approx(10000.0)
    assert r.capacity[r.host_egress(0)] == 1.0  # the original is untouched
    with pytest.raises(SabaError, match="above 0"):
        r.capped_egress({0: 0.0})
    with pytest.raises(SabaError, match="h9"):
        r.capped_egress({9: 1.0})


def test_an_overlapped_stage_takes_the_longer_of_compute_and_communication() -> None:
    r = star(4)
    pairs = ((0, 1), (1, 2), (2, 3), (3, 0))

    def jct(compute: float, routes: Routes) -> float:
        job = Job("a", (0, 1, 2, 3), (Stage(compute, pairs, 1000.0, overlap=True),) * 2)
        return run([job], routes, FlowFair()).jct_ns["a"]

    # 1000 B at 1 B/ns per flow, during the computation
    assert jct(3000.0, r) == pytest.approx(6000.0)  # compute-bound: the flows are hidden
    assert jct(500.0, r) == pytest.approx(2000.0)  # communication-bound
    assert jct(3000.0, r.scaled_hosts(0.25)) == pytest.approx(8000.0)  # 4000 ns of flows
    assert jct(0.0, r) == pytest.approx(2000.0)
