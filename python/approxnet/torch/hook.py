"""The DDP communication hook and its state.

    >>> from torch.nn.parallel import DistributedDataParallel as DDP
    >>> from approxnet.torch import BoundedLossState, UniformLoss, bounded_loss_hook
    >>> state = BoundedLossState(rank, ["10.77.1.2:7000", "10.77.2.2:7000", ...],
    ...                          policy=UniformLoss(0.1), fill="rescale",
    ...                          transform="hadamard")       # doctest: +SKIP
    >>> ddp = DDP(model, process_group=pg)                    # doctest: +SKIP
    >>> ddp.register_comm_hook(state, bounded_loss_hook)      # doctest: +SKIP

Under torchrun no address is typed: every rank binds a free UDP port on the
interface that reaches ``MASTER_ADDR`` and the ranks swap addresses through
the process group (:meth:`BoundedLossState.from_process_group`):

    >>> dist.init_process_group("gloo")                        # doctest: +SKIP
    >>> state = BoundedLossState.from_process_group(policy=UniformLoss(0.1))  # doctest: +SKIP

Gradients then travel between the ranks' own UDP sockets as approxnet jobs
(no Gloo / NCCL for them; the process group is used by DDP only for its
set-up broadcast and here for the address swap). The hook hands each
bucket to one communication thread per rank and returns a future that
completes when its all-reduce is done, so communication overlaps the rest
of backward as with DDP's built-in hooks (buckets are reduced one at a
time, in the order DDP hands them over, on every rank alike);
``asynchronous=False`` runs the all-reduce in the calling thread instead.
"""

# No `from __future__ import annotations` here: DDP checks the hook's
# annotations at run time (`bucket: dist.GradBucket`, the returned Future).
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from .._native import Config, ConfigError, Job, TransferError
from .allreduce import FILLS, allreduce
from .exchange import Exchange
from .policy import Policy, UniformLoss
from .telemetry import StepTelemetry
from .transform import TRANSFORMS

__all__ = ["BoundedLossState", "CommThread", "bounded_loss_hook", "runtime_config"]


def runtime_config(idle_timeout_ms: float = 60_000.0, line_rate_gbps: float = 10.0) -> Config:
    """The endpoint configuration training uses: a long idle timeout (a rank
    computes and evaluates between all-reduces without serving its socket)
    and the NIC rate of the hosts."""
    return Config(idle_timeout_ms=idle_timeout_ms, line_rate_gbps=line_rate_gbps)


