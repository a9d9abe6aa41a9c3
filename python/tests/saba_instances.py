"""Random and hand-made instances of the flow model's per-port weighted
sharing (saba/fluidshare.py's `Entries`), shared by the allocator tests."""

from __future__ import annotations

import numpy as np

from approxnet.saba.fluidshare import Entries


def instance(
    rng: np.random.Generator,
    links: int,
    flows: int,
    apps: int,
    levels: int,
    weights: str,
) -> Entries:
    """Random paths of 1-4 links, one queue per (link, app, level); queue
    weights all equal ("equal"), one per app, the same on every port
    ("app"), or random per port ("port"); random capacities."""
    cap = rng.uniform(1.0, 10.0, links)
    paths = [
        rng.choice(links, int(rng.integers(1, min(4, links) + 1)), replace=False)
        for _ in range(flows)
    ]
    ef = np.concatenate([np.full(len(p), i) for i, p in enumerate(paths)]).astype(np.int64)
    el = np.concatenate(paths).astype(np.int64)
    app = rng.integers(0, apps, flows)
    lvl = rng.integers(0, levels, flows)[ef].astype(np.int64)
    _, q = np.unique((el * apps + app[ef]) * levels + lvl, return_inverse=True)
    nq = int(q.max()) + 1
    q_app = np.zeros(nq, dtype=np.int64)
    q_app[q] = app[ef]
    if weights == "equal":
        w = np.ones(nq)
    elif weights == "app":
        w = (0.05 + rng.random(apps))[q_app]
    elif weights == "port":
        w = 0.05 + rng.random(nq)
    else:
        raise ValueError(f"weights must be equal, app or port, got {weights!r}")
    return Entries(ef, el, lvl, q.astype(np.int64), w, cap, flows)


Size = int | tuple[int, int]


def _size(rng: np.random.Generator, size: Size) -> int:
    return size if isinstance(size, int) else int(rng.integers(*size))


def drawn(
    rng: np.random.Generator,
    links: Size,
    flows: Size,
    apps: Size,
    levels: Size,
    weights: str,
) -> Entries:
    """`instance` with each size either fixed or drawn uniformly from
    [lo, hi) by the same generator, in the order links, flows, apps,
    levels (so a test's instances do not change with this shorthand)."""
    n_links = _size(rng, links)
    n_flows = _size(rng, flows)
    n_apps = _size(rng, apps)
    n_levels = _size(rng, levels)
    return instance(rng, n_links, n_flows, n_apps, n_levels, weights)


def crossed() -> Entries:
    """Two flows over the same two links (capacity 10), queue weights
    0.9 / 0.1 on one link and 0.1 / 0.9 on the other."""
    return Entries(
        np.array([0, 0, 1, 1]),
        np.array([0, 1, 0, 1]),
        np.zeros(4, dtype=np.int64),
        np.array([0, 1, 2, 3]),
        np.array([0.9, 0.1, 0.1, 0.9]),
        np.array([10.0, 10.0]),
        2,
    )
