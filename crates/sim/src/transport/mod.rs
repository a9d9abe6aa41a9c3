//! Natively simulated baseline transports (the ones the seeds compare
//! against): DCTCP, a NewReno-like TCP, pFabric, Aeolus and UDP at line rate.
//!
//! Each sender is a small sans-IO state machine over virtual time, like the
//! ATP endpoint: `start`, `produce`, `on_ack` and `on_timer` push segments into an
//! [`Outbox`], which writes them straight into the engine's packets;
//! `timer` says when to call back. Congestion control is a
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

use crate::packet::{Hdr, Hop, Kind, PacketPool, PktId};
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

/// Where senders put the segments they emit: the engine's packet pool,
/// written once (no segment list between the sender and the packet), or
/// a list (only in the transports' unit tests, which read what a sender
/// emitted).
///
/// The engine makes one for each call to a sender from the flow's fields
/// ([`Outbox::to_pool`]); [`Outbox::push`] takes a pool slot, writes the
/// packet (the flow's fields, the segment's header, rank and drop
/// class) and records its id, which the engine then puts on the host's
/// NIC in order. Before, each segment was written into a list and copied
/// from it into the packet (~15-20 instructions a segment).
pub struct Outbox<'a> {
    to: To<'a>,
    /// Data segments pushed.
    pub data: u32,
}

enum To<'a> {
    Pool {
        pool: &'a mut PacketPool,
        ids: &'a mut Vec<PktId>,
        /// The flow's fields; `size` the header bytes.
        tmpl: Hop,
    },
    /// Only in the unit tests: the shipped `push` has no branch.
    #[cfg(test)]
    List(&'a mut Vec<Segment>),
}

impl<'a> Outbox<'a> {
    /// Writes packets into `pool`, their ids to `ids`: `tmpl` gives every
    /// packet's flow fields, its `size` the header bytes (the segment's
    /// length is added), its `rank` and `droppable` come from the segment.
    pub fn to_pool(pool: &'a mut PacketPool, ids: &'a mut Vec<PktId>, tmpl: Hop) -> Self {
        Outbox {
            to: To::Pool { pool, ids, tmpl },
            data: 0,
        }
    }

    /// Appends the segments to `list` (the transports' unit tests read
    /// what a sender emitted).
    #[cfg(test)]
    pub fn to_list(list: &'a mut Vec<Segment>) -> Self {
        Outbox {
            to: To::List(list),
            data: 0,
        }
    }

    /// Emits segment `s`.
    #[inline(always)]
    pub fn push(&mut self, s: Segment) {
        self.data += (s.hdr.kind == Kind::Data) as u32;
        match &mut self.to {
            To::Pool { pool, ids, tmpl } => {
                let h = Hop {
                    size: tmpl.size + s.hdr.len,
                    rank: s.rank,
                    droppable: s.unscheduled,
                    ..*tmpl
                };
                ids.push(pool.alloc_native(h, &s.hdr));
            }
            #[cfg(test)]
            To::List(l) => l.push(s),
        }
    }
}

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
    fn start(&mut self, now: Instant, out: &mut Outbox<'_>);
    /// The application has produced `produced` bytes of the flow so far
    /// (non-decreasing; beyond the flow's planned bytes counts as all of
    /// them): send what the window allows, never past `produced`.
    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox<'_>);
    /// An acknowledgement arrived.
    fn on_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>);
    /// The time given by [`Sender::timer`] has come (or passed).
    fn on_timer(&mut self, now: Instant, out: &mut Outbox<'_>);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    /// A segment pushed to the pool is the packet the flush built from a
    /// listed segment before (the flow's fields, `size` = header bytes +
    /// length, the segment's rank, drop class and header, no marks), ids
    /// in push order, data counted; a list keeps the segments as pushed.
    #[test]
    fn a_pushed_segment_is_the_packet_the_flush_built() {
        let tmpl = Hop {
            flow: 3,
            src: 4,
            dst: 5,
            size: 54,
            hash: 77,
            queue: 1,
            ect: true,
            droppable: false,
            rank: 0,
        };
        let segs: Vec<Segment> = (0..5u32)
            .map(|i| Segment {
                hdr: Hdr {
                    kind: [Kind::Data, Kind::Probe][(i % 2) as usize],
                    seq: 1000 * i as u64,
                    len: 100 * i,
                    ts: 9 + i as u64,
                    ..Hdr::default()
                },
                rank: 11 * i as u64,
                retx: i == 2,
                unscheduled: i == 3,
            })
            .collect();
        let (mut pool, mut ids, mut list) = (PacketPool::new(), Vec::new(), Vec::new());
        // a used slot to reuse: its marks must not survive
        let old = pool.alloc(Packet {
            ce: true,
            corrupted: true,
            payload: vec![1, 2, 3],
            ..Packet::default()
        });
        pool.free(old);
        let mut to_pool = Outbox::to_pool(&mut pool, &mut ids, tmpl);
        let mut to_list = Outbox::to_list(&mut list);
        for s in &segs {
            to_pool.push(*s);
            to_list.push(*s);
        }
        assert_eq!((to_pool.data, to_list.data), (3, 3));
        assert_eq!(list, segs);
        assert_eq!(ids.len(), segs.len());
        for (id, s) in ids.iter().zip(&segs) {
            let want = Packet {
                flow: 3,
                src: 4,
                dst: 5,
                size: 54 + s.hdr.len,
                hash: 77,
                queue: 1,
                ect: true,
                droppable: s.unscheduled,
                native_data: s.hdr.kind == Kind::Data,
                rank: s.rank,
                hdr: s.hdr,
                ..Packet::default()
            };
            assert_eq!(format!("{:?}", pool.get(*id)), format!("{want:?}"));
        }
    }
}
