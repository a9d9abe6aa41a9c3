"""A model's loss-tolerance bound x1 measured in iterations to the baseline
loss (seed 001 §2.2 and §3.1, 001_254954cce2026753.txt: "We run the ML jobs
simulating packet drops ... until the loss value is smaller than baseline
(ML jobs without data losses)"; x1 is the largest loss rate at which the
job "converges with same epochs").

Training: ``world`` data-parallel replicas in one process (same model,
data, batches and optimiser as ``approxnet train``). Every iteration each
replica's flat gradient goes through the bounded-loss all-reduce of
:mod:`.allreduce` (reduce-scatter, then all-gather, permuted, missing
ranges rescaled) with every shard a tensor job with loss bound ``p`` sent
through approxnet's core over a virtual link that drops each datagram
with probability ``p`` (:mod:`.lossy`). Rank 0's parameters are copied to
the others after every epoch, as the network runs' precise broadcast does.

The rule (stated once, used for every model):

* the test loss is measured every ``eval_every`` iterations and smoothed
  over the last ``SMOOTH`` measurements (the mean; fewer at the start);
* baseline loss ``L*`` of a seed = the ``p = 0`` run's smoothed test loss
  at iteration ``horizon`` (per model, the end of the p = 0 run's fast
  descent; fixed before any lossy run);
* ``iters(p)`` = the first measured iteration whose smoothed test loss is
  <= ``L*`` (the run stops there; None if not within ``budget``
  iterations); for ``p = 0`` this is at most ``horizon``;
* ratio ``r(p) = iters(p) / iters(0)`` per seed, median over seeds;
* ``x1`` = the largest swept ``p`` such that the median ratio of every
  swept ``p' <= p`` is at most ``1 + slack`` (default 5 %).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .._native import ConfigError
from .experiment import TrainSpec, batches, load_data, make_model
from .lossy import VirtualNet, lossy_allreduce
from .policy import UniformLoss

__all__ = [
    "SMOOTH",
    "Curve",
    "X1Point",
    "baseline_target",
    "loss_curve",
    "ratio_median",
    "smoothed",
    "sweep",
    "tolerance_bound",
]

SMOOTH = 3
"""Measurements the test loss is averaged over."""


def smoothed(losses: Sequence[float], window: int = SMOOTH) -> list[float]:
    """Trailing mean over the last `window` values (fewer at the start)."""
    out = []
    for i in range(len(losses)):
        w = losses[max(0, i - window + 1) : i + 1]
        out.append(sum(w) / len(w))
    return out


@dataclass
class Curve:
    """One training run at loss rate `p`."""

    model: str
    p: float
    seed: int
    iterations: list[int]
    test_loss: list[float]
    test_accuracy: list[float]
    delivered: float
    """Mean fraction of the elements each rank expected that arrived."""
    packets_offered: int
    packets_dropped: int
    bytes_unsent: int
    reached_at: int | None = None
    """First measured iteration whose smoothed test loss is <= the target."""


def _set_grads(params: Sequence[torch.Tensor], flat: np.ndarray) -> None:
    off = 0
    for t in params:
        k = t.numel()
        t.grad = torch.from_numpy(flat[off : off + k].copy()).view_as(t)
        off += k


def loss_curve(
    model: str,
    p: float,
    seed: int,
    *,
    budget: int,
    eval_every: int = 10,
    target: float | None = None,
    world: int = 4,
    spec: TrainSpec | None = None,
    gather_loss: float | None = None,
    dataset: str = "digits",
) -> Curve:
    """Trains `model` with `world` replicas for up to `budget` iterations
    under packet loss `p` (loss bound and link loss both `p`); stops at the
    first measurement whose smoothed test loss is <= `target` when one is
    given. `gather_loss` (default `p`) is the all-gather's loss bound: 0
    makes it reliable (retransmitted over the same lossy links), so only
    the gradients collected from each worker lose data, as seed 001 §2.2
    measures."""
    if not 0.0 <= p < 1.0:
        raise ConfigError(f"loss rate p = {p}: in [0, 1)")
    if budget < 1 or eval_every < 1:
        raise ConfigError(f"budget = {budget}, eval_every = {eval_every}: both at least 1")
    spec = spec if spec is not None else TrainSpec(model=model, seed=seed)
    torch.set_num_threads(1)
    data = load_data(seed, dataset=dataset)
    replicas = [make_model(model, seed) for _ in range(world)]
    params = [list(m.parameters()) for m in replicas]
    opts = [torch.optim.SGD(ps, lr=spec.lr, momentum=spec.momentum) for ps in params]
    net = VirtualNet(world, p, seed=seed)
    exchanges = [net.rank(r) for r in range(world)]
    policy = UniformLoss(p)
    gather = None if gather_loss is None else UniformLoss(gather_loss)
    curve = Curve(model, p, seed, [], [], [], 1.0, 0, 0, 0)
    delivered: list[float] = []
    it = 0
    epoch = 0
    with ThreadPoolExecutor(max_workers=world) as pool:
        while it < budget:
            per_rank = [
                batches(len(data.y_train), r, world, spec.batch, epoch, seed) for r in range(world)
            ]
            for step in range(len(per_rank[0])):
                grads = []
                for r, m in enumerate(replicas):
                    m.zero_grad(set_to_none=True)
                    idx = per_rank[r][step]
                    loss = nn.functional.cross_entropy(m(data.x_train[idx]), data.y_train[idx])
                    loss.backward()  # type: ignore[no-untyped-call]
                    grads.append(
                        torch.cat([t.grad.reshape(-1) for t in params[r] if t.grad is not None])
                        .numpy()
                        .astype(np.float32)
                    )
                out = lossy_allreduce(
                    net, exchanges, grads, step=it, policy=policy, gather_policy=gather,
                    seed=seed, pool=pool,
                )  # fmt: skip
                for r, (g, tel) in enumerate(out):
                    _set_grads(params[r], g)
                    opts[r].step()
                    delivered.append(tel.delivered_fraction)
                    curve.bytes_unsent += tel.bytes_unsent
                it += 1
                if it % eval_every == 0:
                    m0 = replicas[0]
                    m0.eval()
                    with torch.no_grad():
                        logits = m0(data.x_test)
                        tl = nn.functional.cross_entropy(logits, data.y_test).item()
                        acc = (logits.argmax(1) == data.y_test).float().mean().item()
                    m0.train()
                    curve.iterations.append(it)
                    curve.test_loss.append(tl)
                    curve.test_accuracy.append(acc)
                    if target is not None and smoothed(curve.test_loss)[-1] <= target:
                        curve.reached_at = it
                        break
                if it >= budget:
                    break
            if curve.reached_at is not None:
                break
            # Epoch end: rank 0's parameters to every replica (the precise broadcast).
            with torch.no_grad():
                for r in range(1, world):
                    for dst, src in zip(params[r], params[0], strict=True):
                        dst.copy_(src)
            epoch += 1
    curve.delivered = float(np.mean(delivered)) if delivered else 1.0
    curve.packets_offered = net.stats.offered
    curve.packets_dropped = net.stats.dropped
    return curve


def baseline_target(curve: Curve, horizon: int) -> tuple[float, int]:
    """(L*, iters(0)): the p = 0 `curve`'s smoothed test loss at the last
    measurement within `horizon` iterations, and the first measured
    iteration whose smoothed loss is <= it."""
    sm = smoothed(curve.test_loss)
    pts = [(v, i) for i, v in zip(curve.iterations, sm, strict=True) if i <= horizon]
    if not pts:
        raise ConfigError(f"no measurement within the horizon of {horizon} iterations")
    target = pts[-1][0]
    return target, next(i for v, i in pts if v <= target)


@dataclass
class X1Point:
    """One loss rate over the seeds."""

    p: float
    iterations: list[int | None]
    """Per seed: iterations to that seed's baseline loss (None: not within the budget)."""
    baseline: list[int]
    """Per seed: iterations the p = 0 run needed."""

    @property
    def ratios(self) -> list[float]:
        return [
            math.inf if i is None else i / b
            for i, b in zip(self.iterations, self.baseline, strict=True)
        ]


