//! k-ary fat-tree (three tiers of k-port switches).

use super::{Fabric, Wiring};
use crate::fabric::clos::Layout;

/// k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation
/// switches, (k/2)^2 cores. `hosts` hosts are spread round-robin over the
/// k^2/2 edge switches (the full tree has k^3/4; seed 000 section 7.1 uses
/// a k = 12 tree with 192 hosts, fewer than the full 432).
pub fn fat_tree(b: &mut impl Wiring, f: &Fabric, k: u32, hosts: u32) {
    b.layout(Layout::FatTree { k, hosts });
    let half = k / 2;
    let edges_n = k * half;
    let mut edges = Vec::new();
    let mut aggs = Vec::new();
    for p in 0..k {
        for i in 0..half {
            edges.push(b.add_switch(format!("edge{p}.{i}"), f.switch_buffer));
        }
        for i in 0..half {
            aggs.push(b.add_switch(format!("agg{p}.{i}"), f.switch_buffer));
        }
    }
    let cores: Vec<u32> = (0..half * half)
        .map(|c| b.add_switch(format!("core{c}"), f.switch_buffer))
        .collect();
    // host h goes to edge (h mod edges) ... but keep rack-contiguous ids:
    // edge e gets hosts_on(e) consecutive hosts.
    for e in 0..edges_n {
        let n = hosts / edges_n + u32::from(e < hosts % edges_n);
        for _ in 0..n {
            let h = b.add_host();
            b.connect(h, edges[e as usize], f.host_link);
        }
    }
    for p in 0..k {
        for i in 0..half {
            let e = edges[(p * half + i) as usize];
            for j in 0..half {
                b.connect(e, aggs[(p * half + j) as usize], f.core_link);
            }
        }
        for j in 0..half {
            let a = aggs[(p * half + j) as usize];
            for c in 0..half {
                b.connect(a, cores[(j * half + c) as usize], f.core_link);
            }
        }
    }
}