class BoundedLossState:
    """Endpoints, peers, policies and telemetry of one rank.

    `addresses` lists every rank's "ip:port" (this rank binds its own);
    `policy` governs the reduce-scatter jobs and `gather_policy` (default:
    the same) the all-gather jobs. `fill` is ``zero``, ``rescale`` or
    ``previous``; `transform` is ``none``, ``permute`` or ``hadamard``
    (seeded by `seed`, identical on every rank).
    """

    def __init__(
        self,
        rank: int,
        addresses: list[str],
        *,
        policy: Policy | None = None,
        gather_policy: Policy | None = None,
        fill: str = "rescale",
        transform: str = "permute",
        seed: int = 0,
        config: Config | None = None,
        timeout_s: float = 60.0,
        connect: bool = True,
        asynchronous: bool = True,
    ) -> None:
        if fill not in FILLS:
            raise ConfigError(f"fill {fill!r}: one of {', '.join(FILLS)}")
        if transform not in TRANSFORMS:
            raise ConfigError(f"transform {transform!r}: one of {', '.join(TRANSFORMS)}")
        if fill == "previous" and transform == "hadamard":
            raise ConfigError("fill 'previous' needs transform 'none' or 'permute'")
        if len(addresses) < 2:
            raise ConfigError(f"at least 2 ranks, got {len(addresses)}")
        self.policy: Policy = policy if policy is not None else UniformLoss(0.1)
        self.gather_policy: Policy = gather_policy if gather_policy is not None else self.policy
        self.fill = fill
        self.transform = transform
        self.seed = seed
        self.exchange = Exchange(
            rank,
            addresses,
            config=config if config is not None else runtime_config(),
            seed=seed,
            timeout_s=timeout_s,
        )
        self.rank = rank
        self.world = len(addresses)
        self.step = 0
        self.telemetry: list[StepTelemetry] = []
        self._previous: dict[int, np.ndarray] = {}
        self.asynchronous = asynchronous
        self._comm = CommThread()
        if connect:
            self.exchange.connect_all()

    @classmethod
    def from_process_group(
        cls,
        pg: "dist.ProcessGroup | None" = None,
        *,
        host: str | None = None,
        port: int = 0,
        **kwargs: Any,
    ) -> "BoundedLossState":
        """The state of this rank of `pg` (default: the default group),
        every rank's address learnt through the group: this rank binds
        `host`:`port` (default: the interface that reaches ``MASTER_ADDR``,
        a free port), the ranks all-gather their bound addresses, then
        connect. Other arguments as for the constructor. Every rank of `pg`
        must call it (a collective)."""
        rank = dist.get_rank(pg)
        world = dist.get_world_size(pg)
        if world < 2:
            raise ConfigError(f"at least 2 ranks, got {world}")
        if not 0 <= port <= 65535:
            raise ConfigError(f"port {port}: 0 (any free port) to 65535")
        bind = f"{host or _local_ip()}:{port}"
        # placeholders until the ranks have swapped their bound addresses
        placeholders = [f"0.0.0.0:{i + 1}" for i in range(world)]
        placeholders[rank] = bind
        state = cls(rank, placeholders, connect=False, **kwargs)
        addrs: list[Any] = [None] * world
        dist.all_gather_object(addrs, state.exchange.local_addr, group=pg)
        state.exchange.set_addresses([str(a) for a in addrs])
        state.exchange.connect_all()
        return state

    def reduce(self, flat: torch.Tensor, bucket: int) -> torch.Tensor:
        """The rank-average of a flat float32 tensor (what the hook does)."""
        if bucket == 0 or not self.telemetry:
            self.telemetry.append(StepTelemetry(self.step))
            self.step += 1
        x = flat.detach().to("cpu", torch.float32).contiguous().numpy()
        out, tel = allreduce(
            self.exchange,
            x,
            step=self.step - 1,
            bucket=bucket,
            policy=self.policy,
            gather_policy=self.gather_policy,
            fill=self.fill,
            transform=self.transform,
            seed=self.seed,
            previous=self._previous.get(bucket),
        )
        self.exchange.release()
        if self.fill == "previous":
            self._previous[bucket] = out
        self.telemetry[-1].buckets.append(tel)
        return torch.from_numpy(out).to(flat.device, flat.dtype).view_as(flat)

    def submit(self, flat: torch.Tensor, bucket: int) -> "torch.futures.Future[torch.Tensor]":
        """:meth:`reduce` on the communication thread (or here, when not
        asynchronous); the future completes with its result or its error."""
        if not self.asynchronous:
            fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
            fut.set_result(self.reduce(flat, bucket))
            return fut
        return self._comm.submit(self.reduce, flat, bucket)

    def synchronize(self) -> None:
        """Waits for every bucket handed to the communication thread (and
        re-raises its error); DDP already waits at the end of backward."""
        self._comm.synchronize()

    def broadcast_parameters(self, params: list[torch.Tensor], root: int = 0) -> None:
        """Copies `root`'s parameters to every rank, precisely (a reliable
        tensor job per peer: MSR 1). Replicas drift apart when the gather
        phase loses different ranges on different ranks; this resets them."""
        self.synchronize()
        flat = torch.cat([p.detach().reshape(-1).to("cpu", torch.float32) for p in params])
        ex = self.exchange
        if self.rank == root:
            arr = flat.numpy()
            for p in range(self.world):
                if p != root:
                    ex.send(p, Job.tensor(arr, p=1.0))
            ex.release()
            return
        rec = ex.wait(root, ex.claim(root), length=flat.numel(), segment=None)
        ex.release()
        assert rec is not None and bool(rec.have.all())
        new = torch.from_numpy(rec.values)
        off = 0
        with torch.no_grad():
            for t in params:
                n = t.numel()
                t.copy_(new[off : off + n].view_as(t).to(t.device, t.dtype))
                off += n

    def close(self) -> None:
        """Lets queued jobs finish (briefly) and closes the connections."""
        self._comm.shutdown()
        self.exchange.close()


class CommThread:
    """One thread that runs the submitted calls in order and completes a
    ``torch.futures.Future`` with each one's result (or error)."""

    def __init__(self, name: str = "approxnet-allreduce") -> None:
        self.name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Any] = []
        self._lock = threading.Lock()

    def submit(self, fn: Any, *args: Any) -> "torch.futures.Future[Any]":
        """Queues ``fn(*args)``; returns the future of its result."""
        fut: torch.futures.Future[Any] = torch.futures.Future()
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix=self.name)
            task = self._pool.submit(fn, *args)
            self._pending = [t for t in self._pending if not t.done()] + [task]

        def finish(t: Any) -> None:
            e = t.exception()
            if e is not None:
                fut.set_exception(e)
            else:
                fut.set_result(t.result())

        task.add_done_callback(finish)
        return fut

    def synchronize(self) -> None:
        """Waits for every queued call; re-raises the first error."""
        with self._lock:
            pending, self._pending = self._pending, []
        for t in pending:
            t.result()

    def shutdown(self) -> None:
        """Waits for the queued calls and stops the thread."""
        try:
            self.synchronize()
        finally:
            with self._lock:
                pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown()


def _local_ip() -> str:
    """This host's address on the interface that reaches ``MASTER_ADDR``
    (torchrun's rendezvous host; 127.0.0.1 when unset)."""
    master = os.environ.get("MASTER_ADDR", "127.0.0.1")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((master, 9))  # no packet leaves: UDP connect only routes
            return str(s.getsockname()[0])
    except OSError as e:
        raise TransferError(f"no IPv4 route to MASTER_ADDR {master}: {e}") from None


def bounded_loss_hook(
    state: BoundedLossState,
    bucket: dist.GradBucket,  # type: ignore[name-defined]
) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: all-reduces `bucket` over approxnet with
    `state`'s loss policy; the future holds the rank-averaged gradients
    (completed by the communication thread, see :meth:`BoundedLossState.submit`)."""
    return state.submit(bucket.buffer(), bucket.index())