def ratio_median(pt: X1Point) -> float:
    """Median over seeds of iters(p) / iters(0) (inf counts as the largest)."""
    r = sorted(pt.ratios)
    n = len(r)
    if n == 0:
        return math.inf
    return r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2


def tolerance_bound(points: Sequence[X1Point], slack: float = 0.05) -> float | None:
    """x1: the largest swept p such that every swept p' <= p has a median
    ratio <= 1 + `slack`; None when the sweep does not start at p = 0."""
    pts = sorted(points, key=lambda q: q.p)
    if not pts or pts[0].p != 0.0:
        return None
    x1 = 0.0
    for q in pts:
        if ratio_median(q) > 1.0 + slack + 1e-12:
            break
        x1 = q.p
    return x1


def sweep(
    model: str,
    ps: Sequence[float],
    seeds: Sequence[int],
    *,
    horizon: int,
    budget: int,
    eval_every: int = 10,
    progress: Callable[[Curve], None] | None = None,
    gather_reliable: bool = False,
    dataset: str = "digits",
) -> tuple[list[X1Point], list[Curve]]:
    """The x1 sweep of one model: per seed a p = 0 run of `horizon`
    iterations fixes L*, then every p runs until L* (at most `budget`);
    `gather_reliable`: only the reduce-scatter may lose (see `loss_curve`)."""
    if not ps or ps[0] != 0.0:
        raise ConfigError("ps must start at 0 (the baseline)")
    if budget < horizon:
        raise ConfigError(f"budget = {budget} below horizon = {horizon}")
    curves: list[Curve] = []
    targets: dict[int, tuple[float, int]] = {}
    for s in seeds:
        c = loss_curve(model, 0.0, s, budget=horizon, eval_every=eval_every, dataset=dataset)
        targets[s] = baseline_target(c, horizon)
        c.reached_at = targets[s][1]
        curves.append(c)
        if progress is not None:
            progress(c)
    points = [X1Point(0.0, [targets[s][1] for s in seeds], [targets[s][1] for s in seeds])]
    for p in ps[1:]:
        its: list[int | None] = []
        for s in seeds:
            c = loss_curve(
                model, p, s, budget=budget, eval_every=eval_every, target=targets[s][0],
                gather_loss=0.0 if gather_reliable else None, dataset=dataset,
            )  # fmt: skip
            curves.append(c)
            its.append(c.reached_at)
            if progress is not None:
                progress(c)
        points.append(X1Point(p, its, [targets[s][1] for s in seeds]))
    return points, curves
