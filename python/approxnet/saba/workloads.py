"""Distributed workloads that really run as processes on the namespace
testbed, over kernel TCP, for the profiler (seed 003 §4.1).

Every workload is the same staged job with different phase lengths: `n`
worker processes (one per host) form a ring; each of `rounds` rounds is
a compute phase of `compute_ms` (SHA-256 over a buffer: real CPU work)
followed by a communication phase in which each worker sends `bytes` to
its successor and receives as much from its predecessor. Completion time
is from the moment the workers start together (a barrier around the ring,
after every connection is up, so process start-up is not counted) to the
last worker's end; all workers share the host's clock.

* ``shuffle`` (Sort-like, communication-bound): 4 rounds, 4 MB, no compute;
* ``iterative`` (PR-like): 6 rounds of 150 ms compute and 0.5 MB.

Three more are real applications (`apps.py`), each with its own kind:

* ``lr`` (LR-like): data-parallel logistic regression over
  ``torch.distributed`` gloo, 20 iterations, a 512 KiB gradient
  (131,072 features) all-reduced per iteration, 32 MiB of samples per
  worker;
* ``join`` (SQL-like): a hash-partitioned join of two generated tables,
  8 MB per worker;
* ``wordcount``: 4 MB of generated text per worker, counts shuffled to
  their reducers (little communication).

`scale` multiplies the data (the dataset-size parameter); the node count
is the number of hosts given. Gloo's sockets cannot be given a TOS, so an
``lr`` worker runs with the group id ``MARK_GID + dscp`` (``setpriv``)
and an nftables rule in its host's namespace (:func:`mark_rules`) sets
the DSCP of that group's packets.

    python -m approxnet.saba.workloads --index I --hosts A,B,... --port P \
        --rounds R --bytes N --compute-ms C     # one worker (internal)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["Workload", "WORKLOADS", "KINDS", "MARK_GID", "mark_rules", "worker_argv"]

CHUNK = 1 << 16


@dataclass(frozen=True)
class Workload:
    """Phase lengths of a staged job."""

    name: str
    rounds: int
    bytes: int
    compute_ms: float
    #: ``ring`` (the staged ring), ``lr``, ``join`` or ``wordcount``
    kind: str = "ring"
    #: gradient length of ``lr``
    features: int = 0

    def scaled(self, scale: float) -> Workload:
        """The same job on `scale` times the data (compute scales too)."""
        return replace(self, bytes=int(self.bytes * scale), compute_ms=self.compute_ms * scale)


WORKLOADS: dict[str, Workload] = {
    "shuffle": Workload("shuffle", rounds=4, bytes=4_000_000, compute_ms=0.0),
    "iterative": Workload("iterative", rounds=6, bytes=500_000, compute_ms=150.0),
    "lr": Workload("lr", rounds=20, bytes=32 << 20, compute_ms=0.0, kind="lr", features=1 << 17),
    "join": Workload("join", rounds=1, bytes=8_000_000, compute_ms=0.0, kind="join"),
    "wordcount": Workload("wordcount", rounds=1, bytes=4_000_000, compute_ms=0.0, kind="wordcount"),
}
KINDS = ("ring", "lr", "join", "wordcount")
#: an ``lr`` worker of DSCP d runs with group id MARK_GID + d
MARK_GID = 21000


def mark_rules(dscps: Sequence[int]) -> str:
    """nftables script (``nft -f -``) for a host namespace: packets of
    sockets owned by group ``MARK_GID + d`` get DSCP d."""
    lines = [
        "table inet saba_mark {",
        "  chain out {",
        "    type filter hook output priority 0; policy accept;",
    ]
    lines += [
        f"    meta skgid {MARK_GID + d} ip dscp set {d} counter" for d in sorted(set(dscps)) if d
    ]
    return "\n".join([*lines, "  }", "}", ""])


def worker_argv(
    w: Workload, index: int, hosts: list[str], port: int, dscp: int = 0, gate: str | None = None
) -> list[str]:
    """The command line of worker `index`; its traffic carries `dscp`
    (for ``lr`` through its group id and :func:`mark_rules`); with `gate`
    it waits at the start gate in that directory (:func:`gate`)."""
    argv = [
        sys.executable, "-m", "approxnet.saba.workloads", "--index", str(index),
        "--hosts", ",".join(hosts), "--port", str(port), "--rounds", str(w.rounds),
        "--bytes", str(w.bytes), "--compute-ms", str(w.compute_ms), "--dscp", str(dscp),
        "--kind", w.kind, "--features", str(w.features),
    ]  # fmt: skip
    if gate is not None:
        argv += ["--gate", gate]
    if w.kind == "lr" and dscp:
        return ["setpriv", f"--regid={MARK_GID + dscp}", "--clear-groups", "--", *argv]
    return argv


def _compute(ms: float) -> None:
    end = time.perf_counter() + ms / 1000.0
    block = bytes(1 << 14)
    while time.perf_counter() < end:
        block = hashlib.sha256(block).digest() * 512


def _recv_exact(sock: socket.socket, n: int) -> None:
    while n > 0:
        got = sock.recv(min(n, 1 << 20))
        if not got:
            raise ConnectionError("peer closed early")
        n -= len(got)


def _send(sock: socket.socket, n: int) -> None:
    buf = bytes(CHUNK)
    while n > 0:
        k = min(n, CHUNK)
        sock.sendall(buf[:k])
        n -= k


def gate(directory: str | None, name: str) -> Callable[[], None]:
    """The start gate of jobs run together: the returned callable writes
    ``DIRECTORY/ready-NAME`` and returns when ``DIRECTORY/go`` exists (the
    runner creates it once every worker is ready), at most 600 s later.
    With no directory it returns at once."""

    def wait() -> None:
        if directory is None:
            return
        d = Path(directory)
        (d / f"ready-{name}").touch()
        deadline = time.monotonic() + 600
        while not (d / "go").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no start signal in {directory} within 600 s")
            time.sleep(0.005)  # a file poll: the runner and workers share no other channel

    return wait


def run_worker(
    index: int,
    hosts: list[str],
    port: int,
    rounds: int,
    nbytes: int,
    cms: float,
    dscp: int = 0,
    ready: Callable[[], None] = lambda: None,
) -> None:
    """One worker: accept the predecessor, connect to the successor, then
    `rounds` of compute + exchange."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    srv.settimeout(240)
    nxt = hosts[(index + 1) % len(hosts)]

    def marked() -> socket.socket:
        sock = socket.socket()
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)
        return sock

    srv.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)  # accepted ones inherit it
    out = marked()
    deadline = time.monotonic() + 180
    while True:
        try:
            out.connect((nxt, port))
            break
        except (ConnectionRefusedError, OSError):
            if time.monotonic() > deadline:
                raise
            out.close()
            out = marked()
            time.sleep(0.02)
    inc, _ = srv.accept()
    ready()
    # a barrier: one byte around the ring, so every worker starts together
    if index == 0:
        out.sendall(b"s")
        _recv_exact(inc, 1)
    else:
        _recv_exact(inc, 1)
        out.sendall(b"s")
    start = time.time()
    for _ in range(rounds):
        _compute(cms)
        t = threading.Thread(target=_send, args=(out, nbytes))
        t.start()
        _recv_exact(inc, nbytes)
        t.join()
    out.close()
    inc.close()
    srv.close()
    print(json.dumps({"start": start, "end": time.time()}), flush=True)


