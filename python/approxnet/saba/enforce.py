"""Enforcement backends: where the controller's port configurations go.

* :class:`HtbBackend` — the Linux namespace testbed (seed 003 §5.2 on
  Linux): per switch egress port an HTB tree whose classes all have the
  same priority (so HTB shares like weighted fair queuing):

  ```text
  root 1: htb default ff
   └─ 1:1  rate = ceil = link
       ├─ 1:10 .. 1:1f   one class per queue: rate = weight x link,
       │                 ceil = link (work-conserving: an idle queue's
       │                 share is lent to the others), quantum ~ weight
       └─ 1:ff           non-Saba traffic (DSCP 0 and unknown DSCPs):
                         rate = (1 - C_Saba) x link (8 kbit at C_Saba = 1)
  filters: u32 match ip dsfield (dscp << 2) 0xfc -> the queue of its PL
  ```

  Each reallocation is one ``tc -batch`` of ``class change`` lines per
  namespace (live: no qdisc is replaced, no packet dropped); filters are
  rewritten only when the PL -> queue mapping of the port changed.
* :class:`JsonBackend` — writes the whole configuration as JSON after each
  change (the export for an operator to apply elsewhere).
* :class:`MemoryBackend` / :class:`NullBackend` — tests and dry runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..testbed import shell
from .errors import SabaError
from .portconfig import PortConfig

__all__ = [
    "Backend",
    "NullBackend",
    "MemoryBackend",
    "JsonBackend",
    "HtbBackend",
    "export_json",
    "queue_class",
]

FRAME = 1514
MIN_RATE_BPS = 8_000


class Backend(Protocol):
    """Applies port configurations (each call: the ports that changed)."""

    def apply(self, configs: Sequence[PortConfig]) -> None:
        """Enforces `configs`."""
        ...


class NullBackend:
    """Enforces nothing."""

    def apply(self, configs: Sequence[PortConfig]) -> None:
        pass


class MemoryBackend:
    """Keeps every push (tests) and the latest configuration per port."""

    def __init__(self) -> None:
        self.pushes: list[list[PortConfig]] = []
        self.latest: dict[str, PortConfig] = {}

    def apply(self, configs: Sequence[PortConfig]) -> None:
        self.pushes.append(list(configs))
        for c in configs:
            self.latest[c.key] = c


def export_json(configs: Sequence[PortConfig]) -> str:
    """The per-port configuration as a JSON document."""
    doc: dict[str, Any] = {
        "format": "approxnet-saba-ports/1",
        "ports": [c.to_json() for c in sorted(configs, key=lambda c: c.key)],
    }
    return json.dumps(doc, indent=1) + "\n"


class JsonBackend:
    """Rewrites one JSON file with every port's latest configuration."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._latest: dict[str, PortConfig] = {}

    def apply(self, configs: Sequence[PortConfig]) -> None:
        for c in configs:
            self._latest[c.key] = c
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(export_json(list(self._latest.values())))
        tmp.replace(self.path)


def queue_class(queue: int) -> str:
    """HTB class id of Saba queue `queue` (0-based; tc reads the minor in hex)."""
    return f"1:{0x10 + queue:x}"


DEFAULT_CLASS = "1:ff"


