"""Linux network-namespace testbed for approxnet.

Hosts are network namespaces joined by veth pairs through switch namespaces
(routed; the kernel is the switch). Every switch egress port has up to 8
strict-priority queues (HTB prio classes under a rate-capped parent, bfifo
leaves sized per seed 000 section 5.2) selected by DSCP, and links may drop
packets at random (nftables). See docs/testbed.md.

    >>> from approxnet import testbed
    >>> cfg = testbed.load("python/approxnet/testbed/examples/dumbbell.toml")
    >>> with testbed.up(cfg) as tb:                       # doctest: +SKIP
    ...     tb.run("h1", ["ping", "-c", "1", tb.address("h3")], timeout=5)
"""

from .config import Config, Host, Trunk, load, parse
from .errors import CommandError, ConfigError, TestbedError
from .lifecycle import Testbed, down, is_up, list_namespaces, up
from .status import QueueStats, Status, collect, format_table

__all__ = [
    "CommandError",
    "Config",
    "ConfigError",
    "Host",
    "QueueStats",
    "Status",
    "Testbed",
    "TestbedError",
    "Trunk",
    "collect",
    "down",
    "format_table",
    "is_up",
    "list_namespaces",
    "load",
    "parse",
    "up",
]
