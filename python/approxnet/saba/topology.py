"""Where a connection's packets go: the switch egress ports on the path
from a source host to a destination host (seed 003 §5, "the controller
determines the switches along their path"). The namespace testbed's
routes (``approxnet.testbed.layout.path_ports``) are the one topology
built so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..testbed import layout
from ..testbed.config import Config
from ..testbed.errors import ConfigError
from .errors import TopologyError

__all__ = ["Port", "Topology", "TestbedTopology"]


@dataclass(frozen=True)
class Port:
    """A switch output port."""

    switch: str
    ifname: str
    rate_bps: int

    @property
    def key(self) -> str:
        """``switch:ifname``, the port's name in the API and the store."""
        return f"{self.switch}:{self.ifname}"


class Topology(Protocol):
    """What the controller needs of a network."""

    def hosts(self) -> Sequence[str]:
        """Every host name."""
        ...

    def path(self, src: str, dst: str) -> list[Port]:
        """The egress ports from `src` to `dst`; `TopologyError` for an
        unknown host."""
        ...


# A topology may also have ``addresses() -> {host: [address, ...]}`` (the
# service's GET /hosts; ``saba run`` maps a socket's ends to hosts with it).


class TestbedTopology:
    """The routes of a namespace testbed configuration."""

    __test__ = False  # not a pytest class, despite the name

    def __init__(self, config: Config) -> None:
        self.config = config

    def hosts(self) -> Sequence[str]:
        return [h.name for h in self.config.hosts]

    def addresses(self) -> dict[str, list[str]]:
        """Each host's addresses (how ``saba run`` names a connection's ends)."""
        return {h: [layout.host_address(self.config, h)] for h in self.hosts()}

    def path(self, src: str, dst: str) -> list[Port]:
        for field, host in (("source", src), ("destination", dst)):
            if host not in self.hosts():
                known = ", ".join(self.hosts())
                raise TopologyError(f"unknown {field} host {host!r} (hosts: {known})")
        if src == dst:
            raise TopologyError(f"source and destination are the same host {src!r}")
        try:
            ports = layout.path_ports(self.config, src, dst)
        except ConfigError as e:  # pragma: no cover - hosts were checked above
            raise TopologyError(str(e)) from None
        return [Port(p.switch, p.ifname, p.rate_bps) for p in ports]
