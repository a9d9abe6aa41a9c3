"""Saba's HTB enforcement on a real namespace testbed (root only): three
apps' backlogged TCP flows share a 100 Mbit/s switch port at weights
0.6 / 0.3 / 0.1; a live `tc class change` to 0.1 / 0.3 / 0.6; then one
app idle and the others taking its share. The testbed is named
``se<pid>``, bounded (three 2 s windows, ~25 s in all) and removed in a
``finally``."""

from __future__ import annotations

import os
import shutil

import pytest

from approxnet.saba.enforce import HtbBackend
from approxnet.saba.measure import Phase, run_phase, star, weights_config
from approxnet.testbed import lifecycle

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("tc") is None or shutil.which("ip") is None,
    reason="needs root, ip and tc (network namespaces)",
)


def test_weights_are_enforced_changed_live_and_work_conserving() -> None:
    cfg = star(f"se{os.getpid() % 100000}", 3, link="20mbit")
    tb = lifecycle.up(cfg)
    try:
        backend = HtbBackend(cfg.namespace, queues=3)
        backend.apply([weights_config(cfg, [0.6, 0.3, 0.1])])
        installed = len(backend.log)
        first, second = run_phase(
            tb,
            3,
            Phase((0, 1, 2), windows=2),
            5600,
            [None, lambda: backend.apply([weights_config(cfg, [0.1, 0.3, 0.6])])],
        )
        for window, weights in ((first, (0.6, 0.3, 0.1)), (second, (0.1, 0.3, 0.6))):
            assert window.bps > 0.6 * 20e6, window  # the port is the bottleneck
            for app, w in enumerate(weights):
                assert window.shares[app] == pytest.approx(w, rel=0.05), window
        # the change was live: only `class change`, nothing rebuilt or re-filtered
        later = [line for _, cmds in backend.log[installed:] for line in cmds]
        assert later and all(line.startswith("class change ") for line in later)
        backend.apply([weights_config(cfg, [0.6, 0.3, 0.1])])
        (idle,) = run_phase(tb, 3, Phase((0, 1)), 5700)
        assert idle.shares[2] == 0.0
        assert idle.bps > max(0.6 * 20e6, 0.9 * first.bps)  # the idle share is used
        assert idle.shares[0] == pytest.approx(2 / 3, rel=0.05)
        assert idle.shares[1] == pytest.approx(1 / 3, rel=0.05)
    finally:
        tb.down()
    assert not lifecycle.list_namespaces(cfg.prefix)
