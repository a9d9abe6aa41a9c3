"""``approxnet saba run``'s flows from conntrack events (UDP, UDP-Lite and
short TCP connections reach the controller, once each and in order) and
the recovery of what a SIGKILLed wrapper left (the next start and
``saba cleanup`` remove its cgroup and rule and deregister its app). The
root tests build two namespaces joined by a veth (the fixtures of
test_saba_run.py) and remove them afterwards; each run is bounded in
time."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_saba_run as base
from test_saba_run import (
    B,
    _assert_nothing_left,
    _left_behind,
    _members,
    _ready_in,
    _saba_run,
    _stop,
    _until,
    root,
)

from approxnet import testbed as tb
from approxnet.saba import stale
from approxnet.saba.cgroup import RunError
from approxnet.saba.client import SabaClient
from approxnet.saba.controller import Controller
from approxnet.saba.ctevents import DESTROY, NEW, UPDATE, CtEvent, CtEvents, parse
from approxnet.saba.enforce import MemoryBackend
from approxnet.saba.flowwatch import CLOSED, OPENED, TCP, UDP, Flow, FlowWatch, flow_mark

# the namespace pair, the in-process controller service, the record directory
pair, controller, state_dir = base.pair, base.controller, base.state_dir


def _attr(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def _message(msg: int, flags: int, ct_id: int, mark: int, state: int | None) -> bytes:
    ip = _attr(1, bytes([10, 254, 0, 1])) + _attr(2, bytes([10, 254, 0, 2]))
    proto = _attr(1, bytes([6])) + _attr(2, struct.pack("!H", 40000))
    proto += _attr(3, struct.pack("!H", 5001))
    body = _attr(0x8001, _attr(0x8001, ip) + _attr(0x8002, proto))
    body += _attr(8, struct.pack("!I", mark)) + _attr(12, struct.pack("!I", ct_id))
    if state is not None:
        body += _attr(0x8004, _attr(0x8001, _attr(1, bytes([state]))))
    body = struct.pack("=BBH", 2, 0, 0) + body
    return struct.pack("=IHHII", 16 + len(body), (1 << 8) | msg, flags, 0, 0) + body


def test_parse_reads_conntrack_events_and_survives_truncation() -> None:
    data = (
        _message(0, 0x400, 7, 0x10, 1) + _message(0, 0, 7, 0x10, 3) + _message(2, 0, 7, 0x10, None)
    )
    got = parse(data)
    flow = (6, "10.254.0.1", 40000, "10.254.0.2", 5001)
    assert got == [
        CtEvent(NEW, 7, *flow, 0x10, 1),
        CtEvent(UPDATE, 7, *flow, 0x10, 3),
        CtEvent(DESTROY, 7, *flow, 0x10, None),
    ]
    for cut in range(len(data)):  # every truncation: whole events only, no error
        assert parse(data[:cut]) == got[: len(parse(data[:cut]))]
    assert parse(b"\xff" * 64) == []


class _Events:
    """Stands in for CtEvents: hands out prepared batches."""

    def __init__(self, batches: list[list[CtEvent]]) -> None:
        self.batches = batches

    def read(self) -> list[CtEvent]:
        return self.batches.pop(0) if self.batches else []

    def fileno(self) -> int:
        return -1

    def close(self) -> None:
        pass


def test_flow_watch_opens_and_closes_each_flow_once_in_order() -> None:
    m = flow_mark(1234)
    assert m % 2 == 0 and m >> 24 == 0x5A
    t = (TCP, "10.0.0.1", 40000, "10.0.0.2", 5001)
    batches = [
        [
            CtEvent(NEW, 1, *t, m, 1),  # opened by the program
            CtEvent(UPDATE, 1, *t, m, 3),
            CtEvent(UPDATE, 1, *t, m, 7),  # TIME_WAIT: closed ...
            CtEvent(DESTROY, 1, *t, m, None),  # ... once
            CtEvent(NEW, 2, *t, 0, 1),  # another program's flow
            CtEvent(DESTROY, 2, *t, 0, None),
            CtEvent(UPDATE, 3, *t, m + 1, 3),  # accepted by the program
        ],
        [CtEvent(UPDATE, 3, *t, m + 1, 8), CtEvent(UPDATE, 3, *t, m + 1, 8)],
    ]
    fw = FlowWatch(m, _Events(batches))  # type: ignore[arg-type]
    out = fw.step([]) + fw.step([]) + fw.step([])
    mine = Flow(TCP, "10.0.0.1", 40000, "10.0.0.2", 5001)
    accepted = Flow(TCP, "10.0.0.2", 5001, "10.0.0.1", 40000)
    assert out == [
        (OPENED, 1, mine),
        (CLOSED, 1, mine),
        (OPENED, 3, accepted),
        (CLOSED, 3, accepted),
    ]
    assert fw.open == {}


def test_a_udp_flow_closes_when_its_socket_is_gone() -> None:
    m = flow_mark(99)
    u = (UDP, "10.0.0.1", 1, "10.0.0.2", 9)  # port 1: no socket of ours holds it
    fw = FlowWatch(m, _Events([[CtEvent(NEW, 5, *u, m, None)]]))  # type: ignore[arg-type]
    f = Flow(*u)
    assert fw.step([os.getpid()]) == [(OPENED, 5, f), (CLOSED, 5, f)]


def test_a_live_wrappers_record_is_left_alone(state_dir: Path) -> None:
    me = os.getpid()
    start = stale.start_time(me)
    assert start is not None
    rec = stale.Record(me, start, "x", "http://127.0.0.1:9", "approxnet-saba/none", None, "t")
    path = stale.write(rec)
    logged: list[str] = []
    assert stale.sweep(logged.append) == 0 and path.exists()
    # the same pid with another start time is a reused pid: the wrapper is dead
    # (its controller is unreachable: cgroup and table gone, the record kept)
    stale.write(
        stale.Record(me, start + 1, "x", "http://127.0.0.1:9", "approxnet-saba/none", None, "t")
    )
    assert stale.sweep(logged.append) == 0 and path.exists()
    assert any("cannot deregister app x" in m for m in logged), logged


UDP_PROGRAM = f"""
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # unconnected: sendto
for _ in range(20):
    u.sendto(b"x" * 1000, ("{B}", 6001))
