//! Glue between the simulator and distributed-training drivers: compute
//! timers and transfer completions in, new transfers (jobs) out.
//!
//! A transfer completes when its job meets its MSR, except over UDP: UDP
//! gives the receiver no way to wait for a lost datagram (seed 001 §2.3:
//! "no guarantee on the fraction of data received"), so a UDP transfer
//! completes once every datagram it sent was delivered or lost, with
//! whatever fraction arrived (the job's `delivered_msgs` in jobs.csv).

use super::Simulator;
use crate::event::Ev;
use crate::job::{Job, JobCounters};
use crate::scheme::{Proto, Scheme};
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
                n_msgs: msgs.len() as u32,
                msg_bytes: msgs.iter().sum(),
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
            let mss = u64::from(self.tp.mss.max(1));
            let datagrams: u64 = job.msgs.iter().map(|b| b.div_ceil(mss)).sum();
            let j = self.add_job(job, queue);
            self.job_training.resize(self.jobs.len(), None);
            self.job_training[j as usize] = Some(id);
            if matches!(scheme, Scheme::Native(Proto::Udp, _)) && datagrams > 0 {
                self.training_udp_left.insert(j, datagrams);
            }
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

    /// A data packet of native flow `fid` was delivered or lost at `now`:
    /// a UDP transfer of a training job whose last datagram this was
    /// completes now, whatever fraction arrived.
    pub(super) fn training_datagram_resolved(&mut self, now: Instant, fid: u32) {
        // no training transfer pending (every run without training jobs):
        // skip the map's hash of the job, ~20 instructions a data packet
        if self.training_udp_left.is_empty() {
            return;
        }
        self.training_transfer_progress(now, fid);
    }

    /// [`Simulator::training_datagram_resolved`] with transfers pending.
    #[inline(never)]
    fn training_transfer_progress(&mut self, now: Instant, fid: u32) {
        let Some(j) = self.flows.get(fid as usize).map(|f| f.job) else {
            return;
        };
        let Some(left) = self.training_udp_left.get_mut(&j) else {
            return;
        };
        *left = left.saturating_sub(1);
        if *left > 0 {
            return;
        }
        self.training_udp_left.remove(&j);
        let job = &mut self.jobs[j as usize];
        if job.done.is_none() {
            job.done = Some(now);
            self.job_finished(now, j);
        }
    }
}
