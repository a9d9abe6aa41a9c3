//! Which flows a change makes the solver re-solve, for one priority level.
//!
//! The set grows from the links the change touched (`starts`) over flows
//! of the level at or above the threshold `t0` ([`Sharing::solve`] shows
//! that the others keep their rates). Two ways to grow it:
//!
//! * **eager**: every such flow on a link of the set joins it, with its
//!   links. Exact without any check (the threshold argument), but on
//!   sparse traffic it takes in flows whose rates cannot move.
//! * **lazy**: on a link other than a start, only the flows whose
//!   bottleneck (their hint) is that link join; the others are watched.
//!   After the filling, every link that froze flows of the set at level
//!   `t` must carry no flow of the level with a higher rate per weight
//!   (else that flow's hint no longer holds, or the set's flows lack a
//!   bottleneck): a watched flow above `t` joins and the set is filled
//!   again; a flow below the threshold above `t` (not expected) or a third
//!   round turns the search eager. A watched flow that never joins keeps
//!   its rate with its bottleneck outside the set, untouched. With every
//!   flow of the set at a bottleneck and every other flow at an untouched
//!   one (or below the threshold), the allocation meets the max-min
//!   conditions, so it is the max-min allocation.
//!
//! * **flat** (eager on a single priority level): the set is every flow
//!   at or above the threshold, found in one pass over the flows' levels
//!   instead of a graph search; each set link's figures are its kept load
//!   less the set's rates, and the filling finds its flows in the link's
//!   own list. A superset of the eager set, so exact the same way; on
//!   all-to-all traffic the eager search reaches nearly all of these
//!   flows anyway, through lists that hold each flow several times.
//!
//! The search starts eager when most recent lazy ones ended eager or took
//! in over a quarter of the level's flows (all-to-all traffic, where a
//! change reaches most flows and the lazy checks only add work), trying
//! lazy now and then: after 16 level solves, then after twice as many
//! each time the lazy try is dense again (up to 256), back to 16 when one
//! is sparse. Links that were not full are left out of the set in all
//! ways (they bind nobody) until the new rates overload one.

use super::{Sharing, HINT_NONE, SAT_EPS};

/// Level solves between lazy probes of a search that starts eager: the
/// gap doubles from the least to the most while probes find dense
/// traffic, and falls back to the least when one finds it sparse.
pub(super) const PROBE_GAP_MIN: u64 = 16;
const PROBE_GAP_MAX: u64 = 256;

