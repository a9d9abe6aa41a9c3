"""SAP sockets (seed 002, Selective Approximate Protocol) over UDP-Lite.

A :class:`SapSocket` is precise by default: every datagram is
acknowledged, retransmitted until it arrives and delivered in order (with
the core's congestion control, pacing and ACK coalescing). Set
``sock.mode = "approximate"`` and datagrams are sent once, never
retransmitted; ``send(data, precise_len=n)`` keeps the first ``n`` bytes
under the kernel's UDP-Lite checksum (a damaged prefix loses the datagram)
and leaves the rest to the link. The receiver chooses whether it accepts
damaged approximate data (``accept_damaged``) and learns per datagram
whether it was damaged (:attr:`SapDatagram.damaged`).

    >>> import threading
    >>> from approxnet.sap import SapListener, SapSocket
    >>> listener = SapListener("127.0.0.1:0")
    >>> got = []
    >>> def serve() -> None:
    ...     rx = listener.accept(timeout_s=10)
    ...     assert rx is not None
    ...     while (d := rx.recv(timeout_s=10)) is not None:
    ...         got.append(d)
    >>> t = threading.Thread(target=serve)
    >>> t.start()
    >>> tx = SapSocket.connect(listener.local_addr)
    >>> tx.send(b"header")
    >>> tx.mode = "approximate"
    >>> tx.send(b"len=5 pixels...", precise_len=5)
    >>> tx.close(timeout_s=10)
    >>> t.join()
    >>> [(d.data, d.approximate) for d in got]
    [(b'header', False), (b'len=5 pixels...', True)]

Errors: ``AddressError`` (bad address), ``ConnectError`` (no handshake),
``JobError`` (e.g. ``precise_len`` longer than the datagram),
``TransferError`` (connection lost, close or flush not acknowledged in
time), ``NetError`` (socket error).
"""

from __future__ import annotations

from .._native import SapDatagram, SapListener, SapSocket

__all__ = ["MODES", "SapDatagram", "SapListener", "SapSocket"]

#: The values of :attr:`SapSocket.mode`.
MODES = ("precise", "approximate")
