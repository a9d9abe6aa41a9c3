//! Everything an acknowledgement does: packets and bundles credited to
//! their messages, ranges and the cumulative point, late ACKs of packets
//! declared lost (spurious losses), and the flight list popped.

use super::{Acked, Fate, Flight, LostRecord, MsgState, SendSide, MAX_RECENT_LOST, MAX_REORDER};

/// ACK ranges whose lookup in `recent_lost` is remembered (`late_clean`):
/// a few ACKs' worth.
const LATE_CLEAN_RANGES: usize = 4 * crate::wire::ack::MAX_ACK_RANGES;
use crate::policy::Policies;
use crate::seq;
use crate::wire::SeqRange;

impl SendSide {
    /// Marks `seq` acknowledged; returns its send time for an RTT sample
    /// when this is the first acknowledgement of that transmission. Every
    /// transmission has its own sequence number, so the sample is
    /// unambiguous even for retransmitted data and for packets already
    /// declared lost (those late acknowledgements are what lets the RTO
    /// grow to the path's real delay).
    pub(crate) fn on_acked(&mut self, seq: u32, pol: &Policies) -> Option<Acked> {
        if let Some((s, sent)) = self.probe {
            if s == seq {
                self.probe = None;
                self.probe_answer = Some(sent);
            }
        }
        let Some(f) = self.flight_mut(seq).map(|f| *f) else {
            // Popped already: acknowledged before, or declared lost.
            let rec = self.recent_lost.remove(&seq)?;
            self.spurious_loss(&rec.flight, Some(rec), pol);
            self.bundle_arrived(seq, &rec.flight, pol);
            return Some(Acked {
                sent: rec.flight.sent,
                spurious: true,
                queue: rec.flight.queue,
            });
        };
        match f.fate {
            Fate::Acked => return None,
            Fate::Lost => {
                let rec = self.recent_lost.remove(&seq);
                self.spurious_loss(&f, rec, pol);
            }
            Fate::InFlight => {
                self.unacked.remove(seq);
                self.in_flight -= 1;
                if f.extra {
                    self.extra_in_flight -= 1;
                } else {
                    self.epoch.acked += 1;
                }
            }
        }
        if let Some(x) = self.flight_mut(seq) {
            x.fate = Fate::Acked;
        }
        // Extra data (send more) rides the lowest queue and arrives out of
        // order with everything else: its ACKs never make another job's
        // packets look lost (extras themselves are declared lost by the
        // timer or by later ACKs of other data).
        if !f.extra {
            self.largest_acked = Some(self.largest_acked.map_or(seq, |l| seq::later(l, seq)));
        }
        self.packet_arrived(f.job, f.msg, f.pkt, pol);
        self.bundle_arrived(seq, &f, pol);
        self.pop_resolved();
        Some(Acked {
            sent: f.sent,
            spurious: f.fate == Fate::Lost,
            queue: f.queue,
        })
    }

    /// An acknowledgement for a packet declared lost: the network delivered
    /// it. The loss is undone where the rate control counted it (the rate
    /// control must see the path's real loss, not the sender's impatience):
    /// in the running epoch's counts, or, for an earlier epoch, reported to
    /// the connection through `spurious_epochs`. The packet is credited to
    /// its message. `rec` is `None` when the record was already forgotten.
    fn spurious_loss(&mut self, f: &Flight, rec: Option<LostRecord>, pol: &Policies) {
        if let Some(rec) = rec.filter(|r| !r.flight.extra) {
            if rec.fast {
                self.reorder = (self.reorder.max(1) * 2).min(MAX_REORDER);
            } else {
                self.spurious_timer_epoch = Some(self.epoch_id);
            }
            if rec.epoch == self.epoch_id {
                if self.epoch.lost > 0 {
                    self.epoch.lost -= 1;
                    self.epoch.acked += 1;
                }
            } else if self.spurious_epochs.len() < MAX_RECENT_LOST {
                self.spurious_epochs.push(rec.epoch);
            }
        }
        if let Some(ji) = self.job_index(f.job) {
            self.jobs[ji].spurious += 1;
        }
        self.packet_arrived(f.job, f.msg, f.pkt, pol);
    }

