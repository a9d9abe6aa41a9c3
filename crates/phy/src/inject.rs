//! Seeded bit-error injection: flips each bit of a buffer independently
//! with probability `ber`, drawing only one random number per flip
//! (geometric skipping), so low BERs cost almost nothing.

/// A small seeded generator (splitmix64) so this crate needs no dependency.
#[derive(Clone, Debug)]
pub struct BitErrors {
    state: u64,
    ber: f64,
    /// Bits to skip before the next flip.
    gap: u64,
}

impl BitErrors {
    /// An injector flipping bits at rate `ber` (0 ..= 1), seeded by `seed`.
    /// Returns `None` for a BER outside `[0, 1]` or NaN.
    pub fn new(ber: f64, seed: u64) -> Option<BitErrors> {
        if !(0.0..=1.0).contains(&ber) {
            return None;
        }
        let mut b = BitErrors {
            state: seed,
            ber,
            gap: 0,
        };
        b.gap = b.draw_gap();
        Some(b)
    }

    fn next_f64(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn draw_gap(&mut self) -> u64 {
        if self.ber <= 0.0 {
            return u64::MAX;
        }
        if self.ber >= 1.0 {
            return 0;
        }
        let u = 1.0 - self.next_f64(); // (0, 1]
        (u.ln() / (1.0 - self.ber).ln())
            .floor()
            .min(u64::MAX as f64 / 2.0) as u64
    }

    /// Flips bits of `buf[from..]` in place; returns how many flipped.
    pub fn apply(&mut self, buf: &mut [u8], from: usize) -> u64 {
        let bits = (buf.len().saturating_sub(from) as u64) * 8;
        let mut pos = 0u64;
        let mut flips = 0;
        loop {
            if self.gap >= bits - pos {
                self.gap -= bits - pos;
                return flips;
            }
            pos += self.gap;
            let byte = from + (pos / 8) as usize;
            buf[byte] ^= 1 << (pos % 8);
            flips += 1;
            pos += 1;
            self.gap = self.draw_gap();
            if pos >= bits {
                return flips;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_close_to_ber_and_seeded() {
        let mut a = BitErrors::new(1e-3, 7).unwrap();
        let mut buf = vec![0u8; 125_000]; // 1e6 bits
        let n = a.apply(&mut buf, 0);
        assert!((800..1200).contains(&n), "{n} flips");
        let ones: u32 = buf.iter().map(|b| b.count_ones()).sum();
        assert_eq!(ones as u64, n);
        let mut b = BitErrors::new(1e-3, 7).unwrap();
        let mut buf2 = vec![0u8; 125_000];
        b.apply(&mut buf2, 0);
        assert_eq!(buf, buf2);
    }

    #[test]
    fn respects_offset_and_bounds() {
        let mut a = BitErrors::new(1.0, 1).unwrap();
        let mut buf = vec![0u8; 4];
        assert_eq!(a.apply(&mut buf, 2), 16);
        assert_eq!(buf, vec![0, 0, 0xff, 0xff]);
        assert!(BitErrors::new(1.5, 1).is_none());
        assert!(BitErrors::new(f64::NAN, 1).is_none());
        let mut z = BitErrors::new(0.0, 1).unwrap();
        assert_eq!(z.apply(&mut buf, 0), 0);
    }
}
