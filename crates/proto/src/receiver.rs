//! The receiving half of a connection: announced jobs, message reassembly,
//! in-order delivery for reliable groups, tensor assembly, and the sequence
//! ranges ACKs report. Everything a peer can make it hold is counted against
//! [`crate::Limits`].

use crate::bitset::BitSet;
use crate::config::{Config, Integrity};
use crate::event::{Event, GroupReport, JobFailure, JobReport, Role};
use crate::sender::{APPROX_CRC_LEN, BUNDLE_RECORD};
use crate::seq;
use crate::stats::DropReason;
use crate::tensor::TensorAssembly;
use crate::time::Instant;
use crate::wire::{AckRepr, Flags, HeaderRepr, JobRepr, SeqRange, MAX_ACK_RANGES};
use std::collections::{BTreeMap, VecDeque};

/// Book-keeping bytes charged per stored packet on top of its payload.
const PER_PACKET_OVERHEAD: usize = 64;
/// Sequence ranges remembered for SACK.
const MAX_SEQ_RANGES: usize = 32;
/// Finished job ids remembered so late packets are ignored quietly.
const RECENT_DONE: usize = 64;
/// An epoch this far behind the newest seen is stale.
pub(crate) const STALE_EPOCHS: u16 = 64;

#[derive(Debug, Default)]
struct Partial {
    got: Vec<Option<Vec<u8>>>,
    got_count: u16,
    precise: usize,
    damaged: bool,
    unchecked: bool,
    charged: usize,
}

/// A complete message of a reliable group waiting for its predecessors.
#[derive(Debug)]
struct Held {
    payload: Vec<u8>,
    precise: usize,
    damaged: bool,
    unchecked: bool,
}

#[derive(Debug)]
struct RecvGroup {
    id: u16,
    messages: u32,
    must: u32,
    delivered: u32,
    done: BitSet,
    partial: BTreeMap<u32, Partial>,
    next_in_order: u32,
    held: BTreeMap<u32, Held>,
}

impl RecvGroup {
    fn reliable(&self) -> bool {
        self.must == self.messages
    }
}

#[derive(Debug)]
struct RecvJob {
    id: u32,
    groups: Vec<RecvGroup>,
    tensor: Option<TensorAssembly>,
    tensor_ready: bool,
    started: Instant,
    packets: u64,
    bytes: u64,
}

/// The peer's transmission sequence numbers received, for ACKs: a
/// cumulative point and ranges after it, in serial order ([`crate::seq`]).
///
/// It starts once the peer's first sequence number is known (every JOB
/// header carries it; no DATA is accepted before its job's JOB), so the
/// cumulative point never claims a number it did not see, and DATA
/// arriving out of order from the start is tracked like any other.
#[derive(Debug, Default)]
pub(crate) struct SeqTracker {
    started: bool,
    /// Every number from the peer's first up to (before) this one arrived.
    /// It stops at the first that never does: a retransmission gets a new
    /// number, so such a hole is never filled.
    cumulative: u32,
    /// Numbers before this are forgotten (ignored when they arrive late).
    /// Equal to `cumulative` until a hole is forgotten; past it from then
    /// on, while the cumulative point stays at the hole for good.
    floor: u32,
    /// After `floor`, in order, disjoint and non-adjacent; the last ends
    /// at most [`MAX_SPAN`] after `floor`.
    ranges: VecDeque<SeqRange>,
}

/// The most numbers from a tracker's floor to the end of its newest range
/// (older ones are forgotten as newer arrive).
const MAX_SPAN: u32 = 1 << 30;
/// The furthest a number may lie past the newest range's end and still be
/// tracked. Half of [`MAX_SPAN`], so one jump ahead (a spoofed number)
/// leaves the floor at least this far behind the newest number before it:
/// it cannot make the tracker forget recent ranges or refuse the numbers
/// that follow them. With the span, it keeps all the tracker holds within
/// half the sequence space, where serial order is defined.
const MAX_JUMP: u32 = 1 << 29;

impl SeqTracker {
    /// Learns the peer's first sequence number; later calls change nothing.
    pub(crate) fn start(&mut self, first: u32) {
        if !self.started {
            self.started = true;
            self.cumulative = first;
            self.floor = first;
        }
    }

