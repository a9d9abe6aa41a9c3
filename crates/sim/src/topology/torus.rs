//! n-dimensional torus of switches (seed 004 §5.6: "tor6" = 64 switches of
//! degree 6, a 4 x 4 x 4 3-D torus; "tor8" = 256 switches of degree 8,
//! which is 4 x 4 x 4 x 4, a 4-D torus). Each switch links to its two
//! neighbours along every dimension, with wrap-around; a dimension of size
//! 2 gives one link (not two parallel ones), of size 1 none.

use super::{Fabric, Wiring};

/// Adds `dims.iter().product()` switches with `hosts_per_switch` hosts each.
pub fn torus(b: &mut impl Wiring, f: &Fabric, dims: &[u32], hosts_per_switch: u32) {
    let n: u32 = dims.iter().product();
    let sw: Vec<u32> = (0..n)
        .map(|i| b.add_switch(format!("tor{i}"), f.switch_buffer))
        .collect();
    for &s in &sw {
        for _ in 0..hosts_per_switch {
            let h = b.add_host();
            b.connect(h, s, f.host_link);
        }
    }
    for i in 0..n {
        // coordinates, first dimension fastest
        let mut stride = 1;
        for &k in dims {
            let c = (i / stride) % k;
            let up = (c + 1) % k;
            // the +1 neighbour only; k = 2: only from coordinate 0
            if k > 2 || (k == 2 && c == 0) {
                let j = i - c * stride + up * stride;
                b.connect(sw[i as usize], sw[j as usize], f.core_link);
            }
            stride *= k;
        }
    }
}
