"""Point-to-point shard exchange between ranks over approxnet sockets.

Each rank owns one :class:`~approxnet.net.SocketEndpoint` and opens one
connection to every other rank (it sends on its own connections and
receives on the ones it accepted). Jobs are matched to what the receiver
expects without any extra bytes: job ids count up from 0 on every
connection in the order the sender queued them, they travel in the
reliable JOB announcement and every packet header (precise metadata), and
every rank sends the same schedule (hello, then per step and bucket:
scatter, gather). So the ``k``-th job a rank sends to a peer is the
``k``-th one that peer expects from it; the element count announced with
each job is checked against the expected size.

The protocol runs only while the endpoint is driven. Between all-reduces
(while the rank computes, evaluates or waits in a Gloo barrier) a
background thread keeps driving it (:meth:`Exchange.release`), so paced
packets still leave, ACKs are answered and peers that are ahead are
served; every other call takes the endpoint back first.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from .._native import (
    Config,
    ConnectError,
    ConnectionHandle,
    ConnectionLost,
    Job,
    JobComplete,
    JobReport,
    MessageDelivered,
    TensorReady,
    TransferError,
)
from ..net import SocketEndpoint

__all__ = [
    "Exchange",
    "Received",
    "SendRecord",
    "ShardExchange",
    "decode_tensor",
    "loopback_addresses",
    "run_ranks",
]

F32 = npt.NDArray[np.float32]


@dataclass
class Received:
    """One shard as it arrived: values (missing ones zero) and a mask of the
    elements that arrived."""

    values: F32
    have: npt.NDArray[np.bool_]

    @property
    def fraction(self) -> float:
        return float(self.have.mean()) if self.have.size else 1.0


@dataclass
class SendRecord:
    """The sender's report of one finished job (for telemetry)."""

    peer: int
    slot: int
    bytes: int
    packets: int
    lost_packets: int
    retransmissions: int
    groups: list[tuple[int, int, int]]  # (group id, delivered, messages)
    unsent_bytes: int = 0
    """Payload never sent: the job met its fraction p first (seed 000 §3.3.2)."""

    @classmethod
    def of_report(cls, peer: int, slot: int, r: JobReport) -> SendRecord:
        """The record of job `slot` to `peer` from its sender's report."""
        return cls(
            peer=peer,
            slot=slot,
            bytes=r.bytes,
            packets=r.packets,
            lost_packets=r.lost_packets,
            retransmissions=r.retransmissions,
            groups=[(g.id, g.delivered, g.messages) for g in r.groups],
            unsent_bytes=r.unsent_bytes,
        )


class ShardExchange(Protocol):
    """What the all-reduce needs from an exchange: :class:`Exchange` over
    sockets, or :class:`~approxnet.torch.lossy.VirtualExchange` in-process."""

    rank: int
    world: int
    reports: list[SendRecord]

    def send(self, peer: int, job: Job) -> int: ...

    def claim(self, peer: int) -> int: ...

    def wait(
        self, peer: int, slot: int, *, length: int | None, segment: int | None
    ) -> Received | None: ...


@dataclass
class _Inbox:
    tensor: TensorReady | None = None
    messages: dict[int, bytes] = field(default_factory=dict)
    done: bool = False


class SlotCounters:
    """The slot numbers of one rank's jobs to and from each peer: both ends
    of a schedule count alike, so a slot names the same job at both."""

    def __init__(self, world: int) -> None:
        self._sent = [0] * world
        self._claimed = [0] * world

    def claim(self, peer: int) -> int:
        """The slot of the next job expected from `peer`."""
        s = self._claimed[peer]
        self._claimed[peer] += 1
        return s


