"""Seed 004's approximate-computing kernels (§5.2.1) on real numbers, as
``procs`` simulated processes whose every exchanged array crosses a
:class:`~approxnet.interconnect.exchange.Channel`.

* :func:`cg` -- conjugate gradient on a dense SPD system, rows split over
  the processes; each iteration all-gathers the search direction (float64,
  approximate); the two dot products are scalar all-reduces (precise).
* :func:`fft2` -- a 2-D FFT by rows, all-to-all transpose, rows, transpose
  back (complex128, approximate: the level applies to real and imaginary
  part, seed 004 Table 2's "16+16").
* :func:`kmeans` -- the root scatters the points (float32, approximate),
  then each iteration reduces the per-cluster partial sums at the root
  (float32, approximate) and counts (precise) and broadcasts the centroids
  (float32, approximate).

The result-quality metrics follow §5.2.1: CG and FFT by their error against
an error-free run, K-means by the fraction of points classified otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .exchange import Channel

__all__ = ["CgResult", "KmeansResult", "cg", "fft2", "kmeans", "kmeans_data", "spd_system"]

F64 = npt.NDArray[np.float64]


def spd_system(n: int, cond: float, seed: int) -> tuple[F64, F64]:
    """A dense symmetric positive-definite ``n x n`` matrix with condition
    number ``cond`` (eigenvalues log-spaced in [1, cond], random eigenbasis)
    and a right-hand side, both seeded."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = np.logspace(0.0, np.log10(cond), n)
    a = (q * eig) @ q.T
    a = 0.5 * (a + a.T)
    return a, rng.normal(size=n)


@dataclass(frozen=True)
class CgResult:
    """One CG solve."""

    x: F64
    """The solution reached."""
    iterations: int
    """Iterations run."""
    converged: bool
    """Whether the true residual ``|b - A x| / |b|`` reached the tolerance."""
    residual: float
    """The true relative residual at the end (inf if the run diverged)."""


def _blocks(n: int, procs: int) -> list[slice]:
    edges = np.linspace(0, n, procs + 1).astype(int)
    return [slice(int(edges[i]), int(edges[i + 1])) for i in range(procs)]


def cg(
    a: F64, b: F64, channel: Channel, procs: int = 8, tol: float = 1e-10, max_iter: int = 5000
) -> CgResult:
    """Solves ``a x = b`` by CG on ``procs`` processes. Each process owns a
    block of rows; before the matrix-vector product it receives every other
    block of the search direction through ``channel`` (its own block stays
    local). Stops when the recursive residual falls below ``tol`` and the
    true one confirms it (else goes on), at ``max_iter``, or on a
    non-finite value."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _cg(a, b, channel, procs, tol, max_iter)


def _cg(a: F64, b: F64, channel: Channel, procs: int, tol: float, max_iter: int) -> CgResult:
    n = b.size
    parts = _blocks(n, procs)
    x = np.zeros(n)
    r = b.copy()
    p = r.copy()
    rr = float(r @ r)
    bnorm = float(np.linalg.norm(b))
    it = 0
    while it < max_iter:
        it += 1
        q = np.empty(n)
        for i, own in enumerate(parts):
            view = np.concatenate(
                [p[s] if j == i else channel.send(p[s], j, i) for j, s in enumerate(parts)]
            )
            q[own] = a[own] @ view
        channel.step()
        pq = float(channel.allreduce_precise(np.array([p @ q]))[0])
        if not np.isfinite(pq) or pq == 0.0:
            break
        alpha = rr / pq
        x += alpha * p
        r -= alpha * q
        rr_new = float(channel.allreduce_precise(np.array([r @ r]))[0])
        if not np.isfinite(rr_new):
            break
        if np.sqrt(rr_new) <= tol * bnorm:
            true = float(np.linalg.norm(b - a @ x)) / bnorm
            if true <= tol * 10:
                return CgResult(x, it, True, true)
            r = b - a @ x  # restart from the true residual
            rr_new = float(r @ r)
            p = r.copy()
            rr = rr_new
            continue
        p = r + (rr_new / rr) * p
        rr = rr_new
    res = float(np.linalg.norm(b - a @ x)) / bnorm
    res = res if np.isfinite(res) else float("inf")
    return CgResult(x, it, res <= tol * 10, res)


def _transpose(
    z: npt.NDArray[np.complex128], channel: Channel, procs: int
) -> npt.NDArray[np.complex128]:
    """All-to-all transpose of a row-distributed square array: block
    ``(i, j)`` goes from process ``i`` to ``j`` through the channel."""
    parts = _blocks(z.shape[0], procs)
    out = np.empty_like(z)
    for i, ri in enumerate(parts):
        for j, rj in enumerate(parts):
            block = np.ascontiguousarray(z[ri, rj])
            got = block if i == j else channel.send(block, i, j)
            out[rj, ri] = got.T
    channel.step()
    return out


def fft2(
    z: npt.NDArray[np.complex128], channel: Channel, procs: int = 8
) -> npt.NDArray[np.complex128]:
    """The 2-D FFT of a square complex array distributed by rows: FFT of
    the local rows, all-to-all transpose, FFT of the rows, transpose back.
    Values corrupted to inf or NaN propagate (no warning)."""
    with np.errstate(over="ignore", invalid="ignore"):
        step = np.fft.fft(z, axis=1)
        step = np.fft.fft(_transpose(step, channel, procs), axis=1)
    return _transpose(step, channel, procs)


def kmeans_data(
    points: int, dims: int, clusters: int, seed: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """``points`` float32 points in ``dims`` dimensions around ``clusters``
    seeded Gaussian centres (spread 1, centres ~N(0, 4^2)), and the first
    ``clusters`` points as initial centroids."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(clusters, dims))
    which = rng.integers(0, clusters, size=points)
    x = (centres[which] + rng.normal(size=(points, dims))).astype(np.float32)
    return x, x[:clusters].copy()


