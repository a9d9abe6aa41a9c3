"""``approxnet saba run``: an unmodified program's packets carry its PL's
DSCP (counted at the receiver), its connection is reported, and the app,
the nftables rule and the cgroup are gone when it ends — after success,
failure or a signal. The root tests build two namespaces joined by a veth
and remove them afterwards; each run is bounded in time."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from approxnet import testbed as tb
from approxnet.saba.cgroup import PARENT, RunError, cgroup2_mount
from approxnet.saba.client import SabaClient
from approxnet.saba.controller import Controller
from approxnet.saba.enforce import MemoryBackend
from approxnet.saba.errors import TopologyError
from approxnet.saba.runner import SETUP_FAILED, RunSpec, run
from approxnet.saba.service import Service
from approxnet.saba.sockets import Conn, ConnWatch, parse_table
from approxnet.saba.topology import Port

TCP_TABLE = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100FE0A:D431 0200FE0A:1389 01 00000000:00000000 00:00000000 00000000     0        0 4242 1
   1: 00000000:1389 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1
   2: garbage
"""
TCP6_TABLE = """\
  sl  local_address                         remote_address                        st
   0: 0000000000000000FFFF00000100FE0A:D432 0000000000000000FFFF00000200FE0A:1389 01 \
00000000:00000000 00:00000000 00000000     0        0 77 1
"""


def test_parse_table_reads_established_ipv4_and_mapped_ipv6() -> None:
    assert parse_table(TCP_TABLE) == {4242: Conn("10.254.0.1", 54321, "10.254.0.2", 5001)}
    assert parse_table(TCP6_TABLE) == {77: Conn("10.254.0.1", 54322, "10.254.0.2", 5001)}


