"""The flow study's workload mixes (approxnet.saba.flowstudy): the
``uniform`` mix is the study's own draw, ``paper`` spans the testbed's
slowdowns at 25 % (seed 003 §2.1), ``demand`` caps each rank's sending
rate, in the profile and at run time."""

from __future__ import annotations

import pytest
from test_saba_sim_backend import star as star_at

from approxnet.saba import flowstudy
from approxnet.saba.errors import SabaError
from approxnet.saba.sim_backend import FlowFair, Routes, run


def star(hosts: int) -> Routes:
    """Hosts on one switch at 56 Gbit/s (the study's links, BYTES_PER_NS)."""
    return star_at(hosts, flowstudy.BYTES_PER_NS * 8.0)


def test_uniform_mix_is_the_studys_draw_and_at_line_rate() -> None:
    specs = flowstudy.workload_specs(20, 4, 7)
    assert specs == flowstudy.workload_specs(20, 4, 7, "uniform")
    # the study's documented first workload (docs/experiments/saba.md)
    assert specs[0].compute_ms == pytest.approx(7.01, abs=0.005)
    assert specs[0].comm_ms == pytest.approx(4.61, abs=0.005)
    assert all(s.demand == 1.0 for s in specs)


def test_paper_mix_spans_the_testbeds_slowdowns_at_a_quarter() -> None:
    specs = flowstudy.workload_specs(200, 4, 3, "paper")
    d25 = [1.0 + 3.0 * s.comm_ms / (s.comm_ms + s.compute_ms) for s in specs]
    assert 1.1 <= min(d25) < 1.2 and 3.3 < max(d25) <= 3.4
    assert all(s.demand == 1.0 for s in specs)


def test_demand_mix_keeps_the_uniform_stages_and_caps_the_rate() -> None:
    uni = flowstudy.workload_specs(20, 4, 7)
    dem = flowstudy.workload_specs(20, 4, 7, "demand")
    for u, d in zip(uni, dem, strict=True):
        assert (u.stages, u.compute_ms, u.comm_ms, u.shifts) == (
            d.stages,
            d.compute_ms,
            d.comm_ms,
            d.shifts,
        )
        assert flowstudy.DEMAND_RANGE[0] <= d.demand <= flowstudy.DEMAND_RANGE[1]


def test_a_demand_capped_workload_profiles_flat_above_its_demand() -> None:
    spec = flowstudy.Spec("x", 2, 1.0, 1.0, (1,), demand=0.4)
    prof = dict(flowstudy.profile([spec], star(4), 4)["x"][0])
    assert prof[0.5] == pytest.approx(1.0) and prof[0.9] == pytest.approx(1.0)
    # below the demand: compute 1 ms + comm 1 ms x 0.4 / b, over 2 ms
    assert prof[0.25] == pytest.approx((1.0 + 0.4 / 0.25) / 2.0, rel=1e-6)
    assert prof[0.05] == pytest.approx((1.0 + 0.4 / 0.05) / 2.0, rel=1e-6)
    # alone at run time, the cap holds the stage at its profiled 2 ms
    job = flowstudy.make_job(spec, [0, 1, 2, 3])
    net = star(4).capped_egress(flowstudy.demand_caps([spec], [job], star(4)))
    assert run([job], net, FlowFair()).jct_ns["x"] == pytest.approx(4e6, rel=1e-6)
    assert run([job], star(4), FlowFair()).jct_ns["x"] < 3e6  # uncapped: faster


def test_bad_mix_and_shared_capped_hosts_are_refused() -> None:
    with pytest.raises(SabaError, match="mix"):
        flowstudy.workload_specs(2, 4, 7, "lr")
    spec = flowstudy.Spec("x", 1, 1.0, 1.0, (1,), demand=0.5)
    job = flowstudy.make_job(spec, [0, 1])
    with pytest.raises(SabaError, match="two demand-capped"):
        flowstudy.demand_caps([spec, spec], [job, job], star(2))
    with pytest.raises(SabaError, match="demand"):
        flowstudy.demand_caps([flowstudy.Spec("y", 1, 1.0, 1.0, (1,), 0.0)], [job], star(2))
    with pytest.raises(SabaError, match="mix"):
        flowstudy.FlowStudy({}, 40, 4, mix="lr").check()


def test_overlap_mix_keeps_the_uniform_stages_and_an_overlapped_profile_is_flat_first() -> None:
    uni = flowstudy.workload_specs(20, 4, 7)
    ovl = flowstudy.workload_specs(20, 4, 7, "overlap")
    assert [(s.compute_ms, s.comm_ms) for s in uni] == [(s.compute_ms, s.comm_ms) for s in ovl]
    assert 0 < sum(s.overlap for s in ovl) < 20
    # compute 2 ms hides 1 ms of communication down to half the link
    spec = flowstudy.Spec("x", 2, 2.0, 1.0, (1,), overlap=True)
    prof = dict(flowstudy.profile([spec], star(4), 4)["x"][0])
    assert prof[0.5] == pytest.approx(1.0) and prof[0.9] == pytest.approx(1.0)
    assert prof[0.25] == pytest.approx(2.0, rel=1e-6)  # 4 ms of flows over 2 ms
