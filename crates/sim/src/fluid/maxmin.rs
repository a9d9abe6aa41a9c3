//! Weighted max-min sharing by progressive filling, with per-flow rate caps
//! and strict priority levels, recomputed only over the part of the
//! network a change can reach.
//!
//! Within one priority level every unfrozen flow `f` grows at `w_f * t` as
//! a common level `t` rises; a link saturates at `t_l = rem_l / W_l`
//! (`rem_l`: capacity left after frozen flows, `W_l`: weights of its
//! unfrozen flows), a capped flow at `cap_f / w_f`. The smallest of these
//! freezes its flows and lowers `rem` / `W` of the other links they cross;
//! an indexed heap of the links' levels finds it, so a solve costs
//! `O((links + path entries) log links)`. Level 0 is solved first; each
//! lower level shares what the levels above left (strict priority).
//!
//! A change (a flow added or removed) can only move the rates of flows
//! connected to it through shared links, transitively: the connected
//! component of the flow-link graph. [`Sharing::solve`] re-solves exactly
//! the components that hold a changed link, which gives the same rates as
//! solving everything (max-min on disjoint components is independent).

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

#[derive(Clone, Debug)]
struct Slot {
    demand: Demand,
    rate: f64,
    live: bool,
    /// Component-search mark.
    mark: u32,
}

/// Active flows, their rates and the links they share.
#[derive(Clone, Debug)]
pub struct Sharing {
    capacity: Vec<f64>,
    link_flows: Vec<Vec<u32>>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    dirty: Vec<u32>,
    seeds: Vec<u32>,
    link_mark: Vec<u32>,
    epoch: u32,
    // solve scratch
    rem: Vec<f64>,
    wsum: Vec<f64>,
    ucount: Vec<u32>,
    heap: IndexedHeap,
    caps: Vec<(f64, u32)>,
    frozen: Vec<bool>,
    comp_links: Vec<u32>,
    comp_flows: Vec<u32>,
    load: Vec<f64>,
    /// Flows whose rate was (re)computed by the last [`Sharing::solve`].
    pub changed: Vec<u32>,
    /// Their rates before it, in the same order.
    pub before: Vec<f64>,
    /// Whether every solve covers every flow (for checking).
    pub full: bool,
}

/// Relative tolerance of "saturated" and "overloaded".
const SAT_EPS: f64 = 1e-9;

impl Sharing {
    /// Links with these capacities (bytes per ns), no flows.
    pub fn new(capacity: Vec<f64>) -> Sharing {
        let n = capacity.len();
        Sharing {
            capacity,
            link_flows: vec![Vec::new(); n],
            slots: Vec::new(),
            free: Vec::new(),
            dirty: Vec::new(),
            seeds: Vec::new(),
            link_mark: vec![0; n],
            epoch: 0,
            rem: vec![0.0; n],
            wsum: vec![0.0; n],
            ucount: vec![0; n],
            heap: IndexedHeap::default(),
            caps: Vec::new(),
            frozen: Vec::new(),
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            load: vec![0.0; n],
            changed: Vec::new(),
            before: Vec::new(),
            full: false,
        }
    }

