"""Fluid sharing of links by per-port weighted queues (seed 003 §5.2 in a
flow-level model): what the Saba simulator backend
(:mod:`.sim_backend`) computes at every change of the active flows.

Every link (switch or host egress port) serves its flows in strict
priority levels; within a level, queues share what higher levels left by
weighted max-min (WFQ's fluid limit: a queue gets its weight's part,
and what a queue cannot use goes to the others in proportion to their
weights); within a queue, flows share equally (max-min; what the
per-flow congestion control inside one queue converges to). The weights
are *per port*: a flow's queue and that queue's weight may differ from
link to link, which the simulator's own fluid mode (per-flow weights,
the same on every link, docs/simulator-fluid.md) cannot express.

The network allocation is the fixed point of every link's local
allocation: each flow gets, on every link, that link's share given the
rates the flow's *other* links allow it (its demand there), and its rate
is the least of its links' shares. It is computed by iterating the local
allocations (Jacobi; Bertsekas and Gallager's distributed max-min
iteration generalised to per-link weights), from unbounded demands. The
rates are feasible at every iteration (a flow never gets more than any of
its links gives it); with one queue per flow and equal weights the fixed
point is the per-flow max-min allocation, which the tests check against
the simulator's exact solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Entries", "waterfill", "allocate", "Allocation"]

#: How much more than its other links allow a link reserves for a flow,
#: decreasing as the iteration settles (see :func:`allocate`).
INFLATE = [0.05, 0.005, 5e-4, 5e-5]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


@dataclass(frozen=True)
class Entries:
    """One row per (flow, link on its path). Queue ids are global (a queue
    belongs to one link and one level); ``qweight[q]`` is queue q's weight
    at its link (> 0)."""

    flow: I64
    link: I64
    level: I64
    queue: I64
    qweight: F64
    capacity: F64  # per link, bytes per ns (or any unit; rates come out in it)
    flows: int

    def check(self) -> None:
        """Shapes and values the allocator relies on (a clear error, not a
        wrong allocation)."""
        n = len(self.flow)
        for name in ("link", "level", "queue"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"entries: {name} has {len(getattr(self, name))} rows, not {n}")
        if n and (self.queue.min() < 0 or self.queue.max() >= len(self.qweight)):
            raise ValueError("entries: a queue id has no weight")
        if np.any(~(self.qweight > 0)):
            raise ValueError("entries: queue weights must be > 0")
        if np.any(~(self.capacity > 0)):
            raise ValueError("entries: link capacities must be > 0")
        if n and (self.flow.min() < 0 or self.flow.max() >= self.flows):
            raise ValueError("entries: a flow id is out of range")
        if n and np.bincount(self.flow, minlength=self.flows).min() == 0:
            raise ValueError("entries: every flow needs at least one link")


def waterfill(group: I64, weight: F64, demand: F64, capacity: F64) -> F64:
    """Weighted water-filling of items into their groups: finds per group
    the level ``lam`` with ``sum min(weight * lam, demand) = capacity``
    (every item at its demand if they fit) and returns each item's
    ``min(weight * lam, demand)``. `capacity` is indexed by group."""
    n = len(group)
    if n == 0:
        return np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = demand / weight  # the level at which an item saturates
    order = np.lexsort((t, group))
    g, w, d, ts = group[order], weight[order], demand[order], t[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    sizes = np.diff(np.concatenate((starts, [n])))
    # exclusive prefix of demands and inclusive suffix of weights, per group
    cd = np.cumsum(np.where(np.isfinite(d), d, 0.0))
    pre_d = cd - d_finite(d) - np.repeat(np.concatenate(([0.0], cd))[starts], sizes)
    cw = np.cumsum(w[::-1])[::-1]
    ends = np.concatenate((starts[1:], [n]))
    after = np.concatenate((cw, [0.0]))[np.repeat(ends, sizes)]
    suf_w = cw - after
    inf_seen = np.cumsum(~np.isfinite(d))
    inf_before = (
        inf_seen - (~np.isfinite(d)) - np.repeat(np.concatenate(([0], inf_seen))[starts], sizes)
    )
    cap = capacity[g]
    with np.errstate(invalid="ignore", over="ignore"):
        full = np.where(inf_before > 0, np.inf, pre_d + ts * suf_w)
    hit = full >= cap
    pos = np.arange(n)
    cand = np.where(hit, pos, n)
    first = np.minimum.reduceat(cand, starts)
    lam_g = np.full(len(starts), np.inf)
    ok = first < n
    k = first[ok]
    lam_g[ok] = (cap[k] - pre_d[k]) / suf_w[k]
    lam = np.repeat(lam_g, sizes)
    out_sorted = np.minimum(w * lam, d)
    out = np.empty(n)
    out[order] = out_sorted
    return out


def d_finite(d: F64) -> F64:
    """`d` with infinities as 0 (for prefix sums)."""
    return np.where(np.isfinite(d), d, 0.0)


def level_queues(
    e: Entries, demand: F64, m: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], F64, NDArray[np.int64]]:
    """The queues of the entries `m` (one priority level): their ids, each
    entry's index among them, each queue's demand (the sum of its entries',
    infinite if any is) and its link."""
    q, qinv = np.unique(e.queue[m], return_inverse=True)
    qdem = np.bincount(qinv, weights=d_finite(demand[m]), minlength=len(q)).astype(float)
    qinf = np.bincount(qinv, weights=~np.isfinite(demand[m]), minlength=len(q))
    qdem[qinf > 0] = np.inf
    qlink = np.zeros(len(q), dtype=np.int64)
    qlink[qinv] = e.link[m]
    return q, qinv, qdem, qlink


def _local(e: Entries, demand: F64) -> F64:
    """Every link's own allocation to its entries, given each entry's
    demand (levels strictly, queues by weight, flows equally)."""
    out = np.zeros(len(e.flow))
    left = e.capacity.astype(float).copy()
    for lvl in np.unique(e.level):
        m = np.flatnonzero(e.level == lvl)
        q, qinv, qdem, qlink = level_queues(e, demand, m)
        qshare = waterfill(qlink, e.qweight[q], qdem, left)
        left = np.maximum(left - np.bincount(qlink, weights=qshare, minlength=len(left)), 0.0)
        out[m] = waterfill(qinv, np.ones(len(m)), demand[m], qshare)
    return out


def _others_min(e: Entries, a: F64) -> F64:
    """For each entry, the least share among the flow's *other* links."""
    n = len(a)
    order = np.lexsort((a, e.flow))
    f = e.flow[order]
    first = np.concatenate(([True], f[1:] != f[:-1]))
    m1 = np.full(e.flows, np.inf)
    m2 = np.full(e.flows, np.inf)
    m1[f[first]] = a[order][first]
    second = np.concatenate(([False], first[:-1])) & ~first
    m2[f[second]] = a[order][second]
    is_min = np.zeros(n, dtype=bool)
    is_min[order[first]] = True
    return np.where(is_min, m2[e.flow], m1[e.flow])


