//! BUNDLE packets: several whole one-packet messages in one datagram, and
//! the parser of their records.

use super::reassembly::hand_over;
use super::{DataVerdict, Held, RecvSide, PER_PACKET_OVERHEAD};
use crate::config::Config;
use crate::event::Event;
use crate::sender::BUNDLE_RECORD;
use crate::stats::DropReason;
use crate::wire::{Flags, HeaderRepr};
use std::collections::VecDeque;

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
        events: &mut VecDeque<Event>,
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
        for rec in Records(body) {
            let Some((id, payload)) = rec else {
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
        for (id, payload) in Records(body).flatten() {
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

/// The records of a BUNDLE body: `Some((message id, payload))`, or one
/// `None` (then nothing more) where the bytes do not parse.
struct Records<'a>(&'a [u8]);

impl<'a> Iterator for Records<'a> {
    type Item = Option<(u32, &'a [u8])>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let b = self.0;
        if b.len() < BUNDLE_RECORD {
            self.0 = &[];
            return Some(None);
        }
        let id = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let n = u16::from_be_bytes([b[4], b[5]]) as usize;
        if b.len() < BUNDLE_RECORD + n {
            self.0 = &[];
            return Some(None);
        }
        self.0 = &b[BUNDLE_RECORD + n..];
        Some(Some((id, &b[BUNDLE_RECORD..BUNDLE_RECORD + n])))
    }
}
