//! Routes computed from a fat-tree's or a leaf-spine's structure instead of
//! looked up in a table.
//!
//! The presets number nodes and ports in a fixed order (hosts rack by
//! rack, each link's two ports consecutive: see `topology::fat_tree` and
//! `topology::leaf_spine`), so every shortest-path next-hop set is an
//! arithmetic progression of port ids: a rack switch sends a packet for
//! one of its own hosts down that host's link (port `2 g + 1` after the
//! preset's first port, `g` the host's index) and any other up to every
//! switch above it; a pod (aggregation) switch sends down to the
//! destination's rack when it is in its pod, else up to every core it
//! links to; a top switch (core, spine) sends down to the destination's
//! pod. A hop costs one read of a 4-byte host record (its rack and pod)
//! and one of a 28-byte switch record, both in tables that grow linearly
//! in hosts (at k = 20: 8 KB and 14 KB), and a few integer operations —
//! no search (the prefix table's binary search cost ~75 instructions a
//! switch hop).
//!
//! [`Clos::new`] is only a candidate: [`super::routing::Routes`] keeps it
//! only if it gives, for every switch and destination, the same ports in
//! the same order as the breadth-first table built from the same
//! adjacency, so a network wired differently (another preset, a link added
//! by hand) falls back to the table and routes are unchanged.

use super::routing::Hops;

/// The structure a preset declares (through
/// [`crate::topology::Wiring::layout`]) before wiring its nodes and links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `topology::fat_tree(k, hosts)`.
    FatTree {
        /// Arity.
        k: u32,
        /// Hosts, spread rack by rack over the edge switches.
        hosts: u32,
    },
    /// `topology::leaf_spine(spines, leaves, hosts_per_leaf, _)`.
    LeafSpine {
        /// Spine switches.
        spines: u32,
        /// Leaf switches.
        leaves: u32,
        /// Hosts per leaf.
        hosts_per_leaf: u32,
    },
}

/// Where a switch sits and what it routes by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    /// Edge / leaf: its own hosts down, everything else up.
    Rack,
    /// Aggregation: its pod's racks down, everything else up.
    Pod,
    /// Core / spine: down towards the destination's pod.
    Top,
}

/// One switch's routing record: the `up` progression (every upper
/// neighbour) and the `down` one, indexed by the destination's rack (pod
/// tier) or pod (top tier).
#[derive(Clone, Copy, Debug)]
struct Switch {
    tier: Tier,
    /// Its rack (rack tier) or pod (pod tier).
    key: u32,
    up_first: u32,
    up_step: u32,
    up_len: u32,
    /// Down port for rack / pod `x`: `down_base + down_step * x` (wrapping).
    down_base: u32,
    down_step: u32,
}

/// Arithmetic next hops of one preset wired onto an empty builder (its
/// nodes and ports are the whole network's, numbered from 0).
#[derive(Clone, Debug)]
pub struct Clos {
    /// Node id of host 0 (hosts are consecutive nodes in both presets).
    host_node: u32,
    /// Hosts; host `g`'s NIC is port `2 g`, its rack switch's port down
    /// to it `2 g + 1` (the hosts' links come first).
    hosts: u32,
    /// Per host: its rack in the low 16 bits, its pod in the high 16.
    place: Vec<u32>,
    /// Per switch, in node order with the hosts' block left out.
    switches: Vec<Switch>,
    /// Nodes the layout covers.
    nodes: u32,
}

impl Clos {
    /// The candidate routes of `layout` wired onto an empty builder;
    /// `None` when a size overflows the records (65,536 racks or more, or
    /// ids past `u32`).
    pub fn new(layout: Layout) -> Option<Clos> {
        match layout {
            Layout::FatTree { k, hosts } => fat_tree(k, hosts),
            Layout::LeafSpine {
                spines,
                leaves,
                hosts_per_leaf,
            } => leaf_spine(spines, leaves, hosts_per_leaf),
        }
    }

    /// Nodes the layout wires.
    pub fn node_count(&self) -> usize {
        self.nodes as usize
    }

