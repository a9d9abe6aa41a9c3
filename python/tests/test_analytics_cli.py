"""``approxnet analytics`` through click's CliRunner: help with an example,
one-line errors with exit codes, short real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import error_line, invoke


@pytest.mark.parametrize(
    "cmd",
    [
        ["analytics"],
        ["analytics", "run"],
        ["analytics", "stream"],
        ["analytics", "compare"],
        ["analytics", "generate"],
    ],
    ids=lambda c: " ".join(c),
)
def test_help_has_an_example(cmd: list[str]) -> None:
    r = invoke(*cmd, "--help")
    assert r.exit_code == 0, r.output
    assert "Example" in r.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["analytics", "run", "--emax", "0"], "--emax"),
        (["analytics", "run", "--emax", "-0.1"], "--emax"),
        (["analytics", "run", "--emax", "nan"], "--emax"),
        (["analytics", "run", "--confidence", "1"], "--confidence"),
        (["analytics", "run", "--confidence", "0"], "--confidence"),
        (["analytics", "run", "--msr", "1.5"], "--msr"),
        (["analytics", "run", "--round-msr", "0"], "--round-msr"),
        (["analytics", "run", "--records", "0"], "--records"),
        (["analytics", "run", "--query", "median:fare"], "--query"),
        (["analytics", "run", "--query", "top_k:zone:x"], "--query"),
        (["analytics", "run", "--mode", "carrier-pigeon"], "--mode"),
        (["analytics", "compare", "--schemes", "atp,udp"], "--schemes"),
        (["analytics", "generate", "--out", "trips.parquet"], "--out"),
        (["analytics", "stream", "--window-s", "0"], "--window-s"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], needle: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert needle in error_line(r)


def test_a_query_on_a_missing_field_fails_with_exit_1() -> None:
    r = invoke("analytics", "run", "-n", "2000", "-q", "--query", "mean:tip")
    assert r.exit_code == 1
    assert "tip" in error_line(r)


def test_run_prints_estimates_and_meets_emax() -> None:
    r = invoke("analytics", "run", "-n", "30000", "-s", "2", "--emax", "0.1", "-q", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["summary"]["bound"] <= 0.1
    assert out["summary"]["sent_fraction"] < 1.0
    assert len(out["estimates"]["mean_by"]) == 24 and len(out["estimates"]["top_k"]) == 15


def test_stream_and_generate(tmp_path: Path) -> None:
    r = invoke("analytics", "stream", "-n", "20000", "-s", "2", "--window-s", "21600", "-q")
    assert r.exit_code == 0, r.output
    assert "4 windows" in r.output
    out = tmp_path / "t.csv"
    r = invoke("analytics", "generate", "-n", "50", "--out", str(out))
    assert r.exit_code == 0 and out.read_text().count("\n") == 51


def test_compare_virtual_writes_rows(tmp_path: Path) -> None:
    r = invoke(
        "analytics",
        "compare",
        "-n",
        "30000",
        "-s",
        "2",
        "--emax",
        "0.1",
        "-q",
        "--out",
        str(tmp_path),
    )
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert [x["scheme"] for x in rows] == ["atp", "atp-msr1"]
    assert rows[0]["bound"] <= 0.1 and rows[1]["max_error"] == 0.0