def main(argv: list[str] | None = None) -> int:
    """Worker entry point."""
    ap = argparse.ArgumentParser(prog="python -m approxnet.saba.workloads")
    ap.add_argument("--index", type=int, required=True)
    ap.add_argument("--hosts", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--compute-ms", type=float, required=True)
    ap.add_argument("--dscp", type=int, default=0, choices=range(64), metavar="0..63")
    ap.add_argument("--kind", default="ring", choices=KINDS)
    ap.add_argument("--features", type=int, default=0)
    ap.add_argument("--gate", help="start gate directory (jobs run together)")
    a = ap.parse_args(argv)
    hosts = a.hosts.split(",")
    ready = gate(a.gate, f"{a.port}-{a.index}")
    if a.kind == "ring":
        run_worker(a.index, hosts, a.port, a.rounds, a.bytes, a.compute_ms, a.dscp, ready)
        return 0
    from . import apps

    if a.kind == "lr":
        if a.features < 1:
            ap.error("--features must be >= 1 for lr")
        start, end, info = apps.logistic_regression(
            a.index, hosts, a.port, a.rounds, a.bytes, a.features, ready
        )
    elif a.kind == "join":
        start, end, info = apps.hash_join(a.index, hosts, a.port, a.bytes, a.dscp, ready)
    else:
        start, end, info = apps.word_count(a.index, hosts, a.port, a.bytes, a.dscp, ready)
    print(json.dumps({"start": start, "end": end, **info}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
