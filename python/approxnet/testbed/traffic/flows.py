"""Short non-approximate TCP flows and their completion times (FCT)."""

from __future__ import annotations

import select
import socket
import struct
import sys
import time
from typing import Any

from .sockets import connect, ready, recv_exact


def fct_server(port: int, timeout: float) -> dict[str, Any]:
    """Accept connections until stdin closes or `timeout`; read `n` bytes
    (8-byte header), reply 1 byte."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(16)
    ready()
    deadline = time.monotonic() + timeout
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    served = 0
    while time.monotonic() < deadline:
        r, _, _ = select.select([srv, sys.stdin], [], [], max(deadline - time.monotonic(), 0.01))
        if sys.stdin in r and not sys.stdin.readline():
            break  # the orchestrator closed stdin: done
        if srv not in r:
            continue
        c, _ = srv.accept()
        c.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not recv_exact(c, view, 8):
                c.close()
                continue
            (n,) = struct.unpack_from("!Q", buf)
            while n:
                k = c.recv_into(view[: min(n, len(buf))])
                if k == 0:
                    break
                n -= k
            c.sendall(b"k")
            served += 1
        except (TimeoutError, ConnectionError):
            pass
        c.close()
    return {"served": served}


def fct_send(
    dst: str, port: int, flows: int, size: int, gap: float, cc: str | None, tos: int, timeout: float
) -> dict[str, Any]:
    """`flows` short flows one after another (`gap` s apart): connect, send
    `size` bytes, wait for the 1-byte reply. FCT includes the handshake."""
    deadline = time.monotonic() + timeout
    body = struct.pack("!Q", size) + bytes(size)
    out = []
    for i in range(flows):
        if time.monotonic() > deadline:
            break
        t0 = time.monotonic()
        s = connect(dst, port, tos, 5.0, cc, nodelay=True)
        s.settimeout(max(deadline - time.monotonic(), 0.01))
        s.sendall(body)
        ok = s.recv(1) == b"k"
        out.append({"flow": i, "t0": t0, "fct_s": time.monotonic() - t0, "ok": ok})
        s.close()
        time.sleep(gap)
    return {"size": size, "flows": out}
