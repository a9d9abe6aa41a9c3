//! Weighted max-min sharing by progressive filling, with per-flow rate caps
//! and strict priority levels, re-solving after a change only the flows
//! that change can reach.
//!
//! Within one priority level every unfrozen flow `f` grows at `w_f * t` as
//! a common level `t` rises; a link saturates at `t_l = rem_l / W_l`
//! (`rem_l`: capacity left after frozen flows, `W_l`: weights of its
//! unfrozen flows), a capped flow at `cap_f / w_f`. The smallest of these
//! freezes its flows and lowers `rem` / `W` of the other links they cross;
//! an indexed heap of the links' levels finds it ([`fill`]), so a solve
//! costs `O((links + path entries) log links)`. Level 0 is solved first;
//! each lower level shares what the levels above left (strict priority).
//!
//! A change (flows added or removed) is repaired over the flows it can
//! reach ([`repair`]; why the others keep their rates: [`Sharing::solve`]).
//! The result equals solving everything (`Sharing::full`), which the tests
//! check on random instances.

mod fill;
mod repair;

use super::heap::IndexedHeap;

/// One flow as the solver sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Demand {
    /// Links (egress ports) crossed.
    pub path: Vec<u32>,
    /// Weight, > 0.
    pub weight: f64,
    /// Rate cap, bytes per ns (`f64::INFINITY`: none).
    pub cap: f64,
    /// Strict priority level, 0 = highest.
    pub priority: u8,
}

/// What the inner loops read of a flow, together in 40 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Hot {
    rate: f64,
    /// Rate per weight: the flow's level in the last filling that froze
    /// it; infinite until it was first solved.
    norm: f64,
    weight: f64,
    /// Epoch of the set being solved that holds it.
    mark: u32,
    /// The link that froze it (a full link where no flow of its level has
    /// a higher rate per weight), [`HINT_CAP`] or [`HINT_NONE`].
    hint: u32,
    prio: u8,
    live: bool,
}

/// [`Hot::hint`] of a flow held by its rate cap.
const HINT_CAP: u32 = u32::MAX - 1;
/// [`Hot::hint`] of a flow not solved yet.
const HINT_NONE: u32 = u32::MAX;

/// Per-link figures of one filling. The fields a filling updates for
/// every flow it freezes come first, in one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct LinkState {
    /// Capacity left to the unfrozen flows.
    rem: f64,
    /// Weights of the unfrozen flows.
    wsum: f64,
    /// Every flow's rate (kept exact for the links solved).
    load: f64,
    /// Change of `load` a solve would make on a link left out of it.
    delta: f64,
    /// Unfrozen flows.
    ucount: u32,
    /// Epoch in which it was left out of the set (not full before).
    prune: u32,
    /// Epoch of the set being solved that reached it.
    mark: u32,
    /// Epoch in which its flows were sorted into the set or out of it.
    scan: u32,
    /// Rates of the flows outside the set that take capacity from the
    /// level solved, and of all flows outside the set.
    taken: f64,
    other: f64,
    /// Highest rate per weight of the level's flows below the threshold.
    low: f64,
    /// Level at which the filling saturated it (infinite: it did not).
    tsat: f64,
    /// Weights of its flows of the set.
    wset: f64,
    /// Its flows of the set: `(offset, count)` in `set_adj`.
    adj: (u32, u32),
    /// Epoch in which the search started from it.
    start: u32,
}

impl LinkState {
    /// Before [`Sharing::select_flat`] counts the set's flows on it: all
    /// of its load is outside the set.
    fn reset_flat(&mut self, e: u32) {
        self.other = self.load;
        self.adj = (0, 0);
        self.wset = 0.0;
        self.low = 0.0;
        self.scan = e;
    }

    /// The figures before a filling.
    fn restore(&mut self, capacity: f64) {
        let r = capacity - self.taken;
        // rounding residue of a full link is no capacity
        self.rem = if r > capacity * 1e-12 { r } else { 0.0 };
        self.load = self.other;
        self.wsum = self.wset;
        self.ucount = self.adj.1;
        self.tsat = f64::INFINITY;
    }
}

