"""Numerical arrays over SAP with their significant bits protected: seed
004's approximate data types (:mod:`approxnet.approx_types`) on seed 002's
selectively approximate sockets.

:func:`send_array` lays the array out with the top ``level`` bits of every
word first (:func:`~approxnet.approx_types.to_planes`) and sends that
precise prefix in precise mode (acknowledged, resent, in order); the rest
goes in approximate mode, never resent, each datagram carrying its offset
under the UDP-Lite checksum (a damaged offset loses the datagram, a damaged
payload is delivered damaged). :func:`recv_array` rebuilds the array: the
protected bits are exact, an approximate datagram that was lost leaves its
bits zero (the low-order bits of its words: a bounded error), a damaged one
is used as received.

    >>> import threading, numpy as np
    >>> from approxnet.sap import SapListener, SapSocket
    >>> from approxnet.sap.arrays import recv_array, send_array
    >>> lst = SapListener("127.0.0.1:0")
    >>> out = []
    >>> def serve() -> None:
    ...     rx = lst.accept(timeout_s=10)
    ...     out.append(recv_array(rx))
    ...     while rx.recv(timeout_s=10) is not None:  # until the sender closes
    ...         pass
    >>> t = threading.Thread(target=serve)
    >>> t.start()
    >>> tx = SapSocket.connect(lst.local_addr)
    >>> a = np.linspace(0.0, 1.0, 1000)
    >>> send_array(tx, a, level=16)
    >>> tx.close(timeout_s=10)
    >>> t.join()
    >>> bool(np.array_equal(out[0].array, a)), out[0].lost_chunks
    (True, 0)
"""

from __future__ import annotations

import json
import math
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _native, approx_types
from .._native import ConfigError, SapSocket, TransferError

__all__ = ["ArrayReceipt", "recv_array", "send_array"]

_HEAD = b"AXA1"
_END = b"AXAE"
_OFFSET = struct.Struct("<Q")
PRECISE_CHUNK = 64 << 10
"""Bytes of the precise prefix per datagram (a message the core fragments)."""
APPROX_CHUNK = 1024
"""Bytes of the approximate rest per datagram: one packet each, so a loss
costs one chunk."""
MAX_HEADER = 4096


@dataclass(frozen=True)
class ArrayReceipt:
    """What :func:`recv_array` rebuilt."""

    array: npt.NDArray[Any]
    level: int
    """Protected bits per word (the sender's)."""
    prefix_len: int
    """Bytes of the precise prefix."""
    chunks: int
    """Approximate datagrams the sender sent."""
    lost_chunks: int
    """Of those, never arrived (their bits are zero)."""
    damaged_chunks: int
    """Arrived damaged (used as received)."""


def send_array(
    sock: SapSocket, a: npt.NDArray[Any], level: int, *, dtype: str | None = None
) -> None:
    """Sends ``a`` with its top ``level`` bits per word precise (see the
    module doc); returns once every datagram is handed to the socket (the
    precise part is acknowledged by :meth:`SapSocket.flush` /
    :meth:`SapSocket.close`). Leaves the socket in precise mode."""
    planes = approx_types.to_planes(a, level, dtype=dtype)
    data = planes.data.tobytes()
    rest = len(data) - planes.prefix_len
    chunks = math.ceil(rest / APPROX_CHUNK)
    head = {
        "dtype": planes.dtype,
        "shape": list(planes.shape),
        "level": level,
        "prefix_len": planes.prefix_len,
        "nbytes": len(data),
        "chunks": chunks,
    }
    sock.mode = "precise"
    sock.send(_HEAD + json.dumps(head).encode())
    for off in range(0, planes.prefix_len, PRECISE_CHUNK):
        sock.send(data[off : min(off + PRECISE_CHUNK, planes.prefix_len)])
    sock.mode = "approximate"
    base = planes.prefix_len
    for k in range(chunks):
        off = k * APPROX_CHUNK
        piece = data[base + off : base + min(off + APPROX_CHUNK, rest)]
        sock.send(_OFFSET.pack(off) + piece, precise_len=_OFFSET.size)
    sock.mode = "precise"
    sock.send(_END)


