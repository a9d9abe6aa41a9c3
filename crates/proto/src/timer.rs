//! A connection's timers: an enum indexing a fixed table (quinn style);
//! the next deadline is the table's minimum.

use crate::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Next paced DATA packet may leave.
    Pacing = 0,
    /// Oldest unacknowledged DATA packet times out.
    Loss = 1,
    /// End of the rate-control epoch.
    Epoch = 2,
    /// Retransmit an unacknowledged control packet (HELLO, JOB, FIN).
    Control = 3,
    /// Give up on a silent peer.
    Idle = 4,
    /// Send a delayed ACK (when ACKs are coalesced).
    AckDelay = 5,
    /// Send a tail loss probe (nothing left to send, packets in flight).
    Probe = 6,
    /// A job is open but nothing has been sent for a while: resend its JOB
    /// so that both ends hear each other within the idle timeout.
    Keepalive = 7,
}

const COUNT: usize = 8;

/// Deadlines as plain nanoseconds (an unset one reads `u64::MAX`) and a
/// bit per armed timer: the minimum is a branch-free pass over eight words
/// (an `Option<Instant>` table cost ~50 instructions per `next`, and
/// `next` runs after every call into a connection).
#[derive(Clone, Debug)]
pub(crate) struct TimerTable {
    at: [u64; COUNT],
    armed: u8,
}

impl Default for TimerTable {
    fn default() -> TimerTable {
        TimerTable {
            at: [u64::MAX; COUNT],
            armed: 0,
        }
    }
}

impl TimerTable {
    pub(crate) fn set(&mut self, t: Timer, when: Instant) {
        self.at[t as usize] = when.as_nanos();
        self.armed |= 1 << t as u8;
    }
    pub(crate) fn stop(&mut self, t: Timer) {
        self.at[t as usize] = u64::MAX;
        self.armed &= !(1 << t as u8);
    }
    pub(crate) fn get(&self, t: Timer) -> Option<Instant> {
        (self.armed & (1 << t as u8) != 0).then(|| Instant::from_nanos(self.at[t as usize]))
    }
    pub(crate) fn expired(&self, t: Timer, now: Instant) -> bool {
        self.armed & (1 << t as u8) != 0 && self.at[t as usize] <= now.as_nanos()
    }
    /// Whether any armed timer other than `except` is due at `now`.
    pub(crate) fn any_due_except(&self, except: Timer, now: Instant) -> bool {
        // Unarmed entries read `u64::MAX`: they can only look due at
        // `now == u64::MAX`, where the armed mask rules them out.
        let mut at = self.at;
        at[except as usize] = u64::MAX;
        let min = at.iter().fold(u64::MAX, |m, &x| m.min(x));
        min <= now.as_nanos() && self.armed & !(1 << except as u8) != 0
    }
    /// [`TimerTable::next`] as it would be with `except` stopped (the
    /// table is left as it is): whether any other timer is due and the
    /// deadline once `except` is stopped, in one pass.
    // Forced inline: `#[inline]` left it a call in the pacing wake-up
    // (`Connection::pacing_wakeup`, ~23 instructions a wake-up with the
    // frame; issue 19).
    #[inline(always)]
    pub(crate) fn next_without(&self, except: Timer) -> Option<Instant> {
        let mut at = self.at;
        at[except as usize] = u64::MAX;
        let min = at.iter().fold(u64::MAX, |m, &x| m.min(x));
        (self.armed & !(1 << except as u8) != 0).then(|| Instant::from_nanos(min))
    }
    #[inline]
    pub(crate) fn next(&self) -> Option<Instant> {
        let min = self.at.iter().fold(u64::MAX, |m, &x| m.min(x));
        (self.armed != 0).then(|| Instant::from_nanos(min))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The earliest armed timer, whatever the order of set and stop, and
    /// a timer armed at the far future still counts as armed.
    #[test]
    fn next_is_the_earliest_armed_deadline() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Loss, Instant::from_nanos(50));
        t.set(Timer::Pacing, Instant::from_nanos(20));
        t.set(Timer::Keepalive, Instant::from_nanos(90));
        assert_eq!(t.next(), Some(Instant::from_nanos(20)));
        assert!(!t.any_due_except(Timer::Pacing, Instant::from_nanos(49)));
        assert!(t.any_due_except(Timer::Pacing, Instant::from_nanos(50)));
        assert!(t.any_due_except(Timer::Loss, Instant::from_nanos(20)));
        assert!(t.expired(Timer::Pacing, Instant::from_nanos(20)));
        assert_eq!(t.next_without(Timer::Pacing), Some(Instant::from_nanos(50)));
        assert_eq!(t.next_without(Timer::Loss), Some(Instant::from_nanos(20)));
        assert!(!t.expired(Timer::Loss, Instant::from_nanos(49)));
        t.stop(Timer::Pacing);
        assert_eq!(t.get(Timer::Pacing), None);
        assert!(!t.expired(Timer::Pacing, Instant::FAR_FUTURE));
        assert_eq!(t.next(), Some(Instant::from_nanos(50)));
        t.stop(Timer::Loss);
        assert_eq!(t.next_without(Timer::Keepalive), None);
        t.stop(Timer::Keepalive);
        assert_eq!(t.next(), None);
        assert_eq!(t.next_without(Timer::Pacing), None);
        t.set(Timer::Idle, Instant::FAR_FUTURE);
        assert_eq!(t.next(), Some(Instant::FAR_FUTURE));
        assert_eq!(t.get(Timer::Idle), Some(Instant::FAR_FUTURE));
    }
}
