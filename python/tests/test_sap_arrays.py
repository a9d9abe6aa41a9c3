"""Arrays with protected bits over SAP (seed 004's data types on seed 002's
sockets), over loopback UDP-Lite: the round trip, and headers a receiver
refuses before allocating anything."""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np
import pytest

from approxnet import TransferError, approx_types
from approxnet.sap import SapListener, SapSocket
from approxnet.sap.arrays import APPROX_CHUNK, ArrayReceipt, recv_array, send_array


def _receive(listener: SapListener, out: list[Any], **kw: Any) -> threading.Thread:
    def run() -> None:
        rx = listener.accept(timeout_s=20)
        try:
            out.append(recv_array(rx, **kw))
        except TransferError as e:
            out.append(e)
        # the socket stays open until the sender closes (its close waits
        # for our acknowledgements)
        while rx is not None and rx.recv(timeout_s=20) is not None:
            pass

    t = threading.Thread(target=run)
    t.start()
    return t


def _round_trip(a: np.ndarray[Any, Any], level: int, dtype: str | None = None) -> ArrayReceipt:
    listener = SapListener("127.0.0.1:0")
    out: list[Any] = []
    t = _receive(listener, out)
    tx = SapSocket.connect(listener.local_addr)
    send_array(tx, a, level, dtype=dtype)
    tx.close(timeout_s=20)
    t.join()
    assert isinstance(out[0], ArrayReceipt), out
    r: ArrayReceipt = out[0]
    return r


@pytest.mark.parametrize(
    ("dtype", "level"),
    [("float64", 16), ("float32", 0), ("complex64", 12), ("float64", 64), ("bfloat16", 9)],
)
def test_an_array_round_trips_with_its_protected_bits_exact(dtype: str, level: int) -> None:
    rng = np.random.default_rng(7)
    if dtype == "bfloat16":
        a: np.ndarray[Any, Any] = rng.integers(0, 1 << 16, size=(40, 70), dtype=np.uint16)
    elif dtype == "complex64":
        a = (rng.normal(size=3000) + 1j * rng.normal(size=3000)).astype(np.complex64)
    else:
        a = rng.normal(size=(50, 60)).astype(dtype)
    r = _round_trip(a, level, dtype="bfloat16" if dtype == "bfloat16" else None)
    assert r.array.shape == a.shape and r.level == level
    assert r.prefix_len == approx_types.prefix_len(a, level, dtype=r_dtype(dtype))
    rest = a.nbytes - r.prefix_len
    assert r.chunks == -(-rest // APPROX_CHUNK)
    # the protected bits arrive exactly, whatever happened to the rest
    sent = approx_types.to_planes(a, level, dtype=r_dtype(dtype)).precise
    got = approx_types.to_planes(r.array, level, dtype=r_dtype(dtype)).precise
    assert np.array_equal(sent, got)
    if r.lost_chunks == 0:  # loopback: nothing lost, nothing damaged
        assert np.array_equal(r.array.view(np.uint8), a.view(np.uint8))
    assert r.damaged_chunks == 0


def r_dtype(dtype: str) -> str | None:
    return "bfloat16" if dtype == "bfloat16" else None


@pytest.mark.parametrize(
    ("header", "needle"),
    [
        (b"AXA1{not json", "bad array header"),
        (b"hello", "not an approxnet array header"),
        ({"shape": [1 << 20, 1 << 20]}, "over max_bytes"),
        ({"shape": [10, 11]}, "is not"),
        ({"dtype": "object"}, "bad array header"),
        ({"prefix_len": 3}, "inconsistent"),
        ({"chunks": 99}, "inconsistent"),
    ],
)
def test_a_receiver_refuses_bad_headers(header: bytes | dict[str, Any], needle: str) -> None:
    good = {"dtype": "float64", "shape": [100], "level": 16, "prefix_len": 200, "nbytes": 800}
    good["chunks"] = -(-(800 - 200) // APPROX_CHUNK)
    if isinstance(header, dict):
        h = {**good, **header}
        if "shape" in header and header["shape"] == [1 << 20, 1 << 20]:
            h["nbytes"] = 8 << 40
        raw = b"AXA1" + json.dumps(h).encode()
    else:
        raw = header
    listener = SapListener("127.0.0.1:0")
    out: list[Any] = []
    t = _receive(listener, out, max_bytes=1 << 20)
    tx = SapSocket.connect(listener.local_addr)
    tx.send(raw)
    tx.close(timeout_s=20)
    t.join()
    assert isinstance(out[0], TransferError), out
    assert needle in str(out[0])