    /// Adds a flow (rate 0 until the next solve); returns its slot.
    pub fn add(&mut self, demand: Demand) -> u32 {
        let slot = Slot {
            demand,
            rate: 0.0,
            live: false,
            mark: 0,
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.frozen.push(false);
                self.slots.len() as u32 - 1
            }
        };
        for &l in &self.slots[id as usize].demand.path {
            self.link_flows[l as usize].push(id);
        }
        self.slots[id as usize].live = true;
        self.seeds.push(id);
        id
    }

    /// Removes a flow; its slot may be reused by the next [`Sharing::add`].
    pub fn remove(&mut self, id: u32) {
        let s = &mut self.slots[id as usize];
        s.live = false;
        let rate = std::mem::take(&mut s.rate);
        for &l in &s.demand.path {
            let li = l as usize;
            // only a saturated link binds anyone: freeing room elsewhere
            // changes nobody's rate
            if self.load[li] >= self.capacity[li] * (1.0 - SAT_EPS) {
                self.dirty.push(l);
            }
            self.load[li] -= rate;
            let v = &mut self.link_flows[li];
            if let Some(p) = v.iter().position(|&x| x == id) {
                v.swap_remove(p);
            }
        }
        self.free.push(id);
    }

    /// The current rate of a flow, bytes per ns.
    pub fn rate(&self, id: u32) -> f64 {
        self.slots[id as usize].rate
    }

    /// The demand of a flow.
    pub fn demand(&self, id: u32) -> &Demand {
        &self.slots[id as usize].demand
    }

    /// Active flows.
    pub fn active(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Re-solves what a change can reach (or everything with `full`); the
    /// flows whose rate was recomputed are in `changed`, with their rate
    /// before in `before`.
    ///
    /// The search goes from every changed link to all flows on it, and from
    /// a flow on to those of its links that are saturated: an unsaturated
    /// link binds no flow, so a rate change that leaves it unsaturated
    /// cannot move anyone else's rate through it. After the solve, a link
    /// left out whose load now exceeds its capacity is added and the solve
    /// repeated; so the result is the max-min allocation of the whole
    /// network, as `full` computes it.
    pub fn solve(&mut self) {
        self.changed.clear();
        self.before.clear();
        let e = self.next_epoch();
        self.comp_links.clear();
        self.comp_flows.clear();
        let mut stack: Vec<u32> = if self.full {
            (0..self.capacity.len() as u32)
                .filter(|&l| !self.link_flows[l as usize].is_empty())
                .collect()
        } else {
            std::mem::take(&mut self.dirty)
        };
        self.dirty.clear();
        // a new flow joins with its saturated links; an unsaturated one
        // only matters if the new flow overloads it, which the check below
        // catches
        let seeds = std::mem::take(&mut self.seeds);
        for &f in &seeds {
            let s = &mut self.slots[f as usize];
            if !s.live || s.mark == e {
                continue;
            }
            s.mark = e;
            self.comp_flows.push(f);
            for &m in &s.demand.path {
                let mi = m as usize;
                if self.full || self.load[mi] >= self.capacity[mi] * (1.0 - SAT_EPS) {
                    stack.push(m);
                }
            }
        }
        self.seeds = seeds;
        self.seeds.clear();
        loop {
            self.search(e, &mut stack);
            if self.comp_flows.is_empty() {
                return;
            }
            self.before.clear();
            for &f in &self.comp_flows {
                self.before.push(self.slots[f as usize].rate);
            }
            for &l in &self.comp_links {
                self.rem[l as usize] = self.capacity[l as usize];
            }
            let mut prios: Vec<u8> = self
                .comp_flows
                .iter()
                .map(|&f| self.slots[f as usize].demand.priority)
                .collect();
            prios.sort_unstable();
            prios.dedup();
            for p in prios {
                self.fill_level(p, e);
            }
            // loads of the links left out move by the rate changes
            let mut over = Vec::new();
            for (i, &f) in self.comp_flows.iter().enumerate() {
                let s = &self.slots[f as usize];
                let delta = s.rate - self.before[i];
                if delta == 0.0 {
                    continue;
                }
                for &l in &s.demand.path {
                    if self.link_mark[l as usize] != e {
                        self.load[l as usize] += delta;
                        if self.load[l as usize] > self.capacity[l as usize] * (1.0 + SAT_EPS) {
                            over.push(l);
                        }
                    }
                }
            }
            if over.is_empty() {
                break;
            }
            // undo, widen the search by the overloaded links, solve again
            for (i, &f) in self.comp_flows.iter().enumerate() {
                let old = self.before[i];
                let s = &mut self.slots[f as usize];
                let delta = s.rate - old;
                s.rate = old;
                if delta == 0.0 {
                    continue;
                }
                for &l in &s.demand.path {
                    if self.link_mark[l as usize] != e {
                        self.load[l as usize] -= delta;
                    }
                }
            }
            stack = over;
        }
        // exact loads on the links solved (no drift from increments)
        for &l in &self.comp_links {
            let mut sum = 0.0;
            for &f in &self.link_flows[l as usize] {
                sum += self.slots[f as usize].rate;
            }
            self.load[l as usize] = sum;
        }
        self.changed.extend_from_slice(&self.comp_flows);
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.link_mark.iter_mut().for_each(|m| *m = 0);
            self.slots.iter_mut().for_each(|s| s.mark = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Adds to the component every flow on a link of `stack` and, from
    /// each, its saturated links (all of them with `full`).
    fn search(&mut self, e: u32, stack: &mut Vec<u32>) {
        while let Some(l) = stack.pop() {
            if self.link_mark[l as usize] == e {
                continue;
            }
            self.link_mark[l as usize] = e;
            self.comp_links.push(l);
            for &f in &self.link_flows[l as usize] {
                let s = &mut self.slots[f as usize];
                if s.mark != e {
                    s.mark = e;
                    self.comp_flows.push(f);
                    for &m in &s.demand.path {
                        let mi = m as usize;
                        if self.link_mark[mi] != e
                            && (self.full || self.load[mi] >= self.capacity[mi] * (1.0 - SAT_EPS))
                        {
                            stack.push(m);
                        }
                    }
                }
            }
        }
    }

    /// Progressive filling of the component's flows at priority `p`.
    fn fill_level(&mut self, p: u8, e: u32) {
        for &l in &self.comp_links {
            self.wsum[l as usize] = 0.0;
            self.ucount[l as usize] = 0;
        }
        let mut caps = std::mem::take(&mut self.caps);
        caps.clear();
        let mut unfrozen = 0usize;
        for &f in &self.comp_flows {
            let d = &self.slots[f as usize].demand;
            if d.priority != p {
                continue;
            }
            self.frozen[f as usize] = false;
            unfrozen += 1;
            for &l in &d.path {
                if self.link_mark[l as usize] == e {
                    self.wsum[l as usize] += d.weight;
                    self.ucount[l as usize] += 1;
                }
            }
            if d.cap.is_finite() {
                caps.push((d.cap / d.weight, f));
            }
        }
        caps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &l in &self.comp_links {
            if self.ucount[l as usize] > 0 {
                self.heap
                    .set(l, self.rem[l as usize] / self.wsum[l as usize]);
            }
        }
        let mut ci = 0;
        while unfrozen > 0 {
            while ci < caps.len() && self.frozen[caps[ci].1 as usize] {
                ci += 1;
            }
            // the lowest link whose key is its true level
            let mut link = None;
            while let Some((k, l)) = self.heap.peek() {
                let li = l as usize;
                if self.ucount[li] == 0 {
                    self.heap.remove(l);
                    continue;
                }
                let level = self.rem[li] / self.wsum[li];
                if level > k {
                    self.heap.set(l, level);
                    continue;
                }
                link = Some((level, l));
                break;
            }
            let cap = caps.get(ci).copied();
            let take_cap = match (link, cap) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some((tl, _)), Some((tc, _))) => tc <= tl,
            };
            match (link, cap) {
                (_, Some((t, f))) if take_cap => {
                    // the flow reaches its cap before any link saturates
                    ci += 1;
                    self.freeze(f, t.max(0.0), e);
                    unfrozen -= 1;
                }
                (Some((t, l)), _) => {
                    // the link saturates: freeze its unfrozen flows of this level
                    self.heap.remove(l);
                    let t = t.max(0.0);
                    let mut i = 0;
                    while i < self.link_flows[l as usize].len() {
                        let f = self.link_flows[l as usize][i];
                        i += 1;
                        if self.slots[f as usize].demand.priority == p && !self.frozen[f as usize] {
                            self.freeze(f, t, e);
                            unfrozen -= 1;
                        }
                    }
                }
                _ => break,
            }
        }
        while let Some((_, l)) = self.heap.peek() {
            self.heap.remove(l);
        }
        if unfrozen > 0 {
            // flows none of whose links is in the component: as much as
            // their path allows alone; an overload sends the link in
            for &f in &self.comp_flows {
                let s = &mut self.slots[f as usize];
                if s.demand.priority == p && !self.frozen[f as usize] {
                    let alone = s
                        .demand
                        .path
                        .iter()
                        .map(|&l| self.capacity[l as usize])
                        .fold(s.demand.cap, f64::min);
                    s.rate = alone;
                    self.frozen[f as usize] = true;
                }
            }
        }
        self.caps = caps;
    }

    fn freeze(&mut self, f: u32, t: f64, e: u32) {
        self.frozen[f as usize] = true;
        let s = &mut self.slots[f as usize];
        let w = s.demand.weight;
        let rate = (w * t).min(s.demand.cap);
        s.rate = rate;
        for &l in &s.demand.path {
            let li = l as usize;
            if self.link_mark[li] != e {
                continue;
            }
            self.rem[li] = (self.rem[li] - rate).max(0.0);
            self.wsum[li] -= w;
            self.ucount[li] -= 1;
            // the heap's key of `l` is now a lower bound of its level
            // (levels only rise); it is refreshed when it comes up
        }
    }
}
