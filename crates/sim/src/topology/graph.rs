//! A plain graph of nodes and full-duplex links: what the flow-level mode
//! and the hop-count report need, without the packet mode's queues and
//! buffers. Port numbering is the [`NetworkBuilder`](crate::fabric::NetworkBuilder)'s:
//! link `i` joining `a` and `b` is egress port `2 i` (a -> b) and `2 i + 1`
//! (b -> a), so routes computed on either are the same.

use super::Wiring;
use crate::fabric::link::LinkSpec;
use crate::fabric::routing::Routes;

/// Nodes and links, in the order a preset added them.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Node names (`h<i>` for hosts).
    pub names: Vec<String>,
    /// Whether each node is a host.
    pub is_host: Vec<bool>,
    /// Node id of each host, in host order.
    pub hosts: Vec<u32>,
    /// Full-duplex links `(a, b, spec)`.
    pub links: Vec<(u32, u32, LinkSpec)>,
}

impl Wiring for Graph {
    fn add_host(&mut self) -> u32 {
        let id = self.names.len() as u32;
        self.names.push(format!("h{}", self.hosts.len()));
        self.is_host.push(true);
        self.hosts.push(id);
        id
    }
    fn add_switch(&mut self, name: String, _shared_buffer: u64) -> u32 {
        let id = self.names.len() as u32;
        self.names.push(name);
        self.is_host.push(false);
        id
    }
    fn connect(&mut self, a: u32, b: u32, link: LinkSpec) {
        self.links.push((a, b, link));
    }
}

impl Graph {
    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.names.len()
    }

    /// Number of directed ports (two per link).
    pub fn port_count(&self) -> usize {
        2 * self.links.len()
    }

    /// The node a port leaves and the node it reaches.
    pub fn port_ends(&self, port: u32) -> (u32, u32) {
        let (a, b, _) = self.links[(port / 2) as usize];
        if port.is_multiple_of(2) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// The link behind a port.
    pub fn port_link(&self, port: u32) -> LinkSpec {
        self.links[(port / 2) as usize].2
    }

    /// `adj[node]` = `(egress port, peer node)`, in the order the ports were made.
    pub fn adjacency(&self) -> Vec<Vec<(u32, u32)>> {
        let mut adj = vec![Vec::new(); self.node_count()];
        for (i, &(a, b, _)) in self.links.iter().enumerate() {
            adj[a as usize].push((2 * i as u32, b));
            adj[b as usize].push((2 * i as u32 + 1, a));
        }
        adj
    }

    /// Shortest-path ECMP routes, as the packet mode computes them.
    pub fn routes(&self) -> Routes {
        Routes::build(&self.adjacency(), &self.hosts)
    }

    /// Nodes not reachable from host 0 (empty when the graph is connected
    /// or has no host).
    pub fn unreachable(&self) -> Vec<u32> {
        let Some(&start) = self.hosts.first() else {
            return Vec::new();
        };
        let adj = self.adjacency();
        let mut seen = vec![false; self.node_count()];
        let mut stack = vec![start];
        seen[start as usize] = true;
        while let Some(x) = stack.pop() {
            for &(_, y) in &adj[x as usize] {
                if !seen[y as usize] {
                    seen[y as usize] = true;
                    stack.push(y);
                }
            }
        }
        (0..self.node_count() as u32)
            .filter(|&n| !seen[n as usize])
            .collect()
    }
}
