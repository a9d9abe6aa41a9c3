"""Loss policies: how much of a gradient shard the transport may lose.

A policy turns one float32 shard into an approxnet job:

* :class:`UniformLoss` — one loss bound ``p`` for the whole shard: a tensor
  job delivered once a fraction ``1 - p`` of its elements arrived (seed
  001_254954cce2026753.txt §2.2-3: the "loss tolerance bound" ``p``, MSR =
  ``1 - p``; packets never split a float and carry their element range,
  §3.2 ideas #1-#2).
* :class:`MagnitudeGroups` — the shard cut into fixed segments, each segment
  in the group of its largest ``|value|``, each group with its own MSR
  (seed 000_9eba2c5297757960.txt §6, "Machine-learning frameworks": groups
  of gradients below 0.001, between 0.001 and 0.0025, above; a segment
  takes a group's MSR when all of its gradients fall within that group's
  threshold).

Bad input raises approxnet's typed errors: ``JobError`` for an MSR or loss
bound outside its range, a wrong dtype or an empty shard.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from .._native import Job, JobError

__all__ = ["MagnitudeGroups", "Policy", "UniformLoss", "check_shard"]

F32 = npt.NDArray[np.float32]


def check_shard(values: Any) -> F32:
    """`values` as a non-empty 1-D float32 array, or a ``JobError``."""
    if not isinstance(values, np.ndarray):
        raise JobError(f"a shard must be a numpy array, got {type(values).__name__}")
    if values.dtype != np.float32:
        raise JobError(f"a shard must be float32, got {values.dtype}")
    if values.ndim != 1 or values.size == 0:
        raise JobError(f"a shard must be a non-empty 1-D array, got shape {values.shape}")
    return values


def _fraction(name: str, x: Any, *, upper_open: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise JobError(f"{name} must be a number, got {type(x).__name__}")
    v = float(x)
    ok = math.isfinite(v) and 0.0 <= v and (v < 1.0 if upper_open else v <= 1.0)
    if not ok:
        bound = "[0, 1)" if upper_open else "[0, 1]"
        raise JobError(f"{name} = {x!r}: must lie in {bound}")
    return v


class Policy(Protocol):
    """Turns a shard into a job; `segment` tells the receiver how to read it."""

    @property
    def segment(self) -> int | None:
        """Elements per message (message jobs), or None for a tensor job."""
        ...

    def job(self, values: F32) -> Job:
        """The approxnet job carrying `values`."""
        ...

    def describe(self) -> str:
        """One line for logs and result files."""
        ...


@dataclass(frozen=True)
class UniformLoss:
    """At most a fraction `loss_bound` of each shard may be lost (MSR =
    ``1 - loss_bound``); ``loss_bound = 0`` is a reliable transfer."""

    loss_bound: float = 0.1

    def __post_init__(self) -> None:
        # loss_bound = 1 would let a job deliver nothing at all; seed 001
        # §2.2: beyond x2 the job cannot converge.
        _fraction("loss_bound", self.loss_bound, upper_open=True)

    @property
    def segment(self) -> int | None:
        return None

    def job(self, values: F32) -> Job:
        return Job.tensor(check_shard(values), p=1.0 - float(self.loss_bound))

    def describe(self) -> str:
        return f"uniform(p={self.loss_bound:g})"


#: Seed 000 §6 defaults: thresholds on |g| and the MSR of each group.
DEFAULT_THRESHOLDS = (0.001, 0.0025)
DEFAULT_MSRS = (0.0, 0.125, 0.925)


@dataclass(frozen=True)
class MagnitudeGroups:
    """Segments of `segment` elements grouped by their largest ``|value|``:
    group ``i`` holds segments with ``thresholds[i-1] <= max|v| <
    thresholds[i]``, and delivers at least a fraction ``msrs[i]`` of them.
    Defaults: seed 000 §6 (``|g| < 0.001``: MSR 0; ``0.001-0.0025``: MSR
    0.125; above: MSR 0.925)."""

    thresholds: Sequence[float] = DEFAULT_THRESHOLDS
    msrs: Sequence[float] = DEFAULT_MSRS
    elements_per_segment: int = 256

    def __post_init__(self) -> None:
        th = [float(t) for t in self.thresholds]
        ms = [_fraction("msr", m) for m in self.msrs]
        if len(ms) != len(th) + 1:
            raise JobError(f"{len(th)} thresholds need {len(th) + 1} MSRs, got {len(ms)}")
        if any(not math.isfinite(t) or t <= 0 for t in th) or th != sorted(set(th)):
            raise JobError(f"thresholds must be positive, finite and increasing, got {th}")
        seg = self.elements_per_segment
        if isinstance(seg, bool) or not isinstance(seg, int) or not 1 <= seg <= 16384:
            raise JobError(f"elements_per_segment must be an int in 1..16384, got {seg!r}")
        object.__setattr__(self, "thresholds", tuple(th))
        object.__setattr__(self, "msrs", tuple(ms))

    @property
    def segment(self) -> int | None:
        return self.elements_per_segment

    def groups_of(self, values: F32) -> npt.NDArray[np.int64]:
        """The group of each segment of `values`."""
        v = check_shard(values)
        seg = self.elements_per_segment
        pad = (-v.size) % seg
        mags = np.abs(np.pad(v, (0, pad))).reshape(-1, seg).max(axis=1)
        groups: npt.NDArray[np.int64] = np.searchsorted(
            np.asarray(self.thresholds), mags, side="right"
        ).astype(np.int64)
        return groups

    def job(self, values: F32) -> Job:
        v = check_shard(values)
        groups = self.groups_of(v)
        job = Job(msr=self.msrs[0])
        for gid, msr in enumerate(self.msrs[1:], start=1):
            job.group(gid, msr)
        seg = self.elements_per_segment
        for i, g in enumerate(groups):
            # The payload is approximate data: no precise prefix (seed 002).
            job.message(int(g), v[i * seg : (i + 1) * seg].tobytes(), precise_len=0)
        return job

    def describe(self) -> str:
        return f"groups(thresholds={list(self.thresholds)}, msrs={list(self.msrs)})"
