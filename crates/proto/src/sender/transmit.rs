//! The transmit path: the scheduler queue, the choice of the next DATA
//! packet, bundling, writing its body and recording its departure.

use super::queue::SchedQueue;
use super::{
    Fate, Flight, NextPacket, SendJob, SendMsg, SendSide, AGE_CHECK_EVERY, BUNDLE_RECORD,
    MAX_BUNDLE,
};
use crate::job::Payload;
use crate::policy::{Policies, SchedKey};
use crate::time::Instant;
use crate::wire::body::{emit_approx_trailer, emit_bundle_record_header};

/// Scheduler keys at or above this belong to extra data (`Config::send_more`).
pub(super) const EXTRA_KEY: u64 = 1 << 63;

pub(super) fn order(job: u32, msg: u32) -> u64 {
    ((job as u64) << 32) | msg as u64
}

impl SendSide {
    pub(super) fn reschedule(sched: &mut SchedQueue, job: &mut SendJob, mi: usize, pol: &Policies) {
        let key = Self::sched_key(job, mi, pol);
        let m = &mut job.msgs[mi];
        if key == m.key {
            return; // queued under the same key already (or not at all)
        }
        let o = order(job.id, mi as u32);
        match (m.key, key) {
            (Some(old), Some(new)) => sched.replace(&(old, o), (new, o)),
            (Some(old), None) => sched.remove(&(old, o)),
            (None, Some(new)) => sched.insert((new, o)),
            (None, None) => {}
        }
        m.key = key;
    }

    /// [`Self::reschedule`] for the queue's head, the message
    /// `next_packet` just took a packet of: one with nothing left to send
    /// leaves by a pop of the head, not a removal that first compares
    /// the entry with the head (a call of ~48 instructions per
    /// one-packet message).
    #[inline(always)]
    fn reschedule_head(sched: &mut SchedQueue, job: &mut SendJob, mi: usize, pol: &Policies) {
        let key = Self::sched_key(job, mi, pol);
        let m = &mut job.msgs[mi];
        if key == m.key {
            return;
        }
        let o = order(job.id, mi as u32);
        debug_assert_eq!(sched.first(), m.key.map(|k| (k, o)).as_ref());
        match (m.key, key) {
            (Some(_), None) => sched.pop_head(),
            (Some(old), Some(new)) => sched.replace(&(old, o), (new, o)),
            (None, Some(new)) => sched.insert((new, o)),
            (None, None) => {}
        }
        m.key = key;
    }

    /// Message `mi`'s scheduler key, `None` when it has nothing to send.
    pub(super) fn sched_key(job: &SendJob, mi: usize, pol: &Policies) -> Option<u64> {
        let m = &job.msgs[mi];
        m.sendable().then(|| {
            let k = pol.scheduler.key(&SchedKey {
                remaining_bytes: m.remaining,
                has_new: m.next_new < m.pkt_count,
            });
            // Extra data (send more) goes after every other job's.
            if job.extra {
                k | EXTRA_KEY
            } else {
                k & !EXTRA_KEY
            }
        })
    }

    /// Queues every sendable message of `job` (not on the queue yet): one
    /// insert each for a few, a sorted bulk build merged into the queue
    /// for many (a job of thousands of messages costs a tenth as much).
    pub(super) fn schedule_all(sched: &mut SchedQueue, job: &mut SendJob, pol: &Policies) {
        let mut new = Vec::with_capacity(job.msgs.len());
        for mi in 0..job.msgs.len() {
            debug_assert!(job.msgs[mi].key.is_none());
            if let Some(k) = Self::sched_key(job, mi, pol) {
                job.msgs[mi].key = Some(k);
                new.push((k, order(job.id, mi as u32)));
            }
        }
        if new.len() < 16 || new.len() * 4 < sched.len() {
            for e in new {
                sched.insert(e);
            }
        } else {
            sched.append_sorted(new);
        }
    }

    /// The slot in `jobs` of packet `np`'s job (`NextPacket::ji`; debug
    /// builds check that it still holds that job).
    #[inline(always)]
    pub(crate) fn np_job(&self, np: &NextPacket) -> usize {
        debug_assert_eq!(
            self.jobs.get(np.ji as usize).map(|j| j.id),
            Some(np.job),
            "a NextPacket's job slot moved"
        );
        np.ji as usize
    }

    /// Packet `np`'s job (see [`Self::np_job`]).
    #[inline(always)]
    pub(crate) fn np_job_ref(&self, np: &NextPacket) -> &SendJob {
        &self.jobs[self.np_job(np)]
    }

