"""Saba's studies as ``approxnet repro saba/...`` presets (package data):
both kinds run end to end at CI size through the CLI and write their
tables; bad presets are refused naming the key."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from approxnet import binaries
from approxnet.saba.errors import SabaError
from approxnet.saba.presets import _flow_study, preset, presets
from approxnet.saba.sim_backend import PAPER_SPINE_LEAF

needs_sim = pytest.mark.skipif(
    binaries.find("approxnet-sim") is None, reason="approxnet-sim binary not built"
)


def _repro(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "approxnet", "repro", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_presets_are_listed_and_resolved() -> None:
    assert set(presets()) == {"saba/flow-small", "saba/flow-full", "saba/controller-time"}
    assert "saba/flow-small" in _repro("--list")
    small = _flow_study(preset("saba/flow-small"))
    assert (small.hosts, small.rack, small.seeds, small.batch) == (288, 12, (1, 2, 3), 0.02)
    assert "saba8_dist" in small.schemes and "sincronia_like" in small.schemes
    full = _flow_study(preset("flow-full"))
    assert full.topology == PAPER_SPINE_LEAF and full.hosts == 1944
    quick = _flow_study(preset("saba/flow-small", quick=True))
    assert (quick.hosts, quick.workloads) == (16, 4)


def test_bad_presets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SabaError, match="no Saba preset 'saba/nope'.*saba/flow-small"):
        preset("saba/nope")
    bad = tmp_path / "p.toml"
    bad.write_text('[x]\nkind = "flow"\nhosts = 8\nrack = 2\nfoo = 1\ntopology = {kind = "x"}\n')
    with pytest.raises(SabaError, match=r"unknown key\(s\) \['foo'\]"):
        _flow_study(preset("x", path=bad))
    bad.write_text('[x]\nkind = "packet"\n')
    with pytest.raises(SabaError, match="kind must be one of"):
        preset("x", path=bad)
    bad.write_text('[x]\nkind = "flow"\nhosts = 8\nrack = 2\ntopology = "paper"\n')
    with pytest.raises(SabaError, match="topology must be a table"):
        _flow_study(preset("x", path=bad))
    # the CLI names the error, no traceback
    done = subprocess.run(
        [sys.executable, "-m", "approxnet", "repro", "saba/nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "no Saba preset" in done.stderr
    assert "Traceback" not in done.stderr


def test_controller_time_preset_runs_and_the_solvers_agree(tmp_path: Path) -> None:
    out = _repro("saba/controller-time", "--quick", "--out", str(tmp_path))
    assert "table:" in out
    table = pd.read_csv(tmp_path / "table.csv")
    assert list(table.apps) == [1, 10] and set(table.degree) == {3}
    assert (table.fast_p99_s > 0).all() and (table.ref_scenarios == 1).all()
    # the fast solver gives the reference's allocation (Fig. 12's condition)
    assert (table.max_weight_diff < 1e-3).all() and (table.max_objective_excess < 1e-3).all()
    assert (tmp_path / "plot.png").stat().st_size > 0


@needs_sim
def test_flow_study_preset_runs_end_to_end(tmp_path: Path) -> None:
    _repro("saba/flow-small", "--quick", "-q", "--out", str(tmp_path))
    models = pd.read_csv(tmp_path / "models.csv")
    assert list(models.workload) == ["w00", "w01", "w02", "w03"]
    # every profile slows down as the share shrinks, and is fitted
    assert (models["slowdown_0.05"] > models["slowdown_0.5"]).all()
    assert (models.r2_k3 > models.r2_k1).all()
    jct = pd.read_csv(tmp_path / "jct.csv")
    schemes = ["app_maxmin", "saba8", "saba8_dist", "homa_like", "sincronia_like"]
    assert list(dict.fromkeys(jct.scheme)) == ["flow_maxmin", *schemes]
    assert len(jct) == 4 * (len(schemes) + 1) and (jct.jct_ns > 0).all()
    table = pd.read_csv(tmp_path / "table.csv", dtype={"seed": str})
    overall = table[table.seed == "all"].set_index("scheme").geomean_speedup
    assert list(overall.index) == schemes
    # the speed-up is recomputed from jct.csv: per-flow max-min over the scheme
    base = jct[jct.scheme == "flow_maxmin"].set_index("workload").jct_ns
    saba = jct[jct.scheme == "saba8"].set_index("workload").jct_ns
    ratio = (base / saba).prod() ** (1 / len(base))
    assert overall["saba8"] == pytest.approx(ratio, rel=1e-9)
    # with every app registered at once the distributed mode is the centralized one
    assert overall["saba8_dist"] == pytest.approx(overall["saba8"], rel=1e-9)


def test_flow_study_refuses_an_unknown_solver() -> None:
    study = _flow_study(preset("saba/flow-small", quick=True))
    assert study.solver == "exact"
    with pytest.raises(SabaError, match="solver must be 'exact' or 'reference', got 'fast'"):
        replace(study, solver="fast").check()
