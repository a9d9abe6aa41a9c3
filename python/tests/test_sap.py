"""SAP sockets from Python over loopback UDP-Lite (no root needed)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from approxnet import ConfigError, JobError
from approxnet.sap import SapDatagram, SapListener, SapSocket, streamer, tracker, webserver


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


def test_the_seed_002_applications_on_loopback(tmp_path: Path) -> None:
    # Tracker: the plausibility filter drops a reading moved by a flipped
    # exponent bit, and the moving average over the whole trace is the
    # trace's own.
    avg = tracker.SpeedAverage()
    points = tracker.trace(1)
    for t, p in enumerate(points[:10]):
        avg.update(t, p)
    lat = bytearray(struct.pack(">d", points[10][0]))
    lat[1] ^= 0x10  # an exponent bit: the latitude moves by degrees
    avg.update(10, (struct.unpack(">d", bytes(lat))[0], points[10][1]))
    assert avg.discarded == 1
    assert 1.3 < tracker.ground_truth(1) < 1.8
    # Streamer: the stream both ends agree on, prefix first.
    d = streamer.datagram(7, 3, 64)
    assert len(d) == 64 and d[:4] == (3).to_bytes(4, "big") and d != streamer.datagram(7, 4, 64)
    # Web server: the three ways to fetch a file, over loopback.
    (tmp_path / "f.bin").write_bytes(bytes(range(256)) * 40)
    srv = threading.Thread(target=webserver.serve, args=("127.0.0.1:18181", tmp_path), daemon=True)
    srv.start()
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", 18181), timeout=1).close()
            break
        except OSError:
            time.sleep(0.02)
    for mode in webserver.MODES:
        body, info = webserver.fetch("http://127.0.0.1:18181/f.bin", mode, "127.0.0.1", 20)
        assert body == (tmp_path / "f.bin").read_bytes(), mode
        assert info["mode"] == mode and info["lost_chunks"] == 0
        assert info["precise_chunks"] == (10 if mode == "sap-precise" else 0), mode
    # A JPEG: its header chunk precise, then approximate (exact on loopback).
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.effect_noise((160, 120), 60).convert("RGB").save(buf, format="JPEG")
    (tmp_path / "p.jpg").write_bytes(buf.getvalue())
    body, info = webserver.fetch("http://127.0.0.1:18181/p.jpg", "sap-approx", "127.0.0.1", 20)
    assert body == buf.getvalue() and info["lost_chunks"] == 0
    assert info["precise_chunks"] == 1 < len(body) // webserver.CHUNK
    with pytest.raises(ValueError, match="mode"):
        webserver.fetch("http://127.0.0.1:18181/f.bin", "udp", "127.0.0.1", 1)


def test_a_jpeg_header_ends_at_its_start_of_scan() -> None:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 90)).save(buf, format="JPEG", quality=80)
    jpg = buf.getvalue()
    n = webserver.jpeg_header_len(jpg)
    # The SOS segment is the header's last: its marker sits at n - 2 - len.
    sos = jpg.rfind(b"\xff\xda", 0, n)
    assert sos > 0 and sos + 2 + int.from_bytes(jpg[sos + 2 : sos + 4], "big") == n
    assert 100 < n < len(jpg)
    # Not a JPEG, truncated, or a broken segment length: no header.
    assert webserver.jpeg_header_len(b"GIF89a" + jpg) == 0
    assert webserver.jpeg_header_len(jpg[: sos - 1]) == 0
    assert webserver.jpeg_header_len(jpg[:2] + b"\xff\xe0\x00\x01" + jpg[6:]) == 0
    assert webserver.jpeg_header_len(jpg[:2] + b"\x00" + jpg[3:]) == 0