/// Active flows, their rates and the links they share.
#[derive(Clone, Debug)]
pub struct Sharing {
    capacity: Vec<f64>,
    link_flows: Vec<Vec<u32>>,
    link: Vec<LinkState>,
    hot: Vec<Hot>,
    cap: Vec<f64>,
    /// Each slot's rate per weight ([`Hot::norm`]; `-inf` for a free
    /// slot), apart for one pass over all flows.
    norms: Vec<f64>,
    /// Each slot: equal to the running filling's stamp while unfrozen in
    /// it (apart from [`Hot`]: the filling reads it for every flow of a
    /// saturated link, most of them outside the set).
    fills: Vec<u32>,
    /// Each flow's path: `(offset, length, room)` in `paths`.
    path_at: Vec<(u32, u32, u32)>,
    paths: Vec<u32>,
    free: Vec<u32>,
    /// Live flows per priority level.
    levels: Vec<u32>,
    /// Flows added since the last solve.
    fresh: Vec<u32>,
    /// `(link, level, priority)` of departed flows on links that were full.
    gone: Vec<(u32, f64, u8)>,
    epoch: u32,
    fill_stamp: u32,
    // solve scratch
    heap: IndexedHeap,
    caps: Vec<(f64, u32)>,
    set_links: Vec<u32>,
    set_flows: Vec<u32>,
    set_adj: Vec<u32>,
    pruned: Vec<u32>,
    /// `(link, flow)`: flows of the level above the threshold left out of
    /// the set where they were found (checked after the filling).
    watch: Vec<(u32, u32)>,
    /// Whether a set link's `adj` misses a flow that joined later.
    adj_stale: bool,
    /// Whether every flow of the set on a set link is found by its
    /// `link_flows` (those unfrozen carry the filling's stamp) rather than
    /// by `adj`.
    adj_all: bool,
    /// Each set flow's `(rate, level, hint)` from the last filling.
    next: Vec<(f64, f64, u32)>,
    starts: Vec<u32>,
    lowered: Vec<u32>,
    lowered_stamp: Vec<u32>,
    points: Vec<(f64, f64)>,
    /// Flows whose rate changed in the last [`Sharing::solve`] (new flows
    /// included unless they got rate 0).
    pub changed: Vec<u32>,
    /// Whether every solve covers every flow (for checking).
    pub full: bool,
    /// Progressive fillings run (one per priority level a solve touches).
    pub rounds: u64,
    /// Flow rates computed over all solves.
    pub solved: u64,
    /// Level solves whose set was taken by threshold alone
    /// ([`repair`]'s flat selection).
    pub flat_solves: u64,
    /// Level solves so far.
    level_solves: u64,
    /// Running share of recent searches that ended eager.
    eager_share: f64,
    /// Level solves between lazy probes while searches start eager, and
    /// the level solve of the next probe.
    probe_gap: u64,
    next_probe: u64,
}

/// Relative tolerance of "saturated" and of the levels compared.
const SAT_EPS: f64 = 1e-9;

impl Sharing {
    /// Links with these capacities (bytes per ns), no flows.
    pub fn new(capacity: Vec<f64>) -> Sharing {
        let n = capacity.len();
        Sharing {
            capacity,
            link_flows: vec![Vec::new(); n],
            link: vec![LinkState::default(); n],
            hot: Vec::new(),
            cap: Vec::new(),
            norms: Vec::new(),
            fills: Vec::new(),
            path_at: Vec::new(),
            paths: Vec::new(),
            free: Vec::new(),
            levels: vec![0; 256],
            fresh: Vec::new(),
            gone: Vec::new(),
            epoch: 0,
            fill_stamp: 0,
            heap: IndexedHeap::default(),
            caps: Vec::new(),
            set_links: Vec::new(),
            set_flows: Vec::new(),
            set_adj: Vec::new(),
            pruned: Vec::new(),
            watch: Vec::new(),
            adj_stale: false,
            adj_all: false,
            next: Vec::new(),
            starts: Vec::new(),
            lowered: Vec::new(),
            lowered_stamp: vec![0; n],
            points: Vec::new(),
            changed: Vec::new(),
            full: false,
            rounds: 0,
            solved: 0,
            flat_solves: 0,
            level_solves: 0,
            eager_share: 0.0,
            probe_gap: repair::PROBE_GAP_MIN,
            next_probe: 0,
        }
    }

    /// Adds a flow (rate 0 until the next solve); returns its slot.
    pub fn add(&mut self, demand: Demand) -> u32 {
        self.add_path(&demand.path, demand.weight, demand.cap, demand.priority)
    }

