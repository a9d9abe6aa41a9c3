"""Watches approxnet packets on a host's link (AF_PACKET, no tcpdump)."""

from __future__ import annotations

import select
import socket
import struct
import sys
import time
from typing import Any

from .jobs import SO_RCVBUFFORCE
from .sockets import ready


def capture(
    iface: str, port: int, seconds: float, max_packets: int, reorder: int, acks: bool = False
) -> dict[str, Any]:
    """Watch approxnet DATA packets to UDP `port` arriving on `iface` (an
    AF_PACKET socket, no tcpdump needed) until stdin closes, `seconds` or
    `max_packets`. Per connection, counts packets that arrive `reorder` or
    more transmission seqs behind the newest seen (what the sender's fast
    loss detection with that threshold would call lost, were the ACKs
    prompt), and how many of those changed DSCP (queue) against the newest.
    With `acks`, the same for ACKs coming *from* `port` (by the DATA seq
    they echo), i.e. reordering on the return path."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    s.bind((iface, 0))
    ready()
    deadline = time.monotonic() + seconds
    conns: dict[int, dict[str, int]] = {}
    newest: dict[int, tuple[int, int]] = {}
    seen = 0
    while seen < max_packets:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s, sys.stdin], [], [], left)
        if sys.stdin in r and not sys.stdin.readline():
            break
        if s not in r:
            continue
        frame = s.recv(256)
        ip = frame[14:]
        if len(ip) < 20 + 8 + 28 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0F) * 4
        udp = ip[ihl:]
        if struct.unpack_from("!H", udp, 0 if acks else 2)[0] != port:
            continue
        hdr = udp[8:]
        if len(hdr) < 28 or hdr[1] != (2 if acks else 1):  # ACK or DATA only
            continue
        seen += 1
        conn = struct.unpack_from("!Q", hdr, 4)[0]
        seq = struct.unpack_from("!I", hdr, 24)[0]
        tos = ip[1] & 0xFC
        c = conns.setdefault(conn, {"data": 0, "late": 0, "late_other_queue": 0})
        c["data"] += 1
        top = newest.get(conn)
        if top is None or seq > top[0]:
            newest[conn] = (seq, tos)
        elif top[0] - seq >= reorder:
            c["late"] += 1
            c["late_other_queue"] += int(tos != top[1])
    total = {k: sum(c[k] for c in conns.values()) for k in ("data", "late", "late_other_queue")}
    return {"iface": iface, "acks": acks, "reorder": reorder, "connections": len(conns), **total}