def _header(raw: bytes, max_bytes: int) -> dict[str, Any]:
    """The sender's header, checked before anything is allocated."""
    if not raw.startswith(_HEAD) or len(raw) > MAX_HEADER:
        raise TransferError("not an approxnet array header")
    try:
        h = json.loads(raw[len(_HEAD) :])
        dtype, shape, level = str(h["dtype"]), [int(x) for x in h["shape"]], int(h["level"])
        prefix_len, nbytes, chunks = int(h["prefix_len"]), int(h["nbytes"]), int(h["chunks"])
    except (ValueError, KeyError, TypeError) as e:
        raise TransferError(f"bad array header: {e}") from None
    if len(shape) > 32 or any(x < 0 for x in shape):
        raise TransferError(f"bad array header: shape {shape}")
    words = math.prod(shape)
    if not 0 <= nbytes <= max_bytes:
        raise TransferError(f"array of {nbytes} bytes is over max_bytes={max_bytes}")
    try:
        bits, parts = _native.approx_dtype_shape(dtype)
        expect_prefix = _native.approx_prefix_len(nbytes, dtype, level)
    except (ConfigError, ValueError, OverflowError) as e:
        raise TransferError(f"bad array header: {e}") from None
    if words * bits * parts // 8 != nbytes:
        raise TransferError(f"bad array header: shape {shape} of {dtype} is not {nbytes} bytes")
    if prefix_len != expect_prefix or chunks != math.ceil((nbytes - prefix_len) / APPROX_CHUNK):
        raise TransferError("bad array header: inconsistent prefix / chunk counts")
    return {"dtype": dtype, "shape": tuple(shape), "level": level, "prefix_len": prefix_len,
            "nbytes": nbytes, "chunks": chunks}  # fmt: skip


def recv_array(
    sock: SapSocket | None,
    *,
    timeout_s: float = 30.0,
    grace_s: float = 0.2,
    max_bytes: int = 256 << 20,
) -> ArrayReceipt:
    """Receives one array sent by :func:`send_array`. Waits up to
    ``timeout_s`` for each precise datagram, and ``grace_s`` after the
    sender's end marker for approximate datagrams still on their way.
    Refuses (``TransferError``) a header that does not describe a
    well-formed array of at most ``max_bytes``; approximate datagrams with
    an offset outside the array are ignored. The socket stays open (keep
    receiving until the sender closes: its close waits for our ACKs)."""
    if sock is None:
        raise TransferError("no connection to receive an array from")
    first = sock.recv(timeout_s=timeout_s)
    if first is None or first.approximate:
        raise TransferError("no array header arrived")
    h = _header(first.data, max_bytes)
    data = np.zeros(h["nbytes"], dtype=np.uint8)
    prefix_len, rest = h["prefix_len"], h["nbytes"] - h["prefix_len"]
    got_prefix, seen, damaged, ended = 0, set(), 0, False
    deadline = None
    while True:
        wait = timeout_s if deadline is None else max(0.0, deadline - time.monotonic())
        if deadline is not None and (len(seen) == h["chunks"] or wait == 0.0):
            break
        d = sock.recv(timeout_s=wait)
        if d is None:
            if deadline is None:
                raise TransferError("the array stopped arriving before its end marker")
            break
        if not d.approximate:
            if d.data == _END and got_prefix == prefix_len:
                ended = True
                deadline = time.monotonic() + grace_s
                continue
            n = len(d.data)
            if ended or got_prefix + n > prefix_len:
                raise TransferError("more precise data than the header announced")
            data[got_prefix : got_prefix + n] = np.frombuffer(d.data, dtype=np.uint8)
            got_prefix += n
            continue
        if len(d.data) < _OFFSET.size:
            continue
        (off,) = _OFFSET.unpack_from(d.data)
        piece = d.data[_OFFSET.size :]
        if off % APPROX_CHUNK or off + len(piece) > rest or off // APPROX_CHUNK in seen:
            continue
        seen.add(off // APPROX_CHUNK)
        damaged += int(d.damaged)
        start = prefix_len + off
        data[start : start + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
    planes = approx_types.Planes(data, prefix_len, h["dtype"], h["shape"], h["level"])
    return ArrayReceipt(
        array=approx_types.from_planes(planes),
        level=h["level"],
        prefix_len=prefix_len,
        chunks=h["chunks"],
        lost_chunks=h["chunks"] - len(seen),
        damaged_chunks=damaged,
    )