impl Sharing {
    /// Solves priority `q`'s flows at or above level `t0` that the change
    /// at `starts` can reach, on what the other flows leave; commits the
    /// rates that changed to `changed`.
    ///
    /// A link that was not full binds nobody; while it stays within
    /// capacity it can be left out of the problem (the allocation without
    /// it meets every bottleneck condition with it). Such links are left
    /// out (`pruned`: they connect nothing and are not filled) unless they
    /// are in `starts`; if the solution overloads one, it is put back (the
    /// search goes on from it) and the set is filled again before anything
    /// is committed.
    pub(super) fn solve_level(&mut self, q: u8, t0: f64, starts: &[u32]) {
        if t0 == f64::INFINITY {
            return;
        }
        // levels within rounding of t0 are solved too (always safe)
        let thr = t0 * (1.0 - SAT_EPS);
        let e = self.next_epoch();
        self.set_links.clear();
        self.set_flows.clear();
        self.pruned.clear();
        self.watch.clear();
        self.set_adj.clear();
        self.adj_stale = false;
        self.adj_all = false;
        self.level_solves += 1;
        // mostly dense lately: eager, with a lazy probe now and then (less
        // often while the probes keep finding dense traffic)
        let probe = self.eager_share > 0.5 && self.level_solves >= self.next_probe;
        let started_eager = self.full || (self.eager_share > 0.5 && !probe);
        let mut eager = started_eager;
        let mut lazy_rounds = 0;
        for &l in starts {
            self.visit(l, e, true);
        }
        let mut i = 0;
        if started_eager && !self.full && self.levels[q as usize] as usize == self.active() {
            self.flat_solves += 1;
            self.select_flat(thr, e);
            i = self.set_links.len();
        }
        loop {
            while i < self.set_links.len() {
                let l = self.set_links[i];
                i += 1;
                self.scan(l, q, thr, e, eager);
            }
            if self.set_flows.is_empty() {
                return;
            }
            if std::mem::take(&mut self.adj_stale) {
                self.build_adj(e);
            } else {
                for &l in &self.set_links {
                    let c = self.capacity[l as usize];
                    self.link[l as usize].restore(c);
                }
            }
            self.rounds += 1;
            self.solved += self.set_flows.len() as u64;
            self.fill(e);
            let filled = self.set_links.len();
            // a left-out link the new rates overload goes back in
            let mut k = 0;
            while k < self.pruned.len() {
                let l = self.pruned[k];
                let ls = &mut self.link[l as usize];
                if ls.load + ls.delta > self.capacity[l as usize] * (1.0 + SAT_EPS) {
                    ls.prune = 0;
                    self.set_links.push(l);
                    self.pruned.swap_remove(k);
                } else {
                    k += 1;
                }
            }
            let mut grew = self.set_links.len() > filled;
            if !eager {
                let joined = self.set_flows.len();
                let mut unexpected = false;
                for &l in &self.set_links[..filled] {
                    let ls = &self.link[l as usize];
                    unexpected |= ls.tsat < ls.low * (1.0 - SAT_EPS);
                }
                for k in 0..self.watch.len() {
                    let (l, g) = self.watch[k];
                    let h = &self.hot[g as usize];
                    if h.mark != e && h.norm > self.link[l as usize].tsat * (1.0 + SAT_EPS) {
                        self.join(g, e);
                    }
                }
                if self.set_flows.len() > joined {
                    lazy_rounds += 1;
                    grew = true;
                }
                if unexpected || lazy_rounds > 2 {
                    eager = true;
                    grew = true;
                    for k in 0..self.watch.len() {
                        let g = self.watch[k].1;
                        if self.hot[g as usize].mark != e {
                            self.join(g, e);
                        }
                    }
                }
            }
            if !grew {
                break;
            }
            for &l in &self.pruned {
                self.link[l as usize].delta = 0.0;
            }
        }
        if !started_eager {
            // a lazy set over a quarter of the level's flows: coupled
            // traffic, where the eager search costs less for about as many
            let dense = eager || self.set_flows.len() > self.levels[q as usize] as usize / 4;
            self.eager_share = 0.9 * self.eager_share + if dense { 0.1 } else { 0.0 };
            if probe {
                self.probe_gap = if dense {
                    (2 * self.probe_gap).min(PROBE_GAP_MAX)
                } else {
                    PROBE_GAP_MIN
                };
                self.next_probe = self.level_solves + self.probe_gap;
            }
        }
        for &l in &self.pruned {
            let ls = &mut self.link[l as usize];
            ls.load += ls.delta;
        }
        for &f in &self.set_flows {
            let (rate, norm, hint) = self.next[f as usize];
            self.norms[f as usize] = norm;
            let h = &mut self.hot[f as usize];
            h.norm = norm;
            h.hint = hint;
            if rate != h.rate {
                h.rate = rate;
                self.changed.push(f);
            }
        }
    }

    /// The eager set of a single-level problem taken by threshold alone:
    /// every live flow at or above `thr`, with its links (a superset of
    /// what the eager search from the starts reaches, so still exact; see
    /// [`Sharing::solve`]). One pass over the flows' levels replaces
    /// scanning every list of flows of every link reached (each flow sits
    /// on several of them), and the set links' figures come from their
    /// kept loads less the set's rates.
    fn select_flat(&mut self, thr: f64, e: u32) {
        // branch-free: about half the flows pass on all-to-all traffic
        let n = self.norms.len();
        self.set_flows.resize(n, 0);
        let mut c = 0;
        for (f, &x) in self.norms.iter().enumerate() {
            self.set_flows[c] = f as u32;
            c += (x >= thr) as usize;
        }
        self.set_flows.truncate(c);
        for &l in &self.set_links {
            // the starts
            self.link[l as usize].reset_flat(e);
        }
        for i in 0..c {
            let f = self.set_flows[i];
            let h = &mut self.hot[f as usize];
            h.mark = e;
            let (rate, w) = (h.rate, h.weight);
            let (off, len, _) = self.path_at[f as usize];
            for k in off..off + len {
                let l = self.paths[k as usize];
                if self.link[l as usize].mark != e {
                    self.visit(l, e, false);
                    self.link[l as usize].reset_flat(e);
                }
                let ls = &mut self.link[l as usize];
                if ls.prune != e {
                    ls.other -= rate;
                    ls.adj.1 += 1;
                    ls.wset += w;
                }
            }
        }
        for &l in &self.set_links {
            let ls = &mut self.link[l as usize];
            // the rounding of the kept load is no flow
            if ls.other < self.capacity[l as usize] * 1e-12 {
                ls.other = 0.0;
            }
            ls.taken = ls.other;
        }
        // the filling finds a link's flows of the set in its own list
        self.adj_all = true;
    }