@dataclass(frozen=True)
class KmeansResult:
    """One K-means run."""

    labels: npt.NDArray[np.int64]
    """The cluster of every point (as the owning process sees its points)."""
    centroids: npt.NDArray[np.float32]
    """The final centroids at the root."""
    iterations: int
    """Iterations run."""


def _assign(x: npt.NDArray[np.float32], c: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    with np.errstate(over="ignore", invalid="ignore"):
        d = (x * x).sum(1)[:, None] - 2.0 * x @ c.T + (c * c).sum(1)[None, :]
    d = np.where(np.isfinite(d), d, np.inf)
    labels: npt.NDArray[np.int64] = np.argmin(d, axis=1).astype(np.int64)
    return labels


def kmeans(
    x: npt.NDArray[np.float32],
    init: npt.NDArray[np.float32],
    channel: Channel,
    procs: int = 8,
    iterations: int = 30,
) -> KmeansResult:
    """Lloyd's K-means on ``procs`` processes: the root (process 0) scatters
    the points, then every iteration each process assigns its points,
    sends its per-cluster sums and counts to the root, and the root
    broadcasts the new centroids. ``init`` reaches every process precisely."""
    parts = _blocks(x.shape[0], procs)
    local = [x[s] if i == 0 else channel.send(x[s], 0, i) for i, s in enumerate(parts)]
    channel.step()
    # (rank 0's own copy counts as a message, as it always did: the count seeds the channel)
    views = [
        channel.send_precise(init, 0, i) if i else channel.send_precise(init) for i in range(procs)
    ]
    channel.step()
    k = init.shape[0]
    centroids = init.copy()
    labels: list[npt.NDArray[np.int64]] = []
    for _ in range(iterations):
        labels = [_assign(pts, views[i]) for i, pts in enumerate(local)]
        sums = np.zeros(init.shape, dtype=np.float64)
        counts = np.zeros(k, dtype=np.int64)
        for i, (pts, lab) in enumerate(zip(local, labels, strict=True)):
            s = np.zeros(init.shape, dtype=np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                np.add.at(s, lab, pts)
            c = np.bincount(lab, minlength=k).astype(np.int64)
            sums += s if i == 0 else channel.send(s, i, 0)
            counts += channel.send_precise(c, i, 0) if i else c
        channel.step()
        with np.errstate(over="ignore", invalid="ignore"):
            new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centroids)
        centroids = new.astype(np.float32)
        views = [centroids if i == 0 else channel.send(centroids, 0, i) for i in range(procs)]
        channel.step()
    all_labels: npt.NDArray[Any] = np.concatenate(labels)
    return KmeansResult(all_labels.astype(np.int64), centroids, iterations)
