"""A switch output port's Saba configuration: one queue per group of PLs,
its weight (a share of the link), the rate that weight means and the DSCP
values classified into it. What enforcement backends apply and what
``GET /ports`` / the JSON export show an operator."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["QueueConfig", "PortConfig", "dscp_of_pl", "MAX_LEVELS"]

#: PLs are DSCP values 1..16 (InfiniBand has 16 service levels, seed 003
#: §7.2; Ethernet 8 priorities); DSCP 0 stays non-Saba traffic.
MAX_LEVELS = 16


def dscp_of_pl(pl: int) -> int:
    """The DSCP value that marks priority level `pl` (0-based)."""
    return pl + 1


@dataclass(frozen=True)
class QueueConfig:
    """One queue of a port."""

    queue: int
    weight: float
    rate_bps: int
    dscps: tuple[int, ...]
    apps: tuple[str, ...]


@dataclass(frozen=True)
class PortConfig:
    """A port's queues, and every app's eq. 2 weight at the port."""

    switch: str
    ifname: str
    rate_bps: int
    queues: tuple[QueueConfig, ...]
    app_weights: tuple[tuple[str, float], ...]

    @property
    def key(self) -> str:
        """``switch:ifname``."""
        return f"{self.switch}:{self.ifname}"

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object (the export format)."""
        d = asdict(self)
        d["port"] = self.key
        d["app_weights"] = dict(self.app_weights)
        d["queues"] = [
            {**q, "dscps": list(q["dscps"]), "apps": list(q["apps"])} for q in d["queues"]
        ]
        return d
