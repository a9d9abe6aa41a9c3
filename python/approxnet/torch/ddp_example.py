"""DDP with the bounded-loss hook under torchrun: the recipe of
docs/python.md, runnable as it stands.

One host, two processes::

    torchrun --standalone --nproc_per_node 2 -m approxnet.torch.ddp_example -p 0.1

Two hosts (run on each; ``--node_rank`` 0 on the host named by
``--master_addr``)::

    torchrun --nnodes 2 --nproc_per_node 1 --node_rank 0 \\
        --master_addr 10.0.0.1 --master_port 29500 -m approxnet.torch.ddp_example -p 0.1

torchrun sets the rendezvous (``MASTER_ADDR`` ...); the ranks form a Gloo
process group, each binds a free UDP port on the interface that reaches
``MASTER_ADDR`` and learns the others' through the group
(:meth:`~approxnet.torch.BoundedLossState.from_process_group`). ``--hook
allreduce`` (Gloo's all-reduce) and ``--hook powersgd`` (PyTorch's
PowerSGD hook, rank ``--rank-powersgd``) train the same model on the same
data for comparison. Rank 0 prints one JSON object: per epoch the test
accuracy and the training time, the payload bytes each rank handed to the
network for gradients, and (approxnet) the addresses the ranks found.
"""

# No `from __future__ import annotations` here: DDP checks a hook's
# annotations at run time (`bucket: dist.GradBucket`).
import argparse
import hashlib
import json
import os
import sys
import time
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from .experiment import batches, load_data, make_model
from .hook import BoundedLossState, bounded_loss_hook
from .policy import UniformLoss

__all__ = ["main"]

HOOKS = ("approxnet", "allreduce", "powersgd")


class ByteCount:
    """Payload bytes a rank hands to Gloo's all-reduce (a ring all-reduce
    puts 2 (W - 1) / W of them on the wire per rank)."""

    def __init__(self) -> None:
        self.bytes = 0
        self._orig = dist.all_reduce

    def __enter__(self) -> "ByteCount":
        def counted(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            self.bytes += tensor.numel() * tensor.element_size()
            return self._orig(tensor, *args, **kwargs)

        dist.all_reduce = counted  # PowerSGD's hook calls dist.all_reduce
        return self

    def __exit__(self, *exc: object) -> None:
        dist.all_reduce = self._orig


def allreduce_hook(
    state: Any,
    bucket: dist.GradBucket,  # type: ignore[name-defined]
) -> torch.futures.Future[torch.Tensor]:
    """Gloo's all-reduce of the bucket, averaged (as DDP's default, but
    through ``dist.all_reduce`` so :class:`ByteCount` sees it)."""
    t = bucket.buffer().div_(dist.get_world_size())
    work = dist.all_reduce(t, async_op=True)
    assert work is not None
    return work.get_future().then(lambda f: f.value()[0])


def digest(model: nn.Module) -> str:
    """A hash of the parameters (equal on every rank while replicas agree)."""
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="torchrun ... -m approxnet.torch.ddp_example")
    ap.add_argument("--hook", choices=HOOKS, default="approxnet")
    ap.add_argument("-p", "--loss-bound", type=float, default=0.1, help="approxnet: x1")
    ap.add_argument("--rank-powersgd", type=int, default=2, help="PowerSGD's matrix rank")
    ap.add_argument("--model", default="mlp", help="mlp, cnn or lstm")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="at most this many steps per epoch")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--port",
        type=int,
        default=0,
        help="UDP port of local rank 0 (others: + LOCAL_RANK); default any free port",
    )
    ap.add_argument("--out", help="rank 0 also writes its JSON here")
    a = ap.parse_args(argv)
    if _local():
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = load_data(a.seed)
    model = make_model(a.model, a.seed)
    ddp = DDP(model)
    state: BoundedLossState | None = None
    record: dict[str, Any] = {"hook": a.hook, "world": world}
    if a.hook == "approxnet":
        p = UniformLoss(a.loss_bound)
        port = a.port + int(os.environ.get("LOCAL_RANK", "0")) if a.port else 0
        state = BoundedLossState.from_process_group(
            port=port, policy=p, gather_policy=UniformLoss(0.0)
        )
        ddp.register_comm_hook(state, bounded_loss_hook)
        record["addresses"] = state.exchange.addresses
        record["loss_bound"] = a.loss_bound
    elif a.hook == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps

        ps_state = ps.PowerSGDState(
            process_group=None, matrix_approximation_rank=a.rank_powersgd, start_powerSGD_iter=2
        )
        ddp.register_comm_hook(ps_state, ps.powerSGD_hook)
        record["rank_powersgd"] = a.rank_powersgd
    else:
        ddp.register_comm_hook(None, allreduce_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.9)
    epochs = []
    train_s = 0.0
    with ByteCount() as gloo_bytes:
        for epoch in range(a.epochs):
            idx_all = batches(len(data.y_train), rank, world, a.batch, epoch, a.seed)
            steps = idx_all[: a.steps] if a.steps else idx_all
            t0 = time.monotonic()
            for idx in steps:
                opt.zero_grad(set_to_none=True)
                loss = nn.functional.cross_entropy(ddp(data.x_train[idx]), data.y_train[idx])
                loss.backward()  # type: ignore[no-untyped-call]
                opt.step()
            train_s += time.monotonic() - t0
            model.eval()
            with torch.no_grad():
                acc = (model(data.x_test).argmax(1) == data.y_test).float().mean().item()
            model.train()
            epochs.append(
                {"epoch": epoch + 1, "steps": len(steps), "train_s": train_s, "accuracy": acc}
            )
    if state is not None:
        state.synchronize()
        record["bytes_payload"] = sum(t.bytes_sent - t.bytes_unsent for t in state.telemetry)
        record["telemetry_steps"] = len(state.telemetry)
    else:
        record["bytes_payload"] = gloo_bytes.bytes
    record["epochs"] = epochs
    digests: list[Any] = [None] * world
    dist.all_gather_object(digests, digest(model))
    record["parameter_digests"] = digests
    dist.barrier()
    if state is not None:
        state.close()
    dist.destroy_process_group()
    if rank == 0:
        text = json.dumps(record)
        print(text, flush=True)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
    return 0


def _local() -> bool:
    """Whether the rendezvous is on this host's loopback."""
    return os.environ.get("MASTER_ADDR", "127.0.0.1") in ("127.0.0.1", "localhost")


if __name__ == "__main__":
    sys.exit(main())
