"""The real runtime from Python: two SocketEndpoints on 127.0.0.1 move a
lossy tensor job and a reliable job end to end; bad input raises approxnet's
typed exceptions; waits end at their timeouts."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import approxnet
from approxnet import (
    AddressError,
    ApproxnetError,
    Config,
    ConfigError,
    ConnectError,
    Job,
    JobComplete,
    JobError,
    MessageDelivered,
    NetError,
    TensorReady,
    TransferError,
)
from approxnet.net import SocketEndpoint


class _Server:
    """Drives a SocketEndpoint in a thread (the protocol runs only while a
    call waits), collecting its events."""

    def __init__(self, ep: SocketEndpoint) -> None:
        self.ep = ep
        self.events: list[Any] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            ev = self.ep.next_event(timeout_s=0.05)
            if ev is not None:
                self.events.append(ev)

    def wait_for(self, pred: Any, timeout_s: float = 10.0) -> Any:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            for ev in list(self.events):
                if pred(ev):
                    return ev
            time.sleep(0.01)
        raise AssertionError(f"no matching event within {timeout_s} s; saw {self.events}")

    def stop(self) -> None:
        self._stop.set()
        self._t.join()


@contextlib.contextmanager
def _udplite_pair(seed: int) -> Iterator[tuple[_Server, SocketEndpoint, Any]]:
    """A UDP-Lite endpoint driven by a `_Server` and a UDP-Lite client
    (`seed`) connected to it; skips on a kernel without UDP-Lite. The server
    stops on leaving."""
    try:
        ep = SocketEndpoint(udplite=True)
    except NetError as e:  # a kernel without UDP-Lite
        pytest.skip(f"UDP-Lite unavailable: {e}")
    server = _Server(ep)
    try:
        client = SocketEndpoint(udplite=True, seed=seed)
        conn = client.connect(ep.local_addr, timeout_s=5.0)
        yield server, client, conn
    finally:
        server.stop()


def test_errors_form_one_hierarchy() -> None:
    for exc in (NetError, TransferError):
        assert issubclass(exc, ApproxnetError)
        assert exc.__module__ == "approxnet"
    assert approxnet.net.SocketEndpoint is approxnet.SocketEndpoint


def test_tensor_job_with_msr_below_one_and_reliable_job_end_to_end() -> None:
    server = _Server(SocketEndpoint("127.0.0.1:0", seed=1))
    client = SocketEndpoint(bind="127.0.0.1:0", config=Config(), seed=2)
    addr = server.ep.local_addr
    assert addr.startswith("127.0.0.1:") and int(addr.rsplit(":", 1)[1]) > 0
    try:
        conn = client.connect(addr, timeout_s=5.0)
        assert client.peer(conn) == addr
        assert client.connection_count == 1

        x = np.random.default_rng(0).standard_normal(20_000).astype(np.float32)
        tensor_job = client.send_job(conn, Job.tensor(x, p=0.8))
        done = client.wait_job(conn, tensor_job, timeout_s=10.0)
        assert isinstance(done, JobComplete)
        assert done.ok and done.role == "sender" and done.job == tensor_job
        assert done.report is not None and done.report.guarantee_held

        # The server sees the tensor with at least a fraction p of it, exact.
        ready = server.wait_for(lambda e: isinstance(e, TensorReady))
        assert ready.job == tensor_job and ready.dtype == "float32"
        assert ready.fraction >= 0.8
        got = ready.array()
        assert got.shape == x.shape
        have = np.ones(x.size, bool)
        for a, b in ready.missing:
            have[a:b] = False
        assert have.mean() == pytest.approx(ready.fraction)
        np.testing.assert_array_equal(got[have], x[have])

        # A reliable job of messages: every byte, in order.
        msgs = [bytes([i]) * (100 + i) for i in range(50)]
        job = Job(msr=1.0)
        for m in msgs:
            job.message(0, m)
        jid = client.send_job(conn, job)
        assert client.wait_job(conn, jid, timeout_s=10.0).ok
        server.wait_for(
            lambda e: isinstance(e, JobComplete) and e.job == jid and e.role == "receiver"
        )
        delivered = [
            e.payload for e in server.events if isinstance(e, MessageDelivered) and e.job == jid
        ]
        assert delivered == msgs

        stats = client.stats()
        assert stats["send_datagrams"] > 0 and stats["send_bytes"] > 0
        assert server.ep.stats()["recv_datagrams"] > 0
        client.close(conn)
        assert client.finish(timeout_s=5.0)
        assert "SocketEndpoint(" in repr(client)
    finally:
        server.stop()


def test_udplite_endpoints_talk() -> None:
    with _udplite_pair(seed=3) as (server, client, conn):
        jid = client.send_job(conn, Job(msr=1.0).message(0, b"x" * 3000, precise_len=100))
        assert client.wait_job(conn, jid, timeout_s=10.0).ok
        ev = server.wait_for(lambda e: isinstance(e, MessageDelivered))
        assert ev.payload == b"x" * 3000


def test_protected_tensor_over_udplite_keeps_its_layout() -> None:
    """A tensor job with protected bits (seed 004 §4.1) over real sockets:
    each chunk in the byte-plane layout with its protected bits as the
    UDP-Lite-covered prefix; the receiver restores every element."""
    with _udplite_pair(seed=4) as (server, client, conn):
        x = np.random.default_rng(1).standard_normal(5000)
        jid = client.send_job(conn, Job.tensor(x, p=1.0, protect_bits=13))
        assert client.wait_job(conn, jid, timeout_s=10.0).ok
        ready = server.wait_for(lambda e: isinstance(e, TensorReady))
        np.testing.assert_array_equal(ready.array(), x)


@pytest.mark.parametrize("bad", ["nonsense", "127.0.0.1", "300.1.1.1:80", "127.0.0.1:99999", ""])
def test_bad_bind_address_is_an_address_error(bad: str) -> None:
    with pytest.raises(AddressError):
        SocketEndpoint(bad)


def test_unbindable_address_is_an_address_error() -> None:
    with pytest.raises(AddressError):
        SocketEndpoint("192.0.2.1:0")  # TEST-NET-1: not an address of this host
    ep = SocketEndpoint()
    with pytest.raises(AddressError):
        SocketEndpoint(ep.local_addr)  # in use


def test_bad_peer_and_timeouts_are_typed_errors() -> None:
    ep = SocketEndpoint()
    with pytest.raises(AddressError):
        ep.connect("not-an-address")
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError):
            ep.connect("127.0.0.1:9", timeout_s=bad)
        with pytest.raises(ConfigError):
            ep.next_event(timeout_s=bad)
        with pytest.raises(ConfigError):
            ep.accept(timeout_s=bad)


def _connect_to_a_silent_port(timeout_s: float, match: str) -> float:
    """Connects to a bound UDP port that never answers; the seconds until
    the ConnectError (its message matching `match`)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        port = silent.getsockname()[1]
        ep = SocketEndpoint()
        t0 = time.monotonic()
        with pytest.raises(ConnectError, match=match):
            ep.connect(f"127.0.0.1:{port}", timeout_s=timeout_s)
        return time.monotonic() - t0


