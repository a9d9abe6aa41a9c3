"""Fig. 8b's cluster setups at the testbed configuration
(approxnet.saba.setupdraw, experiments/saba/sim_setups.py --scale
testbed): the draw's constraints, its determinism, bad options refused,
and one tiny setup end to end on the simulator's one-switch routes."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from approxnet import binaries
from approxnet.saba import flowstudy
from approxnet.saba.errors import SabaError
from approxnet.saba.setupdraw import (
    TESTBED,
    SetupDraw,
    baseline_and_saba,
    draw_setup,
    one_switch,
    scaled_job,
)
from approxnet.saba.sim_backend import routes_from_sim

REPO = Path(__file__).resolve().parents[2]
SPECS = flowstudy.workload_specs(20, 4, 7, "uniform")

needs_sim = pytest.mark.skipif(
    binaries.find("approxnet-sim") is None, reason="approxnet-sim binary not built"
)


def test_defaults_are_the_papers_testbed() -> None:
    # seed 003 §8.1: 32 servers, one 56 Gbps switch; §8.2: 16 jobs, 0.5x-4x
    # of 8 nodes, data 0.1 / 1 / 10x, at most 16 jobs a server
    assert TESTBED == {"kind": "dumbbell", "senders": 31, "receivers": 1, "host_gbps": 56.0}
    d = SetupDraw()
    assert (d.jobs, d.instances, d.data_scales, d.per_server) == (16, (4, 32), (0.1, 1, 10), 16)


def test_draw_keeps_every_constraint() -> None:
    rng = np.random.default_rng(3)
    seen_m: set[int] = set()
    seen_scale: set[float] = set()
    for _ in range(200):
        setup = draw_setup(rng, SPECS, SetupDraw(), 32)
        assert len(setup) == 16
        load = np.zeros(32, dtype=int)
        for j in setup:
            assert 4 <= len(j.hosts) <= 32
            assert len(set(j.hosts)) == len(j.hosts)  # one instance of a job per server
            assert all(0 <= h < 32 for h in j.hosts)
            load[list(j.hosts)] += 1
            seen_m.add(len(j.hosts))
            seen_scale.add(j.data_scale)
        assert load.max() <= 16
    assert min(seen_m) == 4 and max(seen_m) == 32
    assert seen_scale == {0.1, 1.0, 10.0}


def test_per_server_cap_binds_when_jobs_exceed_it() -> None:
    # 6 jobs of 2-4 instances on 8 servers, at most 3 jobs a server
    d = SetupDraw(jobs=6, instances=(2, 4), per_server=3)
    bound = 0
    for seed in range(40):
        try:
            setup = draw_setup(np.random.default_rng(seed), SPECS, d, 8)
        except SabaError as e:
            assert "per_server = 3" in str(e)
            continue
        load = np.bincount([h for j in setup for h in j.hosts], minlength=8)
        assert load.max() <= 3
        bound += int(load.max() == 3)
    assert bound > 0


def test_too_few_free_servers_is_an_error() -> None:
    d = SetupDraw(jobs=2, instances=(3, 3), per_server=1)
    with pytest.raises(SabaError, match="job 1: 3 instances but only 1 servers below"):
        draw_setup(np.random.default_rng(0), SPECS, d, 4)


def test_draw_is_deterministic_by_seed() -> None:
    a = draw_setup(np.random.default_rng(5), SPECS, SetupDraw(), 32)
    b = draw_setup(np.random.default_rng(5), SPECS, SetupDraw(), 32)
    c = draw_setup(np.random.default_rng(6), SPECS, SetupDraw(), 32)
    assert a == b
    assert a != c


@pytest.mark.parametrize(
    ("draw", "servers", "field"),
    [
        (SetupDraw(jobs=0), 32, "jobs"),
        (SetupDraw(instances=(1, 4)), 32, "instances"),
        (SetupDraw(instances=(8, 4)), 32, "instances"),
        (SetupDraw(instances=(4, 33)), 32, r"instances: HI \(33\)"),
        (SetupDraw(data_scales=()), 32, "data_scales"),
        (SetupDraw(data_scales=(1.0, -0.1)), 32, "data_scales"),
        (SetupDraw(data_scales=(float("nan"),)), 32, "data_scales"),
        (SetupDraw(per_server=0), 32, "per_server"),
    ],
)
def test_bad_draw_refused(draw: SetupDraw, servers: int, field: str) -> None:
    with pytest.raises(SabaError, match=field):
        draw.check(servers)
    with pytest.raises(SabaError, match=field):
        draw_setup(np.random.default_rng(0), SPECS, draw, servers)


def test_bad_cluster_refused() -> None:
    with pytest.raises(SabaError, match="servers"):
        one_switch(1)
    with pytest.raises(SabaError, match="gbps"):
        one_switch(8, 0.0)


def test_data_scale_multiplies_compute_and_bytes() -> None:
    setup = draw_setup(np.random.default_rng(1), SPECS, SetupDraw(data_scales=(10.0,)), 32)
    j = setup[0]
    base = flowstudy.make_job(j.spec, j.hosts)
    big = scaled_job("x", j)
    assert big.name == "x" and big.hosts == base.hosts
    for s0, s1 in zip(base.stages, big.stages, strict=True):
        assert s1.compute_ns == pytest.approx(10 * s0.compute_ns)
        assert s1.bytes == pytest.approx(10 * s0.bytes)
        assert s1.pairs == s0.pairs


@needs_sim
def test_tiny_setup_end_to_end() -> None:
    servers = 6
    routes = routes_from_sim(
        one_switch(servers), [(a, b) for a in range(servers) for b in range(servers) if a != b]
    )
    # one switch: every path is the sender's link then the switch's port to the receiver
    assert all(len(routes.path(a, b)) == 2 for a, b in routes.paths)
    assert len(routes.capacity) == 2 * servers
    assert np.allclose(routes.capacity, 56.0 / 8.0)
    specs = SPECS[:4]
    prof = flowstudy.profile(specs, routes, 4)
    models = {n: list(fits[3].coeffs) for n, (_, fits) in prof.items()}
    d = SetupDraw(jobs=3, instances=(2, 4), data_scales=(0.1, 1.0))
    setup = draw_setup(np.random.default_rng(2), specs, d, servers)
    jobs = [scaled_job(f"j{k}", j) for k, j in enumerate(setup)]
    own = {f"j{k}": models[j.spec.name] for k, j in enumerate(setup)}
    base, saba = baseline_and_saba(jobs, routes, own)
    assert set(base.jct_ns) == set(saba.jct_ns) == {"j0", "j1", "j2"}
    assert all(t > 0 for t in [*base.jct_ns.values(), *saba.jct_ns.values()])
    assert base.uncertified == 0
    # a job alone can be no faster than its compute and its bytes at line rate
    for job in jobs:
        st = job.stages[0]
        floor = len(job.stages) * (st.compute_ns + st.bytes / (56.0 / 8.0))
        assert base.jct_ns[job.name] >= floor * (1 - 1e-9)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--servers", "64"], "--servers: only with --scale testbed"),
        (["--scale", "testbed", "--instances", "4", "40"], r"instances: HI \(40\)"),
        (["--scale", "testbed", "--mix", "demand"], "--mix demand"),
        (["--scale", "testbed", "--rack", "1"], "--rack must be"),
        (["--scale", "testbed", "--data-scales", "0"], "data_scales must be"),
        (["--scale", "testbed", "--per-server", "0"], "per_server must be"),
        (["--scale", "testbed", "--queues", "0"], "--queues must be"),
    ],
)
def test_script_refuses_bad_options(
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(REPO / "experiments" / "saba"))
    sim_setups = importlib.import_module("sim_setups")
    with pytest.raises(SystemExit) as exit_:
        sim_setups.parse([*args, "--setups", "1"])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)
