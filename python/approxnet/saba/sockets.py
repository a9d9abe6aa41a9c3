"""The established TCP connections of a set of processes, from ``/proc``
(``approxnet saba run`` polls this to report connection open / close):
the socket inodes of each process's file descriptors, matched against
``/proc/PID/net/tcp`` and ``tcp6`` (the table of that process's network
namespace). A connection that opens and closes between two polls is not
seen.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Conn", "established", "parse_table"]

_SOCKET = re.compile(r"socket:\[(\d+)\]")
_ESTABLISHED = "01"


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


def parse_table(text: str) -> dict[int, Conn]:
    """Established connections of one ``/proc/net/tcp[6]`` text by socket
    inode; malformed lines are skipped."""
    out: dict[int, Conn] = {}
    for line in text.splitlines()[1:]:
        f = line.split()
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


def established(pids: Iterable[int]) -> set[Conn]:
    """Every established TCP connection whose socket one of `pids` holds."""
    conns: set[Conn] = set()
    tables: dict[str, dict[int, Conn]] = {}  # per network namespace
    for pid in pids:
        inodes = _inodes(pid)
        if not inodes:
            continue
        try:
            ns = os.readlink(f"/proc/{pid}/ns/net")
            if ns not in tables:
                tables[ns] = {}
                for name in ("tcp", "tcp6"):
                    tables[ns].update(parse_table(Path(f"/proc/{pid}/net/{name}").read_text()))
        except OSError:
            continue
        conns.update(c for i, c in tables[ns].items() if i in inodes)
    return conns
