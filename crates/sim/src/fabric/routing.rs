//! Shortest-path ECMP routes, computed once from the topology and stored
//! per destination prefix.
//!
//! For every node and destination host the route is the list of egress
//! ports on a shortest path (hosts other than the destination never
//! forward); a switch picks one by flow hash (ECMP) or at random per packet
//! (spraying). Works for any topology the builder can express.
//!
//! Storage is per prefix, as a router's FIB: at each node, consecutive
//! destination host ids with the same port list form one entry (a host-id
//! range). The presets number hosts rack by rack, so a switch holds a few
//! entries per rack it can tell apart (its own hosts, each of its down
//! links, "everything else up"): about three per host over the whole
//! fat-tree, so memory grows linearly in hosts, and a lookup is a binary
//! search over a handful of entries. Each rack of single-homed hosts costs
//! one breadth-first search from its switch and one pass over the nodes
//! (the rack's switch and hosts then host by host), so building the table
//! takes racks x nodes steps, not hosts x nodes.
//!
//! A fat-tree or leaf-spine preset wired onto an empty builder is routed
//! by arithmetic instead ([`super::clos`]), kept only where it agrees with
//! this table on every switch; the table is then dropped.

use super::clos::{Clos, Layout};
use std::collections::VecDeque;

/// How a switch chooses among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecmp {
    /// Hash of the flow: all packets of a flow take one path.
    #[default]
    FlowHash,
    /// A random next hop for every packet.
    Spray,
}

/// One prefix entry: destinations from `first` up to the next entry's
/// `first` leave by `ports[start .. start + len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prefix {
    first: u32,
    start: u32,
    len: u32,
}

/// The equal-cost egress ports of one (node, destination): a stored list,
/// or an arithmetic progression `first, first + step, ...` of `len` ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hops<'a> {
    /// Ports listed in the table.
    List(&'a [u32]),
    /// Ports computed from the topology's structure.
    Stride {
        /// The first port.
        first: u32,
        /// Distance between consecutive ports.
        step: u32,
        /// How many.
        len: u32,
    },
}

impl Hops<'_> {
    /// No next hop (the destination itself, or unreachable).
    pub const NONE: Hops<'static> = Hops::List(&[]);

    /// The single port `p`.
    #[inline]
    pub fn one(p: u32) -> Hops<'static> {
        Hops::Stride {
            first: p,
            step: 0,
            len: 1,
        }
    }

    /// How many ports.
    #[inline]
    pub fn len(&self) -> usize {
        match *self {
            Hops::List(l) => l.len(),
            Hops::Stride { len, .. } => len as usize,
        }
    }

    /// No port.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Port `i` (`i < len()`; panics past the end, as a slice index).
    #[inline]
    pub fn at(&self, i: usize) -> u32 {
        match *self {
            Hops::List(l) => l[i],
            Hops::Stride { first, step, len } => {
                assert!(i < len as usize, "hop {i} of {len}");
                first + step * i as u32
            }
        }
    }

    /// The ports, in order.
    pub fn to_vec(&self) -> Vec<u32> {
        (0..self.len()).map(|i| self.at(i)).collect()
    }
}

/// Next hops: `(node, dst host) -> equal-cost egress ports`, from a prefix
/// table or, for a fat-tree or leaf-spine preset, from its structure.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// `node_entries[n] .. node_entries[n + 1]` index `entries`.
    node_entries: Vec<u32>,
    entries: Vec<Prefix>,
    ports: Vec<u32>,
    /// Arithmetic routes (the table above is then empty).
    clos: Option<Clos>,
    /// The table's entry of every `(node, host)`, at `node * hosts + host`
    /// (`u32::MAX`: no entry), where the table is small enough
    /// ([`DENSE_MAX`]); empty otherwise. One load instead of a binary
    /// search over the node's entries (a switch of the ns-3 dumbbell has
    /// one entry a host: ~48 instructions a lookup, 12 % of that run).
    /// An entry of one port is stored as [`ONE_PORT`] | the port's index
    /// in `ports`: a lookup then reads the port without the entry (~11
    /// instructions of a switch's hop on the dumbbell).
    dense: Vec<u32>,
    /// Hosts in a row of `dense`.
    hosts: u32,
}

/// Flags a dense index value that is the index in `ports` of the entry's
/// only port, not the entry (`u32::MAX`, no entry, has it too).
const ONE_PORT: u32 = 1 << 31;

/// Most `(node, host)` pairs [`Routes`] indexes densely (4 bytes each:
/// 1 MiB). Larger tables keep the binary search, whose few entries a node
/// stay in the caches where a dense row would not.
pub const DENSE_MAX: usize = 1 << 18;