    /// [`Sharing::add`] without building a [`Demand`].
    pub fn add_path(&mut self, path: &[u32], weight: f64, cap: f64, priority: u8) -> u32 {
        let hot = Hot {
            rate: 0.0,
            norm: f64::INFINITY,
            weight,
            mark: 0,
            hint: HINT_NONE,
            prio: priority,
            live: true,
        };
        let len = path.len() as u32;
        // a flow without links is never reached by a repair: never select
        // it by threshold either
        let unsolved = if path.is_empty() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.hot[i as usize] = hot;
                self.cap[i as usize] = cap;
                self.norms[i as usize] = unsolved;
                i
            }
            None => {
                self.hot.push(hot);
                self.cap.push(cap);
                self.norms.push(unsolved);
                self.path_at.push((0, 0, 0));
                self.hot.len() as u32 - 1
            }
        };
        let (off, _, room) = self.path_at[id as usize];
        let off = if len <= room {
            off
        } else {
            // a longer path than this slot held: a fresh stretch of the pool
            self.paths.resize(self.paths.len() + len as usize, 0);
            (self.paths.len() - len as usize) as u32
        };
        self.paths[off as usize..(off + len) as usize].copy_from_slice(path);
        self.path_at[id as usize] = (off, len, room.max(len));
        for &l in path {
            self.link_flows[l as usize].push(id);
        }
        self.levels[priority as usize] += 1;
        self.fresh.push(id);
        id
    }

    /// Removes a flow; its slot may be reused by the next [`Sharing::add`].
    pub fn remove(&mut self, id: u32) {
        let h = std::mem::take(&mut self.hot[id as usize]);
        self.levels[h.prio as usize] -= 1;
        self.norms[id as usize] = f64::NEG_INFINITY;
        let (off, len, _) = self.path_at[id as usize];
        for k in off..off + len {
            let l = self.paths[k as usize];
            let li = l as usize;
            // only a full link binds anyone: freeing room elsewhere
            // changes nobody's rate (and a flow never solved had none)
            if h.norm.is_finite() && self.link[li].load >= self.capacity[li] * (1.0 - SAT_EPS) {
                self.gone.push((l, h.norm, h.prio));
            }
            self.link[li].load -= h.rate;
            let v = &mut self.link_flows[li];
            if let Some(p) = v.iter().position(|&x| x == id) {
                v.swap_remove(p);
            }
        }
        self.free.push(id);
    }

    /// The current rate of a flow, bytes per ns.
    pub fn rate(&self, id: u32) -> f64 {
        self.hot[id as usize].rate
    }

    /// Active flows.
    pub fn active(&self) -> usize {
        self.hot.len() - self.free.len()
    }

    fn path(&self, f: u32) -> std::ops::Range<usize> {
        let (off, len, _) = self.path_at[f as usize];
        off as usize..(off + len) as usize
    }

    /// Re-solves what the changes since the last solve can reach (or
    /// everything with `full`); the flows whose rate changed are in
    /// `changed`.
    ///
    /// Per priority level, from the highest touched: a departed flow of
    /// level `t_f` (rate per weight) that left a full link, and a new flow
    /// whose links, with it added, still have room at level `t` when every
    /// flow below `t` keeps its rate and the others run at `weight x t`,
    /// change nothing in the progressive filling below `min(t_f, t)` =
    /// `t0`: up to `t0` the same links saturate at the same levels and
    /// freeze the same flows (a link's room only falls as the level rises,
    /// so room at `t0` means room below it). Flows of level below `t0`
    /// therefore keep their rates, and so do the others that no chain of
    /// shared links of flows at or above `t0` connects to a changed link
    /// (their sub-problem is unchanged). The rest is solved on what the
    /// kept flows leave of its links; the weighted max-min allocation
    /// restricted to any set of flows is the max-min allocation of that set
    /// on what the others leave (it meets the same bottleneck conditions,
    /// and that allocation is unique), so the result is exact. Often fewer
    /// flows need solving: [`repair`] first solves only those whose
    /// bottleneck the change touches and checks the rest. A level below a
    /// changed one is re-solved (from `t0 = 0`) over the links whose
    /// higher-level rates moved.
    pub fn solve(&mut self) {
        self.changed.clear();
        if self.fresh.is_empty() && self.gone.is_empty() && !self.full {
            return;
        }
        let fresh = std::mem::take(&mut self.fresh);
        let gone = std::mem::take(&mut self.gone);
        let mut lowered = std::mem::take(&mut self.lowered);
        lowered.clear();
        let mut starts = std::mem::take(&mut self.starts);
        let top = self.levels.iter().rposition(|&c| c > 0).unwrap_or(0);
        let first = if self.full {
            0
        } else {
            let f = fresh.iter().map(|&f| &self.hot[f as usize]);
            let f = f.filter(|h| h.live).map(|h| h.prio);
            gone.iter().map(|g| g.2).chain(f).min().unwrap_or(0) as usize
        };
        let stamp = self.next_epoch();
        for q in first..=top {
            if self.levels[q] == 0 {
                continue;
            }
            let q8 = q as u8;
            starts.clear();
            let mut t0 = f64::INFINITY;
            if self.full {
                t0 = 0.0;
                starts.extend(
                    (0..self.capacity.len() as u32)
                        .filter(|&l| !self.link_flows[l as usize].is_empty()),
                );
            } else {
                for &(l, norm, p) in &gone {
                    if p <= q8 {
                        // a higher level's departure frees room of unknown
                        // use: solve this level from the bottom
                        t0 = t0.min(if p == q8 { norm } else { 0.0 });
                        starts.push(l);
                    }
                }
                if !lowered.is_empty() {
                    t0 = 0.0;
                    starts.extend_from_slice(&lowered);
                }
                let before = starts.len();
                for &f in &fresh {
                    let h = self.hot[f as usize];
                    if h.live && h.prio == q8 && h.norm == f64::INFINITY {
                        for k in self.path(f) {
                            starts.push(self.paths[k]);
                        }
                    }
                }
                if t0 > 0.0 {
                    let seen = self.next_epoch();
                    for &l in &starts[before..] {
                        if self.link[l as usize].mark != seen {
                            self.link[l as usize].mark = seen;
                            t0 = t0.min(self.room_level(l, q8));
                        }
                    }
                }
            }
            if starts.is_empty() {
                continue;
            }
            let from = self.changed.len();
            self.solve_level(q8, t0, &starts);
            if q < top {
                // lower levels share what this one leaves: their room moved
                // on the links of the flows whose rate changed
                for i in from..self.changed.len() {
                    let f = self.changed[i];
                    for k in self.path(f) {
                        let l = self.paths[k];
                        if self.lowered_stamp[l as usize] != stamp {
                            self.lowered_stamp[l as usize] = stamp;
                            lowered.push(l);
                        }
                    }
                }
            }
        }
        self.fresh = fresh;
        self.fresh.clear();
        self.gone = gone;
        self.gone.clear();
        self.lowered = lowered;
        self.starts = starts;
    }

    /// The highest level `t` at which link `l` still has room for its new
    /// flows of priority `q` at `weight x t` when its other flows of `q`
    /// run at `min(t, their level)` and higher priorities keep their rates.
    fn room_level(&mut self, l: u32, q: u8) -> f64 {
        let mut room = self.capacity[l as usize];
        let mut wnew = 0.0;
        let mut wold = 0.0;
        self.points.clear();
        for &f in &self.link_flows[l as usize] {
            let h = &self.hot[f as usize];
            if h.prio < q {
                room -= h.rate;
            } else if h.prio == q {
                if h.norm == f64::INFINITY {
                    wnew += h.weight;
                } else {
                    wold += h.weight;
                    self.points.push((h.norm, h.weight));
                }
            }
        }
        if wnew <= 0.0 {
            return f64::INFINITY;
        }
        self.points.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        // room(t) = room - sum_{norm < t} w norm - (wnew + sum_{norm >= t} w) t
        let mut w = wnew + wold;
        for &(norm, wf) in &self.points {
            let t = room / w;
            if t <= norm {
                return t.max(0.0);
            }
            room -= wf * norm;
            w -= wf;
        }
        (room / wnew).max(0.0)
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link.iter_mut().for_each(|m| {
                m.mark = 0;
                m.prune = 0;
                m.start = 0;
                m.scan = 0;
            });
            self.hot.iter_mut().for_each(|h| h.mark = 0);
            self.lowered_stamp.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.epoch
    }
}
