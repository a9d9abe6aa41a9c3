//! Link parameters and bit-error injection on a link.

use approxnet_phy::inject;
use approxnet_proto::rng::Rng;
use approxnet_proto::time::Duration;
use approxnet_proto::units::Rate;

/// A point-to-point link (each direction gets its own egress port).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Line rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// Bit error rate (independent bit errors), 0 for an error-free link.
    pub ber: f64,
}

impl LinkSpec {
    /// An error-free link.
    pub fn new(rate: Rate, delay: Duration) -> LinkSpec {
        LinkSpec {
            rate,
            delay,
            ber: 0.0,
        }
    }
}

/// Flips each of the `bytes.len() * 8` bits independently with probability
/// `ber` (geometric skipping: cost is proportional to the errors, not the
/// bits), drawing from the simulator's generator. Returns the number of
/// bits flipped. The flipping itself is `approxnet_phy::inject`'s, the one
/// home of bit errors.
pub fn flip_bits(bytes: &mut [u8], ber: f64, rng: &mut Rng) -> u32 {
    let n = inject::flip_bits_with(bytes, ber, || rng.next_f64());
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether a packet of `bits` bits suffers at least one bit error.
pub fn any_error(bits: u64, ber: f64, rng: &mut Rng) -> bool {
    inject::any_error_with(bits, ber, || rng.next_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_about_ber_times_bits() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 125_000]; // 1e6 bits
        let n = flip_bits(&mut buf, 1e-3, &mut rng);
        assert!((850..1150).contains(&n), "{n}");
        let ones: u32 = buf.iter().map(|b| b.count_ones()).sum();
        assert_eq!(ones, n);
        let mut clean = vec![0u8; 1000];
        assert_eq!(flip_bits(&mut clean, 0.0, &mut rng), 0);
    }
}