impl Routes {
    /// [`Routes::build`], then, if the network was wired by a preset that
    /// declared `layout`, the same routes computed from its structure
    /// where they agree with the table on every switch and destination
    /// (the table is then dropped).
    pub fn build_for(
        adj: &[Vec<(u32, u32)>],
        host_nodes: &[u32],
        layout: Option<Layout>,
    ) -> Routes {
        let table = Routes::build(adj, host_nodes);
        match layout.and_then(Clos::new) {
            Some(c) if agrees(&c, &table, adj, host_nodes, cfg!(debug_assertions)) => Routes {
                clos: Some(c),
                ..Routes::default()
            },
            _ => table,
        }
    }

    /// Whether next hops are computed from the topology's structure.
    pub fn is_structured(&self) -> bool {
        self.clos.is_some()
    }

    /// Builds the table. `adj[node]` lists `(egress port, peer node)`;
    /// `host_nodes[h]` is the node of host `h`.
    pub fn build(adj: &[Vec<(u32, u32)>], host_nodes: &[u32]) -> Routes {
        let n = adj.len();
        let mut is_host = vec![false; n];
        for &h in host_nodes {
            is_host[h as usize] = true;
        }
        // a single-homed host is reached through its switch: the BFS from
        // that switch serves every host of the rack
        let root_of = |h: u32| match adj[h as usize].as_slice() {
            [(_, sw)] if !is_host[*sw as usize] => *sw,
            _ => h,
        };
        let mut per_node: Vec<Vec<Prefix>> = vec![Vec::new(); n];
        let mut ports: Vec<u32> = Vec::new();
        let mut bfs = Bfs::new(n);
        let mut root = u32::MAX;
        // the port list of every node towards the current root
        let mut toward: Vec<(u32, u32)> = vec![(0, 0); n];
        let mut scratch: Vec<u32> = Vec::new();
        let mut set: Vec<u32> = Vec::new();
        let mut special = vec![false; n];
        let mut down: Vec<(u32, usize, u32)> = Vec::new();
        // hosts that share a root (a rack of single-homed hosts, numbered
        // consecutively) see the same port list at every node but the
        // rack's switch and its hosts: one pass over the nodes per rack,
        // then those few per host (was a pass over every node per host,
        // hosts x nodes: 5 M steps at k = 20, 14 M at k = 24)
        let mut h = 0;
        while h < host_nodes.len() {
            let first = host_nodes[h];
            let r = root_of(first);
            let mut end = h + 1;
            if r != first {
                while end < host_nodes.len() && root_of(host_nodes[end]) == r {
                    end += 1;
                }
            }
            if r != root {
                root = r;
                bfs.run(adj, &is_host, r);
                scratch.clear();
                for (node, list) in adj.iter().enumerate() {
                    let d = bfs.dist[node];
                    let start = scratch.len() as u32;
                    if d != u32::MAX && d > 0 {
                        for &(p, peer) in list {
                            let pd = bfs.dist[peer as usize];
                            if pd != u32::MAX
                                && pd + 1 == d
                                && (!is_host[peer as usize] || peer == first)
                            {
                                scratch.push(p);
                            }
                        }
                    }
                    toward[node] = (start, scratch.len() as u32 - start);
                }
            }
            let rack = &host_nodes[h..end];
            special[r as usize] = true;
            for &x in rack {
                special[x as usize] = true;
            }
            for node in 0..n {
                if !special[node] {
                    let (s, l) = toward[node];
                    let set = &scratch[s as usize..(s + l) as usize];
                    push_entry(&mut per_node[node], &mut ports, h as u32, set);
                }
            }
            // the rack's hosts: "up" for the others, nothing for itself
            for (i, &x) in rack.iter().enumerate() {
                if x == r {
                    continue; // its own root: handled below
                }
                let (s, l) = toward[x as usize];
                let up = &scratch[s as usize..(s + l) as usize];
                let at = (h + i) as u32;
                let entries = &mut per_node[x as usize];
                if i > 0 {
                    push_entry(entries, &mut ports, h as u32, up);
                }
                push_entry(entries, &mut ports, at, &[]);
                if h + i + 1 < end {
                    push_entry(entries, &mut ports, at + 1, up);
                }
            }
            if rack == [r] {
                // a host that is its own root: nothing to itself
                push_entry(&mut per_node[r as usize], &mut ports, h as u32, &[]);
            } else {
                // the rack's switch: the links down to each host, in the
                // switch's port order
                down.clear();
                down.extend(
                    adj[r as usize]
                        .iter()
                        .enumerate()
                        .filter(|&(_, &(_, peer))| is_host[peer as usize])
                        .map(|(i, &(p, peer))| (peer, i, p)),
                );
                down.sort_unstable();
                for (i, &dst) in rack.iter().enumerate() {
                    let from = down.partition_point(|d| d.0 < dst);
                    set.clear();
                    set.extend(down[from..].iter().take_while(|d| d.0 == dst).map(|d| d.2));
                    push_entry(&mut per_node[r as usize], &mut ports, (h + i) as u32, &set);
                }
            }
            special[r as usize] = false;
            for &x in rack {
                special[x as usize] = false;
            }
            h = end;
        }
        let mut node_entries = Vec::with_capacity(n + 1);
        let mut entries = Vec::new();
        node_entries.push(0);
        for list in per_node {
            entries.extend(list);
            node_entries.push(entries.len() as u32);
        }
        ports.shrink_to_fit();
        let mut routes = Routes {
            node_entries,
            entries,
            ports,
            clos: None,
            dense: Vec::new(),
            hosts: 0,
        };
        routes.index_densely(host_nodes.len(), DENSE_MAX);
        routes
    }

