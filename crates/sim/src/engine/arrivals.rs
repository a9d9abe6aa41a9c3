//! Generated jobs created when they arrive, not at setup.
//!
//! A scenario's workload used to become a `Job` and a `JobStart` event
//! per generated job before the run (10^5-10^6 of them on a large
//! fat-tree, ~1 KB each with their message lists, written once at setup
//! and then cold). Now the plans come one at a time from
//! [`crate::workload::Arrivals`] and a job is built at its arrival.
//!
//! Same order as before: the `JobStart` events were scheduled before any
//! other event, so each ran before everything else due at its nanosecond,
//! in plan order. [`Simulator::next_event`] keeps that: it pops only the
//! events due before the next arrival, then starts the arriving job (the
//! clock moves to its time and it counts as an executed event, as its
//! `JobStart` did). Job indices are the plans' positions, as before; a
//! job added during the run (a training transfer) takes the next index
//! after every generated job, as it did when they were all added first,
//! and the generated jobs not yet arrived keep their places
//! ([`Job::not_arrived`]).

use super::Simulator;
use crate::event::Packed;
use crate::job::Job;
use crate::workload::{Arrivals, JobClass};
use approxnet_proto::time::Instant;

/// The generated jobs still to arrive.
pub(crate) struct Pending {
    arrivals: Arrivals,
    /// The classes (a job's constants) and their switch queues.
    classes: Vec<JobClass>,
    /// Index of the next generated job.
    next_id: u32,
    /// Indices below this belong to generated jobs.
    reserved: u32,
}

impl Simulator {
    /// Creates the jobs of `arrivals` (from `classes`) as they arrive;
    /// they take the job indices from the present count on.
    pub fn add_arrivals(&mut self, arrivals: Arrivals, classes: &[JobClass]) {
        let n = arrivals.remaining();
        let start = self.jobs.len() as u32;
        self.set_next_arrival(arrivals.peek_start().map_or(u64::MAX, Instant::as_nanos));
        self.pending = Some(Box::new(Pending {
            arrivals,
            classes: classes.to_vec(),
            next_id: start,
            reserved: start + u32::try_from(n).expect("under 2^32 jobs"),
        }));
    }

    /// Generated jobs in all (arrived or not).
    pub fn job_count(&self) -> usize {
        self.jobs
            .len()
            .max(self.pending.as_ref().map_or(0, |p| p.reserved as usize))
    }

    /// The first index free for a job added now (past every generated
    /// job's), with the lists grown to it.
    pub(super) fn next_job_index(&mut self) -> u32 {
        let reserved = self.pending.as_ref().map_or(0, |p| p.reserved);
        while (self.jobs.len() as u32) < reserved {
            let id = self.jobs.len() as u32;
            self.jobs.push(Job::not_arrived(id));
            self.job_queue.push(0);
            self.job_produced.push(0);
        }
        self.jobs.len() as u32
    }

    /// The next event to run: every generated job arriving before it (or
    /// at its nanosecond) is started first.
    #[inline]
    pub(super) fn next_event(&mut self) -> Option<(Instant, Packed)> {
        loop {
            // events due by the end and before the next arrival
            // (`pop_limit`; none before one at 0), else the arrival, if it
            // comes by the end
            if self.next_arrival > 0 {
                if let Some(e) = self.events.pop_packed_until(self.pop_limit.min(self.end)) {
                    return Some(e);
                }
            }
            if self.next_arrival > self.end.as_nanos() {
                return None;
            }
            self.arrive_job(Instant::from_nanos(self.next_arrival));
        }
    }

    /// Sets the next arrival (`u64::MAX`: none) and the latest event time
    /// the loop pops before it.
    fn set_next_arrival(&mut self, t: u64) {
        self.next_arrival = t;
        self.pop_limit = Instant::from_nanos(t.saturating_sub(1));
    }

    /// Builds and starts the next generated job, which arrives at `now`.
    #[inline(never)]
    fn arrive_job(&mut self, now: Instant) {
        let p = self.pending.as_mut().expect("a job to arrive");
        let plan = p.arrivals.next().expect("a job to arrive");
        let class = &p.classes[plan.class as usize];
        let queue = class.queue;
        let id = p.next_id;
        p.next_id += 1;
        let job = Job {
            id,
            ..Job::from_plan(plan, class)
        };
        let next = p.arrivals.peek_start().map_or(u64::MAX, Instant::as_nanos);
        self.set_next_arrival(next);
        if let Some(slot) = self.jobs.get_mut(id as usize) {
            // its place was kept (a job was added past the generated ones)
            *slot = job;
            self.job_queue[id as usize] = queue;
        } else {
            debug_assert_eq!(self.jobs.len(), id as usize);
            self.jobs.push(job);
            self.job_queue.push(queue);
            self.job_produced.push(0);
        }
        self.events.run_outside(now);
        self.start_job(now, id);
    }
}
