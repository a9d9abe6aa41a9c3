"""Pure layout of a testbed: addresses, ports, routes and queue sizes.

Nothing here touches the system, so all of it is testable without root.

Addressing (all inside the testbed's own namespaces):

* host number i (1-based, config order) sits on 10.77.i.0/24: the host is
  10.77.i.2 on `eth0`, its switch port is 10.77.i.1 on an interface named
  after the host;
* trunk number j (0-based) is 10.77.(200+j).0/24: the first switch of
  `between` is .1 on an interface named after the second, and vice versa;
* MACs are fixed (`mac`) and every neighbour entry is permanent: no ARP.

Queues on every switch egress port (seed 000, section 5.2): queue q in
1..N-1 holds (N - q) frames, so the lowest priority holds one; queue 0,
for non-approximate traffic, holds the rest of `port_buffer`. A frame is
MTU + 14 bytes because tc counts the Ethernet header on a veth.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .._native import ConfigError as NativeConfigError
from .._native import queue_limits as port_queue_limits
from .config import ETHERNET_HEADER, Config, Host
from .errors import ConfigError

TRUNK_SUBNET_BASE = 200


@dataclass(frozen=True)
class Port:
    """One egress interface of a switch namespace."""

    switch: str
    ifname: str
    rate_bps: int
    loss: float
    #: Loss rules live on one end only, so a lossy trunk drops once per direction.
    applies_loss: bool


@dataclass(frozen=True)
class Route:
    """A static route in a switch namespace towards a remote host's subnet."""

    switch: str
    subnet: str
    via: str
    dev: str


def frame_bytes(config: Config) -> int:
    """Size of a full-MTU frame as tc accounts it."""
    return config.mtu + ETHERNET_HEADER


def queue_limits(config: Config) -> tuple[int, ...]:
    """bfifo limit in bytes of each queue 0..N-1 of a switch egress port."""
    try:
        return tuple(port_queue_limits(config.queues, frame_bytes(config), config.port_buffer))
    except NativeConfigError as e:  # the core's rule (policy::netapprox_queue_limits)
        raise ConfigError("testbed.port_buffer", str(e)) from None


def tos_of_queue(queue: int) -> int:
    """TOS byte approxnet puts on packets for `queue`: DSCP queue<<3."""
    return queue << 5


def class_id(queue: int) -> str:
    """HTB class of a queue: 1:10 .. 1:17 (tc reads these as hex)."""
    return f"1:{0x10 + queue:x}"


def leaf_handle(queue: int) -> str:
    """Handle of the bfifo under a queue's class: 10: .. 17: (hex)."""
    return f"{0x10 + queue:x}:"


def host_index(config: Config, host: Host) -> int:
    """1-based number of a host, used in its subnet."""
    return config.hosts.index(host) + 1


def host_address(config: Config, host: str) -> str:
    """IPv4 address of a host's `eth0`."""
    return f"10.77.{host_index(config, config.host(host))}.2"


def gateway_address(config: Config, host: Host) -> str:
    """Address of the switch port facing `host` (the host's default route)."""
    return f"10.77.{host_index(config, host)}.1"


def trunk_addresses(index: int) -> tuple[str, str]:
    """Addresses of the two ends (first, second switch) of trunk `index`."""
    third = TRUNK_SUBNET_BASE + index
    return f"10.77.{third}.1", f"10.77.{third}.2"


def mac(role: int, index: int) -> str:
    """Fixed, locally administered MAC: 02:77:<role>:00:<index>.

    Roles: 1 host `eth0`, 2 the switch port facing it, 3 / 4 the first /
    second switch's end of a trunk. Fixed MACs let `up` install permanent
    neighbour entries, so no ARP ever crosses a queue and counters are exact.
    """
    return f"02:77:{role:02x}:00:{index >> 8:02x}:{index & 0xFF:02x}"


def switch_ports(config: Config) -> list[Port]:
    """Every switch egress port, host-facing first, then trunk ends."""
    ports = [Port(h.switch, h.name, h.rate_bps, h.loss, True) for h in config.hosts]
    for t in config.trunks:
        ports.append(Port(t.a, t.b, t.rate_bps, t.loss, True))
        ports.append(Port(t.b, t.a, t.rate_bps, t.loss, False))
    return ports


def routes(config: Config) -> list[Route]:
    """Routes each switch needs towards hosts on other switches (tree paths)."""
    # neighbour -> (address of the neighbour's end, local device)
    links: dict[str, dict[str, tuple[str, str]]] = {s: {} for s in config.switches}
    for j, t in enumerate(config.trunks):
        addr_a, addr_b = trunk_addresses(j)
        links[t.a][t.b] = (addr_b, t.b)
        links[t.b][t.a] = (addr_a, t.a)
    result = []
    for switch in config.switches:
        first_hop = _first_hops(switch, links)
        for i, host in enumerate(config.hosts, start=1):
            if host.switch == switch:
                continue
            via, dev = links[switch][first_hop[host.switch]]
            result.append(Route(switch, f"10.77.{i}.0/24", via, dev))
    return result


def _first_hops(start: str, links: dict[str, dict[str, tuple[str, str]]]) -> dict[str, str]:
    """For every other switch, the neighbour of `start` on the path to it."""
    first: dict[str, str] = {}
    queue = deque((n, n) for n in links[start])
    seen = {start}
    while queue:
        node, hop = queue.popleft()
        if node in seen:
            continue
        seen.add(node)
        first[node] = hop
        queue.extend((n, hop) for n in links[node] if n not in seen)
    return first


def path_ports(config: Config, src: str, dst: str) -> list[Port]:
    """Switch egress ports a packet from host `src` to host `dst` leaves by."""
    source, target = config.host(src), config.host(dst)
    links: dict[str, dict[str, tuple[str, str]]] = {s: {} for s in config.switches}
    for t in config.trunks:
        links[t.a][t.b] = ("", t.b)
        links[t.b][t.a] = ("", t.a)
    by_key = {(p.switch, p.ifname): p for p in switch_ports(config)}
    ports, here = [], source.switch
    while here != target.switch:
        hop = _first_hops(here, links)[target.switch]
        ports.append(by_key[(here, hop)])
        here = hop
    ports.append(by_key[(here, target.name)])
    return ports
