"""The profiler's real workloads (seed 003 §4.1) on a namespace testbed
(root only): a hash join and a word count run together as processes over
kernel TCP, each on its own hosts, and compute the right answers; the
torch.distributed (gloo) LR job's packets get its DSCP through the group
id and nftables (heavy: three torch imports). Testbeds are named
``sw<pid>``, small (three hosts, < 1 MB of data) and removed in a
``finally``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from approxnet.saba.apps import ROW_BYTES
from approxnet.saba.profiler import cluster, run_together
from approxnet.saba.workloads import MARK_GID, WORKLOADS, mark_rules, worker_argv
from approxnet.testbed import lifecycle

root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("tc") is None or shutil.which("nft") is None,
    reason="needs root, ip, tc and nft (network namespaces)",
)
heavy = pytest.mark.skipif(
    os.environ.get("APPROXNET_HEAVY_TESTS") != "1",
    reason="three torch imports on a loaded host: set APPROXNET_HEAVY_TESTS=1",
)


def expected_matches(nbytes: int, n: int) -> int:
    """The join's result computed here from the workers' seeded tables."""
    rows = nbytes // (2 * ROW_BYTES)
    keys: list[list[np.ndarray]] = [[], []]
    for i in range(n):
        rng = np.random.default_rng(2000 + i)
        for t in range(2):
            keys[t].append(rng.integers(0, 2 * rows * n, rows, dtype=np.int64))
            rng.integers(0, 256, (rows, ROW_BYTES - 8), dtype=np.uint8)
    a, ca = np.unique(np.concatenate(keys[0]), return_counts=True)
    b, cb = np.unique(np.concatenate(keys[1]), return_counts=True)
    common, ia, ib = np.intersect1d(a, b, return_indices=True)
    return int(np.sum(ca[ia] * cb[ib]))


def test_lr_worker_runs_under_its_marking_group() -> None:
    w = WORKLOADS["lr"]
    argv = worker_argv(w, 0, ["10.0.0.1", "10.0.0.2"], 7000, dscp=5)
    assert argv[:4] == ["setpriv", f"--regid={MARK_GID + 5}", "--clear-groups", "--"]
    assert worker_argv(w, 0, ["10.0.0.1"], 7000, dscp=0)[0] != "setpriv"
    rules = mark_rules([5, 0, 5, 3])
    assert rules.count("meta skgid") == 2
    assert f"meta skgid {MARK_GID + 3} ip dscp set 3" in rules


@root
def test_join_and_word_count_run_together_and_compute_the_right_answers() -> None:
    join = replace(WORKLOADS["join"], bytes=256_000)
    wc = replace(WORKLOADS["wordcount"], bytes=60_000)
    cfg = cluster(f"sw{os.getpid() % 100000}", 4, "200mbit")
    tb = lifecycle.up(cfg)
    try:
        reports: list[list[dict[str, float]]] = []
        times = run_together(
            tb,
            [(join, 7400, 2), (wc, 7500, 4)],
            timeout=120,
            placement=[["n0", "n1", "n2"], ["n1", "n2", "n3"]],
            reports=reports,
        )
    finally:
        tb.down()
    assert all(t > 0 for t in times)
    assert sum(int(r["matches"]) for r in reports[0]) == expected_matches(join.bytes, 3)
    assert sum(int(r["words"]) for r in reports[1]) == 3 * (wc.bytes // 6)
    assert all(r["distinct"] <= 20_000 for r in reports[1])


@root
@heavy
def test_lr_over_gloo_carries_its_dscp() -> None:
    lr = replace(WORKLOADS["lr"], rounds=3, bytes=4 * 1024 * 16, features=1024)
    cfg = cluster(f"sw{os.getpid() % 100000}", 3, "200mbit")
    tb = lifecycle.up(cfg)
    try:
        reports: list[list[dict[str, float]]] = []
        run_together(tb, [(lr, 7600, 6)], timeout=300, reports=reports)
        rules = subprocess.run(
            ["ip", "netns", "exec", tb.namespace("n1"), "nft", "list", "ruleset"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        tb.down()
    assert all(np.isfinite(r["loss"]) for r in reports[0])
    marked = [line for line in rules.splitlines() if "dscp set" in line]
    assert marked and "packets 0 " not in marked[0], rules