    /// Whether the packet `next_packet` just chose is a bundle.
    pub(crate) fn bundling(&self) -> bool {
        !self.pending_bundle.is_empty()
    }

    /// Whether a DATA packet may be sent: one of a job still open (those
    /// always go first), or extra data (send more) while fewer than
    /// [`super::EXTRA_WINDOW`] extra packets are in flight.
    pub(crate) fn has_data(&self) -> bool {
        match self.sched.first() {
            None => false,
            Some(&(k, _)) if k < EXTRA_KEY => true,
            Some(_) => self.extra_in_flight < super::EXTRA_WINDOW,
        }
    }

    /// Messages with packets waiting to leave (first sends and resends).
    pub(crate) fn waiting(&self) -> usize {
        self.sched.len()
    }

    /// Whether a DATA packet other than extra data (send more) is waiting:
    /// what the tail logic (probe, loss-timer backoff) asks, so that extra
    /// data never changes how another job's tail is recovered.
    pub(crate) fn has_needed_data(&self) -> bool {
        self.sched.first().is_some_and(|&(k, _)| k < EXTRA_KEY)
    }

    /// Picks the next DATA packet (scheduler order), or `None`. Whole
    /// one-packet messages that come next in scheduler order, of the same
    /// job and group, ride along while the body stays within
    /// `bundle_bytes` and the packet (`pending_bundle`; `write_body` and
    /// `on_sent` consume it). (The unit tests' form; `poll_transmit` calls
    /// [`Self::next_packet_into`].)
    #[cfg(test)]
    pub(crate) fn next_packet(
        &mut self,
        pol: &Policies,
        bundle_bytes: usize,
    ) -> Option<NextPacket> {
        let mut np = NextPacket::default();
        self.next_packet_into(pol, bundle_bytes, &mut np)
            .then_some(np)
    }

    /// [`Self::next_packet`] written into `np` (whether there is one): no
    /// `Option` of the 32-byte value returned through memory and copied
    /// out again per DATA packet (issue 19).
    pub(crate) fn next_packet_into(
        &mut self,
        pol: &Policies,
        bundle_bytes: usize,
        np: &mut NextPacket,
    ) -> bool {
        self.pending_bundle.clear();
        if !self.has_data() {
            return false;
        }
        loop {
            // The first message stays queued while its packet is taken:
            // `reschedule` then moves its key in place (a message that
            // keeps the smallest key stays the head; no tree operation).
            let Some(&(_, ord)) = self.sched.first() else {
                return false;
            };
            let (job_id, mi) = ((ord >> 32) as u32, ord as u32 as usize);
            let Some(ji) = self.job_index(job_id) else {
                self.sched.pop_first();
                return false;
            };
            let job = &mut self.jobs[ji];
            let Some((pkt, retx)) = Self::take_packet(&mut job.msgs[mi]) else {
                Self::reschedule_head(&mut self.sched, job, mi, pol);
                continue;
            };
            if !retx && pkt == 0 {
                let g = &mut job.groups[job.msgs[mi].group as usize];
                g.fresh = g.fresh.saturating_sub(1);
            }
            let m = &job.msgs[mi];
            *np = NextPacket {
                job: job.id,
                ji: ji as u32,
                group_id: job.groups[m.group as usize].id,
                group_idx: m.group,
                msg: mi as u32,
                msg_id: m.msg_id,
                pkt,
                pkt_count: m.pkt_count,
                retx,
            };
            Self::reschedule_head(&mut self.sched, job, mi, pol);
            break;
        }
        if bundle_bytes > 0 {
            self.fill_bundle(np, bundle_bytes, pol);
        }
        true
    }

    /// The packet to send next of message `m`: a queued retransmission not
    /// acknowledged meanwhile, else its next new packet; `None` when only
    /// acknowledged packets were queued (late ACKs of spurious losses).
    fn take_packet(m: &mut SendMsg) -> Option<(u16, bool)> {
        loop {
            match m.retx.pop_front() {
                Some(p) if m.acked.get(p as usize) => continue,
                Some(p) => return Some((p, true)),
                None if m.next_new < m.pkt_count => {
                    m.next_new += 1;
                    return Some((m.next_new - 1, false));
                }
                None => return None,
            }
        }
    }

