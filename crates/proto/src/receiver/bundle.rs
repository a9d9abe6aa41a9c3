//! BUNDLE packets: several whole one-packet messages in one datagram, and
//! the parser of their records.

use super::reassembly::hand_over;
use super::{DataVerdict, Held, RecvSide, PER_PACKET_OVERHEAD};
use crate::config::Config;
use crate::event::EventSink;
use crate::stats::DropReason;
use crate::wire::{BundleRecord, BundleRecords, Flags, HeaderRepr};

impl RecvSide {
    /// A BUNDLE packet (`Flags::BUNDLE`): whole one-packet messages of group
    /// `gi`, all precise. Every record is checked before any is taken, and
    /// the buffer cap applies to the packet as a whole: the ACK will cover
    /// every message in it, so none may be dropped alone.
    pub(super) fn on_bundle(
        &mut self,
        ji: usize,
        gi: usize,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        events: &mut impl EventSink,
    ) -> DataVerdict {
        if h.flags.has(Flags::APPROX_CRC)
            || h.flags.has(Flags::TENSOR)
            || h.pkt_count != 1
            || h.pkt_index != 0
            || h.precise_len as usize != body.len()
        {
            return DataVerdict::Drop(DropReason::Inconsistent);
        }
        let keep = cfg.keep_payloads;
        let g = &self.jobs[ji].groups[gi];
        let (mut cost, mut has_next, mut first) = (0usize, false, None);
        for rec in BundleRecords::new(body) {
            let Ok(BundleRecord {
                msg_id: id,
                payload,
            }) = rec
            else {
                return DataVerdict::Drop(DropReason::Malformed);
            };
            if id >= g.messages {
                return DataVerdict::Drop(DropReason::OutOfRange);
            }
            first.get_or_insert(id);
            if !g.done.get(id as usize) && !g.partial.contains_key(&id) {
                cost += PER_PACKET_OVERHEAD + if keep { payload.len() } else { 0 };
                has_next |= g.reliable() && id == g.next_in_order;
            }
        }
        if first != Some(h.msg_id) {
            return DataVerdict::Drop(DropReason::Inconsistent);
        }
        if self.buffered + cost > cfg.limits.max_buffered_bytes && !has_next {
            return DataVerdict::Drop(DropReason::CapExceeded);
        }
        let job = &mut self.jobs[ji];
        job.packets += 1;
        let g = &mut job.groups[gi];
        for BundleRecord {
            msg_id: id,
            payload,
        } in BundleRecords::new(body).flatten()
        {
            if g.done.get(id as usize) || g.partial.contains_key(&id) {
                continue; // a duplicate, or claimed by a multi-packet message
            }
            job.bytes += payload.len() as u64;
            g.done.insert(id as usize);
            g.delivered += 1;
            let msg = Held {
                payload: if keep { payload.to_vec() } else { Vec::new() },
                precise: payload.len(),
                damaged: false,
                unchecked: false,
            };
            hand_over(g, job.id, id, msg, &mut self.buffered, events);
        }
        DataVerdict::Ack
    }
}
