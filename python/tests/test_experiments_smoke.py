"""Smoke test of the testbed experiments (experiments/testbed/).

Runs experiment 1 in a tiny form — MSR 0.5, two 1 MiB jobs each with ATP
and kernel-TCP SampleSend / EarlySend, messages produced over time (the
default), a 100 Mbit/s background — on a real namespace testbed, and
checks what the experiment exists to show: the ATP jobs completed,
delivered at least MSR of their messages and left their last messages
unsent, ATP's measured packet loss stayed at or below 1 - MSR, and its
packets crossed the bottleneck in the approximate queues (1..7) while
TCP's used queue 0. Also, without root: the production gaps parse and
match approxnet-perf's.

Needs root, `ip netns` / tc / ethtool, and a built `approxnet-perf`
(`cargo build --release -p approxnet-net --bin approxnet-perf`); skips with
the reason otherwise. About 10 s; the testbed is removed in a `finally`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from approxnet.testbed.procs import TRAFFIC

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments" / "testbed"


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc)"
    missing = [t for t in ("ip", "tc", "ethtool", "sysctl") if shutil.which(t) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    sys.path.insert(0, str(EXPERIMENTS))
    from approxnet import binaries

    if binaries.find("approxnet-perf") is None:
        return (
            "approxnet-perf is not built: "
            "cargo build --release -p approxnet-net --bin approxnet-perf"
        )
    return None


def test_experiment1_tiny(tmp_path: Path) -> None:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    import exp1_msr_jct

    name = f"px{os.getpid()}"[:10]
    out = tmp_path / "exp1"
    try:
        rc = exp1_msr_jct.main(
            [
                "--name",
                name,
                "--msrs",
                "0.5",
                "--schemes",
                "atp,tcp-cubic-ss,tcp-cubic-es",
                "--jobs",
                "2",
                "--messages",
                "16",
                "--bg-mbps",
                "100",
                "--out",
                str(out),
                "--no-plot",
            ]
        )
    finally:
        from approxnet import testbed

        testbed.down(name)
    rows = {r["scheme"]: r for r in json.loads(out.with_suffix(".json").read_text())["rows"]}
    atp, tcp, es = rows["atp"], rows["tcp-cubic-ss"], rows["tcp-cubic-es"]
    assert rc == 0, rows
    assert atp["jobs_done"] == 2 and atp["jobs_failed"] == 0, atp
    assert atp["delivered_fraction"] >= 0.5, atp
    assert 0.0 <= atp["loss"] <= 0.5, atp  # measured packet loss <= 1 - MSR
    assert atp["loss_ok"] and atp["packet_loss_ok"], atp
    approx_pkts = sum(atp.get(f"q{q}_sent_pkts", 0) for q in range(1, 8))
    assert approx_pkts > 0, f"no ATP packet in queues 1..7 of the bottleneck: {atp}"
    assert tcp["jobs_done"] == 2 and not any(tcp.get(f"q{q}_sent_pkts") for q in range(1, 8))
    # Production over time (the default, 500 Mbit/s): ATP stops at its MSR,
    # so the last messages of its jobs are never sent; EarlySend completes.
    assert atp["gap_us"].startswith("exp:") and atp["unsent_MB_per_job"] > 0, atp
    assert es["jobs_done"] == 2 and es["production_ms"] > 0, es
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"anx-{name}-" not in listed


def _tools() -> Any:  # the production process of the traffic tools; no root needed
    from approxnet.testbed.traffic import production

    return production


def test_gap_specs_parse_and_bad_ones_are_errors() -> None:
    tools = _tools()
    assert tools.parse_gap("none") == ("none", 0.0)
    assert tools.parse_gap("fixed:200") == ("fixed", 200_000.0)
    assert tools.parse_gap("fixed:0") == ("fixed", 0.0)
    assert tools.parse_gap("exp:1.5") == ("exp", 1500.0)
    for bad in [
        "",
        "fixed",
        "exp:0",
        "exp:-1",
        "fixed:-1",
        "exp:nan",
        "exp:inf",
        "fixed:1e9",
        "pareto:3",
        "200",
        "fixed:abc",
    ]:
        with pytest.raises(ValueError):
            tools.parse_gap(bad)
    rc = subprocess.run(
        [
            *TRAFFIC,
            "tcp-job-send",
            "--dst",
            "127.0.0.1",
            "--port",
            "9",
            "--mode",
            "es",
            "--msr",
            "0.5",
            "--gap-us",
            "exp:0",
        ],
        capture_output=True,
        text=True,
    )
    assert rc.returncode == 2 and "gap must be" in rc.stderr


def test_production_offsets_match_approxnet_perf() -> None:
    tools = _tools()
    # The same values as produce.rs's `exp_gaps_are_seeded_and_have_the_mean`.
    exp = tools.parse_gap("exp:1")
    assert tools.production_offsets(exp, tools.GapRng(1), 4) == [0, 836, 2206, 5747]
    fixed = tools.parse_gap("fixed:200")
    assert tools.production_offsets(fixed, tools.GapRng(1), 3) == [0, 200_000, 400_000]
    assert tools.production_offsets(("none", 0.0), tools.GapRng(1), 3) == [0, 0, 0]
    # Gaps are drawn in job order: the second job continues the sequence.
    rng = tools.GapRng(5)
    first, second = (tools.production_offsets(exp, rng, 3) for _ in range(2))
    assert first != second


@pytest.mark.parametrize(
    ("script", "argv", "says"),
    [
        ("exp1_msr_jct", ["--msrs", "0.5,1.7"], "MSR must be within [0, 1], got 1.7"),
        ("exp1_msr_jct", ["--schemes", "atp,tcp-cubic"], "'tcp-cubic'"),
        ("exp2_incast", ["--msr", "nan"], "MSR must be within [0, 1], got NaN"),
        ("exp4_nonapprox_fct", ["--msrs", "-0.1"], "MSR must be within [0, 1]"),
    ],
)
def test_bad_options_are_usage_errors_before_any_testbed(
    script: str, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(EXPERIMENTS))
    mod = __import__(script)
    with pytest.raises(SystemExit) as e:
        mod.main(argv)
    assert e.value.code == 2
    assert says in capsys.readouterr().err
