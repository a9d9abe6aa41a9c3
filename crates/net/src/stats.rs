//! Counters of the runtime itself (the core keeps its own drop counters).

use crate::sys::recv::RecvStats;
use crate::sys::send::SendStats;

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
    /// Waits that slept in `poll(2)` (blocking face).
    pub sleeps: u64,
    /// Waits that busy polling ended without sleeping: data arrived or the
    /// timer fell due while polling (blocking face, `busy_poll`).
    pub busy_polls: u64,
    /// Waits that slept without watching the socket (receive coalescing).
    pub naps: u64,
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
}
