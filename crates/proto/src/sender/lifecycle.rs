//! The job lifecycle of the sending side: whether a job has finished
//! (all resolved, or `ceil(MSR * N)` of every group, seed 000 §3.3.2), its
//! report, deferred FINs, teardown and failure.

use super::{Fate, MsgState, SendJob, SendSide};
use crate::event::{GroupReport, JobReport};
use crate::policy::Policies;
use crate::time::Instant;

impl SendSide {
    /// Whether [`SendSide::take_finished`] or [`SendSide::take_fin_ready`]
    /// could find a job: one not done that is finished, or one whose FIN
    /// waits. Most ACKs find none; this one pass spares them both calls.
    #[inline]
    pub(crate) fn may_finish(&self) -> bool {
        self.jobs
            .iter()
            .any(|j| j.fin_deferred || (!j.done && Self::finished(j)))
    }

    /// Whether `j` has finished (see [`SendSide::take_finished`]).
    #[inline(always)]
    fn finished(j: &SendJob) -> bool {
        // An ended stream finishes once the receiver knows its new
        // counts and every message it was handed was sent and
        // resolved: the application ended it, so it does not stop at
        // its MSR with datagrams still queued (SAP's close sends them).
        if j.ended {
            j.job_acked && j.unresolved == 0
        } else {
            j.unresolved == 0 || j.satisfied()
        }
    }

    /// Jobs that just resolved every message, or whose every group reached
    /// `ceil(MSR * N)` (seed 000 §3.3.2): marks them done, abandons what is
    /// left of them (never sent, nor retransmitted) and returns their
    /// reports.
    /// With `send_more`, a satisfied job that still has messages keeps its
    /// never-sent ones as extra data (`Config::send_more`) for at most
    /// `extra_for`.
    pub(crate) fn take_finished(
        &mut self,
        now: Instant,
        send_more: bool,
        extra_for: crate::time::Duration,
        pol: &Policies,
    ) -> Vec<JobReport> {
        let mut out = Vec::new();
        for ji in 0..self.jobs.len() {
            let j = &self.jobs[ji];
            if j.done || !Self::finished(j) {
                continue;
            }
            let extra = send_more && !j.ended && j.unresolved > 0;
            self.stop_job(ji, extra);
            let j = &mut self.jobs[ji];
            j.done = true;
            j.extra = extra;
            j.fin_deferred = extra;
            j.extra_until = now + extra_for;
            if extra {
                // their keys move behind every other job's
                for mi in 0..j.msgs.len() {
                    Self::reschedule(&mut self.sched, j, mi, pol);
                }
            }
            j.control_sent = None;
            out.push(j.report(now));
        }
        out
    }

    /// Jobs whose FIN waited for their extra data (send more) and may go
    /// now: nothing of theirs open or in flight, or their time for extra
    /// data is over (what is left is given up: extra data is best effort,
    /// and a job must not stay open for it). Clears the wait.
    pub(crate) fn take_fin_ready(&mut self, now: Instant, pol: &Policies) -> Vec<u32> {
        let mut out = Vec::new();
        for ji in 0..self.jobs.len() {
            let j = &self.jobs[ji];
            if !j.fin_deferred {
                continue;
            }
            let expired = now >= j.extra_until;
            let resolved = !j.groups.iter().any(|g| g.produced < g.messages)
                && !j.msgs.iter().any(|m| m.state == MsgState::Open)
                && !self
                    .flights
                    .iter()
                    .any(|f| f.job == j.id && f.fate == Fate::InFlight);
            if !expired && !resolved {
                continue;
            }
            let j = &mut self.jobs[ji];
            j.fin_deferred = false;
            j.extra = false; // later production is refused, as without send more
            for mi in 0..j.msgs.len() {
                let m = &mut j.msgs[mi];
                if m.state == MsgState::Open {
                    m.state = MsgState::Abandoned;
                    m.retx.clear();
                }
                Self::reschedule(&mut self.sched, j, mi, pol);
            }
            out.push(j.id);
        }
        out
    }

    /// Forgets jobs that are done and whose FIN was acknowledged.
    pub(crate) fn reap(&mut self) {
        let flights = &self.flights;
        self.jobs
            .retain(|j| !(j.done && j.fin_acked && !flights.iter().any(|f| f.job == j.id)));
    }

    /// Job by id.
    pub(crate) fn job_mut(&mut self, id: u32) -> Option<&mut SendJob> {
        self.jobs.iter_mut().find(|j| j.id == id)
    }

    /// Whether a job is still sending (not every message resolved).
    pub(crate) fn has_open_jobs(&self) -> bool {
        self.jobs.iter().any(|j| !j.done)
    }

    /// Whether anything is outstanding (data or unacknowledged control).
    pub(crate) fn busy(&self) -> bool {
        self.in_flight > 0 || self.jobs.iter().any(|j| !j.fin_acked)
    }

    /// Fails job `id` alone if the receiver has not acknowledged its JOB
    /// yet (a refusal can only concern a job it never took); returns
    /// whether it did.
    pub(crate) fn fail_unannounced(&mut self, id: u32) -> bool {
        let Some(ji) = self.job_index(id) else {
            return false;
        };
        if self.jobs[ji].job_acked || self.jobs[ji].done {
            return false;
        }
        self.stop_job(ji, false);
        let j = &mut self.jobs[ji];
        j.done = true;
        j.fin_acked = true;
        j.control_sent = None;
        true
    }

    /// Fails every open job (peer gone); returns their ids.
    pub(crate) fn fail_all(&mut self) -> Vec<u32> {
        let ids = self.jobs.iter().filter(|j| !j.done).map(|j| j.id).collect();
        self.jobs.clear();
        self.sched.clear();
        self.flights.clear();
        self.unacked.clear();
        self.recent_lost.clear();
        self.late_clean.clear();
        self.spurious_epochs.clear();
        self.bundles.clear();
        self.pending_bundle.clear();
        self.in_flight = 0;
        self.extra_in_flight = 0;
        ids
    }
}

impl SendJob {
    fn report(&self, now: Instant) -> JobReport {
        JobReport {
            job: self.id,
            groups: self
                .groups
                .iter()
                .map(|g| GroupReport {
                    id: g.id,
                    messages: g.messages,
                    must_deliver: g.must,
                    // The receiver's SATISFIED says it holds at least
                    // `must` even where an ACK was lost on the way.
                    delivered: if self.peer_satisfied {
                        g.delivered.max(g.must)
                    } else {
                        g.delivered
                    },
                    abandoned: g.abandoned,
                })
                .collect(),
            jct: now - self.started,
            packets: self.packets,
            retransmissions: self.retx,
            lost_packets: self.lost,
            lost_by_timer: self.lost_by_timer,
            spurious_losses: self.spurious,
            tail_probes: self.probes,
            bytes: self.bytes,
            unsent_bytes: self.unsent_bytes,
        }
    }
}