    /// Equal-cost egress ports at `node` towards host `dst` (empty for a
    /// node outside the layout or a host out of range).
    #[inline]
    pub fn next_hops(&self, node: u32, dst: u32) -> Hops<'static> {
        let Some(&place) = self.place.get(dst as usize) else {
            return Hops::NONE;
        };
        let h = node.wrapping_sub(self.host_node);
        if h < self.hosts {
            // a host: its NIC, unless it is the destination
            return if h == dst {
                Hops::NONE
            } else {
                Hops::one(2 * h)
            };
        }
        let s = if node >= self.host_node {
            node - self.hosts
        } else {
            node
        };
        let Some(sw) = self.switches.get(s as usize) else {
            return Hops::NONE;
        };
        let (rack, pod) = (place & 0xffff, place >> 16);
        let down = match sw.tier {
            Tier::Rack if rack == sw.key => return Hops::one(2 * dst + 1),
            Tier::Rack => None,
            Tier::Pod if pod == sw.key => Some(rack),
            Tier::Pod => None,
            Tier::Top => Some(pod),
        };
        match down {
            Some(x) => Hops::one(sw.down_base.wrapping_add(sw.down_step.wrapping_mul(x))),
            None => Hops::Stride {
                first: sw.up_first,
                step: sw.up_step,
                len: sw.up_len,
            },
        }
    }

    /// `(host, its node, its rack)` for every host (for the check
    /// against the table).
    pub fn hosts(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.place
            .iter()
            .enumerate()
            .map(|(g, &p)| (g as u32, self.host_node + g as u32, p & 0xffff))
    }
}

/// `topology::fat_tree`'s order: per pod its k/2 edges then k/2
/// aggregations, then the (k/2)^2 cores, then the hosts edge by edge;
/// links: every host's, then per pod its edge-aggregation links (edge
/// major) and its aggregation-core links (aggregation major).
fn fat_tree(k: u32, hosts: u32) -> Option<Clos> {
    let h = k / 2;
    let racks = k.checked_mul(h)?;
    if k == 0 || racks >= 1 << 16 {
        return None;
    }
    let hh = h.checked_mul(h)?;
    let switches_n = k.checked_mul(k)?.checked_add(hh)?;
    // first port of the switch links, and of pod p's block (4 h^2 ports)
    let links = hosts.checked_mul(2)?;
    let pod_block = hh.checked_mul(4)?;
    links.checked_add(pod_block.checked_mul(k)?)?;
    let block = |p: u32| links + p * pod_block;
    let mut switches = Vec::with_capacity(switches_n as usize);
    for p in 0..k {
        for i in 0..h {
            switches.push(Switch {
                tier: Tier::Rack,
                key: p * h + i,
                up_first: block(p) + 2 * i * h,
                up_step: 2,
                up_len: h,
                down_base: 0,
                down_step: 0,
            });
        }
        for j in 0..h {
            switches.push(Switch {
                tier: Tier::Pod,
                key: p,
                up_first: block(p) + 2 * hh + 2 * j * h,
                up_step: 2,
                up_len: h,
                // rack e = p h + i: block(p) + 2 (i h + j) + 1
                down_base: (block(p) + 2 * j + 1).wrapping_sub(2 * h * p * h),
                down_step: 2 * h,
            });
        }
    }
    for c in 0..hh {
        switches.push(Switch {
            tier: Tier::Top,
            key: 0,
            up_first: 0,
            up_step: 0,
            up_len: 0,
            down_base: links + 2 * hh + 2 * c + 1,
            down_step: pod_block,
        });
    }
    let (base, extra) = (hosts / racks, hosts % racks);
    let mut place = Vec::with_capacity(hosts as usize);
    for e in 0..racks {
        for _ in 0..base + u32::from(e < extra) {
            place.push((e / h) << 16 | e);
        }
    }
    Some(Clos {
        host_node: switches_n,
        hosts,
        place,
        switches,
        nodes: switches_n.checked_add(hosts)?,
    })
}

/// `topology::leaf_spine`'s order: the leaves, the hosts leaf by leaf,
/// then per spine the spine and its links to every leaf; links: every
/// host's, then the leaf-spine links (spine major). A leaf is its own pod.
fn leaf_spine(spines: u32, leaves: u32, per_leaf: u32) -> Option<Clos> {
    let hosts = leaves.checked_mul(per_leaf)?;
    if leaves >= 1 << 16 {
        return None;
    }
    let links = hosts.checked_mul(2)?;
    links.checked_add(spines.checked_mul(leaves)?.checked_mul(2)?)?;
    let mut switches = Vec::with_capacity((leaves + spines) as usize);
    for l in 0..leaves {
        switches.push(Switch {
            tier: Tier::Rack,
            key: l,
            up_first: links + 2 * l,
            up_step: 2 * leaves,
            up_len: spines,
            down_base: 0,
            down_step: 0,
        });
    }
    for s in 0..spines {
        switches.push(Switch {
            tier: Tier::Top,
            key: 0,
            up_first: 0,
            up_step: 0,
            up_len: 0,
            down_base: links + 2 * s * leaves + 1,
            down_step: 2,
        });
    }
    let place = (0..hosts).map(|g| (g / per_leaf) * 0x1_0001).collect();
    Some(Clos {
        host_node: leaves,
        hosts,
        place,
        switches,
        nodes: leaves.checked_add(hosts)?.checked_add(spines)?,
    })
}
