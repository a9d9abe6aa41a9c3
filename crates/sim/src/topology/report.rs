//! Hop-count report of a topology: diameter and mean path length between
//! hosts, counted in links (a host's own link included, so two hosts on one
//! switch are 2 hops apart), and the mean number of equal-cost next hops.

use super::Graph;
use std::collections::VecDeque;

/// Size and path lengths of a topology.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyReport {
    /// Hosts.
    pub hosts: usize,
    /// Switches.
    pub switches: usize,
    /// Full-duplex links.
    pub links: usize,
    /// Largest switch degree (links to other switches).
    pub max_switch_degree: usize,
    /// Longest shortest path between two hosts, links.
    pub diameter: u32,
    /// Mean shortest path over ordered pairs of distinct hosts, links.
    pub mean_hops: f64,
    /// Host pairs counted.
    pub pairs: u64,
}

impl TopologyReport {
    /// One line per figure, `key: value`.
    pub fn text(&self) -> String {
        format!(
            "hosts: {}\nswitches: {}\nlinks: {}\nmax_switch_degree: {}\ndiameter_hops: {}\nmean_hops: {:.4}\nhost_pairs: {}\n",
            self.hosts,
            self.switches,
            self.links,
            self.max_switch_degree,
            self.diameter,
            self.mean_hops,
            self.pairs
        )
    }
}

/// Breadth-first search from every host's node (once per rack: hosts on one
/// switch share it). Hosts do not forward. Unreachable pairs are skipped;
/// check [`Graph::unreachable`] first.
pub fn report(g: &Graph) -> TopologyReport {
    let adj = g.adjacency();
    let n = g.node_count();
    let switches = n - g.hosts.len();
    let max_switch_degree = (0..n)
        .filter(|&x| !g.is_host[x])
        .map(|x| {
            adj[x]
                .iter()
                .filter(|&&(_, y)| !g.is_host[y as usize])
                .count()
        })
        .max()
        .unwrap_or(0);
    // hosts per node they hang off (single-homed hosts: their switch)
    let attach = |h: u32| match adj[h as usize].as_slice() {
        [(_, sw)] if !g.is_host[*sw as usize] => (*sw, 1u32),
        _ => (h, 0),
    };
    let mut per_root: std::collections::BTreeMap<u32, u64> = Default::default();
    for &h in &g.hosts {
        *per_root.entry(attach(h).0).or_default() += 1;
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    let (mut diameter, mut sum, mut pairs) = (0u32, 0u128, 0u64);
    for (&root, &count) in &per_root {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[root as usize] = 0;
        queue.push_back(root);
        while let Some(x) = queue.pop_front() {
            for &(_, y) in &adj[x as usize] {
                if dist[y as usize] == u32::MAX {
                    dist[y as usize] = dist[x as usize] + 1;
                    if !g.is_host[y as usize] {
                        queue.push_back(y);
                    }
                }
            }
        }
        let root_is_switch = !g.is_host[root as usize];
        for &h in &g.hosts {
            let (r2, up) = attach(h);
            let d = dist[r2 as usize];
            if d == u32::MAX {
                continue;
            }
            // hops from a host of `root` to host h
            let hops = d + up + u32::from(root_is_switch);
            // pairs: every host of root to h, minus h itself
            let mut k = count;
            if r2 == root {
                k -= 1;
            }
            if k == 0 {
                continue;
            }
            diameter = diameter.max(hops);
            sum += hops as u128 * k as u128;
            pairs += k;
        }
    }
    TopologyReport {
        hosts: g.hosts.len(),
        switches,
        links: g.links.len(),
        max_switch_degree,
        diameter,
        mean_hops: if pairs == 0 {
            0.0
        } else {
            sum as f64 / pairs as f64
        },
        pairs,
    }
}
