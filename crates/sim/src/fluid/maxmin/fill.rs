//! Progressive filling of one priority level's set of flows on what the
//! flows outside it leave of its links.

use super::{Sharing, HINT_CAP, HINT_NONE};

impl Sharing {
    /// Progressive filling of `set_flows` (one priority level) on the
    /// `rem` of `set_links`; pruned links (epoch `e`) only add up the
    /// change of their load. The rates go to `next`.
    pub(super) fn fill(&mut self, e: u32) {
        self.fill_stamp = self.fill_stamp.wrapping_add(1);
        if self.fill_stamp == 0 {
            self.fills.iter_mut().for_each(|x| *x = 0);
            self.fill_stamp = 1;
        }
        let stamp = self.fill_stamp;
        if self.fills.len() < self.hot.len() {
            self.fills.resize(self.hot.len(), 0);
        }
        if self.next.len() < self.hot.len() {
            self.next.resize(self.hot.len(), (0.0, 0.0, HINT_NONE));
        }
        let mut caps = std::mem::take(&mut self.caps);
        caps.clear();
        for &f in &self.set_flows {
            self.fills[f as usize] = stamp;
            let c = self.cap[f as usize];
            if c.is_finite() {
                caps.push((c / self.hot[f as usize].weight, f));
            }
        }
        caps.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.heap.clear();
        for &l in &self.set_links {
            let ls = &self.link[l as usize];
            if ls.ucount > 0 {
                self.heap.push_unordered(l, ls.rem / ls.wsum);
            }
        }
        self.heap.heapify();
        let mut unfrozen = self.set_flows.len();
        let mut ci = 0;
        while unfrozen > 0 {
            while ci < caps.len() && self.fills[caps[ci].1 as usize] != stamp {
                ci += 1;
            }
            // the lowest link whose key is its true level
            let mut link = None;
            while let Some((k, l)) = self.heap.peek() {
                let ls = &self.link[l as usize];
                if ls.ucount == 0 {
                    self.heap.remove(l);
                    continue;
                }
                let level = ls.rem / ls.wsum;
                if level > k {
                    self.heap.set(l, level);
                    continue;
                }
                link = Some((level, l));
                break;
            }
            let cap = caps.get(ci).copied();
            match (link, cap) {
                (link, Some((t, f))) if link.is_none_or(|(tl, _)| t <= tl) => {
                    // the flow reaches its cap before any link saturates
                    ci += 1;
                    self.freeze(f, t.max(0.0), e, HINT_CAP);
                    unfrozen -= 1;
                }
                (Some((t, l)), _) => {
                    // the link saturates: freeze its unfrozen flows of the set
                    self.heap.remove(l);
                    let t = t.max(0.0);
                    self.link[l as usize].tsat = t;
                    let (off, len) = self.link[l as usize].adj;
                    let (off, len) = if self.adj_all {
                        (0, self.link_flows[l as usize].len())
                    } else {
                        (off as usize, len as usize)
                    };
                    for i in off..off + len {
                        let f = if self.adj_all {
                            self.link_flows[l as usize][i]
                        } else {
                            self.set_adj[i]
                        };
                        if self.fills[f as usize] == stamp {
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
            // only a flow whose every link was left out: as much as its
            // path gives it alone (an overload puts the link back in)
            for i in 0..self.set_flows.len() {
                let f = self.set_flows[i];
                if self.fills[f as usize] == stamp {
                    let alone = self
                        .path(f)
                        .map(|k| self.capacity[self.paths[k] as usize])
                        .fold(self.cap[f as usize], f64::min);
                    let w = self.hot[f as usize].weight;
                    self.freeze(f, alone / w, e, HINT_NONE);
                }
            }
        }
        self.caps = caps;
    }

    /// Fixes flow `f` at level `t` (in `next`), held there by `hint`.
    fn freeze(&mut self, f: u32, t: f64, e: u32, hint: u32) {
        let cap = self.cap[f as usize];
        self.fills[f as usize] = 0;
        let h = &self.hot[f as usize];
        let (w, old) = (h.weight, h.rate);
        let rate = (w * t).min(cap);
        self.next[f as usize] = (rate, t, hint);
        let (off, len, _) = self.path_at[f as usize];
        for k in off..off + len {
            let ls = &mut self.link[self.paths[k as usize] as usize];
            if ls.prune == e {
                ls.delta += rate - old;
                continue;
            }
            ls.rem = (ls.rem - rate).max(0.0);
            ls.wsum -= w;
            ls.ucount -= 1;
            ls.load += rate;
            // the heap's key of this link is now a lower bound of its
            // level (levels only rise); it is refreshed when it comes up
        }
    }
}
