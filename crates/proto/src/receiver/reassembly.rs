//! DATA packets into messages: checks, reassembly of multi-packet messages,
//! tensor assembly, and hand-over to the application (in order for
//! reliable groups).

use super::{DataVerdict, Held, Partial, RecvGroup, RecvSide, PER_PACKET_OVERHEAD};
use crate::bitset::BitSet;
use crate::config::{Config, Integrity};
use crate::event::{Event, EventSink};
use crate::stats::DropReason;
use crate::wire::body::check_approx_trailer;
use crate::wire::{Flags, HeaderRepr};

impl RecvSide {
    /// Handles a DATA packet whose header and precise prefix verified.
    pub(crate) fn on_data(
        &mut self,
        now: crate::time::Instant,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        events: &mut impl EventSink,
    ) -> DataVerdict {
        let Some(ji) = self.jobs.iter().position(|j| j.id == h.job_id) else {
            if self.recent_done.contains(&h.job_id) {
                return DataVerdict::Late;
            }
            return DataVerdict::Drop(DropReason::UnknownJob);
        };
        self.jobs[ji].last_seen = now;
        if h.flags.has(Flags::PREFIX_BY_TRANSPORT) && !cfg.transport_checksums {
            // Nothing here checked the precise prefix: refuse it.
            return DataVerdict::Drop(DropReason::BadChecksum);
        }
        // Split off and check the approximate region's trailer.
        let mut payload = body;
        let mut damaged = false;
        if h.flags.has(Flags::APPROX_CRC) {
            let Some((p, d)) = check_approx_trailer(body, h.precise_len as usize) else {
                return DataVerdict::Drop(DropReason::OutOfRange);
            };
            payload = p;
            damaged = d;
            if damaged && cfg.integrity == Integrity::Strict {
                return DataVerdict::Drop(DropReason::DamagedApproximate);
            }
        } else if (h.precise_len as usize) != body.len() && cfg.integrity == Integrity::Strict {
            // An approximate region with no checksum at all cannot be verified.
            return DataVerdict::Drop(DropReason::DamagedApproximate);
        }
        let unchecked = !h.flags.has(Flags::APPROX_CRC) && (h.precise_len as usize) < payload.len();
        let job = &mut self.jobs[ji];
        let Some(gi) = job.groups.iter().position(|g| g.id == h.group) else {
            return DataVerdict::Drop(DropReason::OutOfRange);
        };
        let tensor_chunk = h.flags.has(Flags::TENSOR);
        if tensor_chunk != job.tensor.is_some() {
            return DataVerdict::Drop(DropReason::Inconsistent);
        }
        if let Some(t) = &job.tensor {
            if h.pkt_count != 1 || !t.range_ok(h.msg_id, h.elem_start, h.elem_end) {
                return DataVerdict::Drop(DropReason::OutOfRange);
            }
        }
        if h.flags.has(Flags::BUNDLE) {
            return self.on_bundle(ji, gi, h, body, cfg, events);
        }
        let g = &mut job.groups[gi];
        if h.msg_id >= g.messages {
            return DataVerdict::Drop(DropReason::OutOfRange);
        }
        if g.done.get(h.msg_id as usize) {
            return DataVerdict::Ack; // duplicate of a delivered message
        }
        let keep = cfg.keep_payloads || job.tensor.is_some();
        let cost = PER_PACKET_OVERHEAD + if keep { payload.len() } else { 0 };
        // Over the cap, only the next in-order message of a reliable group
        // may still grow, so that reliable transfer cannot deadlock.
        let is_next = g.reliable() && h.msg_id == g.next_in_order;
        // One search of the part-received messages per packet (a lookup
        // and then an entry were two), a second only for a message's
        // first packet, which inserts it.
        let found = g.partial.get_mut(&h.msg_id);
        let first_of_msg = found.is_none();
        let slot_cost = if first_of_msg {
            h.pkt_count as usize * 24
        } else {
            0
        };
        if self.buffered + cost + slot_cost > cfg.limits.max_buffered_bytes && !is_next {
            return DataVerdict::Drop(DropReason::CapExceeded);
        }
        let (bytes, precise, damaged, unchecked) = if h.pkt_count == 1 && first_of_msg {
            // A one-packet message completes at once: no reassembly state.
            job.packets += 1;
            job.bytes += payload.len() as u64;
            let bytes = if keep { payload.to_vec() } else { Vec::new() };
            (bytes, h.precise_len as usize, damaged, unchecked)
        } else {
            let part = match found {
                Some(p) => p,
                None => g.partial.entry(h.msg_id).or_insert_with(|| Partial {
                    arrived: BitSet::new(h.pkt_count as usize),
                    shares: vec![(0, 0); h.pkt_count as usize],
                    charged: slot_cost,
                    ..Partial::default()
                }),
            };
            if part.shares.len() != h.pkt_count as usize {
                return DataVerdict::Drop(DropReason::Inconsistent);
            }
            if !part.arrived.insert(h.pkt_index as usize) {
                return DataVerdict::Ack;
            }
            if keep {
                if part.got.is_empty() {
                    part.got.resize(h.pkt_count as usize, Vec::new());
                }
                part.got[h.pkt_index as usize] = payload.to_vec();
            }
            if first_of_msg {
                self.buffered += slot_cost;
            }
            self.buffered += cost;
            part.charged += cost;
            part.got_count += 1;
            part.damaged |= damaged;
            part.unchecked |= unchecked;
            part.shares[h.pkt_index as usize] = (u32::from(h.precise_len), payload.len() as u32);
            job.packets += 1;
            job.bytes += payload.len() as u64;
            if part.got_count < h.pkt_count {
                return DataVerdict::Ack;
            }
            // Message complete.
            let part = g.partial.remove(&h.msg_id).unwrap_or_default();
            self.buffered -= part.charged;
            // Without payloads kept nothing was stored: nothing to join
            // (collecting the slots' vectors and joining them cost ~3,000
            // instructions per 46-packet message).
            let bytes = if !keep {
                Vec::new()
            } else if part.got.len() == 1 {
                part.got.into_iter().next().unwrap_or_default()
            } else {
                part.got.concat()
            };
            (
                bytes,
                precise_prefix(&part.shares),
                part.damaged,
                part.unchecked,
            )
        };
        g.done.insert(h.msg_id as usize);
        g.delivered += 1;
        if let Some(t) = &mut job.tensor {
            t.put(h.msg_id, &bytes);
            if !job.tensor_ready && g.delivered >= g.must {
                job.tensor_ready = true;
                events.push_back(Event::TensorReady {
                    job: job.id,
                    dtype: t.dtype(),
                    data: t.data().to_vec(),
                    missing: t.missing(),
                    fraction: t.fraction(),
                });
            }
            return DataVerdict::Ack;
        }
        let msg = Held {
            payload: bytes,
            precise,
            damaged,
            unchecked,
        };
        hand_over(g, job.id, h.msg_id, msg, &mut self.buffered, events);
        DataVerdict::Ack
    }
}

