//! What is left of a reliable sender once every byte is acknowledged.
//!
//! A finished [`super::reliable::ReliableSender`] sends nothing more: an
//! ACK is ignored, producing or more NIC room sends nothing (everything
//! up to the flow's end is sent and acknowledged), and its timer only
//! clears itself when it fires. What is still read is its counters, its
//! ECN capability and the pending timer, so the flow swaps the ~340-byte
//! sender (plus its SACK scoreboard) for this, and the allocator hands
//! the freed block to the next flow's sender: the senders' working set is
//! the flows in flight, not every flow of the run.

use super::{Outbox, Sender, SenderStats};
use crate::packet::Hdr;
use approxnet_proto::time::Instant;

/// A finished sender's counters, ECN flag and pending timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoneSender {
    /// Its counters, final.
    pub stats: SenderStats,
    /// The retransmission deadline still armed when it finished.
    pub deadline: Option<Instant>,
    /// Its packets carried ECN-capable transport.
    pub ect: bool,
}

impl Sender for DoneSender {
    fn start(&mut self, _now: Instant, _out: &mut Outbox) {}
    fn produce(&mut self, _now: Instant, _produced: u64, _out: &mut Outbox) {}
    fn on_ack(&mut self, _now: Instant, _hdr: &Hdr, _out: &mut Outbox) {}
    /// As a finished reliable sender: a due deadline clears itself.
    fn on_timer(&mut self, now: Instant, _out: &mut Outbox) {
        if matches!(self.deadline, Some(d) if d <= now) {
            self.deadline = None;
        }
    }
    fn timer(&self) -> Option<Instant> {
        self.deadline
    }
    fn finished(&self) -> bool {
        true
    }
    fn stats(&self) -> SenderStats {
        self.stats
    }
    fn ect(&self) -> bool {
        self.ect
    }
}
