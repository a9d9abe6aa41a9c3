"""Per-step telemetry of the bounded-loss all-reduce."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BucketTelemetry", "StepTelemetry"]


@dataclass
class BucketTelemetry:
    """One bucket's all-reduce on one rank."""

    step: int
    bucket: int
    elements: int
    seconds: float
    """Wall time in the all-reduce (sending, waiting, reducing)."""
    bytes_sent: int
    """Payload bytes of the jobs this rank queued (both phases)."""
    delivered: dict[int, float]
    """Per peer rank: fraction of the elements expected from it that arrived
    (scatter and gather phases together)."""
    groups: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Per group id: (messages delivered, messages) over this rank's sent
    jobs whose sender reports arrived during this call (magnitude groups)."""
    bytes_unsent: int = 0
    """Of `bytes_sent`, payload the transport never sent: its jobs met their
    fraction p first (sender reports that arrived during this call)."""
    packets: int = 0
    """DATA packets this rank's jobs sent, retransmissions included (the
    same sender reports)."""
    retransmissions: int = 0
    """Of `packets`, retransmissions."""

    @property
    def delivered_fraction(self) -> float:
        """Mean delivered fraction over peers."""
        return sum(self.delivered.values()) / len(self.delivered) if self.delivered else 1.0


@dataclass
class StepTelemetry:
    """A training step on one rank: its buckets together."""

    step: int
    buckets: list[BucketTelemetry] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(b.seconds for b in self.buckets)

    @property
    def bytes_sent(self) -> int:
        return sum(b.bytes_sent for b in self.buckets)

    @property
    def bytes_unsent(self) -> int:
        return sum(b.bytes_unsent for b in self.buckets)

    @property
    def packets(self) -> int:
        return sum(b.packets for b in self.buckets)

    @property
    def retransmissions(self) -> int:
        return sum(b.retransmissions for b in self.buckets)

    @property
    def elements(self) -> int:
        return sum(b.elements for b in self.buckets)

    def delivered_by_rank(self) -> dict[int, float]:
        """Per peer: element-weighted delivered fraction over the buckets."""
        out: dict[int, float] = {}
        total = self.elements or 1
        for b in self.buckets:
            for peer, f in b.delivered.items():
                out[peer] = out.get(peer, 0.0) + f * b.elements / total
        return out

    def delivered_by_group(self) -> dict[int, float]:
        """Per group: delivered / messages over the step's sender reports."""
        acc: dict[int, list[int]] = {}
        for b in self.buckets:
            for g, (d, m) in b.groups.items():
                a = acc.setdefault(g, [0, 0])
                a[0] += d
                a[1] += m
        return {g: d / m for g, (d, m) in acc.items() if m}

    @property
    def delivered_fraction(self) -> float:
        d = self.delivered_by_rank()
        return sum(d.values()) / len(d) if d else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "seconds": self.seconds,
            "bytes_sent": self.bytes_sent,
            "bytes_unsent": self.bytes_unsent,
            "delivered_fraction": self.delivered_fraction,
            "delivered_by_rank": {str(k): v for k, v in self.delivered_by_rank().items()},
            "delivered_by_group": {str(k): v for k, v in self.delivered_by_group().items()},
            "buckets": [asdict(b) for b in self.buckets],
        }