class Exchange(SlotCounters):
    """Sends shards to peers and receives theirs, by slot number."""

    def __init__(
        self,
        rank: int,
        addresses: list[str],
        *,
        config: Config | None = None,
        seed: int = 0,
        timeout_s: float = 30.0,
    ) -> None:
        if not 0 <= rank < len(addresses):
            raise TransferError(f"rank {rank} outside 0..{len(addresses) - 1}")
        self.rank = rank
        self.world = len(addresses)
        self.addresses = list(addresses)
        self.timeout_s = timeout_s
        self.ep = SocketEndpoint(addresses[rank], config=config, seed=seed + 7919 * rank)
        self._by_addr = {a: i for i, a in enumerate(addresses)}
        self.out: dict[int, ConnectionHandle] = {}
        self._in_peer: dict[ConnectionHandle, int] = {}
        super().__init__(self.world)
        self._inbox: dict[tuple[int, int], _Inbox] = {}
        self.reports: list[SendRecord] = []
        self._out_peer: dict[ConnectionHandle, int] = {}
        self._bg: threading.Thread | None = None
        self._bg_stop = threading.Event()
        self._bg_error: BaseException | None = None

    # -- the background driver ---------------------------------------------------

    def release(self) -> None:
        """Lets a background thread drive the endpoint until the next call."""
        if self._bg is not None:
            return
        self._bg_stop.clear()
        self._bg = threading.Thread(target=self._drive, name="approxnet-exchange", daemon=True)
        self._bg.start()

    def _drive(self) -> None:
        try:
            # Short waits: taking the endpoint back costs at most one.
            while not self._bg_stop.is_set():
                self.pump(0.001)
        except BaseException as e:  # re-raised in the caller's thread
            self._bg_error = e

    def _take(self) -> None:
        """Stops the background driver (if any) and re-raises its error."""
        if self._bg is not None:
            self._bg_stop.set()
            self._bg.join()
            self._bg = None
        if self._bg_error is not None:
            e, self._bg_error = self._bg_error, None
            raise e

    # -- set-up ---------------------------------------------------------------

    @property
    def local_addr(self) -> str:
        """The address this rank's endpoint is bound to (its real port when
        it was given port 0)."""
        return str(self.ep.local_addr)

    def set_addresses(self, addresses: list[str]) -> None:
        """Every rank's address, learnt after binding (e.g. from the process
        group, :meth:`BoundedLossState.from_process_group`); before
        :meth:`connect_all`. This rank's entry must be its bound address."""
        if len(addresses) != self.world:
            raise TransferError(f"{len(addresses)} addresses for {self.world} ranks")
        if addresses[self.rank] != self.local_addr:
            raise TransferError(
                f"rank {self.rank}: address {addresses[self.rank]} is not the bound "
                f"{self.local_addr}"
            )
        if len(set(addresses)) != len(addresses):
            raise TransferError(f"two ranks share an address: {addresses}")
        self.addresses = list(addresses)
        self._by_addr = {a: i for i, a in enumerate(addresses)}

    def connect_all(self) -> None:
        """Connects to every peer and exchanges a reliable hello with each;
        returns once every peer's hello arrived (so every peer is connected)."""
        self._take()
        peers = [p for p in range(self.world) if p != self.rank]
        end = time.monotonic() + self.timeout_s
        for p in peers:
            while True:
                try:
                    h = self.ep.connect(self.addresses[p], timeout_s=1.0)
                    break
                except ConnectError:
                    # The peer may not be up yet: keep serving ours, retry.
                    if time.monotonic() > end:
                        raise
            self.out[p] = h
            self._out_peer[h] = p
        for p in peers:
            self.send(p, Job(msr=1.0).message(0, f"hello {self.rank}".encode()))
        for p in peers:
            self.wait(p, self.claim(p), length=None, segment=1)
        self.release()

    # -- sending ----------------------------------------------------------------

    def send(self, peer: int, job: Job) -> int:
        """Queues `job` to `peer`; returns its slot."""
        self._take()
        jid = self.ep.send_job(self.out[peer], job)
        slot = self._sent[peer]
        if jid != slot:
            raise TransferError(f"job id {jid} to rank {peer}, expected {slot}: schedules diverged")
        self._sent[peer] += 1
        return slot

    # -- receiving --------------------------------------------------------------

    def wait(
        self, peer: int, slot: int, *, length: int | None, segment: int | None
    ) -> Received | None:
        """Waits for job `slot` from `peer` (a tensor of `length` float32, or
        messages of `segment` elements) and returns what arrived; the hello
        (``length=None``) returns None."""
        self._take()
        key = (peer, slot)
        end = time.monotonic() + self.timeout_s
        while True:
            box = self._inbox.get(key)
            if box is not None and (box.tensor is not None or box.done):
                del self._inbox[key]
                return None if length is None else _decode(box, length, segment, peer, slot)
            left = end - time.monotonic()
            if left <= 0:
                raise TransferError(
                    f"rank {self.rank}: job {slot} from rank {peer} did not arrive "
                    f"within {self.timeout_s} s"
                )
            self.pump(min(left, 1.0))

    def pump(self, timeout_s: float) -> None:
        """Handles one event (waiting up to `timeout_s`), then all queued ones."""
        ev = self.ep.next_event(timeout_s=timeout_s)
        while ev is not None:
            self._handle(ev)
            ev = self.ep.poll_event()

    def _peer_in(self, conn: ConnectionHandle) -> int:
        p = self._in_peer.get(conn)
        if p is None:
            addr = self.ep.peer(conn)
            if addr is None or addr not in self._by_addr:
                raise TransferError(f"rank {self.rank}: a job from unknown peer {addr}")
            p = self._in_peer[conn] = self._by_addr[addr]
        return p

    def _handle(self, ev: Any) -> None:
        if isinstance(ev, TensorReady):
            self._inbox.setdefault((self._peer_in(ev.connection), ev.job), _Inbox()).tensor = ev
        elif isinstance(ev, MessageDelivered):
            box = self._inbox.setdefault((self._peer_in(ev.connection), ev.job), _Inbox())
            box.messages[ev.msg] = ev.payload
        elif isinstance(ev, JobComplete):
            if ev.role == "receiver":
                box = self._inbox.setdefault((self._peer_in(ev.connection), ev.job), _Inbox())
                box.done = True
            elif ev.report is not None:
                peer = self._out_peer.get(ev.connection, -1)
                self.reports.append(SendRecord.of_report(peer, ev.job, ev.report))
            else:
                raise TransferError(f"rank {self.rank}: job {ev.job} failed: {ev.failure}")
        elif isinstance(ev, ConnectionLost):
            raise TransferError(f"rank {self.rank}: connection lost: {ev.reason}")

    def drain(self, timeout_s: float = 0.0) -> None:
        """Serves the endpoint for up to `timeout_s` (ACKs, retransmissions)."""
        self._take()
        end = time.monotonic() + timeout_s
        while True:
            self.pump(max(0.0, min(end - time.monotonic(), 0.05)))
            if time.monotonic() >= end:
                return

    def close(self, timeout_s: float = 2.0) -> None:
        """Closes the connections and lets the FIN exchange finish."""
        self._take()
        for h in self.out.values():
            self.ep.close(h)
        self.ep.finish(timeout_s=timeout_s)


