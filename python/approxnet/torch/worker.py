"""One training rank (a process): ``python -m approxnet.torch.worker``.

DDP over a Gloo process group (rendezvous, DDP's set-up broadcast and, for
``transport = gloo``, the stock all-reduce over TCP); with ``transport =
approxnet`` the gradients go through :func:`~approxnet.torch.bounded_loss_hook`
between the ranks' own UDP sockets instead. Rank 0 prints one JSON line per
epoch (``{"epoch": ...}``) and a final ``{"result": ...}`` line on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from .experiment import TrainSpec, batches, load_data, make_model
from .hook import BoundedLossState, bounded_loss_hook, runtime_config
from .policy import MagnitudeGroups, Policy, UniformLoss

__all__ = ["main", "train"]


def _policy(kind: str, loss_bound: float) -> Policy:
    if kind == "groups":
        return MagnitudeGroups()
    return UniformLoss(loss_bound)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of `model` on (`x`, `y`)."""
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y).item()
        acc = (logits.argmax(1) == y).float().mean().item()
    model.train()
    return acc, loss


def train(spec: TrainSpec, rank: int, world: int, master: str, addrs: list[str]) -> dict[str, Any]:
    """Trains on this rank; returns rank 0's record (others: their telemetry)."""
    torch.set_num_threads(1)
    host, port = master.rsplit(":", 1)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://{host}:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=max(60.0, spec.timeout_s)),
    )
    data = load_data(spec.seed)
    model = make_model(spec.model, spec.seed)
    ddp = DDP(model, bucket_cap_mb=25)
    state: BoundedLossState | None = None
    if spec.transport == "approxnet":
        gl = spec.gather_loss_bound
        state = BoundedLossState(
            rank,
            addrs,
            policy=_policy(spec.policy, spec.loss_bound),
            gather_policy=None if gl is None else _policy("uniform", gl),
            fill=spec.fill,
            transform=spec.transform,
            seed=spec.seed,
            config=runtime_config(line_rate_gbps=spec.line_rate_gbps),
            timeout_s=spec.timeout_s,
        )
        ddp.register_comm_hook(state, bounded_loss_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=spec.lr, momentum=spec.momentum)
    dist.barrier()
    gather_p = spec.loss_bound if spec.gather_loss_bound is None else spec.gather_loss_bound
    lossy_gather = state is not None and (
        (spec.policy == "groups" and spec.gather_loss_bound is None) or gather_p > 0
    )

    epochs: list[dict[str, Any]] = []
    train_s = 0.0
    reached: dict[str, Any] | None = None
    for epoch in range(spec.epochs):
        t0 = time.monotonic()
        comm_before = sum(s.seconds for s in state.telemetry) if state else 0.0
        steps = batches(len(data.y_train), rank, world, spec.batch, epoch, spec.seed)
        step_s: list[float] = []
        for idx in steps:
            ts = time.monotonic()
            opt.zero_grad(set_to_none=True)
            out = ddp(data.x_train[idx])
            batch_loss = nn.functional.cross_entropy(out, data.y_train[idx])
            batch_loss.backward()  # type: ignore[no-untyped-call]
            opt.step()
            step_s.append(time.monotonic() - ts)
        if state is not None and lossy_gather and (epoch + 1) % max(1, spec.sync_every) == 0:
            state.broadcast_parameters(list(model.parameters()))
        train_s += time.monotonic() - t0
        acc, loss = accuracy(model, data.x_test, data.y_test)
        rec: dict[str, Any] = {
            "epoch": epoch + 1,
            "train_s": train_s,
            "accuracy": acc,
            "test_loss": loss,
            "steps": len(steps),
            "step_s": step_s,
        }
        if state is not None:
            tel = [t for t in state.telemetry if t.buckets]
            ep_tel = tel[-len(steps) :] if steps else []
            rec["comm_s"] = sum(s.seconds for s in state.telemetry) - comm_before
            rec["comm_step_s"] = [t.seconds for t in ep_tel]
            rec["delivered"] = (
                sum(t.delivered_fraction for t in ep_tel) / len(ep_tel) if ep_tel else 1.0
            )
            groups: dict[str, float] = {}
            for t in ep_tel:
                for g, f in t.delivered_by_group().items():
                    groups[str(g)] = groups.get(str(g), 0.0) + f / len(ep_tel)
            rec["delivered_by_group"] = groups
            rec["bytes_sent"] = sum(t.bytes_sent for t in ep_tel)
            rec["bytes_unsent"] = sum(t.bytes_unsent for t in ep_tel)
            rec["packets"] = sum(t.packets for t in ep_tel)
            rec["retransmissions"] = sum(t.retransmissions for t in ep_tel)
        epochs.append(rec)
        if reached is None and acc >= spec.target:
            reached = {"epoch": epoch + 1, "train_s": train_s, "accuracy": acc}
        if rank == 0:
            print(json.dumps({"epoch": rec}), flush=True)
        # Every rank decides alike (rank 0's accuracy) so none is left waiting.
        if spec.stop_at_target:
            flag = torch.tensor([1.0 if reached is not None else 0.0])
            dist.broadcast(flag, 0)
            if flag.item() > 0:
                break
    result: dict[str, Any] = {
        "spec": json.loads(spec.to_json()),
        "rank": rank,
        "world": world,
        "epochs": epochs,
        "reached": reached,
        "final_accuracy": epochs[-1]["accuracy"],
        "train_s": train_s,
    }
    if state is not None:
        result["telemetry_steps"] = len(state.telemetry)
        result["stats"] = state.exchange.ep.stats()
        state.exchange.drain(0.2)
    dist.barrier()
    if state is not None:
        state.close()
    dist.destroy_process_group()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m approxnet.torch.worker")
    ap.add_argument("--spec", required=True, help="TrainSpec as JSON")
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="rank 0's host:port for the rendezvous")
    ap.add_argument("--addrs", required=True, help="comma-separated ip:port of every rank")
    ap.add_argument("--out", help="write this rank's result JSON here")
    a = ap.parse_args(argv)
    spec = TrainSpec.from_json(a.spec)
    spec.validate()
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    res = train(spec, a.rank, a.world, a.master, a.addrs.split(","))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f)
    if a.rank == 0:
        print(json.dumps({"result": {k: v for k, v in res.items() if k != "epochs"}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
