//! Units that must never travel as bare numbers: link rates and byte counts.

use crate::time::Duration;
use core::fmt;

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Rate(f64);

impl Rate {
    /// Builds a rate from bits per second.
    pub const fn bps(bits_per_sec: f64) -> Rate {
        Rate(bits_per_sec)
    }
    /// Builds a rate from gigabits per second.
    pub const fn gbps(g: f64) -> Rate {
        Rate(g * 1e9)
    }
    /// Builds a rate from megabits per second.
    pub const fn mbps(m: f64) -> Rate {
        Rate(m * 1e6)
    }
    /// Bits per second.
    pub const fn as_bps(self) -> f64 {
        self.0
    }
    /// Time to serialise `bytes` at this rate (rounded up to a nanosecond).
    /// A zero or negative rate never finishes: returns a very long time.
    pub fn time_for(self, bytes: usize) -> Duration {
        if self.0 <= 0.0 {
            return Duration::from_secs(3600);
        }
        Duration::from_nanos(ceil_u64(bytes as f64 * 8.0 * 1e9 / self.0))
    }
    /// The rate that moves `bytes` in `d`.
    pub fn from_bytes_per(bytes: usize, d: Duration) -> Rate {
        if d.as_nanos() == 0 {
            return Rate(f64::INFINITY);
        }
        Rate(bytes as f64 * 8.0 * 1e9 / d.as_nanos() as f64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1e9 {
            write!(f, "{:.2} Gbps", self.0 / 1e9)
        } else if self.0 >= 1e6 {
            write!(f, "{:.2} Mbps", self.0 / 1e6)
        } else {
            write!(f, "{:.0} bps", self.0)
        }
    }
}

/// The largest datagram payload approxnet emits by default (bytes); fits a
/// 1500-byte Ethernet MTU with IPv4 + UDP headers.
pub const DEFAULT_MTU: usize = 1472;

/// The last [`Rate::time_for`] a paced sender asked and its answer: it
/// asks for the same packet length at the same rate packet after packet
/// (a division and a float-to-integer conversion each, ~30 instructions
/// per DATA packet; issue 19). Keyed on the length and the rate's bits,
/// so the answer is the function's, bit for bit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeForMemo {
    bytes: usize,
    bits: u64,
    gap: Duration,
}

impl TimeForMemo {
    /// A memo that holds nothing yet.
    pub(crate) const fn new() -> TimeForMemo {
        TimeForMemo {
            bytes: usize::MAX, // no packet is that long: the first ask computes
            bits: 0,
            gap: Duration::ZERO,
        }
    }

    /// `rate.time_for(bytes)`, from the memo when both are as last time.
    #[inline(always)]
    pub(crate) fn time_for(&mut self, rate: Rate, bytes: usize) -> Duration {
        let bits = rate.0.to_bits();
        if bytes != self.bytes || bits != self.bits {
            *self = TimeForMemo {
                bytes,
                bits,
                gap: rate.time_for(bytes),
            };
        }
        self.gap
    }
}

/// `x.ceil() as u64`, bit for bit (NaN 0, saturating past `u64::MAX`),
/// without the `ceil` library call the baseline x86-64 target makes for
/// `f64::ceil` (no SSE4.1 rounding instruction): the pacing gap is
/// computed once per DATA packet sent.
#[inline]
fn ceil_u64(x: f64) -> u64 {
    // Below 2^53 the truncation and its conversion back are exact, so
    // `t < x` says exactly whether `x` had a fraction; from 2^53 on every
    // f64 is a whole number (or saturates to `u64::MAX` as `ceil` does).
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1) // past u64::MAX: saturated, as the cast does
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ceil_u64` agrees with `f64::ceil` followed by `as u64` on whole
    /// numbers, fractions just above and below them, the 2^53 and 2^64
    /// edges, zero, infinities and NaN.
    #[test]
    fn the_memo_answers_as_time_for_whatever_the_order_of_asks() {
        let rates = [
            Rate::gbps(40.0),
            Rate::gbps(40.0 * (1.0 + f64::EPSILON)),
            Rate::mbps(1.0),
            Rate::bps(0.0),
            Rate::bps(-0.0),
            Rate::bps(f64::NAN),
            Rate::bps(-5.0),
        ];
        let lens = [0usize, 1, 1472, 1473, 65_507, usize::MAX - 1];
        let mut memo = TimeForMemo::new();
        let mut x = 11u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = rates[(x >> 33) as usize % rates.len()];
            let b = lens[(x >> 45) as usize % lens.len()];
            assert_eq!(memo.time_for(r, b), r.time_for(b), "{r:?} {b}");
        }
        assert_eq!(
            TimeForMemo::new().time_for(Rate::bps(0.0), 0),
            Rate::bps(0.0).time_for(0)
        );
    }

    #[test]
    fn ceil_u64_is_ceil_then_cast() {
        let mut xs = vec![
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            0.5,
            1.0,
            f64::INFINITY,
            f64::NAN,
            -1.5,
            (1u64 << 53) as f64,
            (1u64 << 53) as f64 - 0.5,
            (1u64 << 63) as f64,
            u64::MAX as f64,
            1e30,
        ];
        for k in 0..2000u64 {
            let w = (k * k * 7919) as f64;
            xs.extend([w, w + 0.25, w - 1e-9, w + 1e-9, w * 1.000_000_1]);
            xs.push(1500.0 * 8.0 * 1e9 / (k as f64 * 1e8 + 1.0));
        }
        for x in xs {
            assert_eq!(ceil_u64(x), x.ceil() as u64, "x = {x:e}");
        }
    }
}
