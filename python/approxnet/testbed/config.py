"""The testbed description: TOML in, validated dataclasses out.

Schema (every key but `testbed.name` and `host.rate` has a default)::

    [testbed]
    name = "db"            # [a-z][a-z0-9]{0,9}; namespaces are anx-<name>-<node>
    mtu = 1500             # IP MTU of every link, bytes
    port_buffer = "256KiB" # buffer of one switch egress port, all queues together
    queues = 8             # strict-priority queues per switch egress port, 1..8
    host_queue = 1000      # packets in each host's egress fifo
    burst_ms = 1.0         # HTB may send this many ms of a link's rate back to back

    [[switch]]             # optional; default is one switch named "sw"
    name = "left"

    [[host]]
    name = "h1"
    switch = "left"        # optional when there is a single switch
    rate = "10gbit"        # link rate, both directions
    loss = 0.0             # random loss per direction, 0 <= loss < 1
    # optional: the access link is approxnet-link (an error-prone wireless
    # last hop on TUN devices) instead of a veth; see docs/testbed.md
    wireless = { mode = "approximate", channel = "ber:1e-5", retry_limit = 7, seed = 1 }

    [[trunk]]              # switch-to-switch link; switches must form a tree
    between = ["left", "right"]
    rate = "1gbit"
    loss = 0.0

Unknown keys are errors (a typo must not silently become a default).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._native import ConfigError as NativeConfigError
from .._native import queue_limits as port_queue_limits
from .errors import ConfigError
from .units import parse_rate, parse_size

#: Bytes tc adds to an IP packet on a veth (the Ethernet header).
ETHERNET_HEADER = 14

TESTBED_NAME = re.compile(r"^[a-z][a-z0-9]{0,9}$")
NODE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,14}$")
RESERVED_NAMES = frozenset({"lo", "eth0"})
MAX_HOSTS = 199
MAX_TRUNKS = 55
MAX_QUEUES = 8
DEFAULT_SWITCH = "sw"


#: Link modes of approxnet-link (crates/net/src/bin/approxnet-link/arq.rs).
WIRELESS_MODES = ("integrity", "approximate", "sap")
#: Channel kinds and how many probabilities each takes.
WIRELESS_CHANNELS = {"ber": 1, "ge": 4, "snr": 1}


@dataclass(frozen=True)
class Wireless:
    """An error-prone access link emulated by approxnet-link (seed 002)."""

    #: "integrity" (link-layer ARQ), "approximate" (damaged frames delivered)
    #: or "sap" (approximate for partially covered UDP-Lite frames only).
    mode: str
    #: approxnet-link --channel: "ber:P", "ge:GOOD:BAD:P_GB:P_BG" or "snr:DB"
    #: (BER from the host rate's 802.11a/g constellation at that SNR).
    channel: str
    retry_limit: int
    seed: int


@dataclass(frozen=True)
class Host:
    """A host namespace and its link to one switch."""

    name: str
    switch: str
    rate_bps: int
    loss: float
    #: None: a veth; else the relay's settings.
    wireless: Wireless | None = None


@dataclass(frozen=True)
class Trunk:
    """A link between two switches."""

    a: str
    b: str
    rate_bps: int
    loss: float


@dataclass(frozen=True)
class Config:
    """A validated testbed description."""

    name: str
    mtu: int
    port_buffer: int
    queues: int
    host_queue: int
    #: HTB burst / cburst of every rate-capped class, in seconds of its rate.
    burst_s: float
    switches: tuple[str, ...]
    hosts: tuple[Host, ...]
    trunks: tuple[Trunk, ...]

    @property
    def prefix(self) -> str:
        """Prefix of every namespace this testbed owns."""
        return namespace_prefix(self.name)

    def namespace(self, node: str) -> str:
        """Namespace name of a host or switch."""
        return f"{self.prefix}{node}"

    def host(self, name: str) -> Host:
        """The host called `name`; `ConfigError` if there is none."""
        for host in self.hosts:
            if host.name == name:
                return host
        known = ", ".join(h.name for h in self.hosts)
        raise ConfigError("host", f"no host named {name!r} (hosts: {known})")


def namespace_prefix(testbed_name: str) -> str:
    """`anx-<name>-`: names carry no '-', so prefixes never overlap."""
    return f"anx-{testbed_name}-"


def load(path: str | Path) -> Config:
    """Read and validate a testbed TOML file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"invalid TOML: {exc}") from None
    return parse(data)