    /// Records that `seq` arrived.
    pub(crate) fn insert(&mut self, seq: u32) {
        if !self.started {
            return;
        }
        let Some(at) = self.position(seq) else {
            return;
        };
        let floor = self.floor;
        let i = self
            .ranges
            .partition_point(|r| r.end.wrapping_sub(floor) < at);
        let next = seq.wrapping_add(1);
        match self.ranges.get_mut(i) {
            Some(r) if r.contains(seq) => return,
            Some(r) if r.end == seq => {
                r.end = next;
                if self.ranges.get(i + 1).is_some_and(|n| n.start == next) {
                    if let Some(n) = self.ranges.remove(i + 1) {
                        self.ranges[i].end = n.end;
                    }
                }
            }
            Some(r) if r.start == next => r.start = seq,
            _ => self.ranges.insert(
                i,
                SeqRange {
                    start: seq,
                    end: next,
                },
            ),
        }
        self.advance_cumulative();
        if self.ranges.len() > MAX_SEQ_RANGES {
            if let Some(old) = self.ranges.pop_front() {
                self.floor = old.end;
            }
        }
        self.bound_span();
    }

    /// How far `seq` lies past the floor, when it can be tracked: not
    /// before the floor (forgotten, or acknowledged long ago), and at most
    /// [`MAX_JUMP`] past the newest range.
    fn position(&self, seq: u32) -> Option<u32> {
        let newest = self
            .ranges
            .back()
            .map_or(0, |r| r.end.wrapping_sub(self.floor));
        let at = seq.wrapping_sub(self.floor);
        (at < newest + MAX_JUMP).then_some(at)
    }

    /// Moves the cumulative point over a first range that starts at it.
    fn advance_cumulative(&mut self) {
        if self.floor != self.cumulative {
            return;
        }
        if let Some(first) = self.ranges.front().filter(|r| r.start == self.floor) {
            self.cumulative = first.end;
            self.floor = first.end;
            self.ranges.pop_front();
        }
    }

    /// Moves the floor up until the newest range ends within [`MAX_SPAN`]
    /// of it, forgetting what falls behind.
    fn bound_span(&mut self) {
        let Some(newest) = self.ranges.back() else {
            return;
        };
        let excess = newest.end.wrapping_sub(self.floor).saturating_sub(MAX_SPAN);
        if excess == 0 {
            return;
        }
        self.floor = self.floor.wrapping_add(excess);
        let floor = self.floor;
        while let Some(r) = self.ranges.front_mut() {
            if !seq::before(floor, r.end) {
                self.ranges.pop_front(); // ends at or before the floor
                continue;
            }
            if seq::before(r.start, floor) {
                r.start = floor;
            }
            break;
        }
    }

    /// The ACK body to send now, with the receive counters; `None` until
    /// the peer's first sequence number is known.
    pub(crate) fn ack(&self, ce: u32, recv: u32) -> Option<AckRepr> {
        if !self.started {
            return None;
        }
        let mut a = AckRepr::new(self.cumulative, ce, recv);
        for r in self.ranges.iter().rev().take(MAX_ACK_RANGES) {
            a.push_range(*r);
        }
        Some(a)
    }
}

/// The receiving side of one connection.
#[derive(Debug, Default)]
pub(crate) struct RecvSide {
    jobs: Vec<RecvJob>,
    recent_done: VecDeque<u32>,
    buffered: usize,
    pub(crate) seqs: SeqTracker,
    pub(crate) ce_count: u32,
    pub(crate) recv_count: u32,
    newest_epoch: Option<u16>,
}

/// What the connection should do after a DATA packet was handled.
pub(crate) enum DataVerdict {
    /// Accepted (possibly a duplicate): acknowledge it.
    Ack,
    /// Belongs to a job already finished: acknowledge, nothing else.
    Late,
    /// Refused: count the reason, send nothing.
    Drop(DropReason),
}