lite = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDPLITE)
lite.connect(("{B}", 6002))
for _ in range(20):
    lite.send(b"y" * 1000)
print("sent", flush=True)
sys.stdin.readline()  # the test saw both flows
u.close()
lite.close()
print("closed", flush=True)
sys.stdin.readline()  # the test saw both closed
"""

BURST = 50
TCP_BURST = f"""
import socket
for _ in range({BURST}):
    s = socket.create_connection(("{B}", 6003))
    s.sendall(b"z")
    s.shutdown(socket.SHUT_WR)
    s.recv(1)  # the listener's FIN: both ends closed before the program goes on
    s.close()
"""
LISTENER = f"""
import socket
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("{B}", 6003))
srv.listen(64)
print("ready", flush=True)
for _ in range({BURST}):
    c, _ = srv.accept()
    c.recv(1)
    c.close()
"""


def _opened_closed(err: str) -> tuple[list[str], list[str]]:
    opened = re.findall(r"connection (\S+) a -> b opened", err)
    closed = re.findall(r"connection (\S+) closed", err)
    return opened, closed


@root
def test_saba_run_reports_udp_and_udplite_flows_and_their_close(
    pair: tuple[str, str], controller: tuple[Controller, MemoryBackend, str]
) -> None:
    na, _ = pair
    ctl, _, url = controller
    wrapper = _saba_run(url, "dgram", na, [sys.executable, "-c", UDP_PROGRAM])
    assert wrapper.stdin is not None and wrapper.stdout is not None
    try:
        assert wrapper.stdout.readline() == b"sent\n"
        seen = _until(lambda: len([c for c in ctl.connections() if c.app == "dgram"]) == 2)
        conns = [(c.src, c.dst, c.ports) for c in ctl.connections()]
        wrapper.stdin.write(b"\n")
        wrapper.stdin.flush()
        assert wrapper.stdout.readline() == b"closed\n"
        gone = _until(lambda: ctl.connections() == [])
        apps_then = [a.name for a in ctl.apps()]  # still registered: the program runs
        _, err = wrapper.communicate(input=b"\n", timeout=30)
    finally:
        _stop(wrapper)
    log = err.decode()
    assert seen, log
    assert conns == [("a", "b", ("sw:to-b",))] * 2
    assert "udp 10.254.0.1:" in log and "-> 10.254.0.2:6001" in log
    assert "udplite 10.254.0.1:" in log and "-> 10.254.0.2:6002" in log
    assert gone and apps_then == ["dgram"], log  # closed with the sockets
    opened, closed = _opened_closed(log)
    assert len(opened) == 2 and sorted(closed) == sorted(opened), log
    assert wrapper.returncode == 0 and ctl.apps() == []


@root
def test_saba_run_reports_every_short_tcp_connection_once_in_order(
    pair: tuple[str, str], controller: tuple[Controller, MemoryBackend, str]
) -> None:
    na, nb = pair
    ctl, _, url = controller
    with _ready_in(nb, LISTENER) as rx:
        wrapper = _saba_run(url, "burst", na, [sys.executable, "-c", TCP_BURST])
        try:
            _, err = wrapper.communicate(timeout=60)
        finally:
            _stop(wrapper)
        rx.communicate(timeout=30)
    log = err.decode()
    assert wrapper.returncode == 0, log
    opened, closed = _opened_closed(log)
    assert len(opened) == BURST and len(set(opened)) == BURST, log
    assert closed == opened, log  # each closed once, in the order opened
    for cid in opened:  # each closed after it opened
        assert log.index(f"connection {cid} a -> b") < log.index(f"connection {cid} closed")
    assert ctl.connections() == [] and ctl.apps() == []


def _running(pid: str) -> bool:
    """Whether `pid` runs (a zombie waiting for its new parent does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _killed_wrapper(url: str, na: str, ctl: Controller) -> tuple[subprocess.Popen[bytes], str]:
    """A wrapper SIGKILLed while its program (sleep) runs; the pid of the
    program, left running in the cgroup."""
    wrapper = _saba_run(url, "victim", na, ["sleep", "600"])
    assert _until(lambda: bool(_members("victim", wrapper)))
    assert [a.name for a in ctl.apps()] == ["victim"]
    wrapper.send_signal(signal.SIGKILL)
    wrapper.wait(timeout=30)  # (its pipes stay open: the program holds them)
    left = _members("victim", wrapper)
    cgroup, tables = _left_behind("victim", wrapper, na)
    assert cgroup and f"saba_run_{wrapper.pid}" in tables and left  # what SIGKILL leaves
    return wrapper, left[0]


@root
@pytest.mark.parametrize("how", ["cleanup", "next start"])
def test_a_sigkilled_wrappers_leftovers_are_removed(
    pair: tuple[str, str],
    controller: tuple[Controller, MemoryBackend, str],
    state_dir: Path,
    how: str,
) -> None:
    na, _ = pair
    ctl, _, url = controller
    wrapper, program = _killed_wrapper(url, na, ctl)
    try:
        if how == "cleanup":
            argv = [sys.executable, "-m", "approxnet", "saba", "cleanup"]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            log = done.stderr
            assert "1 dead wrapper(s) cleaned up" in log
        else:  # the next wrapper, of the same app name, cleans up as it starts
            nxt = _saba_run(url, "victim", na, ["true"])
            try:
                _, err = nxt.communicate(timeout=60)
            finally:
                _stop(nxt)
            log = err.decode()
            assert nxt.returncode == 0, log
            assert log.index("deregistered app victim of dead wrapper") < log.index(
                "app victim registered"
            )
    finally:
        if _running(program):  # not cleaned up: end it, then its pipes
            os.kill(int(program), signal.SIGKILL)
        _stop(wrapper)
    assert "removed cgroup" in log and f"saba_run_{wrapper.pid}" in log, log
    _assert_nothing_left("victim", wrapper, na)
    assert ctl.apps() == []
    assert not _running(program)  # the program went with its cgroup
    assert list(state_dir.glob("*.json")) == []


@contextlib.contextmanager
def _pair_at(addr_a: str, addr_b: str) -> Iterator[tuple[str, str]]:
    """Two namespaces joined by a veth at the given addresses (/8: the
    testbed's hosts are in several /24s), removed afterwards."""
    tag = f"sq{os.getpid() % 100000}"
    na, nb = f"{tag}a", f"{tag}b"
    try:
        for argv in (
            ["ip", "netns", "add", na],
            ["ip", "netns", "add", nb],
            ["ip", "link", "add", "va", "netns", na, "type", "veth", "peer", "vb", "netns", nb],
            ["ip", "-n", na, "addr", "add", f"{addr_a}/8", "dev", "va"],
            ["ip", "-n", nb, "addr", "add", f"{addr_b}/8", "dev", "vb"],
            ["ip", "-n", na, "link", "set", "va", "up"],
            ["ip", "-n", nb, "link", "set", "vb", "up"],
        ):
            subprocess.run(argv, check=True, capture_output=True, timeout=20)
        yield na, nb
    finally:
        for ns in (na, nb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


@root
def test_udp_flows_reach_a_controller_service_process() -> None:
    dumbbell = Path(tb.__file__).resolve().parent / "examples" / "dumbbell.toml"
    argv = [sys.executable, "-m", "approxnet", "saba", "controller", "--topology"]
    argv += [str(dumbbell), "--store", ":memory:", "--port", "0"]
    ctl = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert ctl.stderr is not None
        url = ctl.stderr.readline().split()[3]  # "saba controller on URL (...)"
        client = SabaClient(url)
        addr = {h["name"]: h["addresses"][0] for h in client.hosts()}
        with _pair_at(addr["h1"], addr["h3"]) as (na, _):
            program = UDP_PROGRAM.replace(B, addr["h3"])
            wrapper = _saba_run(url, "dgram", na, [sys.executable, "-c", program])
            assert wrapper.stdin is not None and wrapper.stdout is not None
            try:
                assert wrapper.stdout.readline() == b"sent\n"
                seen = _until(lambda: len(client.connections()) == 2)
                conns = client.connections()
                _, err = wrapper.communicate(input=b"\n\n", timeout=30)
            finally:
                _stop(wrapper)
        apps = client.apps()
        client.disconnect()
    finally:
        ctl.kill()
        ctl.communicate()
    assert seen, err.decode()
    path = conns[0]["ports"]
    assert [(c["app"], c["src"], c["dst"], c["ports"]) for c in conns] == [
        ("dgram", "h1", "h3", path)
    ] * 2 and path, conns
    assert wrapper.returncode == 0 and apps == [], err.decode()


@root
def test_conntrack_events_off_in_the_namespace_is_refused_by_name() -> None:
    with _pair_at("10.252.0.1", "10.252.0.2") as (na, _):
        for argv in (
            ["nft", "add", "table", "inet", "t"],
            ["nft", "add", "chain", "inet", "t", "o", "{ type filter hook output priority 0; }"],
            ["nft", "add", "rule", "inet", "t", "o", "ct", "mark", "set", "1"],  # loads conntrack
            ["sysctl", "-qw", "net.netfilter.nf_conntrack_events=0"],
        ):
            subprocess.run(["ip", "netns", "exec", na, *argv], check=True, timeout=20)
        with pytest.raises(RunError, match="nf_conntrack_events = 0"):
            CtEvents(na)
