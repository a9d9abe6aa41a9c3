"""The data-parallel all-reduce of :mod:`.allreduce` with every shard sent
through approxnet's own core over a lossy virtual link, all ranks in one
process: for measuring how much packet loss training tolerates (seed 001
§2.2, 001_254954cce2026753.txt) without a network.

Each job a rank queues is run at once through :func:`approxnet.transfer`
(the deterministic two-endpoint harness: the real sender and receiver of
``crates/proto``, virtual time). The link from sender to receiver loses
every datagram (DATA, and the JOB announcement, which the core resends)
independently with probability ``loss`` (the ACK path is loss-free), seeded per (step seed, sender,
receiver, slot), so a run is reproducible whatever the order the ranks'
threads run in. What the receiver hands over is exactly what the transport's
bounded mode hands over: the tensor job is cut into MTU packets that never
split a float, the receiver delivers it once the job's fraction ``1 - p``
of elements arrived and reports the missing element ranges; the
all-reduce fills them as it does over real sockets.

Ranks run :func:`~approxnet.torch.allreduce.allreduce` in threads (one per
rank, in lockstep per step); a rank waiting for a peer's job blocks on a
condition with a time limit, never forever.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._native import ConfigError, Job, LinkConfig, TensorReady, TransferError, transfer
from .allreduce import allreduce
from .exchange import Received, SendRecord, SlotCounters, decode_tensor
from .policy import Policy
from .telemetry import BucketTelemetry

__all__ = ["LinkStats", "VirtualNet", "lossy_allreduce"]

F32 = npt.NDArray[np.float32]


@dataclass
class LinkStats:
    """Datagrams over every sender-to-receiver virtual link of a :class:`VirtualNet`."""

    offered: int = 0
    dropped: int = 0
    delivered: int = 0


@dataclass
class VirtualNet:
    """The links between `world` in-process ranks: each loses a datagram
    from sender to receiver with probability `loss` (ACKs travel loss-free)."""

    world: int
    loss: float
    seed: int = 0
    timeout_s: float = 30.0
    stats: LinkStats = field(default_factory=LinkStats)
    _inbox: dict[tuple[int, int, int], Received] = field(default_factory=dict)
    _cv: threading.Condition = field(default_factory=threading.Condition)
    step: int = 0
    """The iteration whose jobs are in flight (part of every link seed)."""

    def __post_init__(self) -> None:
        if self.world < 2:
            raise ConfigError(f"world = {self.world}: at least 2 ranks")
        if not 0.0 <= self.loss < 1.0:
            raise ConfigError(f"loss = {self.loss}: in [0, 1)")

    def rank(self, r: int) -> VirtualExchange:
        """Rank `r`'s view (the interface :func:`allreduce` uses)."""
        if not 0 <= r < self.world:
            raise ConfigError(f"rank {r}: outside 0..{self.world - 1}")
        return VirtualExchange(self, r)

    def deliver(self, src: int, dst: int, slot: int, job: Job) -> SendRecord:
        """Runs `job` from `src` to `dst` through the core; stores what `dst` gets."""
        link = LinkConfig(loss=self.loss) if self.loss > 0 else LinkConfig()
        seed = int(
            np.random.SeedSequence([self.seed, self.step, src, dst, slot]).generate_state(1)[0]
        )
        tr = transfer(job, link=link, seed=seed + 1, time_limit_ms=10_000.0)
        ready = [e for e in tr.server_events if isinstance(e, TensorReady)]
        if not tr.completed or not ready or tr.sender is None or tr.sender.report is None:
            raise TransferError(f"job {slot} from rank {src} to rank {dst} did not complete")
        n = int(ready[0].array("float32").size)
        rec = decode_tensor(ready[0], n, src, slot)
        rep = tr.sender.report
        with self._cv:
            self.stats.offered += tr.forward["offered"]
            self.stats.dropped += tr.forward["random_drops"] + tr.forward["buffer_drops"]
            self.stats.delivered += tr.forward["delivered"]
            self._inbox[(src, dst, slot)] = rec
            self._cv.notify_all()
        return SendRecord.of_report(dst, slot, rep)

    def take(self, src: int, dst: int, slot: int) -> Received:
        """Waits (at most `timeout_s`) for job `slot` from `src` to `dst`."""
        key = (src, dst, slot)
        with self._cv:
            if not self._cv.wait_for(lambda: key in self._inbox, timeout=self.timeout_s):
                raise TransferError(
                    f"rank {dst}: job {slot} from rank {src} not sent within {self.timeout_s} s"
                )
            return self._inbox.pop(key)


class VirtualExchange(SlotCounters):
    """One rank's sends and receives over a :class:`VirtualNet`."""

    def __init__(self, net: VirtualNet, rank: int) -> None:
        super().__init__(net.world)
        self.net = net
        self.rank = rank
        self.world = net.world
        self.reports: list[SendRecord] = []

    def send(self, peer: int, job: Job) -> int:
        slot = self._sent[peer]
        self._sent[peer] += 1
        self.reports.append(self.net.deliver(self.rank, peer, slot, job))
        return slot

    def wait(
        self, peer: int, slot: int, *, length: int | None, segment: int | None
    ) -> Received | None:
        if segment is not None:
            raise ConfigError("the virtual network carries tensor jobs only (uniform policy)")
        rec = self.net.take(peer, self.rank, slot)
        if length is not None and rec.values.size != length:
            raise TransferError(
                f"job {slot} from rank {peer}: {rec.values.size} elements, expected {length}"
            )
        return rec


def lossy_allreduce(
    net: VirtualNet,
    exchanges: list[VirtualExchange],
    grads: list[F32],
    *,
    step: int,
    policy: Policy,
    gather_policy: Policy | None = None,
    fill: str = "rescale",
    transform: str = "permute",
    seed: int = 0,
    pool: ThreadPoolExecutor | None = None,
) -> list[tuple[F32, BucketTelemetry]]:
    """Every rank's all-reduce of its flat gradient `grads[r]` (one bucket),
    each rank in its own thread; returns each rank's result and telemetry.
    `gather_policy` (default `policy`) governs the all-gather jobs; a
    reliable one (loss bound 0) is retransmitted until whole over the same
    lossy links."""
    if len(grads) != net.world or len(exchanges) != net.world:
        raise ConfigError(f"{len(grads)} gradients for {net.world} ranks")
    net.step = step

    def one(r: int) -> tuple[F32, BucketTelemetry]:
        return allreduce(
            exchanges[r],
            grads[r],
            step=step,
            bucket=0,
            policy=policy,
            gather_policy=policy if gather_policy is None else gather_policy,
            fill=fill,
            transform=transform,
            seed=seed,
            previous=None,
        )

    own = pool is None
    ex = pool if pool is not None else ThreadPoolExecutor(max_workers=net.world)
    try:
        futures = [ex.submit(one, r) for r in range(net.world)]
        return [f.result() for f in futures]
    finally:
        if own:
            ex.shutdown()
