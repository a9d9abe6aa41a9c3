"""The seed figures as plans over the studies shipped in the package
(issue 18: `approxnet repro FIGURE` works from an installed wheel)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from cli_runner import invoke

from approxnet import dml, figures, repro


@pytest.mark.parametrize("name", list(figures.FIGURES))
@pytest.mark.parametrize("quick", [False, True])
def test_every_figure_plans_runs_of_shipped_studies(name: str, quick: bool) -> None:
    runs = figures.plan(name, quick)
    assert runs
    assert len({r.label for r in runs}) == len(runs), "labels name a run uniquely"
    for r in runs:
        study = repro.find(r.study, repro.studies_root())
        assert study.path.is_file() and study.path.is_relative_to(repro.studies_root())
        assert all("=" in s for s in r.sets), r.sets


def test_quick_shrinks_the_fabric_only_where_it_is_large() -> None:
    full, quick = figures.plan("fig5"), figures.plan("fig5", quick=True)
    assert [r.label for r in full] == [r.label for r in quick]
    assert all("topology.k=4" in r.sets for r in quick)
    assert not any("topology.k=4" in r.sets for r in full)
    assert figures.plan("fig10", quick=True) == figures.plan("fig10")


def test_a_study_named_for_a_figure_runs_that_figure() -> None:
    fig5 = figures.figure_of_study("netapprox/fig5_fbkv")
    assert fig5 is not None and fig5.name == "fig5"
    assert figures.figure_of_study("netapprox/demo") is None
    with pytest.raises(KeyError, match="known: fig5"):
        figures.figure("fig99")


def test_repro_runs_a_quick_figure_from_the_packaged_study(tmp_path: Path) -> None:
    r = invoke(
        "repro",
        "netapprox/fig5_fbkv",
        "--quick",
        "--only",
        "atp-full-0.5-L0.2",
        "-j",
        "1",
        "-q",
        "--out",
        str(tmp_path),
    )
    assert r.exit_code == 0, r.output
    with (tmp_path / "table.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(x["run"], x["scheme"], float(x["msr"]), x["load"]) for x in rows] == [
        ("atp-full-0.5-L0.2", "atp-full", 0.5, "0.2")
    ]
    assert int(rows[0]["done"]) == int(rows[0]["jobs"]) > 0
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "atp-full-0.5-L0.2" / "summary.json").is_file()


def test_sim_run_takes_a_shipped_study_by_name(tmp_path: Path) -> None:
    r = invoke(
        "sim",
        "run",
        "netapprox/demo",
        "--set",
        "duration_ms=0.5",
        "--set",
        "jobs.0.stop_ms=0.3",
        "-q",
        "--out",
        str(tmp_path),
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "summary.json").is_file()


def test_seed001_figures_run_from_the_packaged_study(tmp_path: Path) -> None:
    # Fig. 4's runs for one model and collective at CI size: every scheme
    # finishes its iterations, the bounded schemes deliver at least their
    # fraction, and the figure's own table and plot are written
    only = [f"mf-ps-{s}" for s in dml.FIGURE_SCHEMES["dml-fig4"]]
    r = invoke(
        "repro", "dml-fig4", "--quick", "--only", ",".join(only), "-j", "1", "-q",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    with (tmp_path / "table.csv").open() as f:
        rows = {x["scheme"]: x for x in csv.DictReader(f)}
    assert set(rows) == set(dml.FIGURE_SCHEMES["dml-fig4"])
    for x in rows.values():
        assert int(x["iterations_done"]) == int(x["iterations_of"]) > 0
    need = math.ceil((1 - 0.35) * 64) / 64  # MF: x1 = 0.35 (seed 001 Table 3)
    for s in ("atp-bounded", "dctcp-es"):
        assert need - 1e-9 <= float(rows[s]["frac_min"]) < 1.0, s
    assert float(rows["tcp"]["frac_min"]) == 1.0
    md = (tmp_path / "table.md").read_text()
    assert "atp-bounded vs tcp" in md and "MLP" not in md
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "fig4c.md").exists()  # no MLP run, no Fig. 4c


def test_seed001_plans_name_every_model_scheme_and_collective() -> None:
    full, quick = dml.figure_plan("dml-fig3"), dml.figure_plan("dml-fig3", quick=True)
    assert len(full) == 4 * 7 * 2 == len(quick)
    assert {r.run.study for r in full} == {"dml/leafspine"}
    assert {r.run.study for r in quick} == {"dml/quick"}
    assert {r.iterations for r in full} == {8} and {r.iterations for r in quick} == {2}
    bounded = next(r for r in full if r.run.label == "mlp-ring-atp-bounded")
    assert "training.0.msr=0.85" in bounded.run.sets  # MLP: x1 = 0.15
    with pytest.raises(KeyError, match="known: tcp"):
        dml.plan(schemes=["tcpx"])
    with pytest.raises(KeyError, match="known: mf"):
        dml.plan(model_keys=["gpt"])
