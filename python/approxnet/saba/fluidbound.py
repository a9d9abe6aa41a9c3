"""Bounds on every fixed point of the per-port weighted sharing of
:mod:`.fluidshare`, and the rates those bounds already decide.

The sharing's fixed point is ``r = phi(r)``, where ``phi(r)[f]`` is the
least, over f's links, of f's *open share* there: what the link's local
allocation (levels strictly, queues by weight, flows equally) gives f
when f asks for everything and every other flow asks for its rate in r.
A link gives f no less when the others ask for less, so ``phi`` is
antitone (``r <= s`` implies ``phi(r) >= phi(s)``) and, for any fixed
point ``x``: ``lo <= x`` gives ``x = phi(x) <= phi(lo)``, ``x <= hi``
gives ``x >= phi(hi)``. Starting from ``hi`` = infinity, alternating
``lo = phi(hi)``, ``hi = phi(lo)`` narrows a bracket ``[lo, hi]`` that
holds **every** fixed point (Jacobi on an antitone map, as in Bertsekas
and Gallager's max-min iteration, but two-sided). One more exact rule
closes it where the plain alternation would only approach: a link whose
flows' lower bounds already sum to its capacity carries exactly those
rates at every fixed point (none is below its lower bound and the link
holds no more), so they are fixed (with equal weights this is
progressive filling, bottleneck links one round at a time).

Where ``lo == hi`` the model's answer is unique and decided here; where
the bracket stays open the fixed point is not unique (two flows crossing
two links whose weights favour them oppositely: every split filling
both is one) or the alternation is stuck in a 2-cycle of ``phi``;
:mod:`.fluidexact` finishes those flows with Newton steps from the
bracket's middle, inside the bracket.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .fluidshare import Entries, d_finite, level_queues, waterfill

__all__ = ["open_waterfill", "open_local", "phi", "Bracket", "bracket", "restrict"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
B8 = NDArray[np.bool_]

#: Relative width under which a flow's bracket counts as closed, and the
#: relative slack of the full-link rule.
CLOSED = 1e-12


def open_waterfill(group: I64, weight: F64, demand: F64, capacity: F64) -> F64:
    """Per item, what weighted water-filling (:func:`.fluidshare.waterfill`)
    would give it if its own demand were infinite and every other item's
    stayed: ``weight * lam'`` where ``lam'`` solves ``sum over the others
    of min(w * lam', d) + weight * lam' = capacity`` of its group.

    Per group, items sorted by ``t = d / w``; on the segment above the
    k-th breakpoint the group's fill is ``P[k] + lam * S[k]`` (P: demands
    before k, S: weights from k on). An item already at the group's level
    keeps it; one below it (``t < lam``) moves to the first segment past
    its own breakpoint where ``P[k] - d + t[k] (S[k] + w) >= capacity``
    (a vectorised binary search)."""
    n = len(group)
    if n == 0:
        return np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = demand / weight
    order = np.lexsort((t, group))
    g, w, d, ts = group[order], weight[order], demand[order], t[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    sizes = np.diff(np.concatenate((starts, [n])))
    gstart = np.repeat(starts, sizes)
    gend = gstart + np.repeat(sizes, sizes)
    df = d_finite(d)
    cd = np.concatenate(([0.0], np.cumsum(df)))
    pre = cd[:-1] - cd[gstart]  # sum of demands before position k, in its group
    cw = np.concatenate((np.cumsum(w[::-1])[::-1], [0.0]))
    suf = cw[:-1] - cw[gend]  # sum of weights from position k on
    inf = ~np.isfinite(d)
    ci = np.concatenate(([0], np.cumsum(inf)))
    inf_before = ci[:-1] - ci[gstart]
    cap = capacity[g]
    with np.errstate(invalid="ignore", over="ignore"):
        fill = np.where(inf_before > 0, np.inf, pre + ts * suf)
    pos = np.arange(n)
    first = np.minimum.reduceat(np.where(fill >= cap, pos, n), starts)
    root = np.repeat(np.where(first < n, first, starts + sizes), sizes)
    lam = np.full(n, np.inf)
    at = root < gend
    k = root[at]
    lam[at] = (cap[at] - pre[k]) / suf[k]
    # items below the level (root past them): search k in (j, root]
    j = np.flatnonzero(root > pos)
    lo = j + 1
    hi = root[j]  # the predicate holds there (the root, or the group's end)
    dj, wj, cj, ge = df[j], w[j], cap[j], gend[j]
    while True:
        act = lo < hi
        if not act.any():
            break
        mid = (lo + hi) // 2
        m = np.minimum(mid, n - 1)
        with np.errstate(invalid="ignore", over="ignore"):
            val = np.where(inf_before[m] > 0, np.inf, pre[m] - dj + ts[m] * (suf[m] + wj))
        ok = (mid >= ge) | (val >= cj)
        hi = np.where(act & ok, mid, hi)
        lo = np.where(act & ~ok, mid + 1, lo)
    inside = hi < ge
    kk = np.minimum(hi, n - 1)
    pk = np.where(inside, pre[kk], cd[ge] - cd[gstart[j]])
    sk = np.where(inside, suf[kk], 0.0)
    lam[j] = (cj - pk + dj) / (sk + wj)
    out = np.empty(n)
    out[order] = w * lam
    return out


def open_local(e: Entries, demand: F64) -> F64:
    """Per entry, its flow's open share at the entry's link: the link's
    local allocation (:func:`.fluidshare._local`) with that entry's
    demand infinite and every other entry at `demand`."""
    out = np.zeros(len(e.flow))
    left = e.capacity.astype(float).copy()
    for lvl in np.unique(e.level):
        m = np.flatnonzero(e.level == lvl)
        q, qinv, qdem, qlink = level_queues(e, demand, m)
        # the queue's share when one of its flows asks for everything
        qopen = open_waterfill(qlink, e.qweight[q], qdem, left)
        out[m] = open_waterfill(qinv, np.ones(len(m)), demand[m], qopen)
        qshare = waterfill(qlink, e.qweight[q], qdem, left)
        left = np.maximum(left - np.bincount(qlink, weights=qshare, minlength=len(left)), 0.0)
    return out


def phi(e: Entries, rates: F64) -> F64:
    """``phi(rates)``: per flow, its least open share over its links
    (infinity for a flow with no entry in `e`)."""
    a = open_local(e, rates[e.flow])
    out = np.full(e.flows, np.inf)
    np.minimum.at(out, e.flow, a)
    return out


@dataclass(frozen=True)
class Bracket:
    """``lo <= x <= hi`` for every fixed point x; `open` marks the flows
    whose bracket did not close; `sweeps` counts the phi evaluations."""

    lo: F64
    hi: F64
    open: B8
    sweeps: int


def restrict(e: Entries, links: B8) -> Entries:
    """The entries on `links` (the flow ids, queues and capacities kept)."""
    m = links[e.link]
    return Entries(e.flow[m], e.link[m], e.level[m], e.queue[m], e.qweight, e.capacity, e.flows)


def bracket(e: Entries, rounds: int = 40) -> Bracket:
    """Narrows ``[lo, hi]`` (module doc) until every flow's bracket closed,
    a round closes none, or `rounds` rounds (two sweeps each). Each round
    sweeps only the links that carry an open flow: a closed flow's rate
    is final and enters its links as a fixed demand."""
    e.check()
    n_links = len(e.capacity)
    hi = np.full(e.flows, np.inf)
    lo = phi(e, hi)
    sweeps = 1
    n_open = e.flows + 1
    for _ in range(rounds):
        load = np.bincount(e.link, weights=lo[e.flow], minlength=n_links)
        full = load >= e.capacity * (1.0 - CLOSED)
        hi = np.where(np.bincount(e.flow[full[e.link]], minlength=e.flows) > 0, lo, hi)
        still = ~np.isfinite(hi) | (hi - lo > CLOSED * hi)
        now = int(still.sum())
        if now == 0 or now >= n_open:
            break
        n_open = now
        active = np.zeros(n_links, dtype=bool)
        active[e.link[still[e.flow]]] = True
        part = restrict(e, active)
        hi = np.where(still, np.minimum(hi, phi(part, lo)), hi)
        lo = np.where(still, np.maximum(lo, phi(part, hi)), lo)
        sweeps += 2
    still = ~np.isfinite(hi) | (hi - lo > CLOSED * hi)
    return Bracket(lo, hi, still, sweeps)