impl RecvSide {
    /// Handles a JOB announcement; `Ok(true)` when it is new.
    pub(crate) fn on_job(
        &mut self,
        now: Instant,
        id: u32,
        repr: JobRepr,
        cfg: &Config,
    ) -> Result<bool, DropReason> {
        if self.jobs.iter().any(|j| j.id == id) || self.recent_done.contains(&id) {
            return Ok(false);
        }
        let total: u64 = repr.groups.iter().map(|g| g.messages as u64).sum();
        if total > cfg.limits.max_messages_per_job as u64
            || self.jobs.len() >= cfg.limits.max_jobs_per_connection
        {
            return Err(DropReason::CapExceeded);
        }
        let bitmap_bytes: usize = repr
            .groups
            .iter()
            .map(|g| (g.messages as usize).div_ceil(8))
            .sum();
        let tensor_bytes = repr
            .tensor
            .map_or(0, |t| t.total_elems as usize * t.dtype.size());
        let charge = bitmap_bytes + tensor_bytes;
        if self.buffered + charge > cfg.limits.max_buffered_bytes {
            return Err(DropReason::CapExceeded);
        }
        self.buffered += charge;
        let tensor = repr
            .tensor
            .map(|t| TensorAssembly::new(t.dtype, t.total_elems, t.elems_per_chunk));
        self.jobs.push(RecvJob {
            id,
            groups: repr
                .groups
                .iter()
                .map(|g| RecvGroup {
                    id: g.id,
                    messages: g.messages,
                    must: g.must_deliver,
                    delivered: 0,
                    done: BitSet::new(g.messages as usize),
                    partial: BTreeMap::new(),
                    next_in_order: 0,
                    held: BTreeMap::new(),
                })
                .collect(),
            tensor,
            tensor_ready: false,
            started: now,
            packets: 0,
            bytes: 0,
        });
        Ok(true)
    }

    /// Checks the epoch against the newest seen (wrapping arithmetic).
    pub(crate) fn epoch_ok(&mut self, e: u16) -> bool {
        match self.newest_epoch {
            None => {
                self.newest_epoch = Some(e);
                true
            }
            Some(n) => {
                let behind = n.wrapping_sub(e);
                if behind == 0 || behind >= 1 << 15 {
                    self.newest_epoch = Some(e);
                    true
                } else {
                    behind <= STALE_EPOCHS
                }
            }
        }
    }

