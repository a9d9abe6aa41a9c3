"""Seeded, invertible transforms of a flat bucket, applied before sending so
that a lost range of the sent vector does not always hit the same
coordinates of the gradient.

Seed 001 (001_254954cce2026753.txt §2.2) shows SGD tolerates *random*
loss; a bounded-loss transfer that stops at a fraction ``1 - p`` loses the
tail of its send order, which is not random. ``permute`` makes the lost
coordinates a fresh random subset every step (a permutation of blocks of
``PERMUTE_BLOCK`` elements: a lost packet of ~350 floats then hits ~11
blocks spread over the bucket, at a fraction of the cost of permuting
single elements); ``hadamard`` (a randomized
Hadamard transform: random signs, then an orthonormal Walsh-Hadamard
transform in blocks) spreads a lost range over a whole block as small noise.
Every rank builds the same transform from the shared seed, the step and the
bucket index; all reductions are linear, so ranks reduce in the transformed
domain and invert once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._native import ConfigError

__all__ = ["TRANSFORMS", "Transform", "make_transform"]

F32 = npt.NDArray[np.float32]
TRANSFORMS = ("none", "permute", "hadamard")
HADAMARD_BLOCK = 1024
PERMUTE_BLOCK = 32


def _fwht(x: F32) -> F32:
    """Orthonormal Walsh-Hadamard transform of each row of `x` (rows of a
    power-of-two length); its own inverse."""
    rows, n = x.shape
    h = 1
    y = x.copy()
    while h < n:
        y = y.reshape(rows, n // (2 * h), 2, h)
        a, b = y[:, :, 0, :], y[:, :, 1, :]
        y = np.stack((a + b, a - b), axis=2).reshape(rows, n)
        h *= 2
    return (y * np.float32(1.0 / np.sqrt(n))).astype(np.float32)


@dataclass
class Transform:
    """One step's transform of a bucket of `n` elements into `size` >= n."""

    kind: str
    n: int
    size: int
    perm: npt.NDArray[np.int64] | None = None
    signs: F32 | None = None

    def forward(self, x: F32) -> F32:
        """`x` (n elements) to the sent domain (`size` elements, zero-padded)."""
        y = np.zeros(self.size, np.float32)
        y[: self.n] = x
        if self.kind == "permute":
            assert self.perm is not None
            return y.reshape(-1, PERMUTE_BLOCK)[self.perm].reshape(-1)
        if self.kind == "hadamard":
            assert self.signs is not None
            return _fwht((y * self.signs).reshape(-1, HADAMARD_BLOCK)).reshape(-1)
        return y

    def inverse(self, y: F32) -> F32:
        """Back to the gradient's domain: the first `n` elements."""
        if self.kind == "permute":
            assert self.perm is not None
            x = np.empty_like(y).reshape(-1, PERMUTE_BLOCK)
            x[self.perm] = y.reshape(-1, PERMUTE_BLOCK)
            return x.reshape(-1)[: self.n]
        if self.kind == "hadamard":
            assert self.signs is not None
            x = _fwht(y.reshape(-1, HADAMARD_BLOCK)).reshape(-1) * self.signs
            return x[: self.n].astype(np.float32)
        return y[: self.n]

    def origin(self) -> npt.NDArray[np.int64] | None:
        """For each sent position, the gradient coordinate it carries (None
        for hadamard, whose positions mix coordinates; -1 for padding)."""
        if self.kind == "hadamard":
            return None
        idx = np.arange(self.size, dtype=np.int64)
        if self.kind == "permute":
            assert self.perm is not None
            idx = idx.reshape(-1, PERMUTE_BLOCK)[self.perm].reshape(-1)
        idx[idx >= self.n] = -1
        return idx


def make_transform(kind: str, n: int, world: int, seed: int, step: int, bucket: int) -> Transform:
    """The transform every rank builds for (`step`, `bucket`): padded so
    that the sent vector splits into `world` equal shards."""
    if kind not in TRANSFORMS:
        raise ConfigError(f"transform {kind!r}: one of {', '.join(TRANSFORMS)}")
    if n <= 0 or world <= 0:
        raise ConfigError(f"a bucket of {n} elements over {world} ranks")
    block = {"hadamard": HADAMARD_BLOCK, "permute": PERMUTE_BLOCK}.get(kind, 1)
    quantum = world * block
    size = -(-n // quantum) * quantum
    rng = np.random.default_rng([seed & 0xFFFFFFFF, step, bucket, 0x7A])
    if kind == "permute":
        perm = rng.permutation(size // PERMUTE_BLOCK).astype(np.int64)
        return Transform(kind, n, size, perm=perm)
    if kind == "hadamard":
        signs = np.where(rng.random(size) < 0.5, -1.0, 1.0).astype(np.float32)
        return Transform(kind, n, size, signs=signs)
    return Transform(kind, n, size)
