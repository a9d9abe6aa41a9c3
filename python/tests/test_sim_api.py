"""The simulator from Python: frames from a run, typed errors, sweeps."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from approxnet import ScenarioError, sim

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "python" / "approxnet" / "studies" / "netapprox" / "demo.toml"
# A short run of the demo scenario: about 0.3 s of wall time.
SHORT = ["duration_ms=0.5", "jobs.0.stop_ms=0.3"]

TINY = """
name = "tiny"
seed = 2
duration_ms = 0.4

[topology]
kind = "fat_tree"
k = 4
host_gbps = 40.0
link_delay_us = 1.0

[[jobs]]
name = "kv"
pattern = "all_to_all"
sizes = "fbkv"
messages = 10
load = 0.3
msr = 0.5
scheme = "atp-full"
stop_ms = 0.2
"""


def test_run_returns_frames() -> None:
    r = sim.run(DEMO, overrides=SHORT)
    assert r.name == "netapprox-demo"
    assert isinstance(r.classes, pd.DataFrame) and len(r.classes) == 1
    c = r.classes.iloc[0]
    assert (c["scheme"], c["msr"]) == ("atp-full", 0.5)
    assert c["done"] > 0 and c["jct_mean_us"] > 0
    assert len(r.jobs) == c["jobs"]
    for col in ("job", "scheme", "msr", "jct_ns", "delivered_fraction", "lost_pkts"):
        assert col in r.jobs.columns
    assert r.flows is not None  # flows.csv: native transports only; ATP jobs are in jobs
    assert r.summary["sim_s"] == pytest.approx(0.5e-3)
    assert r.out_dir is None  # records went to a removed temporary directory


def test_run_from_toml_text_with_overrides() -> None:
    r = sim.run(TINY, overrides=['jobs.0.scheme="dctcp-ss"'])
    assert r.name == "tiny"
    assert r.classes.iloc[0]["scheme"] == "dctcp-ss"


def test_same_seed_same_records(tmp_path: Path) -> None:
    a = sim.run(TINY, out=tmp_path / "a")
    b = sim.run(TINY, out=tmp_path / "b")
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert (tmp_path / "a" / "jobs.csv").read_bytes() == (tmp_path / "b" / "jobs.csv").read_bytes()
    assert a.out_dir == tmp_path / "a" and (tmp_path / "a" / "summary.json").is_file()
    c = sim.run(TINY, overrides=["seed=3"])
    assert not c.jobs.equals(a.jobs)


@pytest.mark.parametrize(
    ("scenario", "overrides", "match"),
    [
        (TINY, ["jobs.0.msr=1.5"], "jobs.0.msr"),
        (TINY, ['jobs.0.scheme="nope"'], "unknown scheme"),
        (TINY, ["no-equals-sign"], "expected key.path=value"),
        (TINY + "\nbogus = 1\n", [], "bogus"),
        ("name = 'x'\nduration_ms = [\n", [], "scenario"),
        (str(ROOT / "no-such-file.toml"), [], "cannot read"),
    ],
)
def test_bad_scenarios_are_scenario_errors(scenario: str, overrides: list[str], match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        sim.run(scenario, overrides=overrides)


def test_names() -> None:
    assert "atp-full" in sim.schemes() and "dctcp" in sim.schemes()
    assert "fbkv" in sim.sizes()


def test_grid_helpers() -> None:
    assert sim.parse_param("jobs.0.msr=0.25, 0.5,1") == ("jobs.0.msr", [0.25, 0.5, 1])
    assert sim.parse_param('jobs.0.scheme=udp,"dctcp"') == ("jobs.0.scheme", ["udp", "dctcp"])
    for bad in ("jobs.0.msr", "=1,2", "k=", "k=1,,2"):
        with pytest.raises(ScenarioError):
            sim.parse_param(bad)
    grid = list(sim.expand_grid({"a": [1, 2], "b": ["x", "y"]}))
    assert grid == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    assert sim.format_override("jobs.0.scheme", "udp") == 'jobs.0.scheme="udp"'
    assert sim.format_override("seed", 3) == "seed=3"
    assert sim.format_override("x", True) == "x=true"
    assert sim.point_name({"jobs.0.scheme": "udp", "jobs.0.msr": 0.5}) == "scheme=udp,msr=0.5"


def test_sweep_in_worker_processes(tmp_path: Path) -> None:
    df = sim.sweep(
        DEMO,
        {"jobs.0.scheme": ["atp-full", "udp"]},
        overrides=SHORT,
        out=tmp_path,
        workers=2,
    )
    assert list(df["jobs.0.scheme"]) == ["atp-full", "udp"]
    assert list(df["scheme"]) == ["atp-full", "udp"]
    assert (tmp_path / "sweep.csv").is_file()
    assert (tmp_path / "scheme=udp" / "jobs.csv").is_file()
    # in-process run of the same point gives the same row (same seed)
    one = sim.sweep(DEMO, {"jobs.0.scheme": ["udp"]}, overrides=SHORT, workers=1)
    keep = ["jobs", "done", "jct_mean_us", "loss_rate"]
    assert one[keep].iloc[0].tolist() == df[keep].iloc[1].tolist()


def test_sweep_bad_override_raises_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="msr"):
        sim.sweep(DEMO, {"jobs.0.msr": [0.5, 7.0]}, overrides=SHORT, workers=2)


FLOW = """
name = "tiny_flow"
mode = "flow"
seed = 2
duration_ms = 2.0

[topology]
kind = "dragonfly"
groups = 5
routers_per_group = 2
global_links = 2
hosts_per_switch = 2
host_gbps = 100.0
link_delay_us = 0.025
switch_delay_ns = 60.0

[[jobs]]
name = "bg"
sizes = "fbhd"
load = 0.3
scheme = "dctcp"
weight = 0.5

[[staged]]
name = "ring"
hosts = [0, 3, 6, 9]
iterations = 2
[[staged.phases]]
compute_us = 20.0
[[staged.phases]]
comm = "allreduce_ring"
kb = 400.0
"""


def test_flow_mode_through_the_same_api() -> None:
    r = sim.run(FLOW)
    assert r.summary["mode"] == "flow"
    assert r.flows is not None and len(r.flows) > 0
    assert (r.flows["scheme"] == "fluid").all()
    staged = r.tables["staged"]
    assert list(staged["done_iterations"]) == [2]
    # two iterations of 20 us compute and 6 ring steps of 100 KB at 100 Gbps
    # (8 us each at least): the JCT is at least 2 x (20 + 48) us
    assert staged["jct_ns"][0] >= 2 * (20_000 + 6 * 8_000)
    assert r.classes["done"][0] > 0


def test_flow_mode_errors_name_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"jobs\.0\.weight"):
        sim.run(FLOW, overrides=["jobs.0.weight=0.0"])
    with pytest.raises(ScenarioError, match=r"staged\.0\.hosts"):
        sim.run(FLOW, overrides=["staged.0.hosts=[0, 1, 99]"])
