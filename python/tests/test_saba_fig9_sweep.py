"""Fig. 9a-b's sweep on the testbed (experiments/saba/setups.py's
`--reps` and `--modes baseline,baseline2`, fig9_report.py): the options
refuse bad values with an error naming them before any namespace is
made, and the report groups run pairs into cells and reads them against
the noise floor."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from approxnet import binaries

SABA = binaries.CHECKOUT / "experiments" / "saba"


def module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"saba_{name}", SABA / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while it loads
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def setups() -> ModuleType:
    return module("setups")


@pytest.fixture(scope="module")
def report() -> ModuleType:
    return module("fig9_report")


def test_modes_accept_the_three_run_sets_only(setups: ModuleType) -> None:
    assert setups.parse_modes("baseline,saba") == ["baseline", "saba"]
    assert setups.parse_modes("saba,baseline,htb1") == ["saba", "baseline", "htb1"]
    assert setups.parse_modes("baseline,baseline2") == ["baseline", "baseline2"]
    for bad in ["saba", "baseline", "baseline,saba,saba", "baseline,saba,baseline2", "x,y", ""]:
        with pytest.raises(ValueError, match="--modes"):
            setups.parse_modes(bad)


def test_scales_must_be_finite_and_positive(setups: ModuleType) -> None:
    assert setups.parse_scales("0.1,1,10") == [0.1, 1.0, 10.0]
    for bad in ["0", "-1", "nan", "inf", "1,x", ""]:
        with pytest.raises(ValueError, match="--scales"):
            setups.parse_scales(bad)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--homogeneous", "--reps", "0"], "--reps"),
        (["--reps", "3"], "--reps"),
        (["--homogeneous", "--hosts", "1"], "--hosts"),
        (["--homogeneous", "--scales", "0"], "--scales"),
        (["--modes", "baseline,saba,baseline2"], "--modes"),
    ],
)
def test_bad_options_are_refused_before_any_run(
    setups: ModuleType,
    argv: list[str],
    named: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    def no_testbed(*_: Any, **__: Any) -> None:
        raise AssertionError("a testbed was brought up for refused options")

    monkeypatch.setattr(setups.lifecycle, "up", no_testbed)
    monkeypatch.setattr(sys, "argv", ["setups.py", *argv, "--out", str(tmp_path / "x.jsonl")])
    with pytest.raises(SystemExit) as e:
        setups.main()
    assert e.value.code == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def rec(hosts: int, scale: float, compare: str, speedups: dict[str, float]) -> dict[str, Any]:
    jobs: list[dict[str, Any]] = [
        {"name": f"j{k}-{w}", "workload": w, "scale": scale, "hosts": list(range(hosts))}
        for k, w in enumerate(speedups)
    ]
    return {
        "homogeneous": True,
        "hosts": hosts,
        "degree": 3,
        "compare": compare,
        "jobs": jobs,
        "speedup": {j["name"]: speedups[j["workload"]] for j in jobs},
        "load_before": 5.0,
        "load_after": 7.0,
        "wall_s": 40.0,
    }


def test_report_groups_cells_and_sets_saba_beside_its_noise_floor(report: ModuleType) -> None:
    recs = [
        rec(4, 1.0, "saba", {"shuffle": 2.0, "lr": 0.5}),
        rec(4, 1.0, "saba", {"shuffle": 2.0, "lr": 2.0}),
        rec(4, 1.0, "baseline2", {"shuffle": 1.1, "lr": 1.0 / 1.1}),
        rec(4, 2.0, "saba", {"shuffle": 1.5, "lr": 1.5}),
    ]
    s = report.summarize(recs)
    assert set(s) == {(4, 1.0, 3, "saba"), (4, 1.0, 3, "baseline2"), (4, 2.0, 3, "saba")}
    saba = s[(4, 1.0, 3, "saba")]
    assert saba["pairs"] == 2
    assert saba["per"] == {"shuffle": [2.0, 2.0], "lr": [0.5, 2.0]}
    # geometric mean over its four jobs: (2 * 2 * 0.5 * 2) ** (1/4)
    assert saba["geo"] == pytest.approx(2.0**0.5)
    # the pairs' own means are 1 and 2: t(1 dof) = 12.706 on sd log 2 / sqrt 2
    lo, hi = saba["ci"]
    half = 12.706 * math.log(2) / math.sqrt(2) / math.sqrt(2)
    assert math.log(lo) == pytest.approx(math.log(2.0**0.5) - half)
    assert math.log(hi) == pytest.approx(math.log(2.0**0.5) + half)
    floor = s[(4, 1.0, 3, "baseline2")]
    assert floor["geo"] == pytest.approx(1.0)
    assert floor["noise"] == pytest.approx(math.exp(math.sqrt(2) * math.log(1.1)))
    # one pair: no interval
    assert all(math.isnan(x) for x in s[(4, 2.0, 3, "saba")]["ci"])
    rows = report.table(s, ["shuffle", "lr"])
    assert len(rows) == 2 + 3
    # Saba's row comes before its noise floor's, cells by hosts then size
    assert "| Saba |" in rows[2] and "| base/base |" in rows[3] and "| 2x |" in rows[4]
    # lr's two pairs 0.5 and 2: geometric mean 1 and the range
    assert "| 2.00 (2.00-2.00) | 1.00 (0.50-2.00) |" in rows[2]


def test_report_skips_random_setups_and_failed_runs(report: ModuleType, tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    good = rec(2, 1.0, "saba", {"shuffle": 1.0})
    lines = [good, {**good, "homogeneous": False}, {"setup": 3, "error": "timeout"}]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert len(report.load([p])) == 1


def test_pairs_needed_follows_the_normal_interval(report: ModuleType) -> None:
    # sd 0.2 for +-10 %: (1.96 * 0.2 / ln 1.1) ** 2 = 16.9 -> 17
    assert report.pairs_needed(0.2, 1.1) == 17
    assert report.pairs_needed(0.0, 1.1) == 2
    for sd, half in [(-0.1, 1.1), (0.2, 1.0), (0.2, 0.9), (math.nan, 1.1)]:
        with pytest.raises(ValueError, match="pairs_needed"):
            report.pairs_needed(sd, half)
    recs = [rec(4, 1.0, "saba", {"lr": 2.0}), rec(4, 1.0, "baseline2", {"lr": 0.5})]
    assert report.pair_means(recs, "saba") == [pytest.approx(2.0)]
    assert report.pair_means(recs, "baseline2") == [pytest.approx(0.5)]