    /// Sorts the flows of set link `l` into the set (those at or above
    /// `thr`: all of them on a start or when `eager`, else those
    /// bottlenecked here), the watched ones and the others.
    fn scan(&mut self, l: u32, q: u8, thr: f64, e: u32, eager: bool) {
        let li = l as usize;
        let start = self.link[li].start == e;
        let (mut taken, mut other, mut low, mut wset) = (0.0, 0.0, 0.0f64, 0.0);
        let adj = self.set_adj.len() as u32;
        for j in 0..self.link_flows[li].len() {
            let f = self.link_flows[li][j];
            let h = &self.hot[f as usize];
            if h.prio == q && h.norm >= thr {
                if h.mark == e || eager || start || h.hint == l || h.hint == HINT_NONE {
                    wset += h.weight;
                    self.set_adj.push(f);
                    if h.mark != e {
                        self.join(f, e);
                    }
                    continue;
                }
                self.watch.push((l, f));
            } else if h.prio == q {
                low = low.max(h.norm);
            }
            other += h.rate;
            if h.prio <= q {
                taken += h.rate;
            }
        }
        let ls = &mut self.link[li];
        ls.taken = taken;
        ls.other = other;
        ls.low = low;
        ls.wset = wset;
        ls.adj = (adj, self.set_adj.len() as u32 - adj);
        ls.scan = e;
    }

    /// Puts flow `f` (of the level solved) in the set.
    #[inline]
    fn join(&mut self, f: u32, e: u32) {
        let rate = self.hot[f as usize].rate;
        self.hot[f as usize].mark = e;
        self.set_flows.push(f);
        let (off, len, _) = self.path_at[f as usize];
        for k in off..off + len {
            let m = self.paths[k as usize];
            let ls = &mut self.link[m as usize];
            if ls.scan == e && ls.prune != e {
                // counted there as a flow outside the set, and not listed
                ls.taken -= rate;
                ls.other -= rate;
                self.adj_stale = true;
            }
            self.visit(m, e, false);
        }
    }

    /// Adds link `l` to the set being solved (once per epoch `e`), or to
    /// the links left out when it was not full and need not be solved.
    fn visit(&mut self, l: u32, e: u32, start: bool) {
        let c = self.capacity[l as usize];
        let ls = &mut self.link[l as usize];
        if start {
            ls.start = e;
        }
        if ls.mark == e {
            return;
        }
        ls.mark = e;
        if !start && ls.load < c * (1.0 - SAT_EPS) {
            ls.prune = e;
            ls.delta = 0.0;
            self.pruned.push(l);
        } else {
            self.set_links.push(l);
        }
    }

    /// Lists each set link's flows of the set again (`adj` into
    /// `set_adj`: flows joined after one of their links was sorted) and
    /// resets its figures for a filling.
    fn build_adj(&mut self, e: u32) {
        for &l in &self.set_links {
            let ls = &mut self.link[l as usize];
            ls.adj = (0, 0);
            ls.wset = 0.0;
        }
        for &f in &self.set_flows {
            let w = self.hot[f as usize].weight;
            let (off, len, _) = self.path_at[f as usize];
            for k in off..off + len {
                let ls = &mut self.link[self.paths[k as usize] as usize];
                if ls.prune != e {
                    ls.adj.1 += 1;
                    ls.wset += w;
                }
            }
        }
        let mut at = 0;
        for &l in &self.set_links {
            let ls = &mut self.link[l as usize];
            ls.adj.0 = at;
            at += ls.adj.1;
            ls.adj.1 = 0;
        }
        self.set_adj.clear();
        self.set_adj.resize(at as usize, 0);
        for &f in &self.set_flows {
            let (off, len, _) = self.path_at[f as usize];
            for k in off..off + len {
                let ls = &mut self.link[self.paths[k as usize] as usize];
                if ls.prune != e {
                    self.set_adj[(ls.adj.0 + ls.adj.1) as usize] = f;
                    ls.adj.1 += 1;
                }
            }
        }
        for &l in &self.set_links {
            let c = self.capacity[l as usize];
            self.link[l as usize].restore(c);
        }
    }
}