def _decode(box: _Inbox, length: int, segment: int | None, peer: int, slot: int) -> Received:
    if box.tensor is not None:
        return decode_tensor(box.tensor, length, peer, slot)
    if segment is None:
        raise TransferError(f"job {slot} from rank {peer}: messages where a tensor was expected")
    vals = np.zeros(length, np.float32)
    have = np.zeros(length, bool)
    for msg, payload in box.messages.items():
        a = msg * segment
        seg = np.frombuffer(payload, dtype=np.float32)
        if a + seg.size > length:
            raise TransferError(f"job {slot} from rank {peer}: message {msg} beyond the shard")
        vals[a : a + seg.size] = seg
        have[a : a + seg.size] = True
    return Received(vals, have)


def decode_tensor(t: TensorReady, length: int, peer: int, slot: int) -> Received:
    """A delivered tensor job as values (missing ranges zero) and the mask of
    the elements that arrived (the transport's missing-range report)."""
    vals = np.asarray(t.array("float32"), dtype=np.float32)
    if vals.size != length:
        raise TransferError(f"job {slot} from rank {peer}: {vals.size} elements, expected {length}")
    have = np.ones(length, bool)
    for a, b in t.missing:
        if not 0 <= a <= b <= length:
            raise TransferError(f"job {slot} from rank {peer}: missing range {a}..{b} outside")
        have[a:b] = False
    return Received(vals.copy(), have)


def loopback_addresses(n: int) -> list[str]:
    """`n` UDP addresses on 127.0.0.1, each free when this returns (the
    ranks of an :class:`Exchange` on one machine)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    addrs = [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    for s in socks:
        s.close()
    return addrs


_T = TypeVar("_T")


def run_ranks(world: int, rank: Callable[[int], _T]) -> list[_T]:
    """Runs ``rank(r)`` for every rank ``r`` of ``world``, each in its own
    thread; returns their results in rank order, or raises the first error
    any of them raised once all have ended."""
    out: dict[int, _T] = {}
    errors: list[BaseException] = []

    def one(r: int) -> None:
        try:
            out[r] = rank(r)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [out[r] for r in range(world)]
