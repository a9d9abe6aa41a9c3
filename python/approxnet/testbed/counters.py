"""Counters read while traffic runs: one switch port's per-queue `tc`
counters (once, or sampled over time in a thread) and a host's UDP
counters from /proc/net/snmp."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

from .lifecycle import Testbed
from .status import QueueStats, parse_qdiscs


def _qdisc_argv(tb: Testbed, switch: str, port: str) -> list[str]:
    return ["tc", "-n", tb.namespace(switch), "-s", "-j", "qdisc", "show", "dev", port]


def port_counters(tb: Testbed, switch: str, port: str) -> dict[int, QueueStats]:
    """The per-queue counters of `switch`'s egress `port`, by queue."""
    out = subprocess.run(_qdisc_argv(tb, switch, port), capture_output=True, text=True, check=True)
    return {q.queue: q for q in parse_qdiscs(switch, port, json.loads(out.stdout))}


def counter_delta(before: dict[int, QueueStats], after: dict[int, QueueStats]) -> dict[str, int]:
    """Sent frames and drops per queue between two `port_counters`
    (queues where nothing happened are left out)."""
    d: dict[str, int] = {}
    for q, b in after.items():
        a = before[q]
        if b.sent_packets - a.sent_packets or b.dropped - a.dropped:
            d[f"q{q}_sent_pkts"] = b.sent_packets - a.sent_packets
            d[f"q{q}_drops"] = b.dropped - a.dropped
    return d


def udp_snmp(tb: Testbed, host: str) -> dict[str, int]:
    """The host's UDP counters from /proc/net/snmp (per namespace): datagrams
    the kernel dropped at a full socket buffer show up as RcvbufErrors."""
    out = tb.run(host, ["cat", "/proc/net/snmp"], timeout=5, capture_output=True, text=True)
    lines = [ln.split()[1:] for ln in out.stdout.splitlines() if ln.startswith("Udp:")]
    return {k: int(v) for k, v in zip(lines[0], lines[1], strict=True)} if len(lines) >= 2 else {}


def snmp_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Datagrams received, dropped at a full buffer, in error between two
    `udp_snmp` readings (`rx_udp_*`)."""
    keys = ("InDatagrams", "RcvbufErrors", "InErrors")
    return {f"rx_udp_{k}": after.get(k, 0) - before.get(k, 0) for k in keys}


class QueueSampler:
    """Polls one switch egress port's per-queue counters every `period` s in
    a thread (one `tc -s -j qdisc show` per sample), until `stop()` or
    `limit_s`."""

    def __init__(
        self,
        tb: Testbed,
        switch: str,
        port: str,
        period: float = 0.02,
        limit_s: float = 60.0,
    ) -> None:
        self.argv = _qdisc_argv(tb, switch, port)
        self.switch, self.port, self.period, self.limit_s = switch, port, period, limit_s
        self.samples: list[tuple[float, list[QueueStats]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> QueueSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops sampling (waits for the thread, at most 5 s)."""
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        end = time.monotonic() + self.limit_s
        while not self._stop.is_set() and time.monotonic() < end:
            t = time.monotonic()
            out = subprocess.run(self.argv, capture_output=True, text=True, check=False)
            if out.returncode == 0:
                qs = parse_qdiscs(self.switch, self.port, json.loads(out.stdout))
                self.samples.append((t, qs))
            self._stop.wait(max(self.period - (time.monotonic() - t), 0.0))

    def rows(self, origin: float) -> list[dict[str, Any]]:
        """Per sample interval: per-queue Mbit/s sent, drops, backlog (bytes),
        time in seconds since monotonic `origin`."""
        rows = []
        for (t0, a), (t1, b) in zip(self.samples, self.samples[1:], strict=False):
            dt = t1 - t0
            row: dict[str, Any] = {"t_s": round(t1 - origin, 4)}
            for qa, qb in zip(a, b, strict=True):
                q = qa.queue
                row[f"q{q}_mbps"] = round((qb.sent_bytes - qa.sent_bytes) * 8 / dt / 1e6, 2)
                row[f"q{q}_drops"] = qb.dropped - qa.dropped
                row[f"q{q}_backlog_B"] = qb.backlog_bytes
            rows.append(row)
        return rows
