"""Background traffic: paced UDP with a DSCP queue schedule, and a sink."""

from __future__ import annotations

import select
import socket
import struct
import sys
import time
from typing import Any

from .jobs import UDP_SEGMENT
from .sockets import ready


def cbr(
    dst: str, port: int, rate_mbps: float, seconds: float, schedule: str, size: int, burst: int
) -> dict[str, Any]:
    """Paced UDP at `rate_mbps` (IP bytes) for `seconds` or until stdin
    closes; `schedule` is `t:queue,...` (queue q -> DSCP q<<3) relative to
    the start. Sends `burst` datagrams per `sendmsg` (UDP GSO) to spare the
    CPU. Behind on its schedule (a busy CPU), it catches up in bursts of at
    most 256 datagrams; `achieved_mbps` is what it really sent."""
    steps = sorted((float(t), int(q)) for t, q in (x.split(":") for x in schedule.split(",")))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    payload = bytes(size)
    block = payload * burst
    gso = [(socket.SOL_UDP, UDP_SEGMENT, struct.pack("=H", size))] if burst > 1 else []
    per_s = rate_mbps * 1e6 / 8 / (size + 28)
    ready()
    t0 = time.monotonic()
    sent = errors = 0
    cur = -1
    log = []
    while True:
        now = time.monotonic()
        el = now - t0
        if el >= seconds:
            break
        q = [qq for t, qq in steps if t <= el][-1] if steps[0][0] <= el else steps[0][1]
        if q != cur:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, q << 5)
            cur = q
            log.append({"t": now, "queue": q})
        owed = min(int(el * per_s) - sent, 256)
        while owed >= burst:
            try:
                s.sendmsg([block], gso, 0, (dst, port))
            except OSError:
                errors += burst
            sent += burst
            owed -= burst
        if owed < burst:
            # Sleep briefly; stop early when the orchestrator closes stdin.
            if select.select([sys.stdin], [], [], 0.0005)[0] and not sys.stdin.readline():
                break
    el = time.monotonic() - t0
    return {
        "t0": t0,
        "seconds": el,
        "sent": sent,
        "errors": errors,
        "rate_mbps": rate_mbps,
        "achieved_mbps": sent * (size + 28) * 8 / max(el, 1e-9) / 1e6,
        "switches": log,
    }


def sink(port: int, seconds: float) -> dict[str, Any]:
    """A bound UDP socket that never reads (so the host sends no ICMP)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    s.bind(("0.0.0.0", port))
    ready()
    # Until the orchestrator closes stdin (or is gone), at most `seconds`.
    select.select([sys.stdin], [], [], seconds)
    return {"port": port}
