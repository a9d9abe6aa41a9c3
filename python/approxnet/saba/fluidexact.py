"""The per-port weighted sharing of :mod:`.fluidshare`, solved exactly by
guessing where each flow is bottlenecked and solving for the rates.

:func:`.fluidshare.allocate` (the reference) iterates the links' local
allocations; with per-port weights it often needs hundreds of passes and
ends within ~1e-4 of the fixed point. Here the fixed point is found by
its structure instead. At the fixed point every flow f has a *bottleneck
entry* B(f) — a (flow, link) where the link's level is full, f's queue is
at the link's water level and f at its queue's — and given the set of
bottleneck entries the rates solve a square sparse *linear* system
(unknowns: every flow's rate and each full (link, level)'s water level
``lam``):

* per queue q holding bottleneck entries: those flows' rates are equal,
  and ``sum of q's flows' rates = w_q * lam(link, level)``;
* per (link, level) holding a bottleneck entry: the rates of the link's
  flows at that level and above (higher priority) sum to its capacity.

One equation per flow plus one per full (link, level): square. The
solution is then checked exactly: every link's local allocation, with its
bottlenecked flows unbounded and every other flow asking for its rate,
must give each flow at least its rate and each bottlenecked flow exactly
its rate (the fixed point's definition). Where it does not, each flow's
bottleneck moves to the entry that gives it least (a Newton step on the
piecewise-linear fixed-point equation) and the system is solved again;
a guess met before is never taken again (one flow's bottleneck moves at
a time then, :func:`_newton`), which ends the 2-cycles plain steps fall
into near the answer.

:func:`solve` starts from the bracket of :mod:`.fluidbound`: every fixed
point lies in ``[lo, hi]`` and the flows whose bracket closed have their
(unique) rate already. If every flow's closed, that is the answer.
Otherwise Newton steps start from the bottlenecks of the bracket's
middle (then of its top) and an answer is accepted only if it is
certified and inside the bracket. When neither certifies within
:data:`COLD_STEPS` steps, the reference iteration runs and Newton steps
from its answer polish it to the exact fixed point near it; if that
fails too, the reference's rates are returned (``exact`` False).

**Which fixed point.** Where the model has one fixed point, every
method here gives it, and so does the reference wherever it ends at a
fixed point (the bracket proves the point unique where it closes).
Where it has many, the flows the bracket decided still have their one
rate; the rest get the certified fixed point Newton steps reach from
the bracket's middle (in the crossed example below, 5 + 5 within 1e-6:
the middle of the bracket [1, 9] and of the segment of fixed points),
which the reference need not reach (it may stop elsewhere on the set,
or off it).

**The fixed point is not unique.** When two flows cross two links whose
weights favour them oppositely (0.9 / 0.1 on one, 0.1 / 0.9 on the
other), every split that fills the links is a fixed point, and the
linear system is singular; up to :data:`LSTSQ_MAX` unknowns it is then
solved in the least-squares sense (normal equations with a 1e-12 ridge,
refined) and the certificate decides. The reference iteration can also stop at a point that is *not*
a fixed point there (each link believing the other holds the flows: 1.05
+ 1.05 of 10 in that example; flows at rate 0 that a link would serve),
which the certificate refuses (tests/test_saba_fluidexact.py).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse.linalg import MatrixRankWarning, splu, spsolve

from .fluidbound import Bracket, bracket, phi
from .fluidshare import Entries, _local, allocate

__all__ = ["Solved", "solve", "certify", "fixed_point_gap"]

#: Newton steps from a guess before giving up on it.
COLD_STEPS = 40
#: The largest singular system solved in the least-squares sense (unknowns);
#: a larger one ends the Newton steps (its normal equations fill in: ~0.3 s
#: at 6,000 unknowns, and at that size a singular guess has so far always
#: been an inconsistent one).
LSTSQ_MAX = 2000
#: The most flows Newton steps are tried on: SuperLU's fill-in grows
#: faster than the system (4,000 flows: ~0.02 s a solve; 16,000 flows,
#: 21,297 unknowns: 28-58 M nonzeros in L + U, 20-52 s a solve), so above
#: this `solve` returns the bracket's answer where it closed for every
#: flow and otherwise the reference iteration's rates, uncertified.
NEWTON_MAX = 10_000
#: A polish's guess: the links that hold each flow when every flow asks
#: for its reference rate x (1 + POLISH) (above the reference's ~1e-4
#: error, below the gaps between different links' shares).
POLISH = 1e-3
#: Relative slack of the certificate (rates are solved to ~1e-12).
CERT_TOL = 1e-9
#: Systems up to this many unknowns are factorised in their own order
#: (flows, then water levels): on the 32-server testbed setups' systems
#: (~700 unknowns) SuperLU's COLAMD ordering filled L + U to 39,821
#: nonzeros and the natural one to 11,101, 3.6 ms -> 1.0 ms a solve, the
#: rates equal within 8e-12; larger systems keep COLAMD (not measured).
NATURAL_MAX = 1000

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
B8 = NDArray[np.bool_]


@dataclass(frozen=True)
class Solved:
    """Per-flow rates; passes = local-allocation sweeps + linear solves;
    ``exact`` False when the reference iteration had to finish; ``cold``
    True when Newton steps from the first guess certified (no reference
    iteration ran)."""

    rates: F64
    passes: int
    steps: int
    exact: bool
    change: float
    cold: bool = True


def _slack(e: Entries, rates: F64, tol: float) -> F64:
    """Per entry, the certificate's slack: `tol` relative to the flow's
    rate, and to a thousandth of the largest capacity near 0."""
    return tol * np.maximum(rates[e.flow], float(e.capacity.max()) * 1e-3)


def certify(e: Entries, rates: F64, bneck: B8, tol: float = CERT_TOL) -> tuple[bool, F64, F64]:
    """Whether `rates` is the fixed point with bottleneck entries `bneck`:
    each link's local allocation — bottlenecked flows unbounded, every
    other flow asking for its rate plus a hair (1 % of the slack, so that
    a link that would hold a flow shows it) — gives each flow at least its
    rate and its bottleneck entry exactly its rate, within the slack.
    Returns the verdict, the local allocation and the demands."""
    r = np.nan_to_num(rates, nan=0.0, posinf=0.0, neginf=0.0)
    slack = _slack(e, np.maximum(r, 0.0), tol)
    finite = bool(np.all(np.isfinite(rates)) and np.all(r[e.flow] >= -slack))
    demand = np.where(bneck, np.inf, np.maximum(r[e.flow], 0.0) + 0.01 * slack)
    a = _local(e, demand)
    if not finite:
        return False, a, demand
    low = a < r[e.flow] - slack
    off = bneck & (np.abs(a - r[e.flow]) > slack)
    return not (low.any() or off.any()), a, demand


def _bottlenecks(e: Entries, a: F64, demand: F64, prev: B8 | None) -> B8:
    """One bottleneck entry per flow: the entry giving it least, where a
    link holds it below its demand (the previous one where it ties)."""
    n = len(a)
    a = np.where(np.isnan(a), np.inf, a)
    # an entry that gives the flow all it asked for does not hold it
    key = np.where(a < demand, a, np.inf)
    least = np.full(e.flows, np.inf)
    np.minimum.at(least, e.flow, key)
    at_least = np.isfinite(key) & (key <= least[e.flow] * (1.0 + CERT_TOL))
    pick = np.full(e.flows, n, dtype=np.int64)
    if prev is not None:
        keep = prev & at_least
        pick[e.flow[keep]] = np.flatnonzero(keep)
    cand = np.flatnonzero(at_least)
    first = np.full(e.flows, n, dtype=np.int64)
    np.minimum.at(first, e.flow[cand], cand)
    pick = np.where(pick < n, pick, first)
    if prev is not None:  # no entry holds the flow: keep its old guess
        old = np.full(e.flows, n, dtype=np.int64)
        old[e.flow[prev]] = np.flatnonzero(prev)
        pick = np.where(pick < n, pick, old)
    lo = np.full(e.flows, np.inf)
    np.minimum.at(lo, e.flow, a)
    fallback = np.full(e.flows, n, dtype=np.int64)
    lowest = np.flatnonzero(a <= lo[e.flow])
    np.minimum.at(fallback, e.flow[lowest], lowest)
    pick = np.where(pick < n, pick, fallback)
    out = np.zeros(n, dtype=bool)
    out[pick[pick < n]] = True
    return out


def _system(e: Entries, bneck: B8) -> F64 | None:
    """Solves the linear system of the module doc for bottleneck entries
    `bneck`; None when it is singular."""
    nf = e.flows
    levels = e.level - e.level.min()
    nlv = int(levels.max()) + 1 if len(levels) else 1
    ll = e.link * nlv + levels  # (link, level) id
    bidx = np.flatnonzero(bneck)
    # full (link, level)s and saturated queues
    full_ll, ll_inv = np.unique(ll[bidx], return_inverse=True)
    sat_q, q_inv = np.unique(e.queue[bidx], return_inverse=True)
    nlam = len(full_ll)
    rows: list[I64] = []
    cols: list[I64] = []
    vals: list[F64] = []
    rhs: list[F64] = []
    nrow = 0
    # (1) equal rates among a queue's bottleneck flows: r_f - r_first = 0
    order = np.lexsort((e.flow[bidx], q_inv))
    qs = q_inv[order]
    fs = e.flow[bidx][order]
    head = np.concatenate(([True], qs[1:] != qs[:-1]))
    first_f = fs[np.maximum.accumulate(np.where(head, np.arange(len(qs)), 0))]
    rest = ~head
    k = int(rest.sum())
    r_ids = nrow + np.arange(k)
    rows += [r_ids, r_ids]
    cols += [fs[rest], first_f[rest]]
    vals += [np.ones(k), -np.ones(k)]
    rhs.append(np.zeros(k))
    nrow += k
    # (2) per saturated queue: sum of its flows' rates - w_q lam = 0
    q_row = np.full(len(e.qweight), -1, dtype=np.int64)
    q_row[sat_q] = nrow + np.arange(len(sat_q))
    in_sat = q_row[e.queue] >= 0
    rows.append(q_row[e.queue[in_sat]])
    cols.append(e.flow[in_sat])
    vals.append(np.ones(int(in_sat.sum())))
    q_ll = np.zeros(len(sat_q), dtype=np.int64)
    q_ll[q_inv] = ll_inv
    rows.append(q_row[sat_q])
    cols.append(nf + q_ll)
    vals.append(-e.qweight[sat_q].astype(float))
    rhs.append(np.zeros(len(sat_q)))
    nrow += len(sat_q)
    # (3) per full (link, level): rates at that level and above sum to capacity
    lk = full_ll // nlv
    lv = full_ll % nlv
    by_link = np.argsort(e.link, kind="stable")
    lstart = np.searchsorted(e.link[by_link], lk, side="left")
    lend = np.searchsorted(e.link[by_link], lk, side="right")
    cnt = lend - lstart
    rep = np.repeat(np.arange(nlam), cnt)
    offs = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    ent = by_link[np.repeat(lstart, cnt) + offs]
    ok = levels[ent] <= lv[rep]
    rows.append(nrow + rep[ok])
    cols.append(e.flow[ent[ok]])
    vals.append(np.ones(int(ok.sum())))
    rhs.append(e.capacity[lk].astype(float))
    nrow += nlam
    n = nf + nlam
    if nrow != n:
        return None
    m = sp.csc_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    b = np.concatenate(rhs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MatrixRankWarning)
        try:
            perm = "NATURAL" if n <= NATURAL_MAX else "COLAMD"
            x = np.asarray(spsolve(m, b, permc_spec=perm), dtype=float)
        except (MatrixRankWarning, RuntimeError):
            x = np.full(n, np.nan)
    if not np.all(np.isfinite(x)) and n > LSTSQ_MAX:
        return None
    if not np.all(np.isfinite(x)):
        # singular: the fixed point is not unique (module doc); a
        # least-squares solution (normal equations, a 1e-12 ridge, two
        # refinements), which the certificate then accepts or not
        mt = m.T.tocsc()
        ata = (mt @ m).tocsc()
        ridge = 1e-12 * float(abs(ata).max())
        lu = splu((ata + ridge * sp.identity(n, format="csc")).tocsc())
        x = lu.solve(mt @ b)
        for _ in range(2):
            x = x + lu.solve(mt @ (b - m @ x))
    return x[:nf] if np.all(np.isfinite(x)) else None


def _newton(e: Entries, bneck: B8, steps: int) -> tuple[F64 | None, int, int]:
    """Up to `steps` guesses from `bneck`: (certified rates or None,
    linear solves, local-allocation sweeps).

    A full step moves every flow's bottleneck to the entry that gives it
    least; near the answer that can alternate between two guesses (a
    2-cycle of a few flows, seen at 4,000 flows). A guess met before is
    never taken again: then only one flow's bottleneck moves, the flow
    with the largest certificate violation first (a pivot, as in the
    simplex method's anti-cycling); when every single move leads back to
    a guess met before, the steps stop."""
    solves = sweeps = 0
    seen: set[bytes] = set()
    for _ in range(steps):
        rates = _system(e, bneck)
        solves += 1
        if rates is None:
            break
        ok, a, demand = certify(e, rates, bneck)
        sweeps += 1
        if ok:
            return np.maximum(rates, 0.0), solves, sweeps
        seen.add(np.packbits(bneck).tobytes())
        nxt = _bottlenecks(e, a, demand, bneck)
        if np.packbits(nxt).tobytes() in seen:
            pivot = _pivot(e, rates, a, bneck, nxt, seen)
            if pivot is None:
                break
            nxt = pivot
        bneck = nxt
    return None, solves, sweeps


def _pivot(e: Entries, rates: F64, a: F64, bneck: B8, nxt: B8, seen: set[bytes]) -> B8 | None:
    """`bneck` with one flow's entries taken from `nxt`: the flow whose
    certificate violation is largest among those whose move gives a guess
    not in `seen`; None if there is none."""
    slack = _slack(e, np.maximum(rates, 0.0), CERT_TOL)
    r = rates[e.flow]
    viol = np.where(bneck, np.abs(a - r), np.maximum(r - a, 0.0)) / slack
    worst = np.zeros(e.flows)
    np.maximum.at(worst, e.flow, viol)
    moved = np.unique(e.flow[nxt != bneck])
    for f in moved[np.argsort(-worst[moved], kind="stable")]:
        cand = bneck.copy()
        mine = e.flow == f
        cand[mine] = nxt[mine]
        if np.packbits(cand).tobytes() not in seen:
            return cand
    return None


def fixed_point_gap(e: Entries, rates: F64) -> float:
    """How far `rates` is from a fixed point, by the definition: the
    largest ``|phi(rates) - rates|`` (:func:`.fluidbound.phi`) and link
    overload, each over the certificate's slack (<= 1 means within
    :data:`CERT_TOL`); infinity for negative or non-finite rates."""
    if not np.all(np.isfinite(rates)) or np.any(rates < 0):
        return float("inf")
    slack = CERT_TOL * np.maximum(rates, float(e.capacity.max()) * 1e-3)
    gap = float(np.max(np.abs(phi(e, rates) - rates) / slack)) if e.flows else 0.0
    load = np.bincount(e.link, weights=rates[e.flow], minlength=len(e.capacity))
    over = float(np.max((load - e.capacity) / (CERT_TOL * e.capacity)))
    return max(gap, over)


def solve(e: Entries, tol: float = 1e-6, max_iter: int = 2000, cold: bool = True) -> Solved:
    """A certified fixed point of the sharing (module doc).

    1. The bracket of :func:`.fluidbound.bracket` (exact, monotone): every
       fixed point lies in ``[lo, hi]``; where it closes, that is the rate.
       If it closes for every flow, the answer is checked by the
       definition (:func:`fixed_point_gap`) and returned.
    2. Newton steps (:data:`COLD_STEPS`) from the bottlenecks of the
       bracket's middle, then of its top; a certified answer inside the
       bracket is returned.
    3. Otherwise the reference iteration (:func:`.fluidshare.allocate`,
       `tol`, `max_iter`) and Newton steps from its answer (a polish to
       the exact fixed point near it); if that fails too, the
       reference's rates (``exact`` False).

    `cold` False skips step 2. Above :data:`NEWTON_MAX` flows only step
    1, else the reference's rates (``exact`` False). Per-flow max-min
    (one level, one queue per entry, equal weights: the baseline) is
    solved by :func:`progressive_filling` instead, its unique answer."""
    e.check()
    if e.flows == 0:
        return Solved(np.zeros(0), 0, 0, True, 0.0)
    if _per_flow_maxmin(e):
        rates, rounds = progressive_filling(e)
        return Solved(rates, rounds, 0, True, 0.0)
    br = bracket(e)
    passes = br.sweeps
    solves = 0
    if not br.open.any():
        passes += 1
        if fixed_point_gap(e, br.lo) <= 1.0:
            return Solved(br.lo.copy(), passes, 0, True, 0.0)
    if e.flows > NEWTON_MAX:
        ref = allocate(e, tol=tol, max_iter=max_iter)
        return Solved(ref.rates, passes + ref.iterations, 0, False, ref.change, cold=False)
    hi = np.where(np.isfinite(br.hi), br.hi, br.lo)
    starts = [(br.lo + hi) / 2, hi] if cold else []
    for start in starts:
        demand = start[e.flow] * (1.0 + 1e-6)
        a = _local(e, demand)
        got, s, sweeps = _newton(e, _bottlenecks(e, a, demand, None), COLD_STEPS)
        passes += 1 + s + sweeps
        solves += s
        if got is not None and _inside(got, br):
            return Solved(got, passes, solves, True, 0.0)
    # the reference from scratch: seeded with the bracket's closed flows
    # it took more passes, not fewer (698 vs 562 at 4,000 flows)
    ref = allocate(e, tol=tol, max_iter=max_iter)
    passes += ref.iterations
    demand = ref.rates[e.flow] * (1.0 + POLISH) + POLISH * 1e-3 * float(e.capacity.max())
    a = _local(e, demand)
    got, s, sweeps = _newton(e, _bottlenecks(e, a, demand, None), COLD_STEPS)
    passes += 1 + s + sweeps
    if got is not None:
        return Solved(got, passes, solves + s, True, 0.0, cold=False)
    return Solved(ref.rates, passes, solves + s, False, ref.change, cold=False)


def _inside(rates: F64, br: Bracket) -> bool:
    """Whether `rates` lies in the bracket (to the certificate's slack)."""
    lo = br.lo * (1.0 - 1e3 * CERT_TOL)
    hi = br.hi * (1.0 + 1e3 * CERT_TOL)
    return bool(np.all(rates >= lo - 1e-300) and np.all(rates <= hi))


def _per_flow_maxmin(e: Entries) -> bool:
    """Whether `e` is per-flow max-min: one level, every entry its own
    queue, all weights equal (the baseline's policy)."""
    if len(e.flow) == 0 or np.any(e.level != e.level[0]):
        return False
    w = e.qweight[e.queue]
    return bool(np.all(w == w[0])) and len(np.unique(e.queue)) == len(e.queue)


def progressive_filling(e: Entries) -> tuple[F64, int]:
    """Per-flow max-min by progressive filling, for the entries of
    :func:`_per_flow_maxmin` (then the unique fixed point, which the
    bracket also reaches, in more sweeps): each round the links whose
    equal share of what is left is the least (within 1e-12) fix their
    unfixed flows at it. Returns the rates and the rounds."""
    n_links = len(e.capacity)
    rate = np.zeros(e.flows)
    fixed = np.zeros(e.flows, dtype=bool)
    left = e.capacity.astype(float).copy()
    live = np.ones(len(e.flow), dtype=bool)
    rounds = 0
    while live.any():
        rounds += 1
        count = np.bincount(e.link[live], minlength=n_links)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(count > 0, np.maximum(left, 0.0) / count, np.inf)
        least = float(share.min())
        tight = share <= least * (1.0 + 1e-12)
        pick = live & tight[e.link]
        f = np.unique(e.flow[pick])
        # each flow at the share of its tightest link among those
        got = np.full(e.flows, np.inf)
        np.minimum.at(got, e.flow[pick], share[e.link[pick]])
        rate[f] = got[f]
        fixed[f] = True
        done = live & fixed[e.flow]
        left -= np.bincount(e.link[done], weights=rate[e.flow[done]], minlength=n_links)
        live &= ~done
    return rate, rounds
