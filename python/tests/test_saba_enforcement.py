"""Saba's HTB enforcement on a real namespace testbed (root only): three
apps' backlogged TCP flows share a 20 Mbit/s switch port at weights
0.6 / 0.3 / 0.1; a live `tc class change` to 0.1 / 0.3 / 0.6; then one
app idle and the others taking its share. The testbed is named
``se<pid>``, bounded (seven 2 s windows, ~35 s in all) and removed in a
``finally``.

Shares only test the weights while the port is the bottleneck; on a
CPU-starved machine the senders sometimes cannot fill it (utilisation
0.8, and the shares then follow the senders, not the weights). Each
configuration is therefore counted over two or three windows and judged
on its fullest one, which must be >= 90 % busy.
"""

from __future__ import annotations

import os
import shutil

import pytest

from approxnet.saba.enforce import HtbBackend
from approxnet.saba.measure import Phase, Window, run_phase, star, weights_config
from approxnet.testbed import lifecycle

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("tc") is None or shutil.which("ip") is None,
    reason="needs root, ip and tc (network namespaces)",
)
# Backlogged TCP from six processes must keep a 20 Mbit/s port busy: on a
# loaded 2-core host the senders starve (the port ran 30 % busy under
# tracemalloc) and the test measures the host, not HTB. The same figures
# come from benches/saba/enforcement.py; run this with APPROXNET_HEAVY_TESTS=1.
heavy = pytest.mark.skipif(
    os.environ.get("APPROXNET_HEAVY_TESTS") != "1",
    reason="load-sensitive testbed measurement: set APPROXNET_HEAVY_TESTS=1",
)
LINK = 20e6


def fullest(windows: list[Window]) -> Window:
    best = max(windows, key=lambda w: w.bps)
    assert best.bps > 0.9 * LINK, windows  # the port was the bottleneck
    return best


@heavy
def test_weights_are_enforced_changed_live_and_work_conserving() -> None:
    cfg = star(f"se{os.getpid() % 100000}", 3, link="20mbit")
    tb = lifecycle.up(cfg)
    try:
        backend = HtbBackend(cfg.namespace, queues=3)
        backend.apply([weights_config(cfg, [0.6, 0.3, 0.1])])
        installed = len(backend.log)
        change = lambda: backend.apply([weights_config(cfg, [0.1, 0.3, 0.6])])  # noqa: E731
        w = run_phase(tb, 3, Phase((0, 1, 2), windows=5), 5600, [None, None, None, change])
        for window, weights in (
            (fullest(w[:3]), (0.6, 0.3, 0.1)),
            (fullest(w[3:]), (0.1, 0.3, 0.6)),
        ):
            for app, weight in enumerate(weights):
                assert window.shares[app] == pytest.approx(weight, rel=0.05), window
        # the change was live: only `class change`, nothing rebuilt or re-filtered
        later = [line for _, cmds in backend.log[installed:] for line in cmds]
        assert later and all(line.startswith("class change ") for line in later)
        backend.apply([weights_config(cfg, [0.6, 0.3, 0.1])])
        idle = fullest(run_phase(tb, 3, Phase((0, 1), windows=2), 5700))
        assert idle.shares[2] == 0.0  # the idle app's share is used by the others
        assert idle.shares[0] == pytest.approx(2 / 3, rel=0.05)
        assert idle.shares[1] == pytest.approx(1 / 3, rel=0.05)
    finally:
        tb.down()
    assert not lifecycle.list_namespaces(cfg.prefix)


def test_controller_pushes_its_weights_into_the_switch() -> None:
    from approxnet.saba.controller import Controller
    from approxnet.saba.topology import TestbedTopology
    from approxnet.testbed import shell

    cfg = star(f"sf{os.getpid() % 100000}", 3, link="20mbit")
    tb = lifecycle.up(cfg)
    try:
        ctl = Controller(TestbedTopology(cfg), backend=HtbBackend(cfg.namespace), queues=8)
        for name, coeffs in (("lr", [5.0, -8.0, 3.0]), ("pr", [1.5, -0.5])):
            ctl.register(name, coeffs)
        ctl.open_connection("lr", "a1", "dst")
        ctl.open_connection("pr", "a2", "dst")
        (port,) = [c for c in ctl.port_configs() if c.key == "sw:dst"]
        shown = shell.run(["tc", "-n", tb.namespace("sw"), "class", "show", "dev", "dst"]).stdout
        for q in port.queues:
            line = next(x for x in shown.splitlines() if f"htb 1:{0x10 + q.queue:x} " in x)
            assert f"rate {q.rate_bps / 1e6:g}Mbit" in line or f"rate {q.rate_bps}bit" in line
        filters = shell.run(["tc", "-n", tb.namespace("sw"), "filter", "show", "dev", "dst"])
        assert filters.stdout.count("flowid") == 2  # one DSCP per registered PL
    finally:
        tb.down()