def test_connect_to_a_silent_port_fails_within_the_timeout() -> None:
    took = _connect_to_a_silent_port(0.4, "within")
    assert 0.3 < took < 3.0


def test_connect_keeps_trying_for_the_whole_timeout() -> None:
    # The core abandons a handshake after its 1 s idle timeout; a caller
    # who allows 2.5 s must get 2.5 s of attempts, not an error after 1 s.
    assert _connect_to_a_silent_port(2.5, "within 2.5 s") >= 2.4


def test_waits_end_at_their_timeout_and_release_the_gil() -> None:
    ep = SocketEndpoint()
    ticks = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    t.start()
    try:
        t0 = time.monotonic()
        assert ep.accept(timeout_s=0.3) is None
        assert ep.next_event(timeout_s=0.2) is None
        assert ep.poll_event() is None
        took = time.monotonic() - t0
    finally:
        stop.set()
        t.join()
    assert 0.45 < took < 3.0
    assert ticks > 50  # the other thread ran while we waited
    assert ep.pending_events == 0


def test_send_job_errors() -> None:
    server = _Server(SocketEndpoint())
    try:
        client = SocketEndpoint(seed=5)
        conn = client.connect(server.ep.local_addr, timeout_s=5.0)
        with pytest.raises(JobError):
            client.send_job(conn, Job(msr=0.5))  # empty job
        jid = client.send_job(conn, Job(msr=1.0).synthetic(0, 1000, count=2000))
        with pytest.raises(TransferError, match="deadline"):
            client.wait_job(conn, jid, timeout_s=0.0)
        with pytest.raises(ConfigError):
            client.wait_job(conn, jid, timeout_s=-2.0)
    finally:
        server.stop()


def test_a_streaming_job_on_real_sockets_stops_at_its_msr() -> None:
    server = _Server(SocketEndpoint("127.0.0.1:0", seed=5))
    client = SocketEndpoint(seed=6)
    try:
        conn = client.connect(server.ep.local_addr, timeout_s=5.0)
        # N = 20 announced, MSR 0.5: the job completes with 10 delivered
        jid = client.send_job(conn, Job(0.5).announce(0, 20).message(0, b"p0"))
        assert all(client.push_message(conn, jid, 0, b"p%d" % i) for i in range(1, 10))
        done = client.wait_job(conn, jid, timeout_s=10.0)
        assert done.ok and done.report is not None and done.report.guarantee_held
        # produced after the receiver said "enough": discarded, never sent
        assert not any(client.push_message(conn, jid, 0, b"late%d" % i) for i in range(10))
        sat = server.wait_for(lambda e: isinstance(e, approxnet.JobSatisfied))
        assert sat.job == jid
        with pytest.raises(JobError, match="not a job in progress"):
            client.push_message(conn, jid + 5, 0, b"x")
    finally:
        server.stop()
