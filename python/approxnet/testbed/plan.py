"""Turn a `Config` into the exact `ip` / `tc` / `nft` commands of `up`.

Pure: the plan is a list of `Step`s that `lifecycle.up` runs in order, so the
commands can be inspected (and tested) without root. Every veth is created
inside the testbed's namespaces, never in the caller's, so deleting the
namespaces removes every interface, qdisc and nft table with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config, Host
from .layout import (
    class_id,
    frame_bytes,
    gateway_address,
    host_address,
    leaf_handle,
    link_stats_path,
    mac,
    queue_limits,
    routes,
    switch_ports,
    tos_of_queue,
    trunk_addresses,
)

#: Guaranteed rate of each priority class; all else is borrowed in prio order,
#: which is what makes HTB behave as strict priority.
PRIORITY_FLOOR_BPS = 8_000
#: nftables draws loss as `numgen random mod LOSS_SCALE < round(loss * LOSS_SCALE)`.
LOSS_SCALE = 1_000_000
NFT_TABLE = "approxnet"
#: Offloads off, so the switch sees MTU-sized packets, never 64 KiB GSO skbs.
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off", "tx-udp-segmentation", "off")


@dataclass(frozen=True)
class Step:
    """One command of the plan; `stdin` is fed to it when given."""

    argv: tuple[str, ...]
    stdin: str | None = None
    #: False for best-effort steps (e.g. IPv6 sysctls on a kernel without IPv6).
    check: bool = True
    #: A daemon (the wireless relay): started, awaited until it prints
    #: `ready`, then left running inside its namespace (`down` ends it).
    background: bool = False


def namespaces(config: Config) -> list[str]:
    """Every namespace of the testbed, switches first."""
    return [config.namespace(s) for s in config.switches] + [
        config.namespace(h.name) for h in config.hosts
    ]


def build(config: Config, link_binary: str = "approxnet-link") -> list[Step]:
    """All steps of `up`, in order; `link_binary` runs wireless links."""
    steps = [Step(("ip", "netns", "add", ns)) for ns in namespaces(config)]
    steps += _sysctls(config)
    steps += _links(config, link_binary)
    steps += _addresses(config)
    steps += _switch_queues(config)
    steps += _host_queues(config)
    steps += _loss_rules(config)
    return steps


def _in_ns(ns: str, *argv: str) -> tuple[str, ...]:
    return ("ip", "netns", "exec", ns, *argv)


def _sysctls(config: Config) -> list[Step]:
    steps = []
    for ns in namespaces(config):
        no_v6 = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        steps.append(Step(_in_ns(ns, "sysctl", "-qw", *no_v6), check=False))
        steps.append(Step(("ip", "-n", ns, "link", "set", "lo", "up")))
    for switch in config.switches:
        ns = config.namespace(switch)
        steps.append(Step(_in_ns(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")))
    return steps


def _veth(a: tuple[str, str, str], b: tuple[str, str, str], mtu: int) -> list[Step]:
    """A veth pair from (namespace, ifname, mac) `a` to `b`, offloads off."""
    (ns_a, if_a, mac_a), (ns_b, if_b, mac_b), m = a, b, str(mtu)
    create = (
        "ip",
        "-n",
        ns_a,
        "link",
        "add",
        "name",
        if_a,
        "address",
        mac_a,
        "mtu",
        m,
        "type",
        "veth",
        "peer",
        "name",
        if_b,
        "address",
        mac_b,
        "mtu",
        m,
        "netns",
        ns_b,
    )
    return [
        Step(create),
        Step(_in_ns(ns_a, "ethtool", "-K", if_a, *OFFLOADS_OFF)),
        Step(_in_ns(ns_b, "ethtool", "-K", if_b, *OFFLOADS_OFF)),
    ]


def _wireless_link(config: Config, host: Host, link_binary: str) -> Step:
    """The relay between the host's `eth0` and its switch port, two TUN
    devices; it runs inside the host's namespace so `down` ends it."""
    w = host.wireless
    assert w is not None
    argv = (
        link_binary,
        "--a-dev",
        "eth0",
        "--b-netns",
        config.namespace(host.switch),
        "--b-dev",
        host.name,
        "--mode",
        w.mode,
        "--channel",
        w.channel,
        "--rate-mbps",
        f"{host.rate_bps / 1e6:g}",
        "--retry-limit",
        str(w.retry_limit),
        "--seed",
        str(w.seed),
        "--stats",
        link_stats_path(config, host.name),
    )
    return Step(_in_ns(config.namespace(host.name), *argv), background=True)


