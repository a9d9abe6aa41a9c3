//! Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008; seed 004 §5.6's df11).
//!
//! `groups` groups of `routers` switches; the routers of a group are fully
//! connected; each router has `global` global links and `hosts_per_router`
//! hosts. Global links are laid out consecutively: port `p` of group `g`
//! (router `p / global`) joins group `(g + p + 1) mod groups`, whose port
//! `groups - 2 - p` comes back, so every pair of groups shares one link as
//! long as `routers * global >= groups - 1`; ports beyond `groups - 1`
//! stay unused. Seed 004's df11 (256 switches of degree 11): 32 groups of
//! 8 routers with 4 global links each (7 local + 4 global = 11), and 4
//! hosts per switch for its 1,024 processors.

use super::{Fabric, Wiring};

/// Adds the network. The caller checks `routers * global >= groups - 1`.
pub fn dragonfly(
    b: &mut impl Wiring,
    f: &Fabric,
    groups: u32,
    routers: u32,
    global: u32,
    hosts_per_router: u32,
) {
    let mut sw = Vec::with_capacity((groups * routers) as usize);
    for g in 0..groups {
        for r in 0..routers {
            sw.push(b.add_switch(format!("df{g}.{r}"), f.switch_buffer));
        }
    }
    for &s in &sw {
        for _ in 0..hosts_per_router {
            let h = b.add_host();
            b.connect(h, s, f.host_link);
        }
    }
    let id = |g: u32, r: u32| sw[(g * routers + r) as usize];
    for g in 0..groups {
        for r in 0..routers {
            for q in r + 1..routers {
                b.connect(id(g, r), id(g, q), f.core_link);
            }
        }
    }
    for g in 0..groups {
        for p in 0..(groups - 1).min(routers * global) {
            let other = (g + p + 1) % groups;
            if g < other {
                let back = groups - 2 - p;
                b.connect(id(g, p / global), id(other, back / global), f.core_link);
            }
        }
    }
}