    /// Marks acknowledged every in-flight packet in range `r` (wrapping,
    /// as the wire allows); costs one word read per 64 sequence numbers of
    /// the range that overlap the flight list, plus the packets newly
    /// acknowledged.
    pub(crate) fn on_acked_range(&mut self, r: SeqRange, pol: &Policies) {
        if !r.is_well_formed() {
            return;
        }
        self.late_acks(r, pol);
        // Acknowledging pushes nothing, so ring positions hold throughout.
        let mut from = 0;
        while let Some((s, at)) = self.unacked.first_in(r.start, r.len(), from) {
            self.on_acked(s, pol);
            from = at + 1;
        }
    }

    /// Processes an ACK's cumulative point (amortised over the connection).
    pub(crate) fn on_cumulative(&mut self, cum: u32, pol: &Policies) {
        // Only move forward, and never past what was sent.
        if !seq::before(self.cum_done, cum)
            || cum.wrapping_sub(self.base_seq) as usize > self.flights.len()
        {
            return;
        }
        let popped_some = seq::before(self.cum_done, self.base_seq);
        let mut s = if popped_some {
            self.base_seq
        } else {
            self.cum_done
        };
        // Most of the run is plain packets in flight, in order: those are
        // credited inline with their job's slot carried from one to the
        // next, and the resolved front is popped once after the run
        // (popping is greedy from the front and fates only move to Acked
        // here, so the flight list ends as a pop per packet leaves it).
        // Anything else goes through `on_acked`.
        let mut ji = usize::MAX;
        let mut inline = false;
        while s != cum {
            if self.acked_in_order(s, &mut ji, pol) {
                inline = true;
            } else {
                self.on_acked(s, pol);
            }
            s = s.wrapping_add(1);
        }
        if inline {
            self.pop_resolved();
        }
        if popped_some {
            let r = SeqRange {
                start: self.cum_done,
                end: cum,
            };
            self.late_acks(r, pol);
        }
        self.cum_done = cum;
    }

    /// Spurious losses among packets already popped from the flight list
    /// whose sequence numbers fall in range `r`.
    // The test inlined at its callers, the work out of line: with no
    // loss remembered (most ACKs) the call cost ~20 instructions.
    #[inline(always)]
    pub(super) fn late_acks(&mut self, r: SeqRange, pol: &Policies) {
        if !self.recent_lost.is_empty() {
            self.late_acks_of(r, pol);
        }
    }

    /// [`Self::late_acks`] with losses remembered.
    #[inline(never)]
    fn late_acks_of(&mut self, r: SeqRange, pol: &Policies) {
        let Some(r) = self.unchecked_part(r) else {
            return;
        };
        for run in r.runs() {
            let (mut from, last) = (*run.start(), *run.end());
            // `on_acked` removes the record; resuming past each one makes
            // progress even if it did not.
            while let Some(&s) = self.recent_lost.range(from..=last).next().map(|(s, _)| s) {
                self.on_acked(s, pol);
                if s == last {
                    break;
                }
                from = s + 1;
            }
        }
    }

    /// The part of ACK range `r` that may still hold remembered losses,
    /// and notes `r` as checked. An ACK repeats its ranges until the holes
    /// between them fill (for ATP, whose resends take new numbers, never),
    /// so each range is looked up in `recent_lost` once and afterwards only
    /// its newly grown end is. Sound because a range, once handled, holds
    /// no remembered loss (each one found is removed) and none is added
    /// there until the next declared loss, which clears the notes.
    fn unchecked_part(&mut self, r: SeqRange) -> Option<SeqRange> {
        // Consecutive ACKs list their ranges in the same order: try the
        // note after the last one matched before searching them all.
        let hint = self.late_hint;
        let at = match self.late_clean.get(hint) {
            Some(m) if m.start == r.start => Some(hint),
            _ => self.late_clean.iter().position(|m| m.start == r.start),
        };
        let Some(at) = at else {
            if self.late_clean.len() >= LATE_CLEAN_RANGES {
                self.late_clean.clear();
            }
            self.late_clean.push(r);
            self.late_hint = self.late_clean.len();
            return Some(r);
        };
        self.late_hint = at + 1;
        let m = &mut self.late_clean[at];
        if !seq::before(m.end, r.end) {
            return None; // within what was checked
        }
        let tail = SeqRange {
            start: m.end,
            end: r.end,
        };
        m.end = r.end;
        Some(tail)
    }

