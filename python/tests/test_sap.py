"""SAP sockets from Python over loopback UDP-Lite (no root needed)."""

from __future__ import annotations

import threading

import pytest

from approxnet import ConfigError, JobError
from approxnet.sap import SapDatagram, SapListener, SapSocket


def _serve(listener: SapListener, got: list[SapDatagram]) -> threading.Thread:
    def run() -> None:
        rx = listener.accept(timeout_s=20)
        assert rx is not None
        while (d := rx.recv(timeout_s=20)) is not None:
            got.append(d)
        assert rx.peer_closed

    t = threading.Thread(target=run)
    t.start()
    return t


def test_modes_switch_and_precise_datagrams_arrive_in_order() -> None:
    listener = SapListener("127.0.0.1:0")
    got: list[SapDatagram] = []
    t = _serve(listener, got)
    tx = SapSocket.connect(listener.local_addr)
    assert tx.mode == "precise"
    for i in range(50):
        tx.send(i.to_bytes(4, "big") * 100)
    tx.mode = "approximate"
    for i in range(50, 60):
        tx.send(i.to_bytes(4, "big") * 100, precise_len=4)
    tx.mode = "precise"
    tx.send(b"last")
    tx.close(timeout_s=20)
    t.join(timeout=30)
    assert not t.is_alive()
    precise = [d for d in got if not d.approximate]
    assert [d.data[:4] for d in precise[:-1]] == [i.to_bytes(4, "big") for i in range(50)]
    assert precise[-1].data == b"last"
    assert all(d.precise_len == len(d.data) and not d.damaged for d in precise)
    approx = [d for d in got if d.approximate]
    assert all(d.precise_len == 4 for d in approx)
    assert len(approx) >= 9  # never resent: a busy host may drop one


def test_bad_arguments_are_named_errors() -> None:
    listener = SapListener("127.0.0.1:0")
    got: list[SapDatagram] = []
    t = _serve(listener, got)
    tx = SapSocket.connect(listener.local_addr)
    with pytest.raises(ConfigError, match="mode"):
        tx.mode = "sloppy"
    tx.mode = "approximate"
    with pytest.raises(JobError, match="precise prefix of 11 bytes exceeds its 10 bytes"):
        tx.send(b"0123456789", precise_len=11)
    with pytest.raises(ConfigError, match="timeout_s"):
        tx.close(timeout_s=-1)
    tx.send(b"ok", precise_len=2)
    tx.close(timeout_s=20)
    t.join(timeout=30)
    assert [d.data for d in got] == [b"ok"]