class HtbBackend:
    """HTB classes on switch egress ports in network namespaces.

    `namespace` maps a switch name to its namespace (for the testbed:
    ``config.namespace``). `queues` classes are created per port (1..16);
    `capacity` is C_Saba."""

    def __init__(
        self,
        namespace: Callable[[str], str],
        queues: int = 8,
        capacity: float = 1.0,
        burst_s: float = 0.001,
        leaf_bytes: int | None = None,
    ) -> None:
        if not 1 <= queues <= 16:
            raise SabaError(f"queues must be 1..16, got {queues}")
        self.namespace, self.queues, self.capacity, self.burst_s = (
            namespace,
            queues,
            capacity,
            burst_s,
        )
        if leaf_bytes is not None and leaf_bytes < 2 * FRAME:
            raise SabaError(f"leaf_bytes must be at least {2 * FRAME}, got {leaf_bytes}")
        #: bfifo limit of each queue's leaf (None: HTB's default pfifo of
        #: txqueuelen packets, 1,000 on a veth)
        self.leaf_bytes = leaf_bytes
        self._installed: set[str] = set()
        self._filters: dict[str, dict[int, int]] = {}
        #: Every batch sent, per namespace (for inspection and tests).
        self.log: list[tuple[str, list[str]]] = []

    def _burst(self, rate_bps: int) -> int:
        return max(2 * FRAME, round(rate_bps / 8 * self.burst_s))

    def _class(self, verb: str, dev: str, classid: str, rate: int, ceil: int, quantum: int) -> str:
        b = self._burst(ceil)
        return (
            f"class {verb} dev {dev} parent 1:1 classid {classid} htb rate {rate}bit "
            f"ceil {ceil}bit prio 0 quantum {quantum} burst {b} cburst {b}"
        )

    def install_commands(self, c: PortConfig) -> list[str]:
        """The qdisc and classes of a port not yet managed."""
        link, dev = c.rate_bps, c.ifname
        b = self._burst(link)
        cmds = [
            f"qdisc add dev {dev} root handle 1: htb default ff",
            f"class add dev {dev} parent 1: classid 1:1 htb rate {link}bit ceil {link}bit "
            f"burst {b} cburst {b}",
        ]
        other = max(MIN_RATE_BPS, round((1.0 - self.capacity) * link))
        cmds.append(self._class("add", dev, DEFAULT_CLASS, other, link, FRAME))
        for q in range(self.queues):
            cmds.append(self._class("add", dev, queue_class(q), MIN_RATE_BPS, link, FRAME))
            if self.leaf_bytes is not None:
                cmds.append(
                    f"qdisc add dev {dev} parent {queue_class(q)} handle {0x10 + q:x}: "
                    f"bfifo limit {self.leaf_bytes}"
                )
        return cmds

    def change_commands(self, c: PortConfig) -> list[str]:
        """`class change` per queue (unused queues back to the minimum)."""
        if len(c.queues) > self.queues:
            raise SabaError(f"port {c.key} has {len(c.queues)} queues, backend {self.queues}")
        rates = {q.queue: (q.rate_bps, q.weight) for q in c.queues}
        cmds = []
        for q in range(self.queues):
            rate, weight = rates.get(q, (MIN_RATE_BPS, 0.0))
            quantum = max(FRAME, round(weight * 20 * FRAME))
            cmds.append(self._class("change", c.ifname, queue_class(q), rate, c.rate_bps, quantum))
        return cmds

    def filter_commands(self, c: PortConfig) -> list[str] | None:
        """The DSCP filters, or None when the mapping did not change."""
        mapping = {d: q.queue for q in c.queues for d in q.dscps}
        if self._filters.get(c.key) == mapping:
            return None
        cmds = []
        for dscp, q in sorted(mapping.items()):
            cmds.append(
                f"filter add dev {c.ifname} parent 1: protocol ip prio 1 u32 "
                f"match ip dsfield {dscp << 2:#04x} 0xfc flowid {queue_class(q)}"
            )
        return cmds

    def apply(self, configs: Sequence[PortConfig]) -> None:
        by_ns: dict[str, list[str]] = {}
        filters: list[tuple[str, PortConfig, list[str]]] = []
        for c in configs:
            ns = self.namespace(c.switch)
            cmds = by_ns.setdefault(ns, [])
            if c.key not in self._installed:
                # whatever was there goes (HTB cannot be changed into this tree)
                shell.run(["tc", "-n", ns, "qdisc", "del", "dev", c.ifname, "root"], check=False)
                cmds += self.install_commands(c)
            cmds += self.change_commands(c)
            f = self.filter_commands(c)
            if f is not None:
                filters.append((ns, c, f))
        for ns, cmds in by_ns.items():
            self._batch(ns, cmds)
        for c in configs:
            self._installed.add(c.key)
        for ns, c, f in filters:
            if c.key in self._filters:  # drop the old ones (none on a new port)
                shell.run(["tc", "-n", ns, "filter", "del", "dev", c.ifname, "parent", "1:"])
            if f:
                self._batch(ns, f)
            self._filters[c.key] = {d: q.queue for q in c.queues for d in q.dscps}

    def _batch(self, ns: str, cmds: list[str]) -> None:
        self.log.append((ns, cmds))
        shell.run(["tc", "-n", ns, "-batch", "-"], stdin="\n".join(cmds) + "\n")
