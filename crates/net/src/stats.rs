//! Counters of the runtime itself (the core keeps its own drop counters).

use crate::sys::recv::RecvStats;
use crate::sys::send::SendStats;

/// A wake-up later than this after its timer counts as late
/// ([`RuntimeStats::naps_late`], [`RuntimeStats::sleeps_late`]).
pub const LATE_WAKE: std::time::Duration = std::time::Duration::from_millis(1);

/// What the runtime did, for reports and limits checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Socket send side: datagrams, bytes, syscalls, GSO, errors, back-pressure.
    pub send: SendStats,
    /// Socket receive side: datagrams, bytes, syscalls, GRO, truncated.
    pub recv: RecvStats,
    /// Receive errors other than "would block" (e.g. `ENOBUFS`).
    pub recv_errors: u64,
    /// Wake-ups of the driver loop.
    pub wakeups: u64,
    /// Waits that slept: in `poll(2)` (blocking face), or on the tokio
    /// reactor and timer (async face).
    pub sleeps: u64,
    /// Waits that busy polling ended without sleeping: data arrived or the
    /// timer fell due while polling (blocking face, `busy_poll`).
    pub busy_polls: u64,
    /// Waits that slept without watching the socket (receive coalescing).
    pub naps: u64,
    /// Naps that ended more than [`LATE_WAKE`] after they were due (the
    /// thread waited that long for a CPU after its timer fired).
    pub naps_late: u64,
    /// Timed sleeps in `poll(2)` that ended without data more than
    /// [`LATE_WAKE`] after their timeout (the same lateness for a wait the
    /// timer ended; blocking face).
    pub sleeps_late: u64,
    /// The longest lateness of a nap or of such a sleep, in microseconds.
    pub wake_late_max_us: u64,
    /// Times the receive budget ran out with data still waiting.
    pub recv_budget_exhausted: u64,
    /// Times reading paused because `max_events` events were waiting.
    pub recv_paused: u64,
    /// Received datagrams carrying an ECN CE mark.
    pub ce_marked: u64,
    /// Epoch samples dropped from the bounded history.
    pub epochs_dropped: u64,
    /// Datagrams the core produced that the send queue refused (never expected).
    pub transmit_refused: u64,
    /// The sleeps ([`RuntimeStats::sleeps`], both faces) by what held
    /// sending back when the driver went to sleep, and
    /// the time each kind took.
    pub sleep_causes: SleepCauses,
}

/// Sleeps and the time slept, for one [`SleepCauses`] entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SleepTally {
    /// Sleeps of this kind.
    pub sleeps: u64,
    /// Time asleep in them (wall clock, microseconds; a sleep that waited
    /// for a CPU after its wake-up counts that wait too).
    pub slept_us: u64,
}

/// What a driver waited for when it slept (`poll(2)`, or the async face's wait)
/// (issue 19: a contended ATP sender slept ~0.5 s per 4 s run and nothing
/// said why). Taken just before the sleep: the send queue's state, then
/// the core's [`approxnet_proto::SendHold`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SleepCauses {
    /// Datagrams were queued that the kernel refused (`EAGAIN`, send
    /// buffer full): the wait was for writability.
    pub send_buffer: SleepTally,
    /// DATA waited for the pacer's next send time.
    pub pacer: SleepTally,
    /// DATA waited for room under the in-flight cap.
    pub window: SleepTally,
    /// Nothing to send, packets in flight or a job open: the peer's ACKs.
    pub peer: SleepTally,
    /// Nothing to send, in flight or open: the application.
    pub application: SleepTally,
    /// The core could have sent (a wait the caller's timeout or a
    /// handshake reply bounds; not expected on the data path).
    pub ready: SleepTally,
}

impl SleepCauses {
    /// Every cause's tally summed: `sleeps` equals [`RuntimeStats::sleeps`].
    pub fn total(&self) -> SleepTally {
        let all = [
            self.send_buffer,
            self.pacer,
            self.window,
            self.peer,
            self.application,
            self.ready,
        ];
        all.iter().fold(SleepTally::default(), |a, t| SleepTally {
            sleeps: a.sleeps + t.sleeps,
            slept_us: a.slept_us.saturating_add(t.slept_us),
        })
    }

    /// The entry for a sleep with the send queue `blocked` and the core
    /// holding its sending back for `hold`.
    pub fn entry(&mut self, blocked: bool, hold: approxnet_proto::SendHold) -> &mut SleepTally {
        use approxnet_proto::SendHold as H;
        if blocked {
            return &mut self.send_buffer;
        }
        match hold {
            H::Pacer => &mut self.pacer,
            H::Window => &mut self.window,
            H::Peer => &mut self.peer,
            H::Application => &mut self.application,
            _ => &mut self.ready,
        }
    }
}
