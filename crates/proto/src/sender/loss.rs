//! Loss detection and its consequences: fast and timer detection, the
//! selective retransmit-or-abandon rule, the remembered losses (and
//! their forgetting), and the tail loss probe.

use super::{Fate, LostRecord, MsgState, SendJob, SendSide, MAX_RECENT_LOST};
use crate::config::{Config, RetransmitPolicy};
use crate::policy::Policies;
use crate::seq;
use crate::time::Instant;

impl SendSide {
    /// Declares lost every in-flight packet `reorder` or more behind the
    /// largest acknowledged one (fast detection).
    pub(crate) fn detect_fast(&mut self, reorder: u32, cfg: &Config, pol: &Policies) {
        let reorder = reorder.max(self.reorder);
        let Some(largest) = self.largest_acked else {
            return;
        };
        if seq::before(self.loss_scan, self.base_seq) {
            self.loss_scan = self.base_seq;
        }
        while seq::offset(self.loss_scan, largest).is_some_and(|behind| behind >= reorder) {
            let s = self.loss_scan;
            self.loss_scan = self.loss_scan.wrapping_add(1);
            if self.flight_mut(s).is_some_and(|f| f.fate == Fate::InFlight) {
                self.declare_lost(s, true, cfg, pol);
            }
        }
        self.pop_resolved();
    }

    /// Send time of the oldest packet still in flight.
    pub(crate) fn oldest_in_flight(&self) -> Option<Instant> {
        self.flights
            .iter()
            .find(|f| f.fate == Fate::InFlight)
            .map(|f| f.sent)
    }

    /// Packets sent after `t` (in flight or resolved since: an upper bound
    /// on those still in flight) and the send time of the oldest of them.
    /// O(log n): the flight list is in send order.
    pub(crate) fn sent_after(&self, t: Instant) -> (u64, Option<Instant>) {
        let i = self.flights.partition_point(|f| f.sent <= t);
        (
            (self.flights.len() - i) as u64,
            self.flights.get(i).map(|f| f.sent),
        )
    }

    /// Declares lost every in-flight packet sent at or before `deadline`
    /// (timer); returns how many.
    pub(crate) fn detect_timeout(
        &mut self,
        deadline: Instant,
        cfg: &Config,
        pol: &Policies,
    ) -> u32 {
        let mut n = 0;
        let mut s = self.base_seq;
        for i in 0..self.flights.len() {
            let f = self.flights[i];
            if f.sent > deadline {
                break;
            }
            if f.fate == Fate::InFlight {
                self.declare_lost(s, false, cfg, pol);
                n += u32::from(!f.extra); // extra data never backs the RTO off
            }
            s = s.wrapping_add(1);
        }
        self.pop_resolved();
        n
    }

    fn declare_lost(&mut self, seq: u32, fast: bool, cfg: &Config, pol: &Policies) {
        let Some(f) = self.flight_mut(seq) else {
            return;
        };
        f.fate = Fate::Lost;
        let f = *f;
        if self.probe.is_some_and(|(s, _)| s == seq) {
            self.probe = None; // the loss timer takes over
        }
        if self.recent_lost.len() >= MAX_RECENT_LOST {
            self.forget_oldest_loss();
        }
        self.late_clean.clear();
        self.recent_lost.insert(
            seq,
            LostRecord {
                flight: f,
                fast,
                epoch: self.epoch_id,
            },
        );
        self.unacked.remove(seq);
        self.in_flight -= 1;
        if f.extra {
            self.extra_in_flight -= 1;
        } else {
            self.epoch.lost += 1;
        }
        let Some(ji) = self.job_index(f.job) else {
            return;
        };
        let j = &mut self.jobs[ji];
        j.lost += 1;
        if !fast {
            j.lost_by_timer += 1;
        }
        self.lose_message(ji, f.msg, f.pkt, fast, cfg, pol);
        if f.bundled {
            if let Some(extra) = self.bundles.remove(&seq) {
                for &mi in &extra {
                    self.lose_message(ji, mi, 0, fast, cfg, pol);
                }
                // Kept while the loss is remembered: a late ACK credits them.
                self.bundles.insert(seq, extra);
            }
        }
    }