    /// The messages that rode along in packet `seq` arrived with it.
    /// The messages that rode in bundle `seq` with `f`'s arrived too.
    // The test inlined at its callers, the work out of line: most packets
    // are no bundle, and the call cost ~18 instructions per ACK.
    #[inline(always)]
    fn bundle_arrived(&mut self, seq: u32, f: &Flight, pol: &Policies) {
        if f.bundled {
            self.bundled_arrived(seq, f, pol);
        }
    }

    #[inline(never)]
    fn bundled_arrived(&mut self, seq: u32, f: &Flight, pol: &Policies) {
        if let Some(extra) = self.bundles.remove(&seq) {
            for mi in extra {
                self.packet_arrived(f.job, mi, 0, pol);
            }
        }
    }

    /// [`Self::on_acked`] for a packet of the cumulative run that is in
    /// flight, not the tail probe, not extra data and no bundle (what the
    /// run's packets nearly always are): the same books kept, without the
    /// RTT sample (`on_cumulative` takes none), the per-packet pop, or the
    /// job's search by id while consecutive packets share a job (`ji`
    /// carries its slot). `false`, with nothing changed, for any other.
    #[inline(always)]
    fn acked_in_order(&mut self, seq: u32, ji: &mut usize, pol: &Policies) -> bool {
        if self.probe.is_some_and(|(p, _)| p == seq) {
            return false;
        }
        let off = seq.wrapping_sub(self.base_seq) as usize;
        let Some(f) = self.flights.get_mut(off) else {
            return false;
        };
        if f.fate != Fate::InFlight || f.extra || f.bundled {
            return false;
        }
        f.fate = Fate::Acked;
        let (job, msg, pkt) = (f.job, f.msg, f.pkt);
        self.unacked.remove(seq);
        self.in_flight -= 1;
        self.epoch.acked += 1;
        self.largest_acked = Some(self.largest_acked.map_or(seq, |l| seq::later(l, seq)));
        if self.jobs.get(*ji).is_none_or(|j| j.id != job) {
            match self.job_index(job) {
                Some(i) => *ji = i,
                None => return true,
            }
        }
        self.packet_arrived_at(*ji, msg, pkt, pol);
        true
    }

    fn packet_arrived(&mut self, job: u32, mi: u32, pkt: u16, pol: &Policies) {
        if let Some(ji) = self.job_index(job) {
            self.packet_arrived_at(ji, mi, pkt, pol);
        }
    }

    /// [`Self::packet_arrived`] with the job's slot known.
    #[inline(always)]
    fn packet_arrived_at(&mut self, ji: usize, mi: u32, pkt: u16, pol: &Policies) {
        let j = &mut self.jobs[ji];
        let m = &mut j.msgs[mi as usize];
        let per = u64::from(m.seg);
        if !m.acked.insert(pkt as usize) {
            return;
        }
        m.acked_count += 1;
        let len = m.payload.len() as u64;
        let a = (pkt as u64 * per).min(len);
        let b = (a + per).min(len);
        m.remaining = m.remaining.saturating_sub((b - a).max(1));
        if m.acked_count == m.pkt_count && m.state == MsgState::Open {
            m.state = MsgState::Delivered;
            m.retx.clear();
            // extra data (send more): the job's report is out already;
            // the receiver's report counts it
            if !j.extra {
                j.groups[m.group as usize].delivered += 1;
                j.unresolved -= 1;
            }
        }
        // A message neither queued nor sendable (all its packets out: the
        // common case for an acknowledged packet) keeps no key either
        // way: `reschedule` would find nothing to move (a call per packet
        // acknowledged; issue 19).
        if m.key.is_some() || m.sendable() {
            Self::reschedule(&mut self.sched, j, mi as usize, pol);
        }
    }

    pub(super) fn pop_resolved(&mut self) {
        while let Some(f) = self.flights.front() {
            if f.fate == Fate::InFlight {
                break;
            }
            self.flights.pop_front();
            self.base_seq = self.base_seq.wrapping_add(1);
        }
    }
}
