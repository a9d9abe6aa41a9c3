//! Three-tier spine-leaf (seed 003 §8: 54 spine, 102 leaf and 108
//! top-of-rack switches, 18 servers per rack, 1,944 servers, 56 Gbps).
//!
//! Seed 003 gives the switch counts but not the wiring. Ours: top-of-rack
//! switch `t` sends its `tor_uplinks` uplinks to leaves
//! `(t * tor_uplinks + i) mod leaves`, leaf `l` its `leaf_uplinks` uplinks to
//! spines `(l * leaf_uplinks + j) mod spines`. With seed 003's counts and
//! 18 + 18 uplinks (36-port switches, as the paper's 56 Gbps InfiniBand
//! ones), this gives three planes of 34 leaves x 18 spines, every rack
//! reaching 6 leaves of each plane: 18 down and 18 up at a rack (no
//! oversubscription there), 19-20 racks and 18 spines at a leaf, 34 leaves
//! at a spine; any two racks are at most 4 switch-to-switch hops apart.

use super::{Fabric, Wiring};

/// Adds the switches, the hosts rack by rack and the links. The caller
/// checks `tor_uplinks <= leaves` and `leaf_uplinks <= spines` (no
/// parallel links).
#[allow(clippy::too_many_arguments)]
pub fn spine_leaf3(
    b: &mut impl Wiring,
    f: &Fabric,
    spines: u32,
    leaves: u32,
    tors: u32,
    hosts_per_tor: u32,
    tor_uplinks: u32,
    leaf_uplinks: u32,
) {
    let tor_ids: Vec<u32> = (0..tors)
        .map(|t| b.add_switch(format!("tor{t}"), f.switch_buffer))
        .collect();
    let leaf_ids: Vec<u32> = (0..leaves)
        .map(|l| b.add_switch(format!("leaf{l}"), f.switch_buffer))
        .collect();
    let spine_ids: Vec<u32> = (0..spines)
        .map(|s| b.add_switch(format!("spine{s}"), f.switch_buffer))
        .collect();
    for &tor in &tor_ids {
        for _ in 0..hosts_per_tor {
            let h = b.add_host();
            b.connect(h, tor, f.host_link);
        }
    }
    for (t, &tor) in tor_ids.iter().enumerate() {
        for i in 0..tor_uplinks {
            let l = (t as u64 * tor_uplinks as u64 + i as u64) % leaves as u64;
            b.connect(tor, leaf_ids[l as usize], f.core_link);
        }
    }
    for (l, &leaf) in leaf_ids.iter().enumerate() {
        for j in 0..leaf_uplinks {
            let s = (l as u64 * leaf_uplinks as u64 + j as u64) % spines as u64;
            b.connect(leaf, spine_ids[s as usize], f.core_link);
        }
    }
}