@dataclass(frozen=True)
class Allocation:
    """Per-flow rates and how the iteration ended."""

    rates: F64
    iterations: int
    change: float  # last relative change of any rate


def allocate(e: Entries, tol: float = 1e-6, max_iter: int = 2000) -> Allocation:
    """The fixed point of the links' local allocations (module doc).

    Exact rounds first: with the flows fixed so far at their rates and
    every other flow unbounded, each link's local allocation is a lower
    bound on what each of its flows ends with (others can only use less);
    a link on which *every* unfixed flow gets its least share over its
    path is full with those lower bounds, so they are final: fix them, and
    repeat. (With equal weights this is progressive filling, all links at
    the lowest level at once.) When no such link is left (weights that
    favour different flows on different links can make each flow's least
    share sit on a link where another flow's does not), the rest is
    solved by the iteration of :func:`_iterate`."""
    e.check()
    rate = np.full(e.flows, np.nan)
    fixed = np.zeros(e.flows, dtype=bool)
    rounds = 0
    n_links = len(e.capacity)
    while not fixed.all():
        rounds += 1
        demand = np.where(fixed[e.flow], rate[e.flow], np.inf)
        a = _local(e, demand)
        t = np.full(e.flows, np.inf)
        np.minimum.at(t, e.flow, a)
        free = ~fixed[e.flow]
        least = a <= t[e.flow] * (1.0 + 1e-12)
        n_free = np.bincount(e.link, weights=free, minlength=n_links)
        n_bad = np.bincount(e.link, weights=free & ~least, minlength=n_links)
        safe = (n_free > 0) & (n_bad == 0)
        pick = free & safe[e.link]
        if not pick.any():
            rest = _iterate(e, fixed, rate, tol, max_iter)
            return Allocation(rest.rates, rounds + rest.iterations, rest.change)
        f = np.unique(e.flow[pick])
        rate[f] = t[f]
        fixed[f] = True
    return Allocation(rate, rounds, 0.0)


def _iterate(
    e: Entries, fixed: NDArray[np.bool_], rate: F64, tol: float, max_iter: int
) -> Allocation:
    """Jacobi iteration of the local allocations for the flows not yet
    fixed: each link reserves for a flow what its other links give it,
    inflated by a factor that shrinks (INFLATE) so that a flow limited on
    two links at once is not held there by each link believing the other
    (a plain iteration has such false fixed points); rates stay feasible."""
    fixed_e = fixed[e.flow]
    demand = np.where(fixed_e, rate[e.flow], np.inf)
    prev = np.full(e.flows, np.inf)
    change = np.inf
    rates = prev
    eta = INFLATE[0]
    for it in range(1, max_iter + 1):
        a = _local(e, demand)
        rates = np.full(e.flows, np.inf)
        np.minimum.at(rates, e.flow, a)
        rates[fixed] = rate[fixed]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            # a flow starved by a higher level has rate 0: its change counts as 0 / 0
            diff = np.where(rates == prev, 0.0, np.abs(rates - prev) / np.maximum(rates, 1e-300))
        change = float(np.nanmax(np.where(np.isfinite(prev), diff, np.inf)))
        if change <= tol * eta / INFLATE[-1] or change <= tol:
            if eta == INFLATE[-1]:
                return Allocation(rates, it, change)
            eta = INFLATE[INFLATE.index(eta) + 1]
        prev = rates
        demand = np.where(fixed_e, rate[e.flow], _others_min(e, a) * (1.0 + eta))
    return Allocation(rates, max_iter, change)
