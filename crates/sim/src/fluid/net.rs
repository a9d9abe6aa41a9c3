//! The network as the flow-level mode sees it: link capacities, the same
//! shortest-path ECMP routes as the packet mode, and per-path latency.

use crate::fabric::routing::{ecmp_pick, Routes};
use crate::topology::Graph;

/// Per-hop latency parameters (seed 004 §5.1.1: 60 ns switches, 25 ns
/// links, about 100 ns of FEC per hop when FEC is on).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    /// Delay of each switch crossed, ns.
    pub switch_ns: f64,
    /// FEC delay added per link crossed, ns.
    pub fec_ns: f64,
}

/// Links, routes and latency of a topology.
#[derive(Clone, Debug)]
pub struct FluidNet {
    /// The topology.
    pub graph: Graph,
    /// Capacity of each egress port, bytes per ns.
    pub capacity: Vec<f64>,
    /// Propagation delay of each port, ns.
    pub delay_ns: Vec<f64>,
    /// Next hops.
    pub routes: Routes,
    /// Per-hop latency.
    pub latency: Latency,
}

/// A flow's path: its links and its unloaded latency.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// Egress ports crossed, in order.
    pub links: Vec<u32>,
    /// Propagation + switch + FEC delay over the path, ns.
    pub latency_ns: f64,
}

impl FluidNet {
    /// Builds the routes of `graph`.
    pub fn new(graph: Graph, latency: Latency) -> FluidNet {
        let routes = graph.routes();
        let ports = graph.port_count() as u32;
        let capacity = (0..ports)
            .map(|p| graph.port_link(p).rate.as_bps() / 8e9)
            .collect();
        let delay_ns = (0..ports)
            .map(|p| graph.port_link(p).delay.as_nanos() as f64)
            .collect();
        FluidNet {
            graph,
            capacity,
            delay_ns,
            routes,
            latency,
        }
    }

    /// Number of hosts.
    pub fn hosts(&self) -> u32 {
        self.graph.hosts.len() as u32
    }

    /// The path of a flow from host `src` to host `dst` (`src != dst`):
    /// at every node with several equal-cost next hops one is picked by a
    /// hash of `(src, dst)` mixed with the node id, as the packet mode's
    /// flow-hash ECMP does, so all flows of a host pair share one path.
    pub fn path(&self, src: u32, dst: u32) -> Path {
        let hash = pair_hash(src, dst);
        let mut node = self.graph.hosts[src as usize];
        let target = self.graph.hosts[dst as usize];
        let mut links = Vec::with_capacity(8);
        let mut latency = 0.0;
        while node != target {
            let hops = self.routes.next_hops(node, dst);
            debug_assert!(!hops.is_empty(), "no route {src} -> {dst}");
            if hops.is_empty() {
                break;
            }
            let p = hops.at(if hops.len() == 1 {
                0
            } else {
                ecmp_pick(hash, node, hops.len())
            });
            links.push(p);
            latency += self.delay_ns[p as usize] + self.latency.fec_ns;
            if !self.graph.is_host[node as usize] {
                latency += self.latency.switch_ns;
            }
            node = self.graph.port_ends(p).1;
        }
        Path {
            links,
            latency_ns: latency,
        }
    }

    /// `node->peer` of a port.
    pub fn port_name(&self, p: u32) -> String {
        let (a, b) = self.graph.port_ends(p);
        format!(
            "{}->{}",
            self.graph.names[a as usize], self.graph.names[b as usize]
        )
    }
}

fn pair_hash(src: u32, dst: u32) -> u32 {
    let mut z = ((src as u64) << 32 | dst as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z ^= z >> 29;
    (z >> 32) as u32
}