    /// Packet `pkt` of message `mi` (job index `ji`) was declared lost:
    /// abandon the message while its group has slack, else queue the
    /// packet for retransmission (seed 000 §4.3's selective rule).
    fn lose_message(
        &mut self,
        ji: usize,
        mi: u32,
        pkt: u16,
        fast: bool,
        cfg: &Config,
        pol: &Policies,
    ) {
        let j = &mut self.jobs[ji];
        let m = &mut j.msgs[mi as usize];
        if m.state != MsgState::Open || m.acked.get(pkt as usize) {
            return;
        }
        if j.extra {
            // extra data is never sent again; the job's report is out
            m.state = MsgState::Abandoned;
            m.retx.clear();
            Self::reschedule(&mut self.sched, j, mi as usize, pol);
            return;
        }
        let g = &mut j.groups[m.group as usize];
        // Seed 000 §4.3: a lost message is given up while the group has
        // slack. In a streaming job whose next message is not produced yet
        // (none fresh waits, more to come) giving it up would only wait for
        // production, so it is sent again (MRDF: the least remaining data
        // goes first). Once all is produced the slack rule alone decides:
        // at the tail of a job, resending what slack covers only delays it.
        // A group that must deliver nothing (SAP's approximate datagrams,
        // seed 002 §3 item 5: "approximate data does not" need ACKs) is
        // never resent for that reason: nobody waits for it.
        let waits_for_production = g.must > 0 && g.fresh == 0 && g.produced < g.messages;
        let retransmit = !g.slack_left()
            || match cfg.retransmit {
                RetransmitPolicy::WhenNeeded => waits_for_production,
                RetransmitPolicy::FastOnly => fast,
            };
        // Which message the slack is spent on: the lost packet's, or with
        // MRDF the open one with the most packets left (Scheduler::
        // gives_up_largest), whose unsent data is then never sent.
        let (left, gi) = (m.pkt_count - m.acked_count, m.group);
        let instead = (!retransmit && pol.scheduler.gives_up_largest() && j.max_pkts > left)
            .then(|| Self::most_left(j, gi, left))
            .flatten();
        let gi = usize::from(gi);
        let give_up = if retransmit {
            None
        } else {
            Some(instead.unwrap_or(mi as usize))
        };
        if give_up != Some(mi as usize) {
            let m = &mut j.msgs[mi as usize];
            if !m.retx.contains(&pkt) {
                m.retx.push_back(pkt);
            }
        }
        if let Some(b) = give_up {
            let o = &mut j.msgs[b];
            let fresh = o.next_new == 0 && o.retx.is_empty();
            o.state = MsgState::Abandoned;
            o.retx.clear();
            let g = &mut j.groups[gi];
            g.abandoned += 1;
            if fresh && b != mi as usize {
                g.fresh = g.fresh.saturating_sub(1);
            }
            j.unresolved -= 1;
            if b != mi as usize {
                Self::reschedule(&mut self.sched, j, b, pol);
            }
        }
        Self::reschedule(&mut self.sched, j, mi as usize, pol);
    }

    /// The open message of group index `group` with the most packets not
    /// yet acknowledged, if it has more than `than` (the first such one).
    fn most_left(j: &SendJob, group: u16, than: u16) -> Option<usize> {
        let mut best: Option<(usize, u16)> = None;
        for (i, o) in j.msgs.iter().enumerate() {
            let n = o.pkt_count - o.acked_count;
            if o.group == group && o.state == MsgState::Open && n > best.map_or(than, |b| b.1) {
                best = Some((i, n));
            }
        }
        best.map(|b| b.0)
    }

    /// The oldest remembered loss: the lowest number at or above
    /// `next_seq` (sent before the numbers wrapped), else the lowest.
    pub(super) fn oldest_lost(&self) -> Option<u32> {
        self.recent_lost
            .range(self.next_seq..)
            .next()
            .or_else(|| self.recent_lost.first_key_value())
            .map(|(&s, _)| s)
    }

    /// Forgets the oldest remembered loss (and its bundle, once its
    /// flight is gone).
    pub(super) fn forget_oldest_loss(&mut self) {
        if let Some(old) = self.oldest_lost() {
            self.recent_lost.remove(&old);
            if self.flight_mut(old).is_none() {
                self.bundles.remove(&old);
            }
        }
    }

    /// Forgets losses declared half the sequence space ago or more: their
    /// numbers would soon name new transmissions.
    pub(super) fn forget_ancient_losses(&mut self) {
        while let Some(old) = self.oldest_lost() {
            if seq::offset(old, self.next_seq).is_some() {
                break;
            }
            self.forget_oldest_loss();
        }
    }

    /// Whether a tail loss probe may be sent now: nothing new or queued to
    /// send, packets in flight, and no probe yet in this tail.
    pub(crate) fn can_probe(&self) -> bool {
        self.in_flight > 0
            && !self.probe_spent
            && !self.probe_pending
            && self.probe.is_none()
            && !self.has_needed_data()
    }

    /// Queues a tail loss probe (after RFC 8985's TLP): the newest packet
    /// in flight that still matters (its message open, itself not
    /// acknowledged) is sent again under a new sequence number. An
    /// acknowledgement of the probe then reveals, in one round trip, which
    /// earlier packets did not arrive. Returns whether a probe was queued.
    pub(crate) fn queue_probe(&mut self, pol: &Policies) -> bool {
        self.probe_spent = true;
        let Some(f) = self.flights.iter().rev().find(|f| {
            f.fate == Fate::InFlight
                && self.job_index(f.job).is_some_and(|ji| {
                    let j = &self.jobs[ji];
                    let m = &j.msgs[f.msg as usize];
                    // Never a message nobody waits for (MSR 0): a probe
                    // is a retransmission.
                    !j.extra
                        && m.state == MsgState::Open
                        && !m.acked.get(f.pkt as usize)
                        && j.groups[m.group as usize].must > 0
                })
        }) else {
            return false;
        };
        let (job, mi, pkt) = (f.job, f.msg as usize, f.pkt);
        let Some(ji) = self.job_index(job) else {
            return false;
        };
        let j = &mut self.jobs[ji];
        let m = &mut j.msgs[mi];
        if !m.retx.contains(&pkt) {
            m.retx.push_front(pkt);
        }
        Self::reschedule(&mut self.sched, j, mi, pol);
        self.probe_pending = true;
        true
    }

    /// The send time of the tail probe if it was acknowledged since the
    /// last call.
    pub(crate) fn take_probe_answer(&mut self) -> Option<Instant> {
        self.probe_answer.take()
    }
}