    /// Fills the dense `(node, host) -> entry` index if the table has at
    /// most `max` such pairs (drops it otherwise).
    fn index_densely(&mut self, hosts: usize, max: usize) {
        self.dense = Vec::new();
        self.hosts = 0;
        let nodes = self.node_entries.len().saturating_sub(1);
        if nodes.checked_mul(hosts).is_none_or(|n| n > max)
            || hosts > u32::MAX as usize
            || self.entries.len() >= ONE_PORT as usize
            || self.ports.len() >= (ONE_PORT - 1) as usize
        {
            return;
        }
        let mut dense = Vec::with_capacity(nodes * hosts);
        for node in 0..nodes {
            for h in 0..hosts as u32 {
                dense.push(match self.search_entry(node as u32, h) {
                    None => u32::MAX,
                    Some(i) if self.entries[i as usize].len == 1 => {
                        ONE_PORT | self.entries[i as usize].start
                    }
                    Some(i) => i,
                });
            }
        }
        self.dense = dense;
        self.hosts = hosts as u32;
    }

    /// Equal-cost egress ports at `node` towards host `dst` (empty if none).
    #[inline]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'_> {
        match &self.clos {
            Some(c) => c.next_hops(node, dst),
            None => Hops::List(self.table_hops(node, dst)),
        }
    }

    /// The one egress port at `node` towards `dst`: none, the only one,
    /// or port `choose(n)` of `n` (`choose` is called only when there are
    /// several, and must return an index below `n`). What a switch does
    /// per packet, without building a [`Hops`] first.
    #[inline]
    pub fn pick(&self, node: u32, dst: u32, choose: impl FnOnce(usize) -> usize) -> Option<u32> {
        let hops = match &self.clos {
            Some(c) => c.next_hops(node, dst),
            None => match self.one_port_at(node, dst) {
                Some(i) => return Some(self.ports[i]),
                None => Hops::List(self.table_hops(node, dst)),
            },
        };
        match hops {
            Hops::Stride { first, step, len } => match len {
                0 => None,
                1 => Some(first),
                n => {
                    let i = choose(n as usize);
                    assert!(i < n as usize, "hop {i} of {n}");
                    Some(first + step * i as u32)
                }
            },
            Hops::List(l) => match l.len() {
                0 => None,
                1 => Some(l[0]),
                n => Some(l[choose(n)]),
            },
        }
    }

    /// Where the dense index stores `(node, dst)`'s only port: its index
    /// in `ports` (`None`: several ports, no entry, or no dense index).
    #[inline(always)]
    fn one_port_at(&self, node: u32, dst: u32) -> Option<usize> {
        let at = node as usize * self.hosts as usize + dst as usize;
        match self.dense.get(at) {
            Some(&v) if dst < self.hosts && v & ONE_PORT != 0 && v != u32::MAX => {
                Some((v & !ONE_PORT) as usize)
            }
            _ => None,
        }
    }

    #[inline]
    fn table_hops(&self, node: u32, dst: u32) -> &[u32] {
        let at = node as usize * self.hosts as usize + dst as usize;
        let entry = match self.dense.get(at) {
            Some(&v) if dst < self.hosts => {
                if v & ONE_PORT != 0 && v != u32::MAX {
                    let i = (v & !ONE_PORT) as usize;
                    return &self.ports[i..i + 1];
                }
                Some(v).filter(|&i| i != u32::MAX)
            }
            _ => self.search_entry(node, dst),
        };
        match entry.map(|i| self.entries[i as usize]) {
            Some(e) => &self.ports[e.start as usize..(e.start + e.len) as usize],
            None => &[],
        }
    }

    /// The index in `entries` of the prefix of `node` that covers `dst`
    /// (the last that starts at or below it), by binary search.
    fn search_entry(&self, node: u32, dst: u32) -> Option<u32> {
        let lo = self.node_entries[node as usize] as usize;
        let hi = self.node_entries[node as usize + 1] as usize;
        let i = self.entries[lo..hi].partition_point(|e| e.first <= dst);
        i.checked_sub(1).map(|i| (lo + i) as u32)
    }

    /// Whether lookups read the dense index (see [`DENSE_MAX`]).
    pub fn is_dense(&self) -> bool {
        !self.dense.is_empty()
    }

    /// Prefix entries stored over all nodes (0 for structured routes).
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }
}