    /// Adds to `pending_bundle` the messages that may ride with `np`.
    fn fill_bundle(&mut self, np: &NextPacket, bundle_bytes: usize, pol: &Policies) {
        let ji = self.np_job(np);
        let job = &mut self.jobs[ji];
        let first = &job.msgs[np.msg as usize];
        if !first.bundleable() {
            return;
        }
        let mut room = job
            .per_packet
            .min(bundle_bytes)
            .saturating_sub(2 * BUNDLE_RECORD + first.payload.len());
        while self.pending_bundle.len() + 1 < MAX_BUNDLE {
            let Some(&(_, ord)) = self.sched.first() else {
                break;
            };
            let (job_id, mi) = ((ord >> 32) as u32, ord as u32 as usize);
            if job_id != np.job {
                break; // only messages of the same job share a packet
            }
            let m = &job.msgs[mi];
            if m.group != np.group_idx || !m.bundleable() || m.payload.len() > room {
                break;
            }
            self.sched.pop_first();
            job.msgs[mi].key = None;
            let Some((pkt, retx)) = Self::take_packet(&mut job.msgs[mi]) else {
                Self::reschedule(&mut self.sched, job, mi, pol);
                continue;
            };
            if !retx && pkt == 0 {
                let g = &mut job.groups[job.msgs[mi].group as usize];
                g.fresh = g.fresh.saturating_sub(1);
            }
            room = room.saturating_sub(BUNDLE_RECORD + job.msgs[mi].payload.len());
            Self::reschedule(&mut self.sched, job, mi, pol);
            self.pending_bundle.push(mi as u32);
        }
    }

    /// Writes the body of packet `np` into `out`; returns (body length,
    /// precise length, approximate trailer present, element range).
    // Inlined into its one caller (`Connection::poll_transmit`): the call
    // saved registers and returned its tuple through memory (issue 19).
    #[inline(always)]
    pub(crate) fn write_body(
        &self,
        np: &NextPacket,
        out: &mut [u8],
    ) -> (usize, usize, bool, Option<(u32, u32)>) {
        let job = &self.jobs[self.np_job(np)];
        if !self.pending_bundle.is_empty() {
            let mut at = 0;
            for &mi in std::iter::once(&np.msg).chain(&self.pending_bundle) {
                let m = &job.msgs[mi as usize];
                let n = m.payload.len();
                at += emit_bundle_record_header(&mut out[at..], m.msg_id, n as u16);
                match &m.payload {
                    Payload::Bytes(v) => out[at..at + n].copy_from_slice(v),
                    Payload::Synthetic(_) => out[at..at + n].fill(0),
                }
                at += n;
            }
            // The whole body is precise: the header's CRC covers it.
            return (at, at, false, None);
        }
        let m = &job.msgs[np.msg as usize];
        let per = m.seg as usize;
        let len = m.payload.len();
        let a = (np.pkt as usize * per).min(len);
        let b = (a + per).min(len);
        let n = b - a;
        match &m.payload {
            Payload::Bytes(v) => out[..n].copy_from_slice(&v[a..b]),
            Payload::Synthetic(_) => out[..n].fill(0),
        }
        // `max` then `min` (`a <= b` here): `Ord::clamp` was not inlined,
        // a call with its `min <= max` assert, ~8 instructions a packet
        // (issue 19).
        let precise = m.precise_len.max(a).min(b) - a;
        let mut body = n;
        // Synthetic bytes carry no information worth a checksum trailer.
        let approx = precise < n && matches!(m.payload, Payload::Bytes(_));
        if approx {
            body = emit_approx_trailer(out, precise, n);
        }
        (body, precise, approx, m.elem_range)
    }

    /// Records that packet `np` left with sequence number `seq`.
    // Inlined into its one caller, as `write_body` (issue 19).
    #[inline(always)]
    pub(crate) fn on_sent(&mut self, now: Instant, np: &NextPacket, queue: u8) -> u32 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        if self.flights.is_empty() {
            self.base_seq = seq;
        }
        let bundled = !self.pending_bundle.is_empty();
        let ji = self.np_job(np);
        let extra = self.jobs[ji].extra;
        self.extra_in_flight += u32::from(extra);
        if bundled {
            self.bundles
                .insert(seq, std::mem::take(&mut self.pending_bundle));
        }
        self.flights.push_back(Flight {
            job: np.job,
            msg: np.msg,
            pkt: np.pkt,
            bundled,
            sent: now,
            fate: Fate::InFlight,
            queue,
            extra,
        });
        if self.probe_pending {
            self.probe_pending = false;
            self.probe = Some((seq, now));
            self.jobs[ji].probes += 1;
        } else {
            self.probe_spent = false;
        }
        self.in_flight += 1;
        self.unacked.push(seq, self.base_seq);
        if seq.is_multiple_of(AGE_CHECK_EVERY) {
            self.forget_ancient_losses();
        }
        let j = &mut self.jobs[ji];
        j.packets += 1;
        j.last_tx = now;
        if np.retx {
            j.retx += 1;
        }
        seq
    }
}
