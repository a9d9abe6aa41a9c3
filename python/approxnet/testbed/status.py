"""Per-queue counters of a running testbed, from `tc -s -j` and `nft -j`.

`collect` returns plain dataclasses; `format_table` renders them. Sent,
dropped and backlog come from each queue's bfifo leaf (tc counts frames,
Ethernet header included); random-loss drops come from the nft counters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from . import shell
from .config import Config
from .errors import TestbedError
from .layout import queue_limits, switch_ports
from .plan import NFT_TABLE


@dataclass(frozen=True)
class QueueStats:
    """Counters of one priority queue of one switch egress port."""

    switch: str
    port: str
    queue: int
    limit_bytes: int
    sent_bytes: int
    sent_packets: int
    dropped: int
    backlog_bytes: int
    backlog_packets: int


@dataclass(frozen=True)
class Status:
    """Everything `status` reports about a running testbed."""

    queues: list[QueueStats]
    #: (switch, port) -> packets dropped by random loss, both directions.
    loss_drops: dict[tuple[str, str], int] = field(default_factory=dict)

    def queue(self, port: str, queue: int, switch: str | None = None) -> QueueStats:
        """Counters of `queue` on `port` (a host name or, for trunks, the far switch)."""
        for q in self.queues:
            if q.port == port and q.queue == queue and switch in (None, q.switch):
                return q
        raise KeyError(f"no queue {queue} on port {port!r}")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "queues": [q.__dict__ for q in self.queues],
            "loss_drops": [
                {"switch": s, "port": p, "dropped": n} for (s, p), n in self.loss_drops.items()
            ],
        }


def collect(config: Config) -> Status:
    """Read the counters of every switch egress port of `config`'s testbed."""
    shell.require_root()
    queues: list[QueueStats] = []
    for port in switch_ports(config):
        ns = config.namespace(port.switch)
        out = shell.run(
            ["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", port.ifname], check=False
        )
        if out.returncode != 0:
            raise TestbedError(
                f"testbed {config.name!r} is not up (port {port.switch}/{port.ifname})"
            )
        queues += parse_qdiscs(port.switch, port.ifname, json.loads(out.stdout or "[]"))
    loss: dict[tuple[str, str], int] = {}
    if any(p.loss for p in switch_ports(config)):
        for switch in config.switches:
            loss.update(_loss_drops(config, switch))
    _check_complete(config, queues)
    return Status(queues, loss)


def parse_qdiscs(switch: str, port: str, qdiscs: list[dict[str, Any]]) -> list[QueueStats]:
    """QueueStats for each bfifo leaf in `tc -s -j qdisc show` output."""
    result = []
    for qd in qdiscs:
        parent = qd.get("parent", "")
        if qd.get("kind") != "bfifo" or not parent.startswith("1:"):
            continue
        queue = int(parent.split(":")[1], 16) - 0x10
        result.append(
            QueueStats(
                switch=switch,
                port=port,
                queue=queue,
                limit_bytes=int(qd.get("options", {}).get("limit", 0)),
                sent_bytes=int(qd.get("bytes", 0)),
                sent_packets=int(qd.get("packets", 0)),
                dropped=int(qd.get("drops", 0)),
                backlog_bytes=int(qd.get("backlog", 0)),
                backlog_packets=int(qd.get("qlen", 0)),
            )
        )
    return sorted(result, key=lambda q: q.queue)


def _check_complete(config: Config, queues: list[QueueStats]) -> None:
    expected = len(switch_ports(config)) * len(queue_limits(config))
    if len(queues) != expected:
        raise TestbedError(
            f"testbed {config.name!r} is only partly up ({len(queues)} of {expected} queues);"
            " run `down` then `up`"
        )


def _loss_drops(config: Config, switch: str) -> dict[tuple[str, str], int]:
    ns = config.namespace(switch)
    out = shell.run(
        ["ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", NFT_TABLE], check=False
    )
    if out.returncode != 0:
        return {}
    drops: dict[tuple[str, str], int] = {}
    for item in json.loads(out.stdout).get("nftables", []):
        rule = item.get("rule")
        if not rule or "comment" not in rule:
            continue
        port = rule["comment"].split()[0]
        packets = sum(e["counter"]["packets"] for e in rule.get("expr", []) if "counter" in e)
        drops[(switch, port)] = drops.get((switch, port), 0) + packets
    return drops


def format_table(status: Status) -> str:
    """A fixed-width table, one row per queue, loss drops below."""
    header = (
        "switch",
        "port",
        "q",
        "limit_B",
        "sent_pkts",
        "sent_B",
        "dropped",
        "backlog_B",
        "backlog_p",
    )
    rows = [header] + [
        (
            q.switch,
            q.port,
            str(q.queue),
            str(q.limit_bytes),
            str(q.sent_packets),
            str(q.sent_bytes),
            str(q.dropped),
            str(q.backlog_bytes),
            str(q.backlog_packets),
        )
        for q in status.queues
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(w) if i >= 2 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    for (switch, port), n in sorted(status.loss_drops.items()):
        lines.append(f"random loss on {switch}/{port}: {n} packets dropped")
    return "\n".join(lines)
