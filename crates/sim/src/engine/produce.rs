//! Message production over time: `Produce` events hand a job's messages to
//! its transport as the application produces them (`Job::ready_ns`).
//!
//! One event per job is pending at a time, at the next message's
//! production time; it releases every message due by then. ATP jobs get
//! them through [`super::adapter::HostAdapter::produce`]; a native flow's
//! sender may send its share of them ([`crate::transport::Sender::produce`])
//! once its connection is set up. A native flow stops producing once
//! EarlySend's stop signal reached it, or once all of its own messages are
//! produced (SampleSend's sample can end before the job's last message).

use super::Simulator;
use crate::event::Ev;
use crate::scheme::Scheme;
use approxnet_proto::time::Instant;

impl Simulator {
    /// Schedules the production of message `next` of job `j`, if any.
    pub(super) fn schedule_production(&mut self, j: u32, next: u32) {
        if let Some(at) = self.jobs[j as usize].ready_at(next) {
            self.events.schedule(at, Ev::Produce { job: j });
        }
    }

    /// A `Produce` event: release job `j`'s messages due by `now`.
    pub(super) fn produce(&mut self, now: Instant, j: u32) {
        let job = &self.jobs[j as usize];
        let from = self.job_produced[j as usize];
        let to = job.ready_by((now - job.start).as_nanos());
        if let (Scheme::Native(..), Some(fid)) = (job.scheme, job.flow) {
            if self.flows[fid as usize].cancelled {
                return; // stopped: the application produces no more
            }
        }
        if to > from {
            self.job_produced[j as usize] = to;
            match job.scheme {
                Scheme::Atp(_) => {
                    let src = job.src;
                    self.ready_io(src);
                    let Some(mut a) = self.adapter.take() else {
                        return;
                    };
                    a.produce(now, &self.jobs[j as usize], from, to, &mut self.io_spare);
                    self.adapter = Some(a);
                    self.apply_io(now, src);
                }
                Scheme::Native(..) => {
                    let Some(fid) = job.flow else { return };
                    let f = &mut self.flows[fid as usize];
                    f.produced = f.bytes_of_job_prefix(to);
                    if f.open {
                        let produced = f.produced;
                        let data = super::flows::with_outbox!(self, fid, |s, out| s
                            .produce(now, produced, &mut out));
                        self.flush_flow(now, fid, data);
                    }
                    if self.flows[fid as usize].produced >= self.flows[fid as usize].bytes {
                        return; // every message of the flow is produced
                    }
                }
            }
        }
        self.schedule_production(j, to.max(from));
    }
}
