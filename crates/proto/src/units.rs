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
        let ns = (bytes as f64 * 8.0 * 1e9 / self.0).ceil();
        Duration::from_nanos(ns as u64)
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