def parse(data: dict[str, Any]) -> Config:
    """Validate an already-decoded TOML document."""
    _only_keys(data, "", {"testbed", "switch", "host", "trunk"})
    top = _table(data, "testbed", required=True)
    _only_keys(top, "testbed.", {"name", "mtu", "port_buffer", "queues", "host_queue", "burst_ms"})
    name = _name(top, "testbed.name", TESTBED_NAME, "[a-z][a-z0-9]{0,9}")
    mtu = _int(top, "testbed.mtu", 1500, 576, 9000)
    queues = _int(top, "testbed.queues", MAX_QUEUES, 1, MAX_QUEUES)
    host_queue = _int(top, "testbed.host_queue", 1000, 1, 100_000)
    port_buffer = _converted(top, "testbed.port_buffer", "256KiB", parse_size)
    burst_ms = top.get("burst_ms", 1.0)
    if isinstance(burst_ms, bool) or not isinstance(burst_ms, (int, float)):
        raise ConfigError(
            "testbed.burst_ms", f"expected a number of milliseconds, got {burst_ms!r}"
        )
    if not 0.01 <= burst_ms <= 100:
        raise ConfigError("testbed.burst_ms", f"{burst_ms} is outside 0.01..100")

    switches = _switches(data)
    hosts = _hosts(data, switches)
    trunks = _trunks(data, switches)
    _unique_nodes(switches, hosts)
    _check_tree(switches, trunks)
    config = Config(
        name, mtu, port_buffer, queues, host_queue, burst_ms / 1000, switches, hosts, trunks
    )
    try:  # seed 000 §5.2 limits, the core's rule: is port_buffer big enough?
        port_queue_limits(queues, mtu + ETHERNET_HEADER, port_buffer)
    except NativeConfigError as e:
        raise ConfigError("testbed.port_buffer", str(e)) from None
    return config


def _switches(data: dict[str, Any]) -> tuple[str, ...]:
    entries = _array(data, "switch")
    if not entries:
        return (DEFAULT_SWITCH,)
    names = []
    for i, entry in enumerate(entries):
        _only_keys(entry, f"switch[{i}].", {"name"})
        names.append(_name(entry, f"switch[{i}].name", NODE_NAME, "[a-z][a-z0-9_]{0,14}"))
    return tuple(names)


def _hosts(data: dict[str, Any], switches: tuple[str, ...]) -> tuple[Host, ...]:
    entries = _array(data, "host")
    if len(entries) < 1:
        raise ConfigError("host", "at least one [[host]] is required")
    if len(entries) > MAX_HOSTS:
        raise ConfigError("host", f"at most {MAX_HOSTS} hosts are supported")
    hosts = []
    for i, entry in enumerate(entries):
        key = f"host[{i}]"
        _only_keys(entry, f"{key}.", {"name", "switch", "rate", "loss", "wireless"})
        name = _name(entry, f"{key}.name", NODE_NAME, "[a-z][a-z0-9_]{0,14}")
        default_switch = switches[0] if len(switches) == 1 else None
        switch = entry.get("switch", default_switch)
        if switch is None:
            raise ConfigError(f"{key}.switch", "required when there is more than one switch")
        if switch not in switches:
            raise ConfigError(f"{key}.switch", f"unknown switch {switch!r}")
        rate = _converted(entry, f"{key}.rate", None, parse_rate)
        wireless = _wireless(entry.get("wireless"), f"{key}.wireless")
        hosts.append(Host(name, switch, rate, _loss(entry, f"{key}.loss"), wireless))
    return tuple(hosts)


def _wireless(value: Any, key: str) -> Wireless | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(key, 'expected a table, e.g. { mode = "approximate" }')
    _only_keys(value, f"{key}.", {"mode", "channel", "retry_limit", "seed"})
    mode = value.get("mode", "integrity")
    if mode not in WIRELESS_MODES:
        raise ConfigError(f"{key}.mode", f"{mode!r} is not one of {', '.join(WIRELESS_MODES)}")
    channel = value.get("channel", "ber:0")
    parts = channel.split(":") if isinstance(channel, str) else []
    if not parts or WIRELESS_CHANNELS.get(parts[0]) != len(parts) - 1:
        raise ConfigError(
            f"{key}.channel", f"{channel!r}: expected ber:P, ge:GOOD:BAD:P_GB:P_BG or snr:DB"
        )
    if parts[0] == "snr":
        # The BER of the host rate's 802.11a/g constellation at this SNR
        # (approxnet-link ofdm.rs; the relay refuses other rates).
        try:
            ok = math.isfinite(float(parts[1]))
        except ValueError:
            ok = False
        if not ok:
            raise ConfigError(f"{key}.channel", f"{parts[1]!r} is not an SNR in dB")
        parts = parts[:1]
    for prob in parts[1:]:
        try:
            ok = 0.0 <= float(prob) <= 1.0
        except ValueError:
            ok = False
        if not ok:
            raise ConfigError(f"{key}.channel", f"{prob!r} is not a probability in [0, 1]")
    retry_limit = _int(value, f"{key}.retry_limit", 7, 0, 255)
    seed = _int(value, f"{key}.seed", 1, 0, 2**63 - 1)
    return Wireless(mode, channel, retry_limit, seed)


