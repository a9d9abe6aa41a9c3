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
    ``timeout_s`` for each precise datagram and, once the sender's end
    marker is in, for approximate datagrams still on their way until none
    has come for ``grace_s``.
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
        if deadline is not None:
            # the end marker is precise and may overtake approximate
            # datagrams still queued at the sender: wait while they come
            deadline = time.monotonic() + grace_s
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


def _data(n: int, seed: int) -> npt.NDArray[np.float64]:
    """The study's array: ``n`` seeded normal float64 values."""
    return np.random.default_rng(seed).normal(size=n)


def _errors(sent: npt.NDArray[np.float64], got: npt.NDArray[np.float64]) -> dict[str, float]:
    with np.errstate(all="ignore"):
        err = np.abs(got - sent)
    finite = np.isfinite(err)
    return {
        "max_abs_error": float(err[finite].max()) if finite.any() else math.inf,
        "mean_abs_error": float(err[finite].mean()) if finite.any() else math.inf,
        "non_finite": int((~finite).sum()),
        "exact_fraction": float((err == 0).mean()),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m approxnet.sap.arrays send|recv``: one seeded float64 array
    (the study in experiments/sap/arrays.py runs both ends on a testbed)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m approxnet.sap.arrays")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("send", "recv"):
        s = sub.add_parser(name)
        s.add_argument("--n", type=int, required=True, help="float64 values")
        s.add_argument("--seed", type=int, default=1)
        if name == "send":
            s.add_argument("--peer", required=True)
            s.add_argument("--level", type=int, required=True, help="protected bits per word")
            s.add_argument("--mbps", type=float, help="pace at this rate (default: line rate)")
        else:
            s.add_argument("--bind", required=True)
            s.add_argument("--timeout", type=float, default=60.0)
    a = p.parse_args(argv)
    if a.n < 1:
        p.error("--n must be >= 1")
    sent = _data(a.n, a.seed)
    if a.cmd == "send":
        tx = SapSocket.connect(a.peer, line_rate_mbps=a.mbps)
        t0 = time.monotonic()
        send_array(tx, sent, a.level)
        tx.close(timeout_s=a.n * 8 / 1e5 + 30)
        out: dict[str, Any] = {"seconds": time.monotonic() - t0, "bytes": sent.nbytes}
    else:
        from .._native import SapListener

        lst = SapListener(a.bind)
        print("ready", flush=True)
        rx = lst.accept(timeout_s=a.timeout)
        r = recv_array(rx, timeout_s=a.timeout)
        while rx is not None and rx.recv(timeout_s=5) is not None:
            pass
        planes_sent = approx_types.to_planes(sent, r.level).precise
        planes_got = approx_types.to_planes(r.array, r.level).precise
        out = {
            "level": r.level,
            "chunks": r.chunks,
            "lost_chunks": r.lost_chunks,
            "damaged_chunks": r.damaged_chunks,
            "protected_exact": bool(np.array_equal(planes_sent, planes_got)),
            "protected_bytes_differing": int((planes_sent != planes_got).sum()),
            "prefix_len": r.prefix_len,
            **_errors(sent, r.array),
        }
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