def _links(config: Config, link_binary: str) -> list[Step]:
    steps = []
    for i, h in enumerate(config.hosts, start=1):
        if h.wireless is not None:
            steps.append(_wireless_link(config, h, link_binary))
            continue
        port = (config.namespace(h.switch), h.name, mac(2, i))
        steps += _veth(port, (config.namespace(h.name), "eth0", mac(1, i)), config.mtu)
    for j, t in enumerate(config.trunks):
        end_a, end_b = (
            (config.namespace(t.a), t.b, mac(3, j)),
            (config.namespace(t.b), t.a, mac(4, j)),
        )
        steps += _veth(end_a, end_b, config.mtu)
    return steps


def _addresses(config: Config) -> list[Step]:
    steps = []
    for i, h in enumerate(config.hosts, start=1):
        sw, hn = config.namespace(h.switch), config.namespace(h.name)
        gw, addr = gateway_address(config, h), host_address(config, h.name)
        # A TUN device is layer 3: no MAC, no neighbours; its MTU is set here.
        tun = h.wireless is not None
        mtu = ("mtu", str(config.mtu)) if tun else ()
        steps += [
            Step(("ip", "-n", sw, "addr", "add", f"{gw}/24", "dev", h.name)),
            Step(("ip", "-n", sw, "link", "set", "dev", h.name, *mtu, "up")),
            *([] if tun else [_neighbour(sw, addr, mac(1, i), h.name)]),
            Step(("ip", "-n", hn, "addr", "add", f"{addr}/24", "dev", "eth0")),
            Step(("ip", "-n", hn, "link", "set", "dev", "eth0", *mtu, "up")),
            *([] if tun else [_neighbour(hn, gw, mac(2, i), "eth0")]),
            Step(("ip", "-n", hn, "route", "add", "default", "via", gw, "dev", "eth0")),
        ]
    for j, t in enumerate(config.trunks):
        addr_a, addr_b = trunk_addresses(j)
        ends = ((t.a, t.b, addr_a, addr_b, mac(4, j)), (t.b, t.a, addr_b, addr_a, mac(3, j)))
        for switch, dev, addr, peer, peer_mac in ends:
            ns = config.namespace(switch)
            steps += [
                Step(("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)),
                Step(("ip", "-n", ns, "link", "set", "dev", dev, "up")),
                _neighbour(ns, peer, peer_mac, dev),
            ]
    for r in routes(config):
        ns = config.namespace(r.switch)
        steps.append(Step(("ip", "-n", ns, "route", "add", r.subnet, "via", r.via, "dev", r.dev)))
    return steps


def burst_bytes(rate_bps: int, frame: int, burst_s: float) -> int:
    """HTB burst of a class at `rate_bps`: `burst_s` of its rate, at least two frames.

    tc's default (one timer tick of rate) kept a 1 Gbps class 50-75 % busy
    on our VMs; 1 ms reaches 99 % on an idle machine (docs/testbed.md).
    """
    return max(2 * frame, int(rate_bps * burst_s / 8))


def _htb_shape(rate_bps: int, ceil_bps: int, frame: int, burst_s: float) -> tuple[str, ...]:
    """`rate R ceil C burst B cburst CB quantum Q` for an HTB class.

    burst follows the guaranteed rate, so a priority class (8 kbit/s floor)
    can never save up more than two frames of "green" tokens and jump ahead
    of a higher priority; cburst follows the ceiling (the link rate).
    """
    burst = str(burst_bytes(rate_bps, frame, burst_s))
    cburst = str(burst_bytes(ceil_bps, frame, burst_s))
    return (
        "rate",
        f"{rate_bps}bit",
        "ceil",
        f"{ceil_bps}bit",
        "burst",
        burst,
        "cburst",
        cburst,
        "quantum",
        str(frame),
    )


def _neighbour(ns: str, address: str, lladdr: str, dev: str) -> Step:
    return Step(
        (
            "ip",
            "-n",
            ns,
            "neigh",
            "replace",
            address,
            "lladdr",
            lladdr,
            "dev",
            dev,
            "nud",
            "permanent",
        )
    )


def _switch_queues(config: Config) -> list[Step]:
    """HTB parent capped at the link rate, N prio classes, bfifo leaves, u32 by TOS."""
    limits = queue_limits(config)
    frame = frame_bytes(config)
    steps = []
    for port in switch_ports(config):
        tc = ("tc", "-n", config.namespace(port.switch))
        dev, rate = port.ifname, port.rate_bps
        steps += [
            Step(
                (
                    *tc,
                    "qdisc",
                    "add",
                    "dev",
                    dev,
                    "root",
                    "handle",
                    "1:",
                    "htb",
                    "default",
                    class_id(0).split(":")[1],
                )
            ),
            Step(
                (
                    *tc,
                    "class",
                    "add",
                    "dev",
                    dev,
                    "parent",
                    "1:",
                    "classid",
                    "1:1",
                    "htb",
                    *_htb_shape(rate, rate, frame, config.burst_s),
                )
            ),
        ]
        for q, limit in enumerate(limits):
            steps += [
                Step(
                    (
                        *tc,
                        "class",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        "1:1",
                        "classid",
                        class_id(q),
                        "htb",
                        "prio",
                        str(q),
                        *_htb_shape(PRIORITY_FLOOR_BPS, rate, frame, config.burst_s),
                    )
                ),
                Step(
                    (
                        *tc,
                        "qdisc",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        class_id(q),
                        "handle",
                        leaf_handle(q),
                        "bfifo",
                        "limit",
                        str(limit),
                    )
                ),
            ]
        for q in range(1, config.queues):
            steps.append(
                Step(
                    (
                        *tc,
                        "filter",
                        "add",
                        "dev",
                        dev,
                        "parent",
                        "1:",
                        "protocol",
                        "ip",
                        "prio",
                        "1",
                        "u32",
                        "match",
                        "ip",
                        "tos",
                        f"0x{tos_of_queue(q):02x}",
                        "0xfc",
                        "flowid",
                        class_id(q),
                    )
                )
            )
    return steps


def _host_queues(config: Config) -> list[Step]:
    """Each host's egress: HTB at the link rate over one pfifo (a plain NIC)."""
    frame = frame_bytes(config)
    steps = []
    for h in config.hosts:
        tc = ("tc", "-n", config.namespace(h.name))
        steps += [
            Step(
                (*tc, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "1")
            ),
            Step(
                (
                    *tc,
                    "class",
                    "add",
                    "dev",
                    "eth0",
                    "parent",
                    "1:",
                    "classid",
                    "1:1",
                    "htb",
                    *_htb_shape(h.rate_bps, h.rate_bps, frame, config.burst_s),
                )
            ),
            Step(
                (
                    *tc,
                    "qdisc",
                    "add",
                    "dev",
                    "eth0",
                    "parent",
                    "1:1",
                    "handle",
                    "10:",
                    "pfifo",
                    "limit",
                    str(config.host_queue),
                )
            ),
        ]
    return steps


def loss_script(config: Config, switch: str) -> str | None:
    """nft script dropping packets at random on the lossy ports of `switch`."""
    rules = []
    for port in switch_ports(config):
        if port.switch != switch or not port.applies_loss or port.loss == 0.0:
            continue
        threshold = round(port.loss * LOSS_SCALE)
        for direction in ("oifname", "iifname"):
            rules.append(
                f'    {direction} "{port.ifname}" numgen random mod {LOSS_SCALE} < {threshold}'
                f' counter drop comment "{port.ifname} {direction[:3]}"'
            )
    if not rules:
        return None
    body = "\n".join(rules)
    return (
        f"table inet {NFT_TABLE} {{\n"
        "  chain loss {\n"
        "    type filter hook forward priority 0; policy accept;\n"
        f"{body}\n"
        "  }\n"
        "}\n"
    )


def _loss_rules(config: Config) -> list[Step]:
    steps = []
    for switch in config.switches:
        script = loss_script(config, switch)
        if script is not None:
            steps.append(Step(_in_ns(config.namespace(switch), "nft", "-f", "-"), stdin=script))
    return steps
