//! Topology presets: dumbbell, leaf-spine with oversubscription, k-ary
//! fat-tree. Each is a few calls on [`NetworkBuilder`]; add more the same way.
//!
//! Hosts are numbered in the order they are added, which the presets fix:
//! the dumbbell's senders come first, then its receivers; leaf-spine and
//! fat-tree hosts go rack by rack.

use crate::fabric::link::LinkSpec;
use crate::fabric::NetworkBuilder;
use approxnet_proto::units::Rate;

/// Buffers and links shared by the presets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    /// Host-to-switch links.
    pub host_link: LinkSpec,
    /// Switch-to-switch links (rate may be overridden by a preset).
    pub core_link: LinkSpec,
    /// Shared buffer of every switch, bytes.
    pub switch_buffer: u64,
}

/// N senders and M receivers. With `bottleneck` = `None`, all hosts hang off
/// one switch (the ns-3 validation incast); otherwise senders sit on a left
/// switch, receivers on a right one, joined by the bottleneck link.
pub fn dumbbell(
    b: &mut NetworkBuilder,
    f: &Fabric,
    senders: u32,
    receivers: u32,
    bottleneck: Option<LinkSpec>,
) {
    let hosts: Vec<u32> = (0..senders + receivers).map(|_| b.add_host()).collect();
    match bottleneck {
        None => {
            let sw = b.add_switch("sw0", f.switch_buffer);
            for &h in &hosts {
                b.connect(h, sw, f.host_link);
            }
        }
        Some(mid) => {
            let l = b.add_switch("left", f.switch_buffer);
            let r = b.add_switch("right", f.switch_buffer);
            for (i, &h) in hosts.iter().enumerate() {
                let sw = if (i as u32) < senders { l } else { r };
                b.connect(h, sw, f.host_link);
            }
            b.connect(l, r, mid);
        }
    }
}

/// Two-tier leaf-spine: every leaf connects to every spine. The uplink rate
/// is chosen so that `hosts_per_leaf * host rate : spines * uplink rate`
/// equals `oversubscription` (seed 001 section 3.1: 4 spines, 8 leaves,
/// 16 hosts per leaf, 40 Gbps everywhere gives 4:1).
pub fn leaf_spine(
    b: &mut NetworkBuilder,
    f: &Fabric,
    spines: u32,
    leaves: u32,
    hosts_per_leaf: u32,
    oversubscription: f64,
) {
    let up_bps =
        f.host_link.rate.as_bps() * hosts_per_leaf as f64 / (spines as f64 * oversubscription);
    let uplink = LinkSpec {
        rate: Rate::bps(up_bps),
        ..f.core_link
    };
    let mut leaf_ids = Vec::new();
    for l in 0..leaves {
        let leaf = b.add_switch(format!("leaf{l}"), f.switch_buffer);
        leaf_ids.push(leaf);
    }
    // hosts first in rack order so host ids are contiguous per rack
    let mut per_leaf = Vec::new();
    for _ in 0..leaves {
        per_leaf.push(
            (0..hosts_per_leaf)
                .map(|_| b.add_host())
                .collect::<Vec<_>>(),
        );
    }
    for (l, hosts) in per_leaf.iter().enumerate() {
        for &h in hosts {
            b.connect(h, leaf_ids[l], f.host_link);
        }
    }
    for s in 0..spines {
        let spine = b.add_switch(format!("spine{s}"), f.switch_buffer);
        for &leaf in &leaf_ids {
            b.connect(leaf, spine, uplink);
        }
    }
}

/// k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation
/// switches, (k/2)^2 cores. `hosts` hosts are spread round-robin over the
/// k^2/2 edge switches (the full tree has k^3/4; seed 000 section 7.1 uses
/// a k = 12 tree with 192 hosts, fewer than the full 432).
pub fn fat_tree(b: &mut NetworkBuilder, f: &Fabric, k: u32, hosts: u32) {
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
