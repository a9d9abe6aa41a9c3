//! The runtime's clock: the monotonic OS clock as the core's [`Instant`].

use approxnet_proto::Instant;

/// Maps `std::time::Instant` to nanoseconds since the runtime started.
///
/// The driver may run the core's clock slightly ahead of the OS clock (see
/// `RuntimeConfig::pacing_lookahead`); [`Clock::now`] therefore returns the
/// later of the OS time and the furthest time already handed out, so the
/// time given to the core never goes backwards.
#[derive(Debug)]
pub(crate) struct Clock {
    origin: std::time::Instant,
    last: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            origin: std::time::Instant::now(),
            last: Instant::ZERO,
        }
    }

    /// OS time since the origin, never adjusted.
    pub(crate) fn real(&self) -> Instant {
        let ns = self.origin.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        Instant::from_nanos(ns)
    }

    /// The time to give the core now.
    pub(crate) fn now(&mut self) -> Instant {
        self.last = self.last.max(self.real());
        self.last
    }

    /// Moves the core's time forward to `t` (no-op if already later).
    pub(crate) fn advance_to(&mut self, t: Instant) -> Instant {
        self.last = self.last.max(t);
        self.last
    }

    /// OS duration from now until core time `t` (zero if passed).
    pub(crate) fn until(&self, t: Instant) -> std::time::Duration {
        std::time::Duration::from_nanos(t.saturating_since(self.real()).as_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_goes_backwards() {
        let mut c = Clock::new();
        let a = c.now();
        let far = Instant::from_nanos(a.as_nanos() + 3_600_000_000_000);
        assert_eq!(c.advance_to(far), far);
        assert_eq!(c.now(), far);
        assert_eq!(c.advance_to(a), far);
    }
}
