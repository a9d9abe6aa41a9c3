"""A full mesh of TCP connections between the workers of one job, with a
barrier and an all-to-all exchange — the communication layer of the
`join` and `wordcount` workloads (seed 003 §4.1's SQL-like and
little-communication jobs). Every socket carries the job's DSCP.

Wire format between two workers: a 4-byte big-endian index when the
connection opens, then length-prefixed blobs (8-byte big-endian length).
A blob longer than `MAX_BLOB` is refused (a peer's bytes are not trusted).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Sequence

__all__ = ["Mesh", "MAX_BLOB"]

MAX_BLOB = 1 << 32


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    parts, left = [], n
    while left > 0:
        got = sock.recv(min(left, 1 << 20))
        if not got:
            raise ConnectionError("peer closed early")
        parts.append(got)
        left -= len(got)
    return b"".join(parts)


class Mesh:
    """Worker `index` of `hosts` connected to every other worker."""

    def __init__(self, index: int, hosts: Sequence[str], port: int, dscp: int = 0) -> None:
        n = len(hosts)
        if not 0 <= index < n:
            raise ValueError(f"index {index} outside 0..{n - 1}")
        self.index, self.n = index, n
        self.peers: dict[int, socket.socket] = {}
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)  # accepted ones inherit it
        srv.bind(("0.0.0.0", port))
        srv.listen(n)
        srv.settimeout(240)
        # connect to the higher indices, accept the lower ones
        for j in range(index + 1, n):
            self.peers[j] = self._connect(hosts[j], port, dscp)
        for _ in range(index):
            sock, _addr = srv.accept()
            (j,) = struct.unpack("!I", _recv_exact(sock, 4))
            if not 0 <= j < index or j in self.peers:
                raise ConnectionError(f"unexpected peer index {j}")
            self.peers[j] = sock
        srv.close()

    def _connect(self, host: str, port: int, dscp: int) -> socket.socket:
        deadline = time.monotonic() + 180
        while True:
            sock = socket.socket()
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)
            try:
                sock.connect((host, port))
                sock.sendall(struct.pack("!I", self.index))
                return sock
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)  # the peer's listener is not up yet

    def barrier(self) -> None:
        """Returns once every worker has reached it."""
        self.all_to_all({j: b"" for j in self.peers})

    def all_to_all(self, blobs: dict[int, bytes]) -> dict[int, bytes]:
        """Sends `blobs[j]` to each peer j (all at once) and returns what
        each peer sent here."""
        if set(blobs) != set(self.peers):
            raise ValueError("one blob per peer")
        errors: list[BaseException] = []

        def send(j: int) -> None:
            try:
                self.peers[j].sendall(struct.pack("!Q", len(blobs[j])) + blobs[j])
            except OSError as e:  # reported after the join
                errors.append(e)

        threads = [threading.Thread(target=send, args=(j,)) for j in self.peers]
        for t in threads:
            t.start()
        got: dict[int, bytes] = {}
        for j, sock in self.peers.items():
            (size,) = struct.unpack("!Q", _recv_exact(sock, 8))
            if size > MAX_BLOB:
                raise ConnectionError(f"peer {j} announced {size} bytes")
            got[j] = _recv_exact(sock, size)
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return got

    def close(self) -> None:
        """Closes every connection."""
        for sock in self.peers.values():
            sock.close()
