//! Announced jobs on the receive side: the JOB that opens one (checked
//! against the limits) and the FIN that ends it, with its report.

use super::{RecvGroup, RecvJob, RecvSide};
use crate::bitset::BitSet;
use crate::config::Config;
use crate::event::{Event, EventSink, GroupReport, JobFailure, JobReport, Role};
use crate::stats::DropReason;
use crate::tensor::TensorAssembly;
use crate::time::{Duration, Instant};
use crate::wire::JobRepr;
use std::collections::{BTreeMap, VecDeque};

/// Finished job ids remembered so late packets are ignored quietly.
const RECENT_DONE: usize = 64;

impl RecvSide {
    /// Handles a JOB announcement; `Ok(true)` when it is new.
    /// Messages job `id` announces now (all groups), if the job is open.
    pub(crate) fn announced(&self, id: u32) -> Option<u32> {
        let j = self.jobs.iter().find(|j| j.id == id)?;
        Some(j.groups.iter().map(|g| g.messages).sum())
    }

    pub(crate) fn on_job(
        &mut self,
        now: Instant,
        id: u32,
        repr: JobRepr,
        cfg: &Config,
    ) -> Result<bool, DropReason> {
        if let Some(j) = self.jobs.iter_mut().find(|j| j.id == id) {
            j.last_seen = now; // a resent JOB (or keepalive) keeps it
            truncate(j, &repr)?;
            return Ok(false);
        }
        if self.recent_done.contains(&id) {
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
        let tensor = repr.tensor.map(|t| {
            TensorAssembly::protected(t.dtype, t.total_elems, t.elems_per_chunk, t.protect_bits)
        });
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
            satisfied: false,
            started: now,
            last_seen: now,
            packets: 0,
            bytes: 0,
        });
        Ok(true)
    }

    /// Returns the buffer charges of a job that leaves.
    fn release(&mut self, job: &RecvJob) {
        for g in &job.groups {
            for p in g.partial.values() {
                self.buffered = self.buffered.saturating_sub(p.charged);
            }
            for m in g.held.values() {
                self.buffered = self.buffered.saturating_sub(m.payload.len());
            }
        }
        let bitmap_bytes: usize = job
            .groups
            .iter()
            .map(|g| (g.messages as usize).div_ceil(8))
            .sum();
        let tensor_bytes = job.tensor.as_ref().map_or(0, |t| t.byte_len());
        self.buffered = self.buffered.saturating_sub(bitmap_bytes + tensor_bytes);
    }

    /// Drops every job that saw neither its JOB nor DATA for `idle` (a
    /// sender that vanished, or a JOB that was never followed by data),
    /// releasing what it held; each ends with `PeerUnresponsive`. Its id is
    /// not remembered as finished: late DATA is dropped, never acknowledged.
    pub(crate) fn expire(&mut self, now: Instant, idle: Duration, events: &mut VecDeque<Event>) {
        let mut i = 0;
        while i < self.jobs.len() {
            if now - self.jobs[i].last_seen < idle {
                i += 1;
                continue;
            }
            let job = self.jobs.remove(i);
            self.release(&job);
            events.push_back(Event::JobComplete {
                job: job.id,
                role: Role::Receiver,
                outcome: Err(JobFailure::PeerUnresponsive),
            });
        }
    }

    /// When the stalest job expires, if any job is open.
    // One job open, the common case, inline (the whole was a call of ~19
    // instructions per DATA packet received); several, out of line.
    #[inline(always)]
    pub(crate) fn next_expiry(&self, idle: Duration) -> Option<Instant> {
        match self.jobs.as_slice() {
            [] => None,
            [j] => Some(j.last_seen + idle),
            _ => self.next_expiry_of_many(idle),
        }
    }

    #[inline(never)]
    fn next_expiry_of_many(&self, idle: Duration) -> Option<Instant> {
        self.jobs.iter().map(|j| j.last_seen + idle).min()
    }

    /// Whether job `id` holds `ceil(MSR * N)` of every group, and whether
    /// it just got there (then [`Event::JobSatisfied`] is queued, once).
    #[inline]
    pub(crate) fn satisfied(&mut self, id: u32, events: &mut impl EventSink) -> (bool, bool) {
        let Some(j) = self.jobs.iter_mut().find(|j| j.id == id) else {
            // Finished (FIN seen) or unknown: nothing left to ask for.
            return (self.recent_done.contains(&id), false);
        };
        if j.satisfied {
            return (true, false);
        }
        if j.groups.iter().all(|g| g.delivered >= g.must) {
            j.satisfied = true;
            events.push_back(Event::JobSatisfied { job: id });
            return (true, true);
        }
        (false, false)
    }

    /// The sender finished job `id`: report abandoned messages and the outcome.
    /// Returns `false` for a FIN of a job never seen.
    pub(crate) fn on_fin(&mut self, now: Instant, id: u32, events: &mut impl EventSink) -> bool {
        let Some(ji) = self.jobs.iter().position(|j| j.id == id) else {
            return self.recent_done.contains(&id);
        };
        let job = self.jobs.remove(ji);
        let mut failure = None;
        let mut groups = Vec::with_capacity(job.groups.len());
        // one MessageAbandoned per missing message (pushed below anyway):
        // one reservation instead of a doubling queue
        let missing: usize = job
            .groups
            .iter()
            .map(|g| g.messages.saturating_sub(g.delivered) as usize)
            .sum();
        events.reserve(missing + 2);
        for g in &job.groups {
            g.done.for_each_clear(g.messages as usize, |m| {
                events.push_back(Event::MessageAbandoned {
                    job: id,
                    group: g.id,
                    msg: m as u32,
                });
            });
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
        self.release(&job);
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
                unsent_bytes: 0,
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
}

/// A known job announced again: the same counts (a resend or keepalive),
/// or smaller ones — the sender ended its stream at what it produced
/// (`Endpoint::end_stream`): each group's N and must-deliver shrink. Any
/// other change (other groups, a count that grows, a message already
/// taken past the new end, a tensor job) is `Inconsistent` and changes
/// nothing.
fn truncate(j: &mut RecvJob, repr: &JobRepr) -> Result<(), DropReason> {
    let same = j.groups.len() == repr.groups.len()
        && j.groups
            .iter()
            .zip(&repr.groups)
            .all(|(g, d)| g.id == d.id && g.messages == d.messages && g.must == d.must_deliver);
    if same {
        return Ok(());
    }
    let fits = j.tensor.is_none()
        && repr.tensor.is_none()
        && j.groups.len() == repr.groups.len()
        && j.groups.iter().zip(&repr.groups).all(|(g, d)| {
            g.id == d.id
                && d.messages <= g.messages
                && d.must_deliver <= d.messages
                && d.must_deliver <= g.must
                && g.partial
                    .keys()
                    .chain(g.held.keys())
                    .all(|&m| m < d.messages)
                && (d.messages..g.messages).all(|m| !g.done.get(m as usize))
        });
    if !fits {
        return Err(DropReason::Inconsistent);
    }
    for (g, d) in j.groups.iter_mut().zip(&repr.groups) {
        g.messages = d.messages;
        g.must = d.must_deliver;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::GroupDesc;

    /// `next_expiry` (one job inline, several out of line) is the stalest
    /// job's last arrival plus the idle timeout, whatever the number of
    /// jobs and the order they were last seen in.
    #[test]
    fn next_expiry_is_the_stalest_jobs() {
        let cfg = Config::default();
        let idle = Duration::from_millis(7);
        let mut r = RecvSide::default();
        assert_eq!(r.next_expiry(idle), None);
        let repr = JobRepr {
            tensor: None,
            groups: vec![GroupDesc {
                id: 0,
                messages: 4,
                must_deliver: 2,
            }],
        };
        let at = |us: u64| Instant::from_nanos(us * 1000);
        // last seen 50, 20, 90 us: the second is the stalest once it exists
        for (id, seen, stalest) in [(1, 50, 50), (2, 20, 20), (3, 90, 20)] {
            assert_eq!(r.on_job(at(seen), id, repr.clone(), &cfg), Ok(true));
            assert_eq!(r.next_expiry(idle), Some(at(stalest) + idle), "job {id}");
        }
        // a resent JOB of job 2 keeps it: job 1 is the stalest now
        assert_eq!(r.on_job(at(95), 2, repr, &cfg), Ok(false));
        assert_eq!(r.next_expiry(idle), Some(at(50) + idle));
    }
}
