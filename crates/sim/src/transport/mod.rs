//! Natively simulated baseline transports (the ones the seeds compare
//! against): DCTCP, a NewReno-like TCP, pFabric, Aeolus and UDP at line rate.
//!
//! Each sender is a small sans-IO state machine over virtual time, like the
//! ATP endpoint: `start`, `produce`, `on_ack` and `on_timer` push segments into an
//! [`Outbox`]; `timer` says when to call back. Congestion control is a
//! [`CongestionControl`] policy plugged into the one reliable sender
//! ([`reliable::ReliableSender`]), so DCTCP, NewReno and pFabric are one
//! type each.
//!
//! Hosts push back as real ones do (see `docs/validation.md`, "Hosts under
//! contention"): a flow hands its NIC at most [`flow::TransportParams::tsq_bytes`]
//! at a time (Linux TCP small queues), and a window grows only while it
//! is used (congestion window validation, RFC 7661). With SACK (the
//! default for DCTCP and TCP, as ns-3's) losses are recovered by RFC 6675's
//! scoreboard and proportional rate reduction (RFC 6937).

pub mod ack_path;
pub mod aeolus;
pub mod cc;
pub mod credit;
pub mod done;
pub mod flow;
pub mod prr;
pub mod receiver;
pub mod reliable;
pub mod rtt;
pub mod sack;
pub mod udp;

use crate::packet::Hdr;
use approxnet_proto::time::Instant;

/// `x as f64` for `x < 2^63` (every byte count and nanosecond time here),
/// the same value: x86-64 without AVX-512 converts a signed integer in one
/// instruction, an unsigned one in a branch and several.
#[inline(always)]
pub(crate) fn f64_of(x: u64) -> f64 {
    debug_assert!(x < 1 << 63, "{x} past 2^63");
    x as i64 as f64
}

/// A segment a sender wants to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Transport header (seq, len, ...).
    pub hdr: Hdr,
    /// pFabric rank (remaining flow bytes); 0 for other transports.
    pub rank: u64,
    /// A retransmission.
    pub retx: bool,
    /// Aeolus's unscheduled (first-RTT) packet: switches drop it first.
    pub unscheduled: bool,
}

/// Where senders and receivers put the segments they emit.
pub type Outbox = Vec<Segment>;

/// Counters every sender keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data packets sent, retransmissions included.
    pub sent_pkts: u64,
    /// Data packets that were retransmissions.
    pub retx_pkts: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Credits received (Aeolus).
    pub credits: u64,
    /// Credits that arrived when the sender had nothing to send (Aeolus:
    /// data not produced yet, or everything sent): bandwidth the receiver
    /// granted and nobody used.
    pub wasted_credits: u64,
}

/// The sending half of a native flow.
pub trait Sender {
    /// The flow starts: emit the first window of what is produced.
    fn start(&mut self, now: Instant, out: &mut Outbox);
    /// The application has produced `produced` bytes of the flow so far
    /// (non-decreasing; beyond the flow's planned bytes counts as all of
    /// them): send what the window allows, never past `produced`.
    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox);
    /// An acknowledgement arrived.
    fn on_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox);
    /// The time given by [`Sender::timer`] has come (or passed).
    fn on_timer(&mut self, now: Instant, out: &mut Outbox);
    /// When the sender wants [`Sender::on_timer`], if at all.
    fn timer(&self) -> Option<Instant>;
    /// Every byte was acknowledged (or, for UDP, sent).
    fn finished(&self) -> bool;
    /// Counters.
    fn stats(&self) -> SenderStats;
    /// Whether packets carry ECN-capable transport; constant over the
    /// sender's life, its retired form included (a flow reads it once).
    fn ect(&self) -> bool;
    /// Back-pressure from the host NIC (TCP small queues): until the next
    /// call, hand the NIC at most `pkts` more data packets of this flow
    /// (retransmissions on a loss signal excepted). Senders without it
    /// ignore the call.
    fn set_tx_room(&mut self, _pkts: u32) {}
    /// A finished sender whose every later call is answered by the
    /// returned [`done::DoneSender`] exactly as by itself (the flow then
    /// frees it); `None` while it may still send or count.
    fn retired(&self) -> Option<done::DoneSender> {
        None
    }
}

pub use cc::{CongestionControl, Dctcp, NewReno, PFabricCc};
