//! Serialisation on the emulated link: each transmission of a frame holds
//! the medium for `(len + overhead) * 8 / rate`; a frame leaves when its
//! last try has been on the air. Frames queue behind each other (the
//! sending device's own queue, `txqueuelen`, holds the backlog and drops
//! when it is full, as a wireless NIC's queue does).

use std::time::{Duration, Instant};

/// One direction's medium.
pub(crate) struct Airtime {
    /// Bits per second; `None`: no serialisation delay at all.
    rate_bps: Option<f64>,
    /// Bytes of per-try overhead on the air (preamble, MAC header, ACK).
    overhead: usize,
    /// When the medium is next free.
    free_at: Instant,
}

impl Airtime {
    /// A medium of `rate_bps` (None: infinitely fast).
    pub(crate) fn new(rate_bps: Option<f64>, overhead: usize) -> Airtime {
        Airtime {
            rate_bps,
            overhead,
            free_at: Instant::now(),
        }
    }

    /// Air time of `tries` transmissions of a `len`-byte frame.
    pub(crate) fn cost(&self, len: usize, tries: u32) -> Duration {
        match self.rate_bps {
            None => Duration::ZERO,
            Some(r) => {
                Duration::from_secs_f64((len + self.overhead) as f64 * 8.0 * f64::from(tries) / r)
            }
        }
    }

    /// Books `cost` on the medium from `now` on; returns when the frame has
    /// left (now, or later when the medium was busy or the frame is long).
    pub(crate) fn book(&mut self, now: Instant, cost: Duration) -> Instant {
        let start = self.free_at.max(now);
        self.free_at = start + cost;
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_queue_behind_each_other() {
        let mut a = Airtime::new(Some(12e6), 0);
        let c = a.cost(1500, 1);
        assert_eq!(c, Duration::from_millis(1));
        assert_eq!(a.cost(1500, 3), Duration::from_millis(3));
        let t0 = Instant::now() + Duration::from_secs(1);
        assert_eq!(a.book(t0, c), t0 + c);
        assert_eq!(a.book(t0, c), t0 + 2 * c, "the second waits for the first");
        assert_eq!(Airtime::new(None, 0).cost(1500, 8), Duration::ZERO);
    }
}
