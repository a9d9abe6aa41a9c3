"""`approxnet saba ...` through the CLI runner, exit codes checked."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import error_line, invoke

from approxnet.saba import SensitivityTable

TIMES = "0.05=9.1,0.1=5.2,0.25=2.9,0.5=2.1,0.75=1.8,0.9=1.7,1=1.6"


def test_fit_stores_the_model(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    r = invoke("saba", "fit", "lr", "--times", TIMES, "--degree", "2", "--table", str(db))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert len(out["coeffs"]) == 3 and 0.5 < out["r2"] <= 1.0
    assert SensitivityTable(db).get("lr", 2).model.coeffs == tuple(out["coeffs"])


def test_solve_gives_the_sensitive_app_more() -> None:
    r = invoke("saba", "solve", "--model", "5,-8,3", "--model", "1.5,-0.5")
    assert r.exit_code == 0, r.output
    w = json.loads(r.output)["weights"]
    assert w[0] > w[1] and abs(sum(w) - 1.0) < 1e-9


def test_bad_input_is_one_error_line(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    r = invoke("saba", "fit", "x", "--times", "0.5=1,1=2", "--degree", "1", "--table", db)
    assert r.exit_code == 1
    assert "increase with bandwidth" in error_line(r)
    r = invoke("saba", "fit", "x", "--times", "0.5=1", "--table", db)
    assert r.exit_code == 1 and "share 1.0" in error_line(r)
    r = invoke("saba", "fit", "x", "--times", "half=1", "--table", db)
    assert r.exit_code == 2 and "share=seconds" in error_line(r)
    r = invoke("saba", "solve", "--model", "1,nan")
    assert r.exit_code == 1 and "c1 is not a finite number" in error_line(r)
