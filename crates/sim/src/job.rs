//! Jobs: N messages with a minimal sampling rate, and their outcome.

use crate::scheme::Scheme;
use crate::workload::{JobClass, JobPlan};
use approxnet_proto::job::Msr;
use approxnet_proto::time::Instant;

/// Counters a job's transport reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobCounters {
    /// Data packets sent (retransmissions included).
    pub sent_pkts: u64,
    /// Retransmitted data packets.
    pub retx_pkts: u64,
    /// Packets lost in the network (drops and corruption).
    pub lost_pkts: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
}

/// A running or finished job.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its index.
    pub id: u32,
    /// Its class (index into the scenario's job classes).
    pub class: u32,
    /// Sender host.
    pub src: u32,
    /// Receiver host.
    pub dst: u32,
    /// Arrival.
    pub start: Instant,
    /// Message sizes (emptied when a finished job's flow is freed: see
    /// `engine::slots`; `n_msgs` and `msg_bytes` stay).
    pub msgs: Vec<u64>,
    /// Messages in the job.
    pub n_msgs: u32,
    /// Application bytes of the job.
    pub msg_bytes: u64,
    /// When each message is produced, ns after `start` (non-decreasing);
    /// empty when every message is ready at `start`. Seed 000 §2.2 / §7.1:
    /// jobs produce their messages over time.
    pub ready_ns: Vec<u64>,
    /// Minimal sampling rate.
    pub msr: f64,
    /// Messages that must arrive: ceil(MSR * N) for approximate jobs, N otherwise.
    pub needed: u32,
    /// Transport scheme.
    pub scheme: Scheme,
    /// Tolerates approximation.
    pub approximate: bool,
    /// Messages the sender chose to send (SampleSend sends fewer).
    pub sent_msgs: u32,
    /// Messages delivered.
    pub delivered: u32,
    /// Bytes delivered to the receiver.
    pub delivered_bytes: u64,
    /// When `needed` messages had arrived.
    pub done: Option<Instant>,
    /// Its native flow, if any.
    pub flow: Option<u32>,
    /// Transport counters.
    pub counters: JobCounters,
}

impl Job {
    /// The job of a generated plan of class `c`, not yet started (index 0
    /// until the simulator gives it one).
    pub fn from_plan(p: JobPlan, c: &JobClass) -> Job {
        let n = p.msgs.len() as u32;
        Job {
            id: 0,
            class: p.class,
            src: p.src,
            dst: p.dst,
            start: p.start,
            needed: Job::needed_for(n, c.msr, c.approximate),
            n_msgs: n,
            msg_bytes: p.msgs.iter().sum(),
            msgs: p.msgs,
            ready_ns: p.ready_ns,
            msr: c.msr,
            scheme: c.scheme,
            approximate: c.approximate,
            sent_msgs: 0,
            delivered: 0,
            delivered_bytes: 0,
            done: None,
            flow: None,
            counters: JobCounters::default(),
        }
    }

    /// A place kept for a generated job that has not arrived (it never
    /// starts, and outputs leave it out: they list jobs started by the
    /// end).
    pub fn not_arrived(id: u32) -> Job {
        Job {
            id,
            class: 0,
            src: 0,
            dst: 0,
            start: Instant::FAR_FUTURE,
            msgs: Vec::new(),
            n_msgs: 0,
            msg_bytes: 0,
            ready_ns: Vec::new(),
            msr: 1.0,
            needed: 0,
            scheme: Scheme::Native(
                crate::scheme::Proto::Udp,
                crate::scheme::SenderApprox::Exact,
            ),
            approximate: false,
            sent_msgs: 0,
            delivered: 0,
            delivered_bytes: 0,
            done: None,
            flow: None,
            counters: JobCounters::default(),
        }
    }

    /// Messages that must arrive for a job of `n` messages.
    /// The core's rule (`Msr::must_deliver`, seed 000 §3.3); `msr` was
    /// validated by the scenario (`0 < msr <= 1`).
    pub fn needed_for(n: u32, msr: f64, approximate: bool) -> u32 {
        if !approximate {
            return n;
        }
        Msr::new(msr).map_or(n, |m| m.must_deliver(n))
    }

    /// Messages produced within `elapsed_ns` of the job's start.
    pub fn ready_by(&self, elapsed_ns: u64) -> u32 {
        if self.ready_ns.is_empty() {
            self.n_msgs
        } else {
            self.ready_ns.partition_point(|&t| t <= elapsed_ns) as u32
        }
    }

    /// Production time of message `i`, if the job produces over time and
    /// has such a message.
    pub fn ready_at(&self, i: u32) -> Option<Instant> {
        let t = *self.ready_ns.get(i as usize)?;
        Some(self.start + approxnet_proto::time::Duration::from_nanos(t))
    }

    /// Total application bytes of the job.
    pub fn bytes(&self) -> u64 {
        self.msg_bytes
    }

    /// Job completion time, if done.
    pub fn jct(&self) -> Option<u64> {
        self.done.map(|d| (d - self.start).as_nanos())
    }

    /// Fraction of the job's messages delivered.
    pub fn delivered_fraction(&self) -> f64 {
        if self.n_msgs == 0 {
            return 1.0;
        }
        self.delivered as f64 / self.n_msgs as f64
    }

    /// Fraction of sent data packets lost in the network.
    pub fn loss_rate(&self) -> f64 {
        if self.counters.sent_pkts == 0 {
            return 0.0;
        }
        self.counters.lost_pkts as f64 / self.counters.sent_pkts as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needed_messages() {
        assert_eq!(Job::needed_for(8, 0.5, true), 4);
        assert_eq!(Job::needed_for(8, 0.5, false), 8);
        assert_eq!(Job::needed_for(10, 0.125, true), 2);
        assert_eq!(Job::needed_for(10, 1.0, true), 10);
        assert_eq!(Job::needed_for(3, 0.01, true), 1);
    }
}
