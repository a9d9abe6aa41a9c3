//! Seeded bit-error injection: flips each bit of a buffer independently
//! with probability `ber`, drawing only one random number per flip
//! (geometric skipping), so low BERs cost almost nothing.
//!
//! The one home of bit flipping: [`BitErrors`] carries its own generator
//! and its position in the bit stream across buffers; [`flip_bits_with`] and
//! [`any_error_with`] draw from a caller's generator instead (the
//! simulator's links use them with the simulator's seeded generator).

/// Error-free bits before the next error: a geometric variable with
/// support `0..` and success probability `ber`, drawn by inversion from one
/// uniform in `[0, 1)` (`u64::MAX` for `ber <= 0`, 0 for `ber >= 1`).
pub fn geometric_gap(ber: f64, uniform: f64) -> u64 {
    if ber <= 0.0 {
        return u64::MAX;
    }
    if ber >= 1.0 {
        return 0;
    }
    let u = 1.0 - uniform; // (0, 1]
                           // `as` saturates: a gap past u64::MAX (or NaN from a bad uniform) is
                           // no error within any buffer
    (u.ln() / (-ber).ln_1p()).floor() as u64
}

fn gap_from(ber: f64, mut uniform: impl FnMut() -> f64) -> u64 {
    if ber <= 0.0 || ber >= 1.0 {
        return geometric_gap(ber, 0.0);
    }
    geometric_gap(ber, uniform())
}

/// Flips each bit of `bytes` independently with probability `ber`, drawing
/// uniforms in `[0, 1)` from `uniform` (one per flip, plus one for the gap
/// past the end). Returns the number of bits flipped. Stateless: each call
/// starts a fresh gap.
pub fn flip_bits_with(bytes: &mut [u8], ber: f64, mut uniform: impl FnMut() -> f64) -> u64 {
    let bits = bytes.len() as u64 * 8;
    let mut flipped = 0;
    let mut pos = gap_from(ber, &mut uniform);
    while pos < bits {
        bytes[(pos / 8) as usize] ^= 1 << (pos % 8);
        flipped += 1;
        pos = pos
            .saturating_add(1)
            .saturating_add(gap_from(ber, &mut uniform));
    }
    flipped
}

/// Whether a block of `bits` bits suffers at least one error at rate `ber`
/// (one draw from `uniform`).
pub fn any_error_with(bits: u64, ber: f64, uniform: impl FnMut() -> f64) -> bool {
    gap_from(ber, uniform) < bits
}

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
        let ber = self.ber;
        gap_from(ber, || self.next_f64())
    }

    /// The bit error rate.
    pub fn ber(&self) -> f64 {
        self.ber
    }

    /// Flips bits of `buf[from..]` in place; returns how many flipped. The
    /// gap to the next error carries over to the next call, so several
    /// buffers form one continuous bit stream.
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
        assert_eq!(a.apply(&mut buf, 9), 0);
    }

    #[test]
    fn caller_generator_form() {
        let mut state = 0u64;
        let mut uniform = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut buf = vec![0u8; 125_000];
        let n = flip_bits_with(&mut buf, 1e-3, &mut uniform);
        assert!((800..1200).contains(&n), "{n} flips");
        let ones: u32 = buf.iter().map(|b| b.count_ones()).sum();
        assert_eq!(u64::from(ones), n);
        assert_eq!(flip_bits_with(&mut buf, 0.0, &mut uniform), 0);
        assert_eq!(flip_bits_with(&mut [0u8; 3], 1.0, &mut uniform), 24);
        assert!(any_error_with(8, 1.0, &mut uniform));
        assert!(!any_error_with(1 << 40, 0.0, &mut uniform));
        assert_eq!(geometric_gap(0.5, 0.0), 0);
        assert_eq!(geometric_gap(0.5, 0.75), 2);
    }

    #[test]
    fn tiny_rates_stay_tiny() {
        // 1 - 1e-18 rounds to 1.0: ln(1 - ber) would be 0 and every gap 0
        let mut a = BitErrors::new(1e-18, 5).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        assert_eq!(a.apply(&mut buf, 0), 0);
        let mut u = || 0.999_999;
        assert_eq!(flip_bits_with(&mut buf, 1.5e-16, &mut u), 0);
        assert!(geometric_gap(1.5e-16, 0.5) > 1 << 50);
    }
}
