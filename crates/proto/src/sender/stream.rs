//! Streaming jobs and early completion (seed 000 §2.2, §3.3.2).
//!
//! A job announces each group's N up front; the application hands messages
//! over as it produces them ([`SendSide::push_messages`]). A job is complete
//! once every group has `ceil(MSR * N)` messages delivered — learnt from the
//! ACKs (every packet of a message acknowledged) or from the receiver's
//! SATISFIED flag, whichever comes first. Then what is left of it stops:
//! nothing more is sent or retransmitted for it, and messages handed over
//! later are discarded ("messages produced after that are not sent at the
//! job's expense").

use super::plan::check_message;
use super::{MsgState, SendJob, SendMsg, SendSide, APPROX_CRC_LEN};
use crate::config::Config;
use crate::job::{JobError, MessageSpec};
use crate::policy::Policies;

/// What became of messages handed to a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Queued for sending: this many.
    Queued(usize),
    /// The job had already met its MSR (or was cancelled): nothing queued.
    JobComplete,
}

impl SendJob {
    /// Messages the job announces, all groups.
    pub(crate) fn announced(&self) -> u32 {
        self.groups.iter().map(|g| g.messages).sum()
    }

    /// Every group holds `ceil(MSR * N)` at the receiver, and the receiver
    /// knows the job (a group that must deliver nothing is satisfied at
    /// once, but the job still waits for its JOB to be acknowledged).
    pub(crate) fn satisfied(&self) -> bool {
        if self.ended {
            return self.job_acked && self.groups.iter().all(|g| g.delivered >= g.must);
        }
        self.peer_satisfied
            || ((self.job_acked || self.groups.iter().any(|g| g.delivered > 0))
                && self.groups.iter().all(|g| g.delivered >= g.must))
    }
}

/// Entries [`SendSide::push_messages`] counts on the stack.
const SMALL: usize = 16;

/// The most messages a push reserves room for beyond those it queues: a
/// stream announced with a large N (an open-ended one) grows its list by
/// doubling past it, as before.
const RESERVE_MAX: usize = 1024;

/// `n` zeroed entries: the first `n` of `small` when they fit, else `big`
/// grown to `n` zeros.
fn on_stack_or_heap<'a, T: Copy + Default>(
    small: &'a mut [T; SMALL],
    big: &'a mut Vec<T>,
    n: usize,
) -> &'a mut [T] {
    if n <= SMALL {
        &mut small[..n]
    } else {
        big.resize(n, T::default());
        big
    }
}

impl SendSide {
    /// Whether a job still open has announced messages not produced yet.
    pub(crate) fn producing(&self) -> bool {
        self.jobs
            .iter()
            .any(|j| !j.done && !j.ended && j.groups.iter().any(|g| g.produced < g.messages))
    }

    /// Hands messages of a streaming job over as they are produced. Checked
    /// as a whole before any is taken: an unknown group, a group past its
    /// announced N, a bad precise prefix or a message too large is an error
    /// and nothing is queued. `msgs` is drained when they are queued (its
    /// allocation stays with the caller, who may fill it again: a
    /// simulated producer hands over a message at a time) and left as it
    /// was otherwise.
    pub(crate) fn push_messages(
        &mut self,
        job: u32,
        msgs: &mut Vec<MessageSpec>,
        cfg: &Config,
        pol: &Policies,
    ) -> Result<Pushed, JobError> {
        let Some(ji) = self.job_index(job) else {
            // Issued earlier and forgotten since it finished: complete.
            let issued = self.next_job_id.wrapping_sub(job).wrapping_sub(1) < 1 << 31;
            return if issued && self.next_job_id != 0 {
                Ok(Pushed::JobComplete)
            } else {
                Err(JobError::UnknownJob(job))
            };
        };
        let j = &mut self.jobs[ji];
        if j.done && !j.extra {
            return Ok(Pushed::JobComplete);
        }
        let per_packet = cfg.max_payload() - APPROX_CRC_LEN;
        // Counted on the stack for the usual few groups and messages per
        // call (a simulated or real producer hands over a message or a few
        // at a time): two allocations per call were most of its cost.
        let (mut extra_small, mut extra_big) = ([0u32; SMALL], Vec::new());
        let extra = on_stack_or_heap(&mut extra_small, &mut extra_big, j.groups.len());
        let (mut gidx_small, mut gidx_big) = ([0u16; SMALL], Vec::new());
        let gidx = on_stack_or_heap(&mut gidx_small, &mut gidx_big, msgs.len());
        for (i, m) in msgs.iter().enumerate() {
            let gi = check_message(i, m, per_packet, |id| {
                j.groups.iter().position(|g| g.id == id)
            })?;
            let g = &j.groups[gi];
            if g.produced + extra[gi] >= g.messages {
                return Err(JobError::GroupFull {
                    group: g.id,
                    announced: g.messages,
                    msg: i,
                });
            }
            extra[gi] += 1;
            gidx[i] = gi as u16;
        }
        let n = msgs.len();
        // The job's message list grows to its announced N at most: room
        // for the rest of it (up to `RESERVE_MAX` more) at the first push
        // that needs any, not a doubling and a copy every few pushes (~770
        // instructions a push of a 50-message job one message at a time).
        // `reserve` still at least doubles, so a long stream's growth stays
        // geometric.
        if j.msgs.capacity() - j.msgs.len() < n {
            let left = (j.announced() as usize).saturating_sub(j.msgs.len());
            j.msgs.reserve(left.clamp(n, RESERVE_MAX.max(n)));
        }
        for (m, &gi) in msgs.drain(..).zip(gidx.iter()) {
            let g = &mut j.groups[gi as usize];
            let msg_id = g.produced;
            g.produced += 1;
            g.fresh += 1;
            j.bytes += m.payload.len() as u64;
            j.msgs.push(SendMsg::new(
                gi,
                msg_id,
                m,
                per_packet,
                cfg.packet_split,
                None,
            ));
            let mi = j.msgs.len() - 1;
            j.max_pkts = j.max_pkts.max(j.msgs[mi].pkt_count);
            Self::reschedule(&mut self.sched, j, mi, pol);
        }
        Ok(Pushed::Queued(n))
    }

