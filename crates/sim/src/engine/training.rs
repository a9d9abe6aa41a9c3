//! Glue between the simulator and distributed-training drivers: compute
//! timers and transfer completions in, new transfers (jobs) out.

use super::Simulator;
use crate::event::Ev;
use crate::job::{Job, JobCounters};
use crate::scheme::Scheme;
use crate::workload::training::{Training, Transfer};
use approxnet_proto::time::Instant;

/// A training job and how its transfers are sent.
#[derive(Clone, Debug)]
pub struct TrainingRun {
    /// The driver.
    pub state: Training,
    /// Job class of its transfers (for the output).
    pub class: u32,
    /// Transport scheme of its transfers.
    pub scheme: Scheme,
    /// MSR of each transfer (1 - loss bound).
    pub msr: f64,
    /// Whether transfers may stop at the MSR.
    pub approximate: bool,
    /// Switch queue of native transfers.
    pub queue: u8,
}

impl Simulator {
    /// Adds a training job; its first compute phase starts at `spec.start`.
    pub fn add_training(&mut self, run: TrainingRun) -> u32 {
        let id = self.trainings.len() as u32;
        let first = run.state.spec.start + run.state.spec.compute;
        self.trainings.push(run);
        self.events.schedule(first, Ev::TrainingCompute { id });
        id
    }

    pub(super) fn training_compute(&mut self, now: Instant, id: u32) {
        let v = self.trainings[id as usize].state.compute_done();
        self.launch_transfers(now, id, v);
    }

    fn launch_transfers(&mut self, now: Instant, id: u32, v: Vec<Transfer>) {
        let t = &self.trainings[id as usize];
        let (class, scheme, msr, approximate, queue) =
            (t.class, t.scheme, t.msr, t.approximate, t.queue);
        let n = t.state.spec.messages.max(1) as u64;
        for tr in v {
            let base = tr.bytes / n;
            let msgs: Vec<u64> = (0..n)
                .map(|i| base + u64::from(i < tr.bytes % n))
                .filter(|&b| b > 0)
                .collect();
            let job = Job {
                id: 0,
                class,
                src: tr.src,
                dst: tr.dst,
                start: now,
                needed: Job::needed_for(msgs.len() as u32, msr, approximate),
                ready_ns: Vec::new(),
                msgs,
                msr,
                scheme,
                approximate,
                sent_msgs: 0,
                delivered: 0,
                delivered_bytes: 0,
                done: None,
                flow: None,
                counters: JobCounters::default(),
            };
            let j = self.add_job(job, queue);
            self.job_training.resize(self.jobs.len(), None);
            self.job_training[j as usize] = Some(id);
        }
    }

    /// A job met its MSR at `now`: if a training job owns it, advance it.
    pub(super) fn job_finished(&mut self, now: Instant, j: u32) {
        let Some(Some(id)) = self.job_training.get(j as usize).copied() else {
            return;
        };
        match self.trainings[id as usize].state.transfer_done(now) {
            Ok(v) => self.launch_transfers(now, id, v),
            Err(Some(t)) => self.events.schedule(t, Ev::TrainingCompute { id }),
            Err(None) => {}
        }
    }
}
