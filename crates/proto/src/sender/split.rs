//! How a message's bytes are cut into DATA packets ([`PacketSplit`]).
//!
//! A split is a packet count `n` and a stride `seg`: packet `i` carries
//! bytes `i * seg .. min((i + 1) * seg, len)`. Every mode keeps
//! `(n - 1) * seg < len <= n * seg` (no packet empty, none past the end)
//! and `seg <= max`; a message that fits one packet is `(1, max)` in every
//! mode, so one-packet messages (bundles, tensor chunks) never change.

use crate::config::PacketSplit;

/// `(packets, stride)` of a `len`-byte message with at most `max` bytes a
/// packet (`max >= 1`). `len` must need at most `u16::MAX` packets at
/// `max` (the planner checks); `Tiled` never picks more than that.
pub(super) fn split(len: usize, max: usize, how: PacketSplit) -> (u16, usize) {
    let max = max.max(1);
    if len <= max {
        return (1, max);
    }
    let n = len.div_ceil(max);
    let even = || (n as u16, len.div_ceil(n));
    match how {
        PacketSplit::Full => (n as u16, max),
        PacketSplit::Even => even(),
        PacketSplit::Tiled => {
            // The largest divisor of len up to max: the smallest count from
            // n up that divides len, within 1.5 n (and a u16).
            let limit = (n + n / 2).min(u16::MAX as usize);
            (n..=limit)
                .find(|k| len.is_multiple_of(*k))
                .map_or_else(even, |k| (k as u16, len / k))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Every packet's length, from the split's stride.
    fn sizes(len: usize, (n, seg): (u16, usize)) -> Vec<usize> {
        (0..n as usize)
            .map(|i| ((i + 1) * seg).min(len) - (i * seg).min(len))
            .collect()
    }

    #[test]
    fn every_split_covers_the_message_within_max_with_no_empty_packet() {
        let mut rng = Rng::new(19);
        let modes = [PacketSplit::Full, PacketSplit::Even, PacketSplit::Tiled];
        for t in 0..20_000 {
            let max = 1 + rng.below(if t % 2 == 0 { 1500 } else { 40 }) as usize;
            let len = 1 + rng.below(200 * max as u64) as usize;
            let minimal = len.div_ceil(max);
            for how in modes {
                let s = split(len, max, how);
                let v = sizes(len, s);
                assert_eq!(v.iter().sum::<usize>(), len, "{how:?} {len} / {max}");
                assert!(
                    v.iter().all(|&b| b >= 1 && b <= max),
                    "{how:?} {len}/{max}: {v:?}"
                );
                match how {
                    PacketSplit::Full | PacketSplit::Even => {
                        assert_eq!(v.len(), minimal, "{how:?} {len} / {max}: n minimal")
                    }
                    PacketSplit::Tiled => {
                        assert!(v.len() >= minimal && v.len() <= minimal + minimal / 2)
                    }
                }
                // Only the last packet may be shorter than the stride.
                assert!(v[..v.len() - 1].iter().all(|&b| b == s.1.min(max)));
            }
            let even = sizes(len, split(len, max, PacketSplit::Even));
            let (lo, hi) = (even.iter().min().unwrap(), even.iter().max().unwrap());
            assert!(
                hi - lo < even.len().max(2),
                "even sizes {len}/{max}: {lo}..{hi}"
            );
        }
    }

    #[test]
    fn a_64_kib_message_at_mtu_1500() {
        let max = 1472 - crate::wire::HEADER_LEN - super::super::APPROX_CRC_LEN;
        assert_eq!(max, 1420);
        let len = 65_536;
        let full = sizes(len, split(len, max, PacketSplit::Full));
        assert_eq!((full.len(), full[0], full[46]), (47, 1420, 216));
        let even = sizes(len, split(len, max, PacketSplit::Even));
        assert_eq!((even.len(), even[0], even[46]), (47, 1395, 1366));
        assert_eq!(split(len, max, PacketSplit::Tiled), (64, 1024));
        // no divisor within 1.5x the packets (a prime length): as Even
        assert_eq!(
            split(65_537, max, PacketSplit::Tiled),
            split(65_537, max, PacketSplit::Even)
        );
    }

    #[test]
    fn one_packet_messages_are_the_same_in_every_mode() {
        for how in [PacketSplit::Full, PacketSplit::Even, PacketSplit::Tiled] {
            for len in [0, 1, 999, 1420] {
                assert_eq!(split(len, 1420, how), (1, 1420));
            }
        }
    }
}