    /// Handles a DATA packet whose header and precise prefix verified.
    pub(crate) fn on_data(
        &mut self,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        events: &mut VecDeque<Event>,
    ) -> DataVerdict {
        let Some(ji) = self.jobs.iter().position(|j| j.id == h.job_id) else {
            if self.recent_done.contains(&h.job_id) {
                return DataVerdict::Late;
            }
            return DataVerdict::Drop(DropReason::UnknownJob);
        };
        if h.flags.has(Flags::PREFIX_BY_TRANSPORT) && !cfg.transport_checksums {
            // Nothing here checked the precise prefix: refuse it.
            return DataVerdict::Drop(DropReason::BadChecksum);
        }
        // Split off and check the approximate region's trailer.
        let mut payload = body;
        let mut damaged = false;
        if h.flags.has(Flags::APPROX_CRC) {
            if body.len() < h.precise_len as usize + APPROX_CRC_LEN {
                return DataVerdict::Drop(DropReason::OutOfRange);
            }
            let (p, crc) = body.split_at(body.len() - APPROX_CRC_LEN);
            payload = p;
            let want = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
            damaged = crate::wire::crc::crc32c(&p[h.precise_len as usize..]) != want;
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
        let first_of_msg = !g.partial.contains_key(&h.msg_id);
        let slot_cost = if first_of_msg {
            h.pkt_count as usize * 24
        } else {
            0
        };
        // Over the cap, only the next in-order message of a reliable group
        // may still grow, so that reliable transfer cannot deadlock.
        let is_next = g.reliable() && h.msg_id == g.next_in_order;
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
            let part = g.partial.entry(h.msg_id).or_insert_with(|| Partial {
                got: vec![None; h.pkt_count as usize],
                charged: slot_cost,
                ..Partial::default()
            });
            if part.got.len() != h.pkt_count as usize {
                return DataVerdict::Drop(DropReason::Inconsistent);
            }
            let slot = &mut part.got[h.pkt_index as usize];
            if slot.is_some() {
                return DataVerdict::Ack;
            }
            *slot = Some(if keep { payload.to_vec() } else { Vec::new() });
            if first_of_msg {
                self.buffered += slot_cost;
            }
            self.buffered += cost;
            part.charged += cost;
            part.got_count += 1;
            part.damaged |= damaged;
            part.unchecked |= unchecked;
            part.precise += h.precise_len as usize;
            job.packets += 1;
            job.bytes += payload.len() as u64;
            if part.got_count < h.pkt_count {
                return DataVerdict::Ack;
            }
            // Message complete.
            let part = g.partial.remove(&h.msg_id).unwrap_or_default();
            self.buffered -= part.charged;
            let bytes = if part.got.len() == 1 {
                part.got.into_iter().next().flatten().unwrap_or_default()
            } else {
                part.got.into_iter().flatten().collect::<Vec<_>>().concat()
            };
            (bytes, part.precise, part.damaged, part.unchecked)
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

    /// A BUNDLE packet (`Flags::BUNDLE`): whole one-packet messages of group
    /// `gi`, all precise. Every record is checked before any is taken, and
    /// the buffer cap applies to the packet as a whole: the ACK will cover
    /// every message in it, so none may be dropped alone.
    fn on_bundle(
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

    /// The sender finished job `id`: report abandoned messages and the outcome.
    /// Returns `false` for a FIN of a job never seen.
    pub(crate) fn on_fin(&mut self, now: Instant, id: u32, events: &mut VecDeque<Event>) -> bool {
        let Some(ji) = self.jobs.iter().position(|j| j.id == id) else {
            return self.recent_done.contains(&id);
        };
        let job = self.jobs.remove(ji);
        let mut failure = None;
        let mut groups = Vec::new();
        for g in &job.groups {
            for m in 0..g.messages {
                if !g.done.get(m as usize) {
                    events.push_back(Event::MessageAbandoned {
                        job: id,
                        group: g.id,
                        msg: m,
                    });
                }
            }
            for p in g.partial.values() {
                self.buffered = self.buffered.saturating_sub(p.charged);
            }
            for m in g.held.values() {
                self.buffered = self.buffered.saturating_sub(m.payload.len());
            }
            if g.delivered < g.must && failure.is_none() {
                failure = Some(JobFailure::GuaranteeMissed {
                    group: g.id,
                    delivered: g.delivered,
                    must: g.must,
                });
            }
            groups.push(GroupReport {
                id: g.id,
                messages: g.messages,
                must_deliver: g.must,
                delivered: g.delivered,
                abandoned: g.messages - g.delivered,
            });
        }
        let bitmap_bytes: usize = job
            .groups
            .iter()
            .map(|g| (g.messages as usize).div_ceil(8))
            .sum();
        let tensor_bytes = job.tensor.as_ref().map_or(0, |t| t.byte_len());
        self.buffered = self.buffered.saturating_sub(bitmap_bytes + tensor_bytes);
        if let Some(t) = &job.tensor {
            if !job.tensor_ready {
                events.push_back(Event::TensorReady {
                    job: id,
                    dtype: t.dtype(),
                    data: t.data().to_vec(),
                    missing: t.missing(),
                    fraction: t.fraction(),
                });
            }
        }
        let outcome = match failure {
            Some(f) => Err(f),
            None => Ok(JobReport {
                job: id,
                groups,
                jct: now - job.started,
                packets: job.packets,
                retransmissions: 0,
                lost_packets: 0,
                lost_by_timer: 0,
                spurious_losses: 0,
                tail_probes: 0,
                bytes: job.bytes,
            }),
        };
        events.push_back(Event::JobComplete {
            job: id,
            role: Role::Receiver,
            outcome,
        });
        self.recent_done.push_back(id);
        if self.recent_done.len() > RECENT_DONE {
            self.recent_done.pop_front();
        }
        true
    }

    /// Bytes currently charged against the buffer cap.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// Fails every open job (connection gone).
    pub(crate) fn fail_all(&mut self) -> Vec<u32> {
        let ids = self.jobs.iter().map(|j| j.id).collect();
        self.jobs.clear();
        self.buffered = 0;
        ids
    }
}

/// Hands a complete message of group `g` to the application: at once for
/// approximate groups, in message order for reliable ones (held meanwhile,
/// its bytes counted in `buffered`).
fn hand_over(
    g: &mut RecvGroup,
    job: u32,
    id: u32,
    m: Held,
    buffered: &mut usize,
    events: &mut VecDeque<Event>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn started(first: u32) -> SeqTracker {
        let mut t = SeqTracker::default();
        t.start(first);
        t
    }

    #[test]
    fn seq_tracker_ranges() {
        let mut t = started(0);
        for s in [0, 1, 2, 5, 6, 9, 4] {
            t.insert(s);
        }
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, 3);
        assert_eq!(
            a.ranges(),
            &[
                SeqRange { start: 9, end: 10 },
                SeqRange { start: 4, end: 7 }
            ]
        );
        t.insert(3);
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, 7);
        assert!(a.acks(9) && !a.acks(8));
    }

    /// The same arrivals shifted to straddle the u32 wrap (and arriving out
    /// of order from the very first) give the same ACKs, shifted.
    #[test]
    fn seq_tracker_across_wrap() {
        for first in [0, u32::MAX - 4, u32::MAX - 2, u32::MAX, 1 << 31] {
            let mut t = started(first);
            let at = |d: u32| first.wrapping_add(d);
            for d in [2, 1, 5, 6, 9, 4] {
                t.insert(at(d));
            }
            assert_eq!(
                t.ack(0, 0).unwrap().cumulative,
                first,
                "nothing before the first"
            );
            t.insert(at(0));
            let a = t.ack(0, 0).unwrap();
            assert_eq!(a.cumulative, at(3));
            let want = [
                SeqRange {
                    start: at(9),
                    end: at(10),
                },
                SeqRange {
                    start: at(4),
                    end: at(7),
                },
            ];
            assert_eq!(a.ranges(), &want);
            // Duplicates and late arrivals change nothing.
            t.insert(at(1));
            t.insert(at(5));
            t.insert(first.wrapping_sub(1));
            assert_eq!(t.ack(0, 0).unwrap(), a);
            t.insert(at(3));
            assert_eq!(t.ack(0, 0).unwrap().cumulative, at(7));
        }
    }

    #[test]
    fn seq_tracker_waits_for_the_first_number() {
        let mut t = SeqTracker::default();
        t.insert(5);
        assert!(t.ack(0, 0).is_none());
        t.start(5);
        t.start(100); // only the first start counts
        t.insert(5);
        assert_eq!(t.ack(0, 0).unwrap().cumulative, 6);
    }

    /// After a hole the cumulative point stays put for good, while the
    /// ranges keep following the newest numbers: long after the hole (more
    /// than the whole sequence space), and across the wrap, new numbers
    /// are still tracked and acknowledged.
    #[test]
    fn seq_tracker_follows_numbers_far_past_a_hole() {
        let first = 1000;
        let mut t = started(first);
        t.insert(first);
        // `first + 1` is lost; then the sequence space goes by in big
        // steps, one arrival each.
        let mut s = first + 2;
        for _ in 0..80 {
            t.insert(s);
            let a = t.ack(0, 0).unwrap();
            assert_eq!(a.cumulative, first + 1, "the hole holds the point");
            assert!(a.ranges()[0].contains(s), "newest {s} acknowledged");
            assert!(a.ranges().iter().all(SeqRange::is_well_formed));
            s = s.wrapping_add(1 << 27);
        }
        // Up to just before the wrap, then contiguous through it: one
        // range, well formed.
        let start = u32::MAX - 10;
        while start.wrapping_sub(s) > 1 << 27 {
            t.insert(s);
            s = s.wrapping_add(1 << 27);
        }
        for d in 0..30 {
            t.insert(start.wrapping_add(d));
        }
        let a = t.ack(0, 0).unwrap();
        let newest = a.ranges()[0];
        assert!((0..30).all(|d| newest.contains(start.wrapping_add(d))));
        assert!(a.ranges().iter().all(SeqRange::is_well_formed));
        assert!(t.ranges.len() <= MAX_SEQ_RANGES);
    }

    /// A number far ahead (a spoofed packet) is tracked, but cannot make
    /// the tracker forget the ranges it holds or refuse the numbers that
    /// follow them; one further still is ignored.
    #[test]
    fn seq_tracker_survives_a_far_jump() {
        let first = u32::MAX - 100;
        let at = |d: u32| first.wrapping_add(d);
        let mut t = started(first);
        for d in [0, 1, 2, 4, 5] {
            t.insert(at(d));
        }
        let far = at(6).wrapping_add(MAX_JUMP - 1);
        t.insert(far);
        let too_far = far.wrapping_add(1 + MAX_JUMP);
        t.insert(too_far);
        for d in [3, 6, 7] {
            t.insert(at(d));
        }
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, at(8));
        assert_eq!(
            a.ranges(),
            &[SeqRange {
                start: far,
                end: far.wrapping_add(1)
            }]
        );
    }
}
