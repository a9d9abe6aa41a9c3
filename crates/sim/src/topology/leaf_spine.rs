//! Two-tier leaf-spine with oversubscription.

use super::{Fabric, Wiring};
use crate::fabric::clos::Layout;
use crate::fabric::link::LinkSpec;
use approxnet_proto::units::Rate;

/// Two-tier leaf-spine: every leaf connects to every spine. The uplink rate
/// is chosen so that `hosts_per_leaf * host rate : spines * uplink rate`
/// equals `oversubscription` (seed 001 section 3.1: 4 spines, 8 leaves,
/// 16 hosts per leaf, 40 Gbps everywhere gives 4:1).
pub fn leaf_spine(
    b: &mut impl Wiring,
    f: &Fabric,
    spines: u32,
    leaves: u32,
    hosts_per_leaf: u32,
    oversubscription: f64,
) {
    b.layout(Layout::LeafSpine {
        spines,
        leaves,
        hosts_per_leaf,
    });
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