def _trunks(data: dict[str, Any], switches: tuple[str, ...]) -> tuple[Trunk, ...]:
    entries = _array(data, "trunk")
    if len(entries) > MAX_TRUNKS:
        raise ConfigError("trunk", f"at most {MAX_TRUNKS} trunks are supported")
    trunks = []
    for i, entry in enumerate(entries):
        key = f"trunk[{i}]"
        _only_keys(entry, f"{key}.", {"between", "rate", "loss"})
        between = entry.get("between")
        if (
            not isinstance(between, list)
            or len(between) != 2
            or not all(isinstance(s, str) for s in between)
        ):
            raise ConfigError(f"{key}.between", 'expected two switch names, e.g. ["s1", "s2"]')
        a, b = between
        for end in (a, b):
            if end not in switches:
                raise ConfigError(f"{key}.between", f"unknown switch {end!r}")
        if a == b:
            raise ConfigError(f"{key}.between", "a trunk must join two different switches")
        rate = _converted(entry, f"{key}.rate", None, parse_rate)
        trunks.append(Trunk(a, b, rate, _loss(entry, f"{key}.loss")))
    return tuple(trunks)


def _unique_nodes(switches: tuple[str, ...], hosts: tuple[Host, ...]) -> None:
    seen: set[str] = set()
    for kind, name in [("switch", s) for s in switches] + [("host", h.name) for h in hosts]:
        if name in seen:
            raise ConfigError(f"{kind}.name", f"name {name!r} is used twice")
        seen.add(name)


def _check_tree(switches: tuple[str, ...], trunks: tuple[Trunk, ...]) -> None:
    """Switches joined by trunks must form a tree (so routes are unique)."""
    parent = {s: s for s in switches}

    def find(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    for i, trunk in enumerate(trunks):
        ra, rb = find(trunk.a), find(trunk.b)
        if ra == rb:
            raise ConfigError(f"trunk[{i}].between", "trunks must not form a loop")
        parent[ra] = rb
    if len({find(s) for s in switches}) != 1:
        raise ConfigError("trunk", "every switch must be reachable through trunks")


def _only_keys(table: dict[str, Any], prefix: str, allowed: set[str]) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{prefix}{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})"
            )


def _table(data: dict[str, Any], key: str, required: bool) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise ConfigError(key, f"missing [{key}] table")
        return {}
    if not isinstance(value, dict):
        raise ConfigError(key, "expected a table")
    return value


def _array(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(key, f"expected an array of tables ([[{key}]])")
    return value


def _name(table: dict[str, Any], key: str, pattern: re.Pattern[str], shape: str) -> str:
    short = key.rsplit(".", 1)[-1]
    value = table.get(short)
    if value is None:
        raise ConfigError(key, "required")
    if not isinstance(value, str) or not pattern.match(value):
        raise ConfigError(key, f"{value!r} must match {shape}")
    if value in RESERVED_NAMES:
        raise ConfigError(key, f"{value!r} is reserved")
    return value


def _int(table: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = table.get(key.rsplit(".", 1)[-1], default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(key, f"{value} is outside {low}..{high}")
    return value


def _converted(table: dict[str, Any], key: str, default: object, convert: Any) -> int:
    value = table.get(key.rsplit(".", 1)[-1], default)
    if value is None:
        raise ConfigError(key, "required")
    try:
        return int(convert(value))
    except ValueError as exc:
        raise ConfigError(key, str(exc)) from None


def _loss(table: dict[str, Any], key: str) -> float:
    value = table.get("loss", 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key, f"expected a probability, got {value!r}")
    if not 0.0 <= value < 1.0:
        raise ConfigError(key, f"{value} is outside [0, 1)")
    if 0.0 < value < 1e-6:
        raise ConfigError(key, f"{value} is below the resolution of 1e-6")
    return float(value)