/// Hands a complete message of group `g` to the application: at once for
/// approximate groups, in message order for reliable ones (held meanwhile,
/// its bytes counted in `buffered`).
pub(super) fn hand_over(
    g: &mut RecvGroup,
    job: u32,
    id: u32,
    m: Held,
    buffered: &mut usize,
    events: &mut impl EventSink,
) {
    let deliver = |group: u16, id: u32, m: Held| Event::MessageDelivered {
        job,
        group,
        msg: id,
        payload: m.payload,
        precise_len: m.precise,
        damaged: m.damaged,
        unchecked: m.unchecked,
    };
    if g.reliable() {
        *buffered += m.payload.len();
        g.held.insert(id, m);
        while let Some(m) = g.held.remove(&g.next_in_order) {
            *buffered -= m.payload.len();
            events.push_back(deliver(g.id, g.next_in_order, m));
            g.next_in_order += 1;
        }
    } else {
        events.push_back(deliver(g.id, id, m));
    }
}

/// The message's precise prefix: packets' precise bytes in order, up to
/// the first packet that is not precise whole. A peer that switches mode
/// mid-message (an approximate packet before a precise one) cannot make
/// approximate bytes count as checked: only the prefix contiguous from
/// the start does.
fn precise_prefix(shares: &[(u32, u32)]) -> usize {
    let mut n = 0usize;
    for &(precise, len) in shares {
        n += precise.min(len) as usize;
        if precise < len {
            break;
        }
    }
    n
}

#[cfg(test)]
mod prefix_tests {
    use super::precise_prefix;

    #[test]
    fn only_the_prefix_contiguous_from_the_start_counts() {
        assert_eq!(precise_prefix(&[(100, 100), (100, 100)]), 200);
        assert_eq!(precise_prefix(&[(100, 100), (30, 100), (100, 100)]), 130);
        // approximate first, precise after: only the first packet's share
        assert_eq!(precise_prefix(&[(0, 100), (100, 100)]), 0);
        assert_eq!(precise_prefix(&[(10, 100), (100, 100)]), 10);
    }
}
