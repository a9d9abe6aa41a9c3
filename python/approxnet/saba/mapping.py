"""From applications to switch queues (seed 003 §5.3).

* :func:`apps_to_pls` — §5.3.1: K-means (:func:`kmeans`) on the models' coefficients groups
  the registered apps into at most ``S`` priority levels (PLs); PL 0 is the
  most bandwidth-sensitive group (largest centroid slowdown at 25 %).
* :class:`PlHierarchy` — §5.3.2 step 1: level 1 puts every PL in its own
  cluster; each next level merges the two closest clusters (Euclidean
  distance of their coefficient vectors) into one whose coefficients are the
  midpoint of the two, until ``min_queues`` clusters remain.
* :meth:`PlHierarchy.queues_for` — §5.3.2 step 2: for a port with ``Q``
  queues and the PLs present there, the first level that groups those PLs
  into at most ``Q`` clusters; each cluster is one queue.
* :func:`queue_weights` — a queue's weight is the sum of its apps' eq. 2
  weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import SabaError

__all__ = ["apps_to_pls", "PlHierarchy", "queue_weights", "PortQueues"]

_PROBE_SHARE = 0.25


def apps_to_pls(
    coeffs: Mapping[str, Sequence[float]], levels: int, seed: int = 0
) -> tuple[dict[str, int], list[list[float]]]:
    """K-means of the apps' (degree-3 padded) coefficients into at most
    `levels` PLs. Returns app -> PL and each PL's centroid, PL 0 the most
    sensitive. Deterministic for a seed; names are processed sorted."""
    if levels < 1:
        raise SabaError(f"levels (number of PLs) must be >= 1, got {levels}")
    names = sorted(coeffs)
    if not names:
        return {}, []
    x = np.array([list(coeffs[n]) + [0.0] * (4 - len(coeffs[n])) for n in names], dtype=float)
    distinct = len(np.unique(x, axis=0))
    k = min(levels, distinct)
    if k == 1:
        labels = np.zeros(len(names), dtype=int)
        centers = x.mean(axis=0, keepdims=True)
    else:
        labels, centers = kmeans(x, k, seed)
    powers = _PROBE_SHARE ** np.arange(4)
    order = np.argsort(-(centers @ powers), kind="stable")
    rank = {int(old): new for new, old in enumerate(order)}
    pl_of = {n: rank[int(lbl)] for n, lbl in zip(names, labels, strict=True)}
    return pl_of, [list(map(float, centers[old])) for old in order]


def kmeans(
    x: np.ndarray, k: int, seed: int, n_init: int = 4, iters: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's K-means from k-means++ seeds, the best of `n_init` starts by
    inertia; deterministic for a seed. (scikit-learn's KMeans gives the same
    clustering but took 0.6 s for 5 apps on the shared 2-core machine, most
    of it start-up per call; this takes ~1 ms.)"""
    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(n_init):
        centers = x[[int(rng.integers(len(x)))]]
        for _ in range(1, k):
            d2 = np.min(((x[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
            total = float(d2.sum())
            pick = int(rng.choice(len(x), p=d2 / total)) if total > 0 else int(rng.integers(len(x)))
            centers = np.vstack([centers, x[pick]])
        labels = np.zeros(len(x), dtype=int)
        for step in range(iters):
            new = np.argmin(((x[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
            if step and np.array_equal(new, labels):
                break
            labels = new
            for j in range(k):
                if np.any(labels == j):
                    centers[j] = x[labels == j].mean(axis=0)
        inertia = float(((x - centers[labels]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, labels.copy(), centers.copy())
    assert best is not None
    return best[1], best[2]


class PlHierarchy:
    """Agglomerative merge of PLs (§5.3.2): ``levels[0]`` is every PL alone;
    ``levels[j]`` has one cluster fewer than ``levels[j - 1]``. Each level is
    a list of clusters, each a sorted tuple of PLs."""

    def __init__(self, centroids: Sequence[Sequence[float]], min_queues: int) -> None:
        if min_queues < 1:
            raise SabaError(f"min_queues must be >= 1, got {min_queues}")
        clusters: list[tuple[tuple[int, ...], np.ndarray]] = [
            ((i,), np.array(c, dtype=float)) for i, c in enumerate(centroids)
        ]
        self.levels: list[list[tuple[int, ...]]] = [[m for m, _ in clusters]]
        while len(clusters) > min_queues:
            best = (np.inf, 0, 1)
            for i in range(len(clusters)):
                for j in range(i + 1, len(clusters)):
                    d = float(np.linalg.norm(clusters[i][1] - clusters[j][1]))
                    if d < best[0]:
                        best = (d, i, j)
            _, i, j = best
            members = tuple(sorted(clusters[i][0] + clusters[j][0]))
            merged = (members, (clusters[i][1] + clusters[j][1]) / 2)
            clusters = [c for k, c in enumerate(clusters) if k not in (i, j)] + [merged]
            clusters.sort(key=lambda c: c[0])
            self.levels.append([m for m, _ in clusters])

    def queues_for(self, pls: Sequence[int], queues: int) -> list[tuple[int, ...]]:
        """The PLs present at a port grouped into at most `queues` queues:
        the first level where they fit. Queue q holds the returned group q
        (groups ordered by their most sensitive PL)."""
        if queues < 1:
            raise SabaError(f"a port needs at least 1 queue, got {queues}")
        present = set(pls)
        for level in self.levels:
            groups = [tuple(p for p in c if p in present) for c in level]
            groups = [g for g in groups if g]
            if len(groups) <= queues:
                return sorted(groups)
        raise SabaError(
            f"{len(present)} PLs cannot be merged into {queues} queues "
            f"(the hierarchy stops at {len(self.levels[-1])} clusters)"
        )


@dataclass(frozen=True)
class PortQueues:
    """A port's queues: the PLs of each and its weight (a share of the link)."""

    pls: tuple[tuple[int, ...], ...]
    weights: tuple[float, ...]


def queue_weights(
    groups: Sequence[tuple[int, ...]], app_pl: Mapping[str, int], app_weight: Mapping[str, float]
) -> PortQueues:
    """Sum of the apps' weights per queue."""
    where = {pl: q for q, g in enumerate(groups) for pl in g}
    w = [0.0] * len(groups)
    for app, weight in app_weight.items():
        w[where[app_pl[app]]] += weight
    return PortQueues(tuple(groups), tuple(w))
