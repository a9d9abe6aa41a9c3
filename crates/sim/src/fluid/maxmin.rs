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
//! A change (a flow added or removed) is repaired locally: see
//! [`Sharing::solve`]; the result equals solving everything
//! (`Sharing::full`), which the tests check on random instances.

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
    /// A link where this flow is bottlenecked ([`HINT_CAP`]: its cap;
    /// [`HINT_NONE`]: not known), kept valid after every solve.
    hint: u32,
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
    check_stamp: u32,
    checked: Vec<u32>,
    stat_stamp: Vec<u32>,
    stat_level: Vec<u8>,
    stat_load: Vec<f64>,
    stat_top: Vec<f64>,
    /// Flows whose rate was (re)computed by the last [`Sharing::solve`].
    pub changed: Vec<u32>,
    /// Their rates before it, in the same order.
    pub before: Vec<f64>,
    /// Whether every solve covers every flow (for checking).
    pub full: bool,
    /// Progressive fillings run (a solve runs one per repair round).
    pub rounds: u64,
    solves: u64,
    /// Running share of recent repairs that widened to every flow.
    widen: f64,
}

/// Relative tolerance of "saturated" and "overloaded".
const SAT_EPS: f64 = 1e-9;
const HINT_NONE: u32 = u32::MAX;
const HINT_CAP: u32 = u32::MAX - 1;

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
            check_stamp: 0,
            checked: Vec::new(),
            stat_stamp: vec![0; n],
            stat_level: vec![0; n],
            stat_load: vec![0.0; n],
            stat_top: vec![0.0; n],
            changed: Vec::new(),
            before: Vec::new(),
            full: false,
            rounds: 0,
            solves: 0,
            widen: 0.0,
        }
    }

    /// Adds a flow (rate 0 until the next solve); returns its slot.
    pub fn add(&mut self, demand: Demand) -> u32 {
        let slot = Slot {
            demand,
            rate: 0.0,
            hint: HINT_NONE,
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
    /// flows whose rate was recomputed are in `changed`, with their rates
    /// before in `before`.
    ///
    /// Local repair: the set starts with the new flows and the flows on the
    /// saturated links a departed flow leaves; it is solved by progressive
    /// filling on what the other flows leave of its links. Then every flow
    /// on those links is checked against the max-min conditions (it is at
    /// its cap, or crosses a link full at its level where no flow of its
    /// level has a higher rate per weight); an invalid flow joins the set
    /// with every flow on its links, and the set is solved again. Flows
    /// that never join keep their rates, which stay valid: their links and
    /// everything on them are unchanged. The result is the max-min
    /// allocation of the whole network, as `full` computes it.
    pub fn solve(&mut self) {
        self.changed.clear();
        self.before.clear();
        let e = self.next_epoch();
        self.comp_links.clear();
        self.comp_flows.clear();
        let dirty = std::mem::take(&mut self.dirty);
        let seeds = std::mem::take(&mut self.seeds);
        if self.full {
            for f in 0..self.slots.len() as u32 {
                if self.slots[f as usize].live {
                    self.enter(f, e);
                }
            }
        } else {
            for &f in &seeds {
                if self.slots[f as usize].live {
                    self.enter(f, e);
                }
            }
            for &l in &dirty {
                for i in 0..self.link_flows[l as usize].len() {
                    let f = self.link_flows[l as usize][i];
                    self.enter(f, e);
                }
            }
        }
        self.dirty = dirty;
        self.dirty.clear();
        self.seeds = seeds;
        self.seeds.clear();
        if self.comp_flows.is_empty() {
            return;
        }
        let live = self.slots.len() - self.free.len();
        // when recent repairs mostly ended up solving everything (many
        // flows, all coupled), solve everything at once, but still try a
        // repair every 16th solve to notice when that changes
        self.solves += 1;
        let direct = !self.full && self.widen > 0.5 && !self.solves.is_multiple_of(16);
        if direct {
            self.enter_all(e);
        }
        let mut widened = false;
        loop {
            // what the flows outside the set leave of its links (all of
            // it when every flow is in the set)
            let everyone = self.comp_flows.len() == live;
            for i in 0..self.comp_links.len() {
                let l = self.comp_links[i] as usize;
                if everyone {
                    self.rem[l] = self.capacity[l];
                    continue;
                }
                let mut r = self.capacity[l];
                for &g in &self.link_flows[l] {
                    let sg = &self.slots[g as usize];
                    if sg.mark != e {
                        r -= sg.rate;
                    }
                }
                // rounding residue of a full link is no capacity
                self.rem[l] = if r > self.capacity[l] * 1e-12 { r } else { 0.0 };
            }
            self.rounds += 1;
            let mut levels = [false; 256];
            for &f in &self.comp_flows {
                levels[self.slots[f as usize].demand.priority as usize] = true;
            }
            for (p, &used) in levels.iter().enumerate() {
                if used {
                    self.fill_level(p as u8, e);
                }
            }
            for i in 0..self.comp_links.len() {
                let l = self.comp_links[i] as usize;
                let mut sum = 0.0;
                for &g in &self.link_flows[l] {
                    sum += self.slots[g as usize].rate;
                }
                self.load[l] = sum;
            }
            if self.full || self.comp_flows.len() == live {
                // everything was solved together: max-min by construction
                break;
            }
            let grow = self.violations(e);
            if grow.is_empty() {
                break;
            }
            if self.comp_flows.len() + grow.len() > live / 4 {
                // most of the network: solve it all at once
                widened = true;
                self.enter_all(e);
            } else {
                for f in grow {
                    self.enter(f, e);
                }
            }
        }
        if !direct && !self.full {
            self.widen = 0.9 * self.widen + if widened { 0.1 } else { 0.0 };
        }
        self.changed.extend_from_slice(&self.comp_flows);
    }

    fn enter_all(&mut self, e: u32) {
        for f in 0..self.slots.len() as u32 {
            if self.slots[f as usize].live && self.slots[f as usize].mark != e {
                self.enter(f, e);
            }
        }
    }

    /// Puts flow `f` in the set being solved (once per epoch).
    fn enter(&mut self, f: u32, e: u32) {
        let s = &mut self.slots[f as usize];
        if s.mark == e {
            return;
        }
        s.mark = e;
        self.comp_flows.push(f);
        self.before.push(s.rate);
        for &l in &s.demand.path {
            if self.link_mark[l as usize] != e {
                self.link_mark[l as usize] = e;
                self.comp_links.push(l);
            }
        }
    }

    /// Flows to add to the set: the invalid flows on its links, with every
    /// flow on their links.
    fn violations(&mut self, e: u32) -> Vec<u32> {
        self.check_stamp = self.check_stamp.wrapping_add(1);
        if self.check_stamp == 0 {
            self.checked.iter_mut().for_each(|c| *c = 0);
            self.stat_stamp.iter_mut().for_each(|c| *c = 0);
            self.check_stamp = 1;
        }
        let stamp = self.check_stamp;
        if self.checked.len() < self.slots.len() {
            self.checked.resize(self.slots.len(), 0);
        }
        let mut grow = Vec::new();
        for i in 0..self.comp_links.len() {
            let l = self.comp_links[i] as usize;
            for j in 0..self.link_flows[l].len() {
                let g = self.link_flows[l][j];
                if self.checked[g as usize] == stamp {
                    continue;
                }
                self.checked[g as usize] = stamp;
                if self.valid(g, stamp, e) {
                    continue;
                }
                let path = self.slots[g as usize].demand.path.clone();
                if self.slots[g as usize].mark != e {
                    grow.push(g);
                }
                for m in path {
                    for &h in &self.link_flows[m as usize] {
                        if self.slots[h as usize].mark != e {
                            grow.push(h);
                        }
                    }
                }
            }
        }
        grow.sort_unstable();
        grow.dedup();
        grow
    }

    /// Whether flow `g` meets the max-min conditions at its current rate.
    fn valid(&mut self, g: u32, stamp: u32, e: u32) -> bool {
        let (rate, weight, cap, p, hint) = {
            let s = &self.slots[g as usize];
            let d = &s.demand;
            (s.rate, d.weight, d.cap, d.priority, s.hint)
        };
        if rate >= cap * (1.0 - SAT_EPS) {
            self.slots[g as usize].hint = HINT_CAP;
            return true;
        }
        // a bottleneck outside the links solved is untouched: nothing on
        // it changed
        if (hint as usize) < self.capacity.len() && self.link_mark[hint as usize] != e {
            return true;
        }
        let norm = rate / weight;
        // the hint first: it usually still holds
        let n = self.slots[g as usize].demand.path.len();
        let first = self.slots[g as usize]
            .demand
            .path
            .iter()
            .position(|&m| m == hint)
            .unwrap_or(0);
        for k in 0..n {
            let m = self.slots[g as usize].demand.path[(first + k) % n] as usize;
            if self.bottleneck_at(m, p, norm, stamp) {
                self.slots[g as usize].hint = m as u32;
                return true;
            }
        }
        false
    }

    /// Whether link `m` is full at level `p` with no flow of that level
    /// above `norm` (rate per weight); link figures cached per check pass.
    fn bottleneck_at(&mut self, m: usize, p: u8, norm: f64, stamp: u32) -> bool {
        if self.stat_stamp[m] != stamp || self.stat_level[m] != p {
            let (mut load, mut top) = (0.0f64, 0.0f64);
            for &h in &self.link_flows[m] {
                let sh = &self.slots[h as usize];
                if sh.demand.priority <= p {
                    load += sh.rate;
                }
                if sh.demand.priority == p {
                    top = top.max(sh.rate / sh.demand.weight);
                }
            }
            self.stat_stamp[m] = stamp;
            self.stat_level[m] = p;
            self.stat_load[m] = load;
            self.stat_top[m] = top;
        }
        self.stat_load[m] >= self.capacity[m] * (1.0 - SAT_EPS)
            && norm >= self.stat_top[m] * (1.0 - SAT_EPS)
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
        self.heap.clear();
        for &l in &self.comp_links {
            if self.ucount[l as usize] > 0 {
                self.heap
                    .push_unordered(l, self.rem[l as usize] / self.wsum[l as usize]);
            }
        }
        self.heap.heapify();
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
                    self.freeze(f, t.max(0.0), e, HINT_CAP);
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
                        let sf = &self.slots[f as usize];
                        if sf.mark == e && sf.demand.priority == p && !self.frozen[f as usize] {
                            self.freeze(f, t, e, l);
                            unfrozen -= 1;
                        }
                    }
                }
                _ => break,
            }
        }
        self.heap.clear();
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
                    s.hint = HINT_NONE;
                    self.frozen[f as usize] = true;
                }
            }
        }
        self.caps = caps;
    }

    /// Fixes flow `f` at level `t`; `hint` = the link (or cap) that froze
    /// it: its bottleneck when the whole network is solved, and checked
    /// by the repair otherwise.
    fn freeze(&mut self, f: u32, t: f64, e: u32, hint: u32) {
        self.frozen[f as usize] = true;
        let s = &mut self.slots[f as usize];
        s.hint = hint;
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