def test_conn_watch_reads_the_tables_only_when_needed() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    me = [os.getpid()]
    watch = ConnWatch(recheck=3)
    peer_code = f"import socket, sys; s = socket.create_connection(('127.0.0.1', {port}))\n"
    peer_code += "print(s.getsockname()[1], flush=True); sys.stdin.read(1); s.close()"
    peer = subprocess.Popen(
        [sys.executable, "-c", peer_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert watch.poll(me) == set() and watch.reads == 1
        a, _ = srv.accept()
        assert peer.stdout is not None
        theirs = int(peer.stdout.readline())
        mine = {Conn("127.0.0.1", port, "127.0.0.1", theirs)}
        assert watch.poll(me) == mine and watch.reads == 2  # a new descriptor
        assert watch.poll(me) == mine and watch.reads == 3  # the 3rd poll: a recheck
        assert watch.poll(me) == mine and watch.reads == 3  # nothing changed: no read
        peer.communicate(b"x", timeout=20)  # the peer closes; our descriptor stays open
        assert watch.poll(me) == mine and watch.reads == 3  # not seen until ...
        assert watch.poll(me) == set() and watch.reads == 4  # ... the recheck
        a.close()
    finally:
        peer.kill()
        peer.wait()
        srv.close()


def test_cgroup2_mount_found_or_refused_with_the_reason() -> None:
    hybrid = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
    assert cgroup2_mount(hybrid) == Path("/sys/fs/cgroup/unified")
    with pytest.raises(RunError, match="cgroup v2 is not mounted.*ip netns exec"):
        cgroup2_mount("cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n")


def test_bad_run_spec_is_refused_before_anything_runs() -> None:
    logged: list[str] = []
    client = SabaClient("http://127.0.0.1:9")  # never reached
    spec = RunSpec("x", ["true"], log=logged.append)  # no model
    assert run(spec, client) == SETUP_FAILED
    assert "exactly one of --model or --workload" in logged[-1]
    spec = RunSpec("x", [], coeffs=[2.0, -1.0], log=logged.append)
    assert run(spec, client) == SETUP_FAILED
    assert "no program given" in logged[-1]


root = pytest.mark.skipif(
    os.geteuid() != 0
    or shutil.which("nft") is None
    or shutil.which("nsenter") is None
    or "cgroup2" not in Path("/proc/self/mounts").read_text(),
    reason="needs root, nftables, nsenter and a cgroup v2 mount",
)

A, B = "10.254.0.1", "10.254.0.2"
PORT = 5001


class PairTopology:
    """Host a and host b, one switch port each way."""

    def hosts(self) -> Sequence[str]:
        return ["a", "b"]

    def addresses(self) -> dict[str, list[str]]:
        return {"a": [A], "b": [B]}

    def path(self, src: str, dst: str) -> list[Port]:
        if {src, dst} != {"a", "b"}:
            raise TopologyError(f"no path {src!r} -> {dst!r}")
        return [Port("sw", f"to-{dst}", 1_000_000_000)]


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The wrappers' records go to a directory of the test's own (they
    inherit the variable), not to the host's /run/approxnet-saba."""
    monkeypatch.setenv("APPROXNET_SABA_STATE", str(tmp_path / "saba-state"))
    return tmp_path / "saba-state"


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=20)


@pytest.fixture
def pair() -> Iterator[tuple[str, str]]:
    tag = f"sr{os.getpid() % 100000}"
    na, nb = f"{tag}a", f"{tag}b"
    try:
        _sh("ip", "netns", "add", na)
        _sh("ip", "netns", "add", nb)
        _sh("ip", "link", "add", "va", "netns", na, "type", "veth", "peer", "vb", "netns", nb)
        for ns, dev, addr in ((na, "va", A), (nb, "vb", B)):
            _sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _sh("ip", "-n", ns, "link", "set", dev, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
        # at the receiver: one counter per DSCP value of packets to PORT
        rules = "".join(f"tcp dport {PORT} ip dscp {d} counter\n" for d in range(64))
        script = "table inet cnt {\n chain in {\n type filter hook input priority 0;\n"
        subprocess.run(
            ["ip", "netns", "exec", nb, "nft", "-f", "-"],
            input=script + rules + "}\n}\n",
            text=True,
            check=True,
            timeout=20,
        )
        yield na, nb
    finally:
        for ns in (na, nb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


def _counts(nb: str) -> dict[int, tuple[int, int]]:
    """(packets, bytes) per DSCP at the receiver."""
    out = subprocess.run(
        ["ip", "netns", "exec", nb, "nft", "list", "table", "inet", "cnt"],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    ).stdout
    counts: dict[int, tuple[int, int]] = {}
    for d, line in enumerate(x for x in out.splitlines() if "dscp" in x):
        words = line.split()
        counts[d] = (int(words[words.index("packets") + 1]), int(words[words.index("bytes") + 1]))
    return counts


@pytest.fixture
def controller() -> Iterator[tuple[Controller, MemoryBackend, str]]:
    backend = MemoryBackend()
    ctl = Controller(PairTopology(), backend=backend)
    svc = Service(ctl)
    svc.start()
    try:
        yield ctl, backend, svc.url
    finally:
        svc.stop()


def _until(pred: Callable[[], bool], timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def _saba_run(
    url: str, app: str, netns: str, argv: list[str], model: str = "6,-10,5"
) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "approxnet", "saba", "run", "--app", app, "--controller", url]
    cmd += ["--model", model, "--netns", netns, "--poll", "0.05", "--", *argv]
    return subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _stop(wrapper: subprocess.Popen[bytes]) -> None:
    """Ends a wrapper left running by a failed assertion the way that lets
    it clean up (SIGTERM), and only then by SIGKILL."""
    if wrapper.poll() is None:
        wrapper.terminate()
        try:
            wrapper.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            wrapper.kill()
    wrapper.communicate()


def _members(app: str, wrapper: subprocess.Popen[bytes]) -> list[str]:
    """The pids in the wrapper's cgroup."""
    procs = Path(cgroup2_mount(), PARENT, f"{app}-{wrapper.pid}", "cgroup.procs")
    return procs.read_text().split() if procs.exists() else []


def _left_behind(app: str, wrapper: subprocess.Popen[bytes], ns: str) -> tuple[bool, str]:
    """Whether the wrapper's cgroup is there, and the nftables tables of `ns`."""
    cgroup = Path(cgroup2_mount(), PARENT, f"{app}-{wrapper.pid}").exists()
    tables = subprocess.run(
        ["ip", "netns", "exec", ns, "nft", "list", "tables"],
        capture_output=True,
        text=True,
        timeout=20,
    ).stdout
    return cgroup, tables


def _assert_nothing_left(app: str, wrapper: subprocess.Popen[bytes], ns: str) -> None:
    """The wrapper removed its cgroup and its nftables table."""
    cgroup, tables = _left_behind(app, wrapper, ns)
    assert not cgroup and "saba_run" not in tables, tables


SENDER = f"""
import socket, sys
s = socket.create_connection(("{B}", {PORT}))
s.sendall(b"x" * 2_000_000)
sys.stdin.read(1)  # the test lets the program end once its connection was seen
# wait for the receiver's FIN before exiting: an orphaned socket becomes a
# time-wait one, whose last ACK matches no cgroup (and goes unmarked)
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
"""
RECEIVER = f"""
import socket
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("{B}", {PORT}))
srv.listen(1)
print("ready", flush=True)
c, _ = srv.accept()
n = 0
while chunk := c.recv(1 << 16):
    n += len(chunk)
print(n, flush=True)
"""


@contextlib.contextmanager
def _ready_in(ns: str, code: str) -> Iterator[subprocess.Popen[str]]:
    """A Python program run in namespace `ns` that has printed "ready";
    killed and reaped on leaving."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.kill()
        proc.communicate()


@root
def test_saba_run_marks_reports_and_cleans_up(
    pair: tuple[str, str], controller: tuple[Controller, MemoryBackend, str]
) -> None:
    na, nb = pair
    ctl, backend, url = controller
    with _ready_in(nb, RECEIVER) as rx:
        wrapper = _saba_run(url, "app1", na, [sys.executable, "-c", SENDER])
        try:
            seen = _until(lambda: any(c.app == "app1" for c in ctl.connections()))
            conns = ctl.connections()
            dscp = ctl.app("app1").dscp if seen else -1
            _, err = wrapper.communicate(input=b"x", timeout=30)
        finally:
            _stop(wrapper)
        assert seen, err.decode()
        assert wrapper.returncode == 0, err.decode()
        assert rx.communicate(timeout=20)[0].strip() == "2000000"
    # the connection was reported as a -> b and the port was given to the app
    assert [(c.src, c.dst, c.ports) for c in conns] == [("a", "b", ("sw:to-b",))]
    assert any("app1" in dict(c.app_weights) for push in backend.pushes for c in push)
    # every packet to the receiver's port carried the app's DSCP: the 2 MB of
    # data (in GRO-merged packets on the veth) and the handshake
    counts = _counts(nb)
    assert counts[dscp][1] > 2_000_000, counts
    assert sum(p for d, (p, _) in counts.items() if d != dscp) == 0, counts
    # deregistered, and nothing left behind
    assert ctl.apps() == [] and ctl.connections() == []
    assert backend.latest["sw:to-b"].queues == ()
    _assert_nothing_left("app1", wrapper, na)
    assert "app app1 deregistered" in err.decode()


@root
@pytest.mark.parametrize(
    ("script", "status"),
    [
        ("exit 3", 3),  # the program fails
        ("kill -TERM $$", 128 + 15),  # a signal ends it
        ("sleep 600 & exit 0", 0),  # it leaves a child behind: killed with the cgroup
    ],
)
def test_saba_run_cleans_up_whatever_way_the_program_ends(
    pair: tuple[str, str],
    controller: tuple[Controller, MemoryBackend, str],
    script: str,
    status: int,
) -> None:
    na, _ = pair
    ctl, _, url = controller
    wrapper = _saba_run(url, "app2", na, ["sh", "-c", script])
    try:
        _, err = wrapper.communicate(timeout=30)
    finally:
        _stop(wrapper)
    assert wrapper.returncode == status, err.decode()
    assert ctl.apps() == [], err.decode()
    _assert_nothing_left("app2", wrapper, na)


@root
def test_saba_run_passes_a_signal_on_and_cleans_up(
    pair: tuple[str, str], controller: tuple[Controller, MemoryBackend, str]
) -> None:
    na, _ = pair
    ctl, _, url = controller
    wrapper = _saba_run(url, "app3", na, ["sleep", "600"])
    try:
        assert _until(lambda: any(a.name == "app3" for a in ctl.apps()))
        assert _until(lambda: bool(_members("app3", wrapper)))  # the program started
        wrapper.terminate()
        _, err = wrapper.communicate(timeout=30)
    finally:
        _stop(wrapper)
    assert wrapper.returncode == 128 + 15, err.decode()
    assert ctl.apps() == []
    _assert_nothing_left("app3", wrapper, na)


def _marks(ns: str, wrapper: subprocess.Popen[bytes]) -> set[int]:
    """The DSCP values the wrapper's nftables rules set."""
    table = f"saba_run_{wrapper.pid}"
    done = subprocess.run(
        ["ip", "netns", "exec", ns, "nft", "-n", "-j", "list", "table", "inet", table],
        capture_output=True,
        text=True,
        timeout=20,
    )
    if done.returncode != 0:
        return set()
    found = set()
    for item in json.loads(done.stdout)["nftables"]:
        for expr in item.get("rule", {}).get("expr", []):
            key = expr.get("mangle", {}).get("key", {})
            if key.get("payload", {}).get("field") == "dscp":
                found.add(int(expr["mangle"]["value"]))
    return found


@root
def test_saba_run_re_marks_when_the_apps_pl_moves(
    pair: tuple[str, str], controller: tuple[Controller, MemoryBackend, str]
) -> None:
    na, _ = pair
    ctl, _, url = controller
    wrapper = _saba_run(url, "mild", na, ["sleep", "600"], model="1.1,-0.1")
    try:
        assert _until(lambda: bool(_members("mild", wrapper)))
        assert _marks(na, wrapper) == {1}  # alone: PL 0
        ctl.register("steep", [5.0, -8.0, 3.0])  # more sensitive: takes PL 0
        assert ctl.app("mild").dscp == 2
        assert _until(lambda: _marks(na, wrapper) == {2})
        wrapper.terminate()
        _, err = wrapper.communicate(timeout=30)
    finally:
        _stop(wrapper)
    assert "packets now marked with DSCP 2" in err.decode()
    assert [a.name for a in ctl.apps()] == ["steep"]


@root
def test_saba_run_cleans_up_locally_when_the_controller_is_gone(pair: tuple[str, str]) -> None:
    na, _ = pair
    dumbbell = Path(tb.__file__).resolve().parent / "examples" / "dumbbell.toml"
    argv = [sys.executable, "-m", "approxnet", "saba", "controller", "--topology"]
    argv += [str(dumbbell), "--store", ":memory:", "--port", "0"]
    ctl = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert ctl.stderr is not None
        url = ctl.stderr.readline().split()[3]  # "saba controller on URL (...)"
        wrapper = _saba_run(url, "orphan", na, ["sleep", "600"])
        try:
            assert _until(lambda: bool(_members("orphan", wrapper)))
            ctl.kill()  # the controller dies while the program runs
            ctl.wait()
            wrapper.terminate()
            _, err = wrapper.communicate(timeout=30)
        finally:
            _stop(wrapper)
    finally:
        ctl.kill()
        ctl.communicate()
    assert wrapper.returncode == 128 + 15, err.decode()
    assert "cleanup: cannot deregister" in err.decode()
    _assert_nothing_left("orphan", wrapper, na)


@root
def test_saba_run_refuses_a_user_who_is_not_root(tmp_path: Path) -> None:
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    argv += ["-m", "approxnet", "saba", "run", "--app", "x", "--model", "2,-1", "--", "true"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == SETUP_FAILED
    assert "saba run needs root" in done.stderr


@root
def test_saba_run_refuses_a_missing_netns_and_registers_nothing(
    controller: tuple[Controller, MemoryBackend, str],
) -> None:
    ctl, _, url = controller
    wrapper = _saba_run(url, "app4", "no-such-ns-xyz", ["true"])
    _, err = wrapper.communicate(timeout=30)
    assert wrapper.returncode == SETUP_FAILED
    assert "netns 'no-such-ns-xyz' does not exist" in err.decode()
    assert ctl.apps() == []
