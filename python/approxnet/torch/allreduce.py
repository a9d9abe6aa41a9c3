"""The bounded-loss all-reduce of one flat bucket.

Two phases over direct connections (a reduce-scatter, then an all-gather),
each one round of parallel jobs:

1. the bucket (transformed, see :mod:`.transform`) is cut into ``W`` equal
   shards; rank ``r`` sends shard ``j`` to rank ``j`` and reduces the ``W``
   contributions to shard ``r`` it ends up with;
2. rank ``r`` sends its reduced shard to every other rank and assembles
   the whole reduced bucket.

Every rank sends and receives ``2 (W - 1) / W`` of the bucket, as a ring
all-reduce does, but in 2 rounds instead of ``2 (W - 1)``: with 4 ranks,
2 waits for the slowest of 3 parallel jobs instead of 6 waits in a row,
each of which a single late packet would stretch. Missing ranges
(seed 001_254954cce2026753.txt §3.2 idea #2: the transport reports them;
the server averages what it received, the worker may keep an earlier value):

* ``zero``: a missing contribution counts as 0 (seed 000 §6: a lost
  segment's gradients are taken as zero);
* ``rescale``: each element is averaged over the contributions that
  actually arrived (unbiased when losses are random);
* ``previous``: a missing value takes the last step's reduced value of that
  gradient coordinate.

In the gather phase a missing range is zero (``zero`` / ``rescale``) or
the previous value (``previous``).
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from .._native import ConfigError
from .exchange import Received, ShardExchange
from .policy import Policy, check_shard
from .telemetry import BucketTelemetry
from .transform import make_transform

__all__ = ["FILLS", "allreduce"]

F32 = npt.NDArray[np.float32]
FILLS = ("zero", "rescale", "previous")


def allreduce(
    ex: ShardExchange,
    x: F32,
    *,
    step: int,
    bucket: int,
    policy: Policy,
    gather_policy: Policy,
    fill: str,
    transform: str,
    seed: int,
    previous: F32 | None,
) -> tuple[F32, BucketTelemetry]:
    """The average over ranks of `x` (every rank calls it with the same
    `step`, `bucket` and sizes); returns it with this rank's telemetry."""
    if fill not in FILLS:
        raise ConfigError(f"fill {fill!r}: one of {', '.join(FILLS)}")
    if fill == "previous" and transform == "hadamard":
        raise ConfigError("fill 'previous' needs transform 'none' or 'permute'")
    x = check_shard(x)
    t0 = time.monotonic()
    reports_before = len(ex.reports)
    W, r = ex.world, ex.rank
    tf = make_transform(transform, x.size, W, seed, step, bucket)
    y = tf.forward(x)
    s = tf.size // W
    prev_y: F32 | None = None
    origin = tf.origin() if fill == "previous" and previous is not None else None
    if origin is not None and previous is not None:
        prev_y = np.where(origin >= 0, previous[np.maximum(origin, 0)], 0).astype(np.float32)

    peers = [p for p in range(W) if p != r]
    sent = 0
    # Phase 1: reduce-scatter. Queue every job first, then claim the slots
    # in the same order as every peer queued them.
    for p in peers:
        job = policy.job(np.ascontiguousarray(y[p * s : (p + 1) * s]))
        sent += job.nbytes
        ex.send(p, job)
    slots = {p: ex.claim(p) for p in peers}
    mine = y[r * s : (r + 1) * s]
    total = mine.astype(np.float32).copy()
    count = np.ones(s, np.float32)
    got_elems = dict.fromkeys(peers, 0)
    for p in peers:
        rec = ex.wait(p, slots[p], length=s, segment=policy.segment)
        assert rec is not None
        got_elems[p] += int(rec.have.sum())
        total += _filled(rec, fill, prev_y, r * s, s)
        count += rec.have
    reduced = total / count if fill == "rescale" else total / np.float32(W)
    reduced = reduced.astype(np.float32)

    # Phase 2: all-gather of the reduced shards.
    for p in peers:
        job = gather_policy.job(np.ascontiguousarray(reduced))
        sent += job.nbytes
        ex.send(p, job)
    slots = {p: ex.claim(p) for p in peers}
    out = np.empty(tf.size, np.float32)
    out[r * s : (r + 1) * s] = reduced
    for p in peers:
        rec = ex.wait(p, slots[p], length=s, segment=gather_policy.segment)
        assert rec is not None
        got_elems[p] += int(rec.have.sum())
        fill_back = prev_y[p * s : (p + 1) * s] if prev_y is not None else None
        vals = rec.values
        if fill_back is not None:
            vals = np.where(rec.have, vals, fill_back)
        else:
            vals = np.where(rec.have, vals, 0)
        out[p * s : (p + 1) * s] = vals
    result = tf.inverse(out)

    groups: dict[int, tuple[int, int]] = {}
    unsent = sum(rep.unsent_bytes for rep in ex.reports[reports_before:])
    for rep in ex.reports[reports_before:]:
        for gid, d, m in rep.groups:
            a, b = groups.get(gid, (0, 0))
            groups[gid] = (a + d, b + m)
    tel = BucketTelemetry(
        step=step,
        bucket=bucket,
        elements=int(x.size),
        seconds=time.monotonic() - t0,
        bytes_sent=sent,
        delivered={p: got_elems[p] / (2 * s) for p in peers},
        groups=groups,
        bytes_unsent=unsent,
        packets=sum(rep.packets for rep in ex.reports[reports_before:]),
        retransmissions=sum(rep.retransmissions for rep in ex.reports[reports_before:]),
    )
    return result, tel


def _filled(rec: Received, fill: str, prev_y: F32 | None, start: int, s: int) -> F32:
    """A received contribution with its missing elements filled."""
    if fill == "previous" and prev_y is not None:
        return np.where(rec.have, rec.values, prev_y[start : start + s]).astype(np.float32)
    return np.where(rec.have, rec.values, 0).astype(np.float32)
