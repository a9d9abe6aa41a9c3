"""The established TCP connections of a set of processes, from ``/proc``
(``approxnet saba run`` polls this to report connection open / close):
the socket inodes of each process's file descriptors, matched against
``/proc/PID/net/tcp`` and ``tcp6`` (the table of that process's network
namespace). A connection that opens and closes between two polls is not
seen.

Reading the two tables costs ~5 ms of CPU each here whatever the
namespace holds (the kernel walks its socket hash tables), against
~0.03 ms for a process's descriptors, so :class:`ConnWatch` reads them
only when the set of socket descriptors changed, while one of them is
still connecting, or every `recheck`-th poll (to see a connection that
ended while its descriptor stays open).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Conn", "ConnWatch", "DatagramPorts", "datagram_ports", "established", "parse_table"]

_SOCKET = re.compile(r"socket:\[(\d+)\]")
_ESTABLISHED = "01"
_CONNECTING = ("02", "03")  # SYN_SENT, SYN_RECV


@dataclass(frozen=True, order=True)
class Conn:
    """One TCP connection as its endpoint in this host sees it."""

    local: str
    lport: int
    remote: str
    rport: int


def _address(hexaddr: str) -> str:
    ip, _, _ = hexaddr.partition(":")
    raw = bytes.fromhex(ip)
    # the kernel prints each 32-bit word in host (little-endian) order
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    addr = ipaddress.ip_address(words)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return str(addr)


def parse_table(text: str, connecting: set[int] | None = None) -> dict[int, Conn]:
    """Established connections of one ``/proc/net/tcp[6]`` text by socket
    inode (the inodes of connections still being set up are added to
    `connecting`); malformed lines are skipped."""
    out: dict[int, Conn] = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) >= 10 and f[3] in _CONNECTING and connecting is not None and f[9].isdigit():
            connecting.add(int(f[9]))
        if len(f) < 10 or f[3] != _ESTABLISHED:
            continue
        try:
            conn = Conn(
                _address(f[1]), int(f[1].rsplit(":", 1)[1], 16),
                _address(f[2]), int(f[2].rsplit(":", 1)[1], 16),
            )  # fmt: skip
            out[int(f[9])] = conn
        except ValueError:
            continue
    return out


def _inodes(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # gone, or not ours to read
        return found
    for fd in fds:
        try:
            m = _SOCKET.fullmatch(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
        if m:
            found.add(int(m.group(1)))
    return found


def _sockets(pids: Iterable[int]) -> dict[int, tuple[str, set[int]]]:
    """pid -> (its network namespace, its socket inodes)."""
    out = {}
    for pid in pids:
        inodes = _inodes(pid)
        if not inodes:
            continue
        try:
            out[pid] = (os.readlink(f"/proc/{pid}/ns/net"), inodes)
        except OSError:
            continue
    return out


def _read(socks: dict[int, tuple[str, set[int]]]) -> tuple[set[Conn], bool]:
    """The established connections of `socks`, and whether one of their
    sockets is still connecting."""
    conns: set[Conn] = set()
    connecting: set[int] = set()
    tables: dict[str, dict[int, Conn]] = {}  # per network namespace
    ours: set[int] = set()
    for pid, (ns, inodes) in socks.items():
        ours |= inodes
        if ns not in tables:
            tables[ns] = {}
            try:
                for name in ("tcp", "tcp6"):
                    text = Path(f"/proc/{pid}/net/{name}").read_text()
                    tables[ns].update(parse_table(text, connecting))
            except OSError:
                continue
        conns.update(c for i, c in tables[ns].items() if i in inodes)
    return conns, bool(connecting & ours)


def established(pids: Iterable[int]) -> set[Conn]:
    """Every established TCP connection whose socket one of `pids` holds."""
    return _read(_sockets(pids))[0]


class ConnWatch:
    """:func:`established`, polled: the tables are read again only when
    needed (module doc)."""

    def __init__(self, recheck: int = 10) -> None:
        self.recheck = recheck
        self.reads = 0
        self._key: frozenset[tuple[str, int]] | None = None
        self._last: set[Conn] = set()
        self._pending = False
        self._polls = 0

    def poll(self, pids: Iterable[int]) -> set[Conn]:
        """The established connections of `pids` now."""
        socks = _sockets(pids)
        key = frozenset((ns, i) for ns, inodes in socks.values() for i in inodes)
        self._polls += 1
        if key != self._key or self._pending or self._polls % self.recheck == 0:
            self._last, self._pending = _read(socks)
            self._key = key
            self.reads += 1
        return set(self._last)


#: ``/proc/PID/net`` tables of datagram sockets and their IP protocol
_DATAGRAM = (("udp", 17), ("udp6", 17), ("udplite", 136), ("udplite6", 136))


def datagram_ports(pids: Iterable[int]) -> set[tuple[int, int]]:
    """(IP protocol, local port) of every bound UDP / UDP-Lite socket one
    of `pids` holds (connected or not): ``saba run`` reports a datagram
    flow closed when its socket is gone."""
    return _ports(_sockets(pids))


class DatagramPorts:
    """:func:`datagram_ports`, polled: the tables are read again only when
    the set of socket descriptors changed or when `force`-d (a socket's
    port is set at its first send, its descriptor earlier)."""

    def __init__(self) -> None:
        self.reads = 0
        self._key: frozenset[tuple[str, int]] | None = None
        self._last: set[tuple[int, int]] = set()

    def poll(self, pids: Iterable[int], force: bool = False) -> set[tuple[int, int]]:
        socks = _sockets(pids)
        key = frozenset((ns, i) for ns, inodes in socks.values() for i in inodes)
        if force or key != self._key:
            self._last, self._key = _ports(socks), key
            self.reads += 1
        return set(self._last)


def _ports(socks: dict[int, tuple[str, set[int]]]) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    tables: dict[str, list[tuple[int, dict[int, int]]]] = {}  # per network namespace
    for pid, (ns, inodes) in socks.items():
        if ns not in tables:
            tables[ns] = []
            for name, proto in _DATAGRAM:
                try:
                    tables[ns].append((proto, _bound(Path(f"/proc/{pid}/net/{name}").read_text())))
                except OSError:
                    continue
        for proto, bound in tables[ns]:
            out |= {(proto, p) for i, p in bound.items() if i in inodes}
    return out


def _bound(text: str) -> dict[int, int]:
    """inode -> local port of one ``/proc/net/udp*`` text (port 0, not yet
    bound, left out; malformed lines skipped)."""
    out: dict[int, int] = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 10 or not f[9].isdigit():
            continue
        try:
            port = int(f[1].rsplit(":", 1)[1], 16)
        except (ValueError, IndexError):
            continue
        if port:
            out[int(f[9])] = port
    return out
