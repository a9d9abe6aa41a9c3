"""A model's loss-tolerance bound x1, measured as seed 001 §2.2 does
(001_254954cce2026753.txt, "Empirical evidence shows that SGD tolerates
bounded data loss"): distributed SGD with ``W`` workers where, in every
iteration, a fraction ``p`` of the gradients collected from each worker is
marked lost at random; ``p`` goes from 0 in steps of 5 %. Loss is per
packet by default (``granularity="packet"``): each worker's flattened
gradient is cut into consecutive packets of ``elems_per_packet`` float32
values (default 362 = 1448 payload bytes, one Ethernet MTU of TCP-sized
payload) and each packet is lost whole with probability ``p``, as seed 001
loses packets; ``granularity="element"`` loses single values instead. ``x1`` is the
largest ``p`` up to which the job still reaches its target with the same
number of epochs as at ``p = 0`` (seed 001 §2.2: "When p <= x1, job
converges with same epochs").

The workers are simulated in one process (same model, data, batches and
learning rate as ``approxnet train``), so the sweep measures the learning
algorithm, not the network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .._native import ConfigError
from .experiment import TrainSpec, batches, load_data, make_model

__all__ = [
    "ELEMS_PER_PACKET",
    "GRANULARITIES",
    "SweepPoint",
    "epochs_to_target",
    "keep_mask",
    "loss_tolerance_bound",
    "sweep",
]

ELEMS_PER_PACKET = 1448 // 4
"""float32 values in one packet: 1448 payload bytes (one MTU)."""
GRANULARITIES = ("packet", "element")


def keep_mask(
    n: int,
    p: float,
    rng: np.random.Generator,
    granularity: str = "packet",
    elems_per_packet: int = ELEMS_PER_PACKET,
) -> np.ndarray:
    """Boolean mask over `n` gradient values, True where the value arrived.
    ``packet``: the values are cut into consecutive chunks of
    `elems_per_packet` (the last may be shorter) and each chunk is lost whole
    with probability `p`; ``element``: each value is lost independently."""
    if granularity == "element":
        return rng.random(n) >= p
    if granularity != "packet":
        raise ConfigError(f"granularity {granularity!r}: one of {', '.join(GRANULARITIES)}")
    if elems_per_packet < 1:
        raise ConfigError(f"elems_per_packet = {elems_per_packet}: at least 1")
    packets = -(-n // elems_per_packet)
    arrived = rng.random(packets) >= p
    return np.repeat(arrived, elems_per_packet)[:n]


@dataclass
class SweepPoint:
    """Training at one loss fraction `p` (median over seeds)."""

    p: float
    epochs: list[int | None]
    """Per seed: the first epoch at which test accuracy reached the target
    (None: not within the epoch budget)."""
    final_accuracy: list[float]

    @property
    def median_epochs(self) -> float:
        """Median epochs to target (inf when most seeds never reached it)."""
        vals = sorted(float("inf") if e is None else float(e) for e in self.epochs)
        return vals[len(vals) // 2]


def epochs_to_target(
    spec: TrainSpec,
    p: float,
    seed: int,
    world: int = 4,
    granularity: str = "packet",
    elems_per_packet: int = ELEMS_PER_PACKET,
) -> tuple[int | None, float]:
    """Simulated `world`-worker training where each worker loses a random
    fraction `p` of its gradient packets (or elements, see `keep_mask`)
    every step; returns (first epoch reaching `spec.target`, final
    accuracy)."""
    if not 0.0 <= p < 1.0:
        raise ConfigError(f"loss fraction p = {p}: in [0, 1)")
    if granularity not in GRANULARITIES:
        raise ConfigError(f"granularity {granularity!r}: one of {', '.join(GRANULARITIES)}")
    torch.set_num_threads(1)
    data = load_data(spec.seed)
    model = make_model(spec.model, seed)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=spec.lr, momentum=spec.momentum)
    rng = np.random.default_rng([seed, int(round(p * 1000))])
    n = sum(t.numel() for t in params)
    reached: int | None = None
    acc = 0.0
    for epoch in range(spec.epochs):
        per_rank = [
            batches(len(data.y_train), r, world, spec.batch, epoch, seed) for r in range(world)
        ]
        for step in range(len(per_rank[0])):
            total = torch.zeros(n)
            count = torch.zeros(n)
            for r in range(world):
                model.zero_grad(set_to_none=True)
                idx = per_rank[r][step]
                loss = nn.functional.cross_entropy(model(data.x_train[idx]), data.y_train[idx])
                loss.backward()  # type: ignore[no-untyped-call]
                g = torch.cat([t.grad.reshape(-1) for t in params if t.grad is not None])
                keep = torch.from_numpy(keep_mask(n, p, rng, granularity, elems_per_packet))
                total += torch.where(keep, g, 0.0)
                count += keep
            avg = total / count.clamp(min=1) if spec.fill == "rescale" else total / world
            off = 0
            for t in params:
                k = t.numel()
                t.grad = avg[off : off + k].view_as(t).clone()
                off += k
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(data.x_test).argmax(1) == data.y_test).float().mean().item()
        model.train()
        if reached is None and acc >= spec.target:
            reached = epoch + 1
            if spec.stop_at_target:
                break
    return reached, acc


def sweep(
    spec: TrainSpec,
    ps: Sequence[float],
    seeds: Sequence[int],
    progress: Callable[[SweepPoint], None] | None = None,
    granularity: str = "packet",
    elems_per_packet: int = ELEMS_PER_PACKET,
) -> list[SweepPoint]:
    """Epochs to target for every `p` in `ps` and seed in `seeds`."""
    out = []
    for p in ps:
        runs = [
            epochs_to_target(spec, p, s, granularity=granularity, elems_per_packet=elems_per_packet)
            for s in seeds
        ]
        pt = SweepPoint(p, [e for e, _ in runs], [a for _, a in runs])
        out.append(pt)
        if progress is not None:
            progress(pt)
    return out


def loss_tolerance_bound(points: Sequence[SweepPoint]) -> float | None:
    """x1: the largest p such that every swept p' <= p needs no more epochs
    (median) than p = 0; None when p = 0 itself never reached the target."""
    pts = sorted(points, key=lambda q: q.p)
    if not pts or pts[0].p != 0.0 or pts[0].median_epochs == float("inf"):
        return None
    base = pts[0].median_epochs
    x1 = 0.0
    for q in pts:
        if q.median_epochs > base:
            break
        x1 = q.p
    return x1
