//! Shortest-path ECMP routing tables, computed once from the topology.
//!
//! For every node and destination host the table lists the egress ports on
//! a shortest path; a switch picks one by flow hash (ECMP) or at random per
//! packet (spraying). Works for any topology the builder can express.

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

/// Next-hop table: `(node, dst host) -> equal-cost egress ports`.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    hosts: usize,
    /// `(start, len)` into `ports`, indexed by `node * hosts + dst`.
    index: Vec<(u32, u16)>,
    ports: Vec<u32>,
}

impl Routes {
    /// Builds the table. `adj[node]` lists `(egress port, peer node)`;
    /// `host_nodes[h]` is the node of host `h`.
    pub fn build(adj: &[Vec<(u32, u32)>], host_nodes: &[u32]) -> Routes {
        let n = adj.len();
        let hosts = host_nodes.len();
        let mut index = vec![(0u32, 0u16); n * hosts];
        let mut ports = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut bfs = VecDeque::new();
        // reverse adjacency for BFS from the destination
        let mut is_host = vec![false; n];
        for &h in host_nodes {
            is_host[h as usize] = true;
        }
        let mut radj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, list) in adj.iter().enumerate() {
            for &(_, b) in list {
                radj[b as usize].push(a as u32);
            }
        }
        for (h, &dst) in host_nodes.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst as usize] = 0;
            bfs.push_back(dst);
            while let Some(x) = bfs.pop_front() {
                for &y in &radj[x as usize] {
                    if dist[y as usize] == u32::MAX {
                        dist[y as usize] = dist[x as usize] + 1;
                        // hosts other than src/dst do not forward
                        if !is_host[y as usize] {
                            bfs.push_back(y);
                        }
                    }
                }
            }
            for (node, list) in adj.iter().enumerate() {
                if node as u32 == dst || dist[node] == u32::MAX {
                    continue;
                }
                let start = ports.len() as u32;
                for &(p, peer) in list {
                    if dist[peer as usize] != u32::MAX && dist[peer as usize] + 1 == dist[node] {
                        ports.push(p);
                    }
                }
                index[node * hosts + h] = (start, (ports.len() as u32 - start) as u16);
            }
        }
        Routes {
            hosts,
            index,
            ports,
        }
    }

    /// Equal-cost egress ports at `node` towards host `dst` (empty if none).
    pub fn next_hops(&self, node: u32, dst: u32) -> &[u32] {
        let (s, l) = self.index[node as usize * self.hosts + dst as usize];
        &self.ports[s as usize..s as usize + l as usize]
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
mod tests {
    use super::*;

    #[test]
    fn ecmp_pick_is_deterministic_and_spreads() {
        let mut counts = [0u32; 4];
        for h in 0..4000u32 {
            let i = ecmp_pick(h.wrapping_mul(2654435761), 7, 4);
            assert_eq!(i, ecmp_pick(h.wrapping_mul(2654435761), 7, 4));
            counts[i] += 1;
        }
        for c in counts {
            assert!((800..1200).contains(&c), "{counts:?}");
        }
    }
}
