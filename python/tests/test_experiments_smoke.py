"""Smoke test of the testbed experiments (experiments/testbed/).

Runs experiment 1 in a tiny form — MSR 0.5, two 1 MiB jobs each with ATP
and kernel-TCP SampleSend, a 100 Mbit/s background — on a real namespace
testbed, and checks what the experiment exists to show: the ATP jobs
completed, delivered at least MSR of their messages, ATP's measured packet
loss stayed at or below 1 - MSR, and its packets crossed the bottleneck in
the approximate queues (1..7) while TCP's used queue 0.

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

import pytest

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments" / "testbed"


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc)"
    missing = [t for t in ("ip", "tc", "ethtool", "sysctl") if shutil.which(t) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    sys.path.insert(0, str(EXPERIMENTS))
    import common

    if common.perf_binary() is None:
        return ("approxnet-perf is not built: "
                "cargo build --release -p approxnet-net --bin approxnet-perf")
    return None


def test_experiment1_tiny(tmp_path: Path) -> None:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    import exp1_msr_jct

    name = f"px{os.getpid()}"[:10]
    out = tmp_path / "exp1"
    try:
        rc = exp1_msr_jct.main([
            "--name", name, "--msrs", "0.5", "--schemes", "atp,tcp-cubic-ss", "--jobs", "2",
            "--messages", "16", "--bg-mbps", "100", "--out", str(out), "--no-plot",
        ])
    finally:
        from approxnet import testbed

        testbed.down(name)
    rows = {r["scheme"]: r for r in json.loads(out.with_suffix(".json").read_text())["rows"]}
    atp, tcp = rows["atp"], rows["tcp-cubic-ss"]
    assert rc == 0, rows
    assert atp["jobs_done"] == 2 and atp["jobs_failed"] == 0, atp
    assert atp["delivered_fraction"] >= 0.5, atp
    assert 0.0 <= atp["loss"] <= 0.5, atp  # measured packet loss <= 1 - MSR
    assert atp["loss_ok"] and atp["packet_loss_ok"], atp
    approx_pkts = sum(atp.get(f"q{q}_sent_pkts", 0) for q in range(1, 8))
    assert approx_pkts > 0, f"no ATP packet in queues 1..7 of the bottleneck: {atp}"
    assert tcp["jobs_done"] == 2 and not any(tcp.get(f"q{q}_sent_pkts") for q in range(1, 8))
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"anx-{name}-" not in listed