    /// Ends streaming job `job` at the messages produced so far (an
    /// open-ended stream, e.g. a SAP socket's datagrams, seed 002 §3.4):
    /// each group's N becomes its produced count and its must-deliver
    /// `ceil(MSR * produced)`. The JOB is announced again with the new
    /// counts (the caller queues it); the job finishes once the receiver
    /// acknowledged that JOB and every message handed over was sent and
    /// resolved (delivered, or lost and given up under its MSR) — not at
    /// its MSR with messages still queued. Returns whether
    /// anything changed (ending an ended stream is a no-op).
    pub(crate) fn end_stream(&mut self, job: u32) -> Result<bool, JobError> {
        let ji = self.job_index(job).ok_or(JobError::UnknownJob(job))?;
        let j = &mut self.jobs[ji];
        if j.done || j.ended {
            return Ok(false);
        }
        if j.repr.tensor.is_some() {
            return Err(JobError::TensorStreaming);
        }
        for (g, d) in j.groups.iter_mut().zip(j.repr.groups.iter_mut()) {
            let dropped = g.messages - g.produced;
            j.unresolved -= dropped;
            g.messages = g.produced;
            g.must = crate::job::Msr::new(g.msr)
                .map_err(|_| JobError::BadMsr(g.msr))?
                .must_deliver(g.produced);
            d.messages = g.messages;
            d.must_deliver = g.must;
        }
        j.ended = true;
        j.job_acked = false;
        j.peer_satisfied = false;
        Ok(true)
    }

    /// Job index `ji` is complete: every open message is abandoned and
    /// leaves the scheduler; messages never produced count as abandoned.
    /// With `keep_unsent` (send more), messages of which nothing was sent
    /// stay open as extra data (the report still counts them unsent and
    /// abandoned: the job's outcome is fixed here).
    pub(super) fn stop_job(&mut self, ji: usize, keep_unsent: bool) {
        let j = &mut self.jobs[ji];
        let id = j.id;
        let mut queued = 0;
        for mi in 0..j.msgs.len() {
            let m = &mut j.msgs[mi];
            if m.state != MsgState::Open {
                continue;
            }
            let unsent = m.next_new == 0 && m.retx.is_empty();
            if unsent {
                j.unsent_bytes += m.payload.len() as u64;
                if keep_unsent {
                    continue;
                }
            }
            m.state = MsgState::Abandoned;
            m.retx.clear();
            queued += usize::from(m.key.is_some());
        }
        // Off the scheduler queue: when many go at once (an MSR < 1 job
        // satisfied with half its messages never sent) the queue is rebuilt
        // from its sorted survivors (a bulk build, no rebalancing: a tenth
        // of a removal each), otherwise a removal each.
        let bulk = queued * 8 > self.sched.len();
        if bulk {
            let msgs = &j.msgs;
            self.sched.rebuild_keeping(|&(_, o)| {
                (o >> 32) as u32 != id
                    || msgs
                        .get(o as u32 as usize)
                        .is_some_and(|m| m.state == MsgState::Open)
            });
        }
        for (mi, m) in j.msgs.iter_mut().enumerate() {
            if m.state == MsgState::Abandoned {
                match m.key.take() {
                    Some(k) if !bulk => {
                        self.sched
                            .remove(&(k, super::transmit::order(id, mi as u32)));
                    }
                    _ => {}
                }
            }
        }
        for g in &mut j.groups {
            g.abandoned = g.messages - g.delivered;
        }
        j.unresolved = 0;
    }
}
