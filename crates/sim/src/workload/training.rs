//! Distributed-training jobs (seed 001): workers that alternate a compute
//! phase with a communication phase, with a barrier per iteration.
//!
//! * parameter server: every worker pushes its gradient to the server
//!   (an incast); when all pushes arrived the server sends the model back to
//!   every worker; then the next compute phase starts.
//! * ring all-reduce: 2 (N - 1) steps; in each, every worker sends 1/N of
//!   the gradient to its successor; a step ends when all N transfers ended.
//!
//! Each transfer is a job of `messages` equal messages with the class's MSR,
//! so a bounded-loss transport (e.g. `dctcp-es` with MSR = 1 - bound) ends a
//! transfer once the fraction arrived. The driver is a small state machine:
//! the simulator tells it when the compute timer fires and when one of its
//! transfers completes; it answers with the transfers to start.

use approxnet_proto::time::{Duration, Instant};

/// Parameter server or ring all-reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Push to a server, pull back from it.
    ParameterServer {
        /// The server host.
        server: u32,
    },
    /// Ring all-reduce over the workers in list order.
    Ring,
}

/// A training job as the scenario gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingSpec {
    /// Name in the output.
    pub name: String,
    /// Worker hosts.
    pub workers: Vec<u32>,
    /// Communication pattern.
    pub collective: Collective,
    /// Iterations to run.
    pub iterations: u32,
    /// Compute time per iteration.
    pub compute: Duration,
    /// Gradient (= model) bytes per worker.
    pub gradient_bytes: u64,
    /// Messages each transfer is split into.
    pub messages: u32,
    /// First compute phase starts here.
    pub start: Instant,
}

/// A transfer the driver wants started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Sender host.
    pub src: u32,
    /// Receiver host.
    pub dst: u32,
    /// Bytes.
    pub bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Compute,
    Push,
    Pull,
    Ring(u32),
    Done,
}

/// The state of one training job.
#[derive(Clone, Debug)]
pub struct Training {
    /// What it runs.
    pub spec: TrainingSpec,
    phase: Phase,
    pending: u32,
    iter: u32,
    iter_start: Instant,
    /// `(start, end)` of every finished iteration (compute included).
    pub iterations: Vec<(Instant, Instant)>,
}

impl Training {
    /// A training job that has not started.
    pub fn new(spec: TrainingSpec) -> Training {
        let start = spec.start;
        Training {
            spec,
            phase: Phase::Compute,
            pending: 0,
            iter: 0,
            iter_start: start,
            iterations: Vec::new(),
        }
    }

    /// When the training finished, if it did.
    pub fn done(&self) -> Option<Instant> {
        (self.phase == Phase::Done)
            .then(|| self.iterations.last().map(|x| x.1))
            .flatten()
    }

    fn launch(&mut self, v: Vec<Transfer>) -> Vec<Transfer> {
        self.pending = v.len() as u32;
        v
    }

    fn ring_step(&mut self) -> Vec<Transfer> {
        let w = &self.spec.workers;
        let n = w.len() as u64;
        let chunk = (self.spec.gradient_bytes / n).max(1);
        let v = (0..w.len())
            .map(|i| Transfer {
                src: w[i],
                dst: w[(i + 1) % w.len()],
                bytes: chunk,
            })
            .collect();
        self.launch(v)
    }

    /// The compute phase ended: start the communication phase.
    pub fn compute_done(&mut self) -> Vec<Transfer> {
        if self.phase != Phase::Compute {
            return Vec::new();
        }
        let g = self.spec.gradient_bytes;
        match self.spec.collective {
            Collective::ParameterServer { server } => {
                self.phase = Phase::Push;
                let v = self
                    .spec
                    .workers
                    .iter()
                    .map(|&w| Transfer {
                        src: w,
                        dst: server,
                        bytes: g,
                    })
                    .collect();
                self.launch(v)
            }
            Collective::Ring => {
                self.phase = Phase::Ring(0);
                self.ring_step()
            }
        }
    }

