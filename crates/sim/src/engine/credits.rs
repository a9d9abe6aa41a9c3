//! Aeolus's receiver side in the simulator: which flows want credits, and
//! the per-host credit pacer's events (see `transport::credit`).

use super::Simulator;
use crate::event::Ev;
use crate::packet::Kind;
use approxnet_proto::time::Instant;

impl Simulator {
    /// Something of Aeolus flow `fid` reached its receiver: data, a probe,
    /// or the sender's CREDIT_STOP / CREDIT_REQUEST.
    pub(super) fn aeolus_receiver(&mut self, now: Instant, fid: u32, kind: Kind) {
        let f = &mut self.flows[fid as usize];
        let done = f.rx_complete() || (f.early_stop && f.enough_at.is_some());
        f.wants_credits = match kind {
            _ if done => false,
            Kind::CreditStop => false,
            // the first data packet or the probe asks for credits (Aeolus:
            // the first packet carries the credit request); CREDIT_REQUEST
            // after a stop; later data keeps the current state
            Kind::Data => f.wants_credits || f.credit_requests == 0,
            _ => true,
        };
        if matches!(kind, Kind::Data | Kind::Probe | Kind::CreditRequest) {
            f.credit_requests += 1;
        }
        if !f.wants_credits {
            return;
        }
        let host = f.dst as usize;
        if self.pacers.len() <= host {
            self.pacers.resize_with(host + 1, Default::default);
        }
        let p = &mut self.pacers[host];
        p.activate(fid);
        if !p.armed {
            p.armed = true;
            self.events.schedule(now, Ev::Credit { host: host as u32 });
        }
    }

    /// Host `host`'s credit pacer: one credit to the next flow in the
    /// round, then wait one full data packet's serialisation time.
    pub(super) fn credit_tick(&mut self, now: Instant, host: u32) {
        let flows = &self.flows;
        let p = &mut self.pacers[host as usize];
        let next = p.next(|fid| {
            let f = &flows[fid as usize];
            f.wants_credits && !f.cancelled
        });
        let Some(fid) = next else {
            p.armed = false;
            return;
        };
        self.credits_sent += 1;
        self.send_control(now, fid, Kind::Credit, 0);
        let nic = self.net.nic(host);
        let d = self.net.ports[nic as usize].tx_time(self.tp.mss + self.tp.header_bytes);
        self.events.schedule(now + d, Ev::Credit { host });
    }
}
