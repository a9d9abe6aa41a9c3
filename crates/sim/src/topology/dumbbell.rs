//! Dumbbell: senders on one side, receivers on the other.

use super::{Fabric, Wiring};
use crate::fabric::link::LinkSpec;

/// N senders and M receivers. With `bottleneck` = `None`, all hosts hang off
/// one switch (the ns-3 validation incast); otherwise senders sit on a left
/// switch, receivers on a right one, joined by the bottleneck link.
pub fn dumbbell(
    b: &mut impl Wiring,
    f: &Fabric,
    senders: u32,
    receivers: u32,
    bottleneck: Option<LinkSpec>,
) {
    let hosts: Vec<u32> = (0..senders + receivers).map(|_| b.add_host()).collect();
    match bottleneck {
        None => {
            let sw = b.add_switch("sw0".into(), f.switch_buffer);
            for &h in &hosts {
                b.connect(h, sw, f.host_link);
            }
        }
        Some(mid) => {
            let l = b.add_switch("left".into(), f.switch_buffer);
            let r = b.add_switch("right".into(), f.switch_buffer);
            for (i, &h) in hosts.iter().enumerate() {
                let sw = if (i as u32) < senders { l } else { r };
                b.connect(h, sw, f.host_link);
            }
            b.connect(l, r, mid);
        }
    }
}
