"""Plain streams: N UDP datagrams, one TCP stream for a time (goodput).

python -m approxnet.testbed.traffic udp-recv --port 5000 --count 100 --timeout 5
python -m approxnet.testbed.traffic udp-send --dst 10.77.3.2 --port 5000 --count 100 --tos 0xe0
python -m approxnet.testbed.traffic tcp-recv --port 5001 --timeout 10
python -m approxnet.testbed.traffic tcp-send --dst 10.77.3.2 --port 5001 --seconds 2
"""

from __future__ import annotations

import socket
import time
from typing import Any

from .sockets import congestion_control, connect, ready

#: UDP payload that fills a 1500-byte IP packet (1500 - 20 - 8).
FULL_PAYLOAD = 1472
CHUNK = 64 * 1024


def udp_send(dst: str, port: int, count: int, size: int, tos: int) -> dict[str, Any]:
    """Send `count` datagrams of `size` bytes with IP TOS byte `tos`, back to back."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    payload = bytes(size)
    sent = errors = 0
    for _ in range(count):
        try:
            sock.sendto(payload, (dst, port))
            sent += 1
        except OSError:
            errors += 1
    return {"sent": sent, "errors": errors}


def udp_recv(port: int, count: int, timeout: float, idle: float) -> dict[str, Any]:
    """Count datagrams until `count` arrive, `idle` s pass without one after
    the first, or `timeout` s pass in total."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("0.0.0.0", port))
    ready()
    deadline = time.monotonic() + timeout
    received = nbytes = 0
    while received < count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(min(left, idle) if received else left)
        try:
            nbytes += len(sock.recv(65536))
        except TimeoutError:
            break
        received += 1
    return {"received": received, "bytes": nbytes}


def tcp_send(
    dst: str, port: int, seconds: float, tos: int, connect_timeout: float, cc: str | None = None
) -> dict[str, Any]:
    """Stream zeros over kernel TCP for `seconds` (congestion control `cc`,
    default: the namespace's), then close."""
    sock = connect(dst, port, tos, connect_timeout, cc)
    buf = bytes(CHUNK)
    sent = 0
    start = time.monotonic()
    end = start + seconds
    sock.settimeout(max(seconds, 1.0) + 5.0)
    while time.monotonic() < end:
        sent += sock.send(buf)
    used = congestion_control(sock)
    sock.close()
    return {"bytes": sent, "seconds": time.monotonic() - start, "cc": used}


def tcp_recv(port: int, timeout: float) -> dict[str, Any]:
    """Accept one connection and read to EOF; report bytes and the time from
    first to last byte (goodput seen by the receiver)."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    ready()
    srv.settimeout(timeout)
    deadline = time.monotonic() + timeout
    conn, _ = srv.accept()
    total, first, last = 0, 0.0, 0.0
    while True:
        conn.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            data = conn.recv(1 << 20)
        except TimeoutError:
            break
        if not data:
            break
        now = time.monotonic()
        if total == 0:
            first = now
        total, last = total + len(data), now
    seconds = last - first
    rate = total * 8 / seconds if seconds > 0 else 0.0
    return {"bytes": total, "seconds": seconds, "goodput_bps": rate}
