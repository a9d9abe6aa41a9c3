"""Socket helpers shared by the traffic tools."""

from __future__ import annotations

import socket
import time


def ready() -> None:
    """Tells the orchestrator the tool is set up (it waits for this line)."""
    print("ready", flush=True)


def sleep_until(t: float) -> None:
    """Sleeps until monotonic time `t` (returns at once if it is past)."""
    left = t - time.monotonic()
    if left > 0:
        time.sleep(left)


def connect(
    dst: str, port: int, tos: int, timeout: float, cc: str | None = None, nodelay: bool = False
) -> socket.socket:
    """A kernel-TCP connection with IP TOS byte `tos`, congestion control
    `cc` (default: the namespace's) and, with `nodelay`, TCP_NODELAY;
    retries refused attempts until `timeout` (the receiver is starting)."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
        if nodelay:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        s.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            s.connect((dst, port))
            return s
        except (ConnectionRefusedError, TimeoutError):
            s.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def recv_exact(s: socket.socket, view: memoryview, n: int) -> bool:
    """Reads exactly `n` bytes into `view`; False at EOF first."""
    got = 0
    while got < n:
        k = s.recv_into(view[got:n])
        if k == 0:
            return False
        got += k
    return True


def congestion_control(s: socket.socket) -> str:
    """The congestion control a TCP socket uses."""
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