/// Whether `clos` gives the table's ports, in the table's order, at every
/// switch for every destination: `all` compares every (switch, host) pair;
/// otherwise one host per rack at every switch and each host at the
/// switches it links to (the rest follow: both give every host of a rack
/// the same ports at any other switch), so that the check costs switches x
/// racks + hosts, not switches x hosts. Also checks the hosts' node ids
/// and links, and each host's row (every destination if `all`).
fn agrees(clos: &Clos, table: &Routes, adj: &[Vec<(u32, u32)>], hosts: &[u32], all: bool) -> bool {
    if adj.len() != clos.node_count() {
        return false;
    }
    let mut is_host = vec![false; adj.len()];
    let mut first_of_rack = Vec::new();
    for (g, node, rack) in clos.hosts() {
        if hosts.get(g as usize) != Some(&node)
            || adj[node as usize].first().map(|a| a.0) != Some(2 * g)
        {
            return false;
        }
        is_host[node as usize] = true;
        if first_of_rack.last().is_none_or(|&(_, r)| r != rack) {
            first_of_rack.push((g, rack));
        }
    }
    if hosts.len() != is_host.iter().filter(|&&h| h).count() {
        return false;
    }
    let same = |node: u32, dst: u32| {
        let (a, b) = (clos.next_hops(node, dst), table.table_hops(node, dst));
        a.len() == b.len() && b.iter().enumerate().all(|(i, &p)| a.at(i) == p)
    };
    for node in 0..adj.len() as u32 {
        if is_host[node as usize] {
            continue;
        }
        let ok = if all {
            (0..hosts.len() as u32).all(|g| same(node, g))
        } else {
            first_of_rack.iter().all(|&(g, _)| same(node, g))
        };
        if !ok {
            return false;
        }
    }
    // each host at its own switch(es), and each host's own row: itself,
    // a host of its rack and one of another rack (a host sends everything
    // else by its NIC in both, unless another rack is unreachable)
    clos.hosts().all(|(g, node, rack)| {
        let other = first_of_rack.iter().find(|&&(_, r)| r != rack);
        let own = first_of_rack.iter().find(|&&(_, r)| r == rack);
        adj[node as usize].iter().all(|&(_, sw)| same(sw, g))
            && same(node, g)
            && if all {
                (0..hosts.len() as u32).all(|d| same(node, d))
            } else {
                [other, own]
                    .into_iter()
                    .flatten()
                    .all(|&(d, _)| same(node, d))
            }
    })
}

/// Appends "destinations from host `first` on leave by `set`" to a node's
/// entries, unless its last entry already says so.
fn push_entry(entries: &mut Vec<Prefix>, ports: &mut Vec<u32>, first: u32, set: &[u32]) {
    let same = entries
        .last()
        .is_some_and(|e| ports[e.start as usize..(e.start + e.len) as usize] == *set);
    if !same {
        entries.push(Prefix {
            first,
            start: ports.len() as u32,
            len: set.len() as u32,
        });
        ports.extend_from_slice(set);
    }
}

/// Breadth-first hop counts towards one root (hosts other than the root
/// do not forward).
struct Bfs {
    dist: Vec<u32>,
    queue: VecDeque<u32>,
    radj: Vec<Vec<u32>>,
}

impl Bfs {
    fn new(n: usize) -> Bfs {
        Bfs {
            dist: vec![u32::MAX; n],
            queue: VecDeque::new(),
            radj: Vec::new(),
        }
    }

    fn run(&mut self, adj: &[Vec<(u32, u32)>], is_host: &[bool], root: u32) {
        if self.radj.is_empty() {
            self.radj = vec![Vec::new(); adj.len()];
            for (a, list) in adj.iter().enumerate() {
                for &(_, b) in list {
                    self.radj[b as usize].push(a as u32);
                }
            }
        }
        self.dist.iter_mut().for_each(|d| *d = u32::MAX);
        self.dist[root as usize] = 0;
        self.queue.push_back(root);
        while let Some(x) = self.queue.pop_front() {
            for &y in &self.radj[x as usize] {
                if self.dist[y as usize] == u32::MAX {
                    self.dist[y as usize] = self.dist[x as usize] + 1;
                    if !is_host[y as usize] {
                        self.queue.push_back(y);
                    }
                }
            }
        }
    }
}

/// Mixes a flow hash with a node id so that consecutive switches do not make
/// correlated choices (hash polarisation).
pub fn ecmp_pick(hash: u32, node: u32, n: usize) -> usize {
    let mut z = ((hash as u64) << 32 | node as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z as u128 * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests;