    /// One of the current phase's transfers completed at `now`. Returns the
    /// next transfers, or the time the next compute phase ends (`Err`), or
    /// nothing while the phase's barrier is still open.
    pub fn transfer_done(&mut self, now: Instant) -> Result<Vec<Transfer>, Option<Instant>> {
        self.pending = self.pending.saturating_sub(1);
        if self.pending > 0 {
            return Ok(Vec::new());
        }
        let steps = 2 * (self.spec.workers.len() as u32).saturating_sub(1);
        match self.phase {
            Phase::Push => {
                let Collective::ParameterServer { server } = self.spec.collective else {
                    unreachable!("push only in PS mode")
                };
                self.phase = Phase::Pull;
                let g = self.spec.gradient_bytes;
                let v = self
                    .spec
                    .workers
                    .iter()
                    .map(|&w| Transfer {
                        src: server,
                        dst: w,
                        bytes: g,
                    })
                    .collect();
                Ok(self.launch(v))
            }
            Phase::Ring(s) if s + 1 < steps => {
                self.phase = Phase::Ring(s + 1);
                Ok(self.ring_step())
            }
            Phase::Pull | Phase::Ring(_) => {
                self.iterations.push((self.iter_start, now));
                self.iter += 1;
                if self.iter >= self.spec.iterations {
                    self.phase = Phase::Done;
                    return Err(None);
                }
                self.phase = Phase::Compute;
                self.iter_start = now;
                Err(Some(now + self.spec.compute))
            }
            Phase::Compute | Phase::Done => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(c: Collective, workers: u32) -> TrainingSpec {
        TrainingSpec {
            name: "t".into(),
            workers: (0..workers).collect(),
            collective: c,
            iterations: 2,
            compute: Duration::from_micros(10),
            gradient_bytes: 4000,
            messages: 4,
            start: Instant::ZERO,
        }
    }

    #[test]
    fn parameter_server_pushes_then_pulls_then_computes() {
        let mut t = Training::new(spec(Collective::ParameterServer { server: 9 }, 3));
        let push = t.compute_done();
        assert_eq!(push.len(), 3);
        assert!(push.iter().all(|x| x.dst == 9 && x.bytes == 4000));
        let now = Instant::from_nanos(50);
        assert_eq!(t.transfer_done(now), Ok(vec![]));
        assert_eq!(t.transfer_done(now), Ok(vec![]));
        let pull = t.transfer_done(now).unwrap();
        assert!(pull.iter().all(|x| x.src == 9));
        t.transfer_done(now).unwrap();
        t.transfer_done(now).unwrap();
        let next = t.transfer_done(Instant::from_nanos(80));
        assert_eq!(next, Err(Some(Instant::from_nanos(10_080))));
        assert_eq!(t.iterations.len(), 1);
    }

    #[test]
    fn ring_runs_two_n_minus_one_steps_per_iteration() {
        let mut t = Training::new(spec(Collective::Ring, 4));
        let mut steps = 0;
        let mut cur = t.compute_done();
        let end = loop {
            steps += 1;
            assert_eq!(cur.len(), 4);
            assert!(cur.iter().all(|x| x.bytes == 1000));
            let mut next = Ok(vec![]);
            for _ in 0..4 {
                next = t.transfer_done(Instant::from_nanos(steps));
            }
            match next {
                Ok(v) => cur = v,
                Err(e) => break e,
            }
        };
        assert_eq!(steps, 6);
        assert!(end.is_some());
        // second iteration, then done
        let mut cur = t.compute_done();
        for s in 0..6 {
            let mut next = Ok(vec![]);
            for _ in 0..cur.len() {
                next = t.transfer_done(Instant::from_nanos(100 + s));
            }
            match next {
                Ok(v) => cur = v,
                Err(e) => {
                    assert_eq!(e, None);
                    break;
                }
            }
        }
        assert!(t.done().is_some());
        assert_eq!(t.iterations.len(), 2);
    }
}
