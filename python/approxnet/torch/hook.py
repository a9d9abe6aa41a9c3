"""The DDP communication hook and its state.

    >>> from torch.nn.parallel import DistributedDataParallel as DDP
    >>> from approxnet.torch import BoundedLossState, UniformLoss, bounded_loss_hook
    >>> state = BoundedLossState(rank, ["10.77.1.2:7000", "10.77.2.2:7000", ...],
    ...                          policy=UniformLoss(0.1), fill="rescale",
    ...                          transform="hadamard")       # doctest: +SKIP
    >>> ddp = DDP(model, process_group=pg)                    # doctest: +SKIP
    >>> ddp.register_comm_hook(state, bounded_loss_hook)      # doctest: +SKIP

Gradients then travel between the ranks' own UDP sockets as approxnet jobs
(no Gloo / NCCL for them; the process group is used by DDP only for its
set-up broadcast). The hook runs the all-reduce of :mod:`.allreduce` in the
calling thread and returns a completed future.
"""

# No `from __future__ import annotations` here: DDP checks the hook's
# annotations at run time (`bucket: dist.GradBucket`, the returned Future).
import numpy as np
import torch
import torch.distributed as dist

from .._native import Config, ConfigError, Job
from .allreduce import FILLS, allreduce
from .exchange import Exchange
from .policy import Policy, UniformLoss
from .telemetry import StepTelemetry
from .transform import TRANSFORMS

__all__ = ["BoundedLossState", "bounded_loss_hook", "runtime_config"]


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
        if connect:
            self.exchange.connect_all()

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

    def broadcast_parameters(self, params: list[torch.Tensor], root: int = 0) -> None:
        """Copies `root`'s parameters to every rank, precisely (a reliable
        tensor job per peer: MSR 1). Replicas drift apart when the gather
        phase loses different ranges on different ranks; this resets them."""
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
        self.exchange.close()


def bounded_loss_hook(
    state: BoundedLossState,
    bucket: dist.GradBucket,  # type: ignore[name-defined]
) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: all-reduces `bucket` over approxnet with
    `state`'s loss policy; the future holds the rank-averaged gradients."""
    out = state.reduce(bucket.buffer(), bucket.index())
    fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    fut.set_result(out)
    return fut
