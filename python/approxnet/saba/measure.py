"""Measured enforcement on the namespace testbed: backlogged TCP flows of
several apps share one switch egress port under Saba's HTB classes; the
share each app gets is read from the classes' byte counters over a window
(exact, no sampling). Used by the enforcement test and by
``benches/saba/enforcement.py``.

Topology (:func:`star`): hosts ``a1 .. an`` (one per app) and a receiver
``dst`` on one switch; every host link is ``fast``, the receiver's is
``link``, so the switch port ``sw:dst`` is the only bottleneck.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..testbed import parse, shell
from ..testbed.config import Config
from ..testbed.lifecycle import Testbed
from ..testbed.procs import reap
from .enforce import queue_class
from .portconfig import PortConfig, QueueConfig, dscp_of_pl

__all__ = ["star", "weights_config", "class_bytes", "Window", "Phase", "run_phase"]

TRAFFIC = [sys.executable, "-m", "approxnet.testbed.traffic"]


def star(name: str, apps: int, link: str = "100mbit", fast: str = "1gbit") -> Config:
    """`apps` senders and one receiver on one switch."""
    hosts = [{"name": f"a{i + 1}", "rate": fast} for i in range(apps)]
    hosts.append({"name": "dst", "rate": link})
    return parse({"testbed": {"name": name}, "host": hosts})


def weights_config(config: Config, weights: Sequence[float]) -> PortConfig:
    """Queue i for app i (PL i, its DSCP), with the given weights, on the
    receiver's port."""
    rate = config.host("dst").rate_bps
    queues = tuple(
        QueueConfig(i, w, max(8_000, round(w * rate)), (dscp_of_pl(i),), (f"a{i + 1}",))
        for i, w in enumerate(weights)
    )
    app_w = tuple((f"a{i + 1}", w) for i, w in enumerate(weights))
    return PortConfig("sw", "dst", rate, queues, app_w)


def class_bytes(ns: str, dev: str) -> dict[str, int]:
    """Bytes sent per HTB class of a port (``tc -s class show``; this
    iproute2's ``-j`` prints nothing for HTB classes)."""
    out = shell.run(["tc", "-n", ns, "-s", "class", "show", "dev", dev]).stdout
    found, current = {}, None
    for line in out.splitlines():
        m = re.match(r"class htb (\S+) ", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"\s*Sent (\d+) bytes", line)
        if m and current is not None:
            found[current] = int(m.group(1))
            current = None
    return found


@dataclass(frozen=True)
class Window:
    """What one window measured."""

    #: queue (= app index) -> its share of the bytes the port sent
    shares: dict[int, float]
    #: the port's rate over the window (bits per second, Ethernet included)
    bps: float


@dataclass(frozen=True)
class Phase:
    """One run: which apps send, and the windows counted. Before window i
    ``changes[i]`` (if any) runs — e.g. a live reallocation — and the flows
    get ``settle`` seconds before counting starts."""

    senders: tuple[int, ...]
    windows: int = 1
    window: float = 2.0
    warmup: float = 2.0
    settle: float = 0.5

    @property
    def seconds(self) -> float:
        """How long each sender runs."""
        return self.warmup + self.windows * (self.settle + self.window) + 0.5


def run_phase(
    tb: Testbed,
    queues: int,
    phase: Phase,
    port: int,
    changes: Sequence[Callable[[], None] | None] = (),
) -> list[Window]:
    """Runs backlogged TCP from each app in `phase.senders` to `dst` (the
    DSCP of its PL) and returns, per window, each app's share of the bytes
    the port sent and the port's rate."""
    ns = tb.namespace("sw")
    procs: list[subprocess.Popen[str]] = []
    shares: list[Window] = []
    try:
        for k in range(len(phase.senders)):
            recv = ["tcp-recv", "--port", str(port + k), "--timeout", str(phase.seconds + 10)]
            r = tb.exec("dst", [*TRAFFIC, *recv], stdout=subprocess.PIPE, text=True)
            procs.append(r)
            assert r.stdout is not None
            if r.stdout.readline().strip() != "ready":
                raise RuntimeError("receiver did not start")
        for k, app in enumerate(phase.senders):
            send = [
                "tcp-send", "--dst", tb.address("dst"), "--port", str(port + k),
                "--seconds", str(phase.seconds), "--tos", str(dscp_of_pl(app) << 2),
            ]  # fmt: skip
            procs.append(tb.exec(f"a{app + 1}", [*TRAFFIC, *send], stdout=subprocess.PIPE))
        time.sleep(phase.warmup)  # the measurement schedule, not a race fix
        for w in range(phase.windows):
            change = changes[w] if w < len(changes) else None
            if change is not None:
                change()
            time.sleep(phase.settle)
            before, t0 = class_bytes(ns, "dst"), time.monotonic()
            time.sleep(phase.window)
            after, elapsed = class_bytes(ns, "dst"), time.monotonic() - t0
            sent = {
                q: after.get(queue_class(q), 0) - before.get(queue_class(q), 0)
                for q in range(queues)
            }
            total = sum(sent.values())
            share = {q: b / total for q, b in sent.items()} if total else {}
            shares.append(Window(share, total * 8 / elapsed))
        for p in procs:
            p.communicate(timeout=phase.seconds + 15)
    finally:
        reap(procs)
    return shares
