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

#[derive(Clone, Debug, Default)]
pub(crate) struct TimerTable {
    at: [Option<Instant>; COUNT],
}

impl TimerTable {
    pub(crate) fn set(&mut self, t: Timer, when: Instant) {
        self.at[t as usize] = Some(when);
    }
    pub(crate) fn stop(&mut self, t: Timer) {
        self.at[t as usize] = None;
    }
    pub(crate) fn get(&self, t: Timer) -> Option<Instant> {
        self.at[t as usize]
    }
    pub(crate) fn expired(&self, t: Timer, now: Instant) -> bool {
        self.at[t as usize].is_some_and(|x| x <= now)
    }
    pub(crate) fn next(&self) -> Option<Instant> {
        self.at.iter().flatten().min().copied()
    }
}
