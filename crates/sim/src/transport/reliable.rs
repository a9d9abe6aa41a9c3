//! The one reliable, window-based sender: cumulative ACKs, fast retransmit
//! on three duplicate ACKs with NewReno partial-ACK recovery, RFC 6298
//! retransmission timer, go-back-N after a timeout. Congestion control is a
//! plugged-in [`CongestionControl`].

use super::cc::{AckInfo, CongestionControl, Window};
use super::{Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::{Duration, Instant};

/// Retransmission-timer policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoConfig {
    /// Lower bound on the RTO.
    pub min: Duration,
    /// RTO before the first RTT sample.
    pub initial: Duration,
    /// Upper bound after back-off.
    pub max: Duration,
    /// Use `initial` always (pFabric's fixed, small timeout) instead of
    /// RFC 6298 estimation and back-off.
    pub fixed: bool,
}

/// A reliable sender of `total` bytes.
#[derive(Clone, Debug)]
pub struct ReliableSender<C> {
    cc: C,
    w: Window,
    total: u64,
    mss: u32,
    pfabric_rank: bool,
    snd_una: u64,
    snd_nxt: u64,
    high_tx: u64,
    dupacks: u32,
    recover: Option<u64>,
    srtt: Option<f64>,
    rttvar: f64,
    rto: Duration,
    rto_cfg: RtoConfig,
    deadline: Option<Instant>,
    probe: Option<(u64, Instant)>,
    stats: SenderStats,
}

impl<C: CongestionControl> ReliableSender<C> {
    /// A sender of `total` bytes in `mss`-byte segments. With `pfabric_rank`
    /// every segment carries the remaining flow size as its rank.
    pub fn new(cc: C, total: u64, mss: u32, rto_cfg: RtoConfig, pfabric_rank: bool) -> Self {
        let m = mss as f64;
        let w = Window {
            cwnd: cc.initial_cwnd(m),
            ssthresh: f64::INFINITY,
            mss: m,
        };
        ReliableSender {
            cc,
            w,
            total,
            mss,
            pfabric_rank,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            dupacks: 0,
            recover: None,
            srtt: None,
            rttvar: 0.0,
            rto: rto_cfg.initial,
            rto_cfg,
            deadline: None,
            probe: None,
            stats: SenderStats::default(),
        }
    }

    /// Current congestion window in bytes.
    pub fn cwnd(&self) -> f64 {
        self.w.cwnd
    }

    /// The congestion-control policy.
    pub fn cc(&self) -> &C {
        &self.cc
    }

    fn segment(&mut self, now: Instant, seq: u64, out: &mut Outbox) {
        let len = (self.total - seq).min(self.mss as u64) as u32;
        let retx = seq < self.high_tx;
        if retx {
            self.stats.retx_pkts += 1;
            // Karn: never time a retransmitted segment
            if matches!(self.probe, Some((end, _)) if end > seq) {
                self.probe = None;
            }
        } else if self.probe.is_none() {
            self.probe = Some((seq + len as u64, now));
        }
        self.stats.sent_pkts += 1;
        self.high_tx = self.high_tx.max(seq + len as u64);
        out.push(Segment {
            hdr: Hdr {
                kind: Kind::Data,
                seq,
                len,
                ack: 0,
                ece: false,
            },
            rank: if self.pfabric_rank {
                self.total - self.snd_una
            } else {
                0
            },
            retx,
        });
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
    }

    fn send_window(&mut self, now: Instant, out: &mut Outbox) {
        while self.snd_nxt < self.total {
            let flight = self.snd_nxt - self.snd_una;
            let len = (self.total - self.snd_nxt).min(self.mss as u64);
            if flight > 0 && (flight + len) as f64 > self.w.cwnd {
                break;
            }
            let seq = self.snd_nxt;
            self.snd_nxt += len;
            self.segment(now, seq, out);
        }
    }

    fn sample_rtt(&mut self, now: Instant) {
        let Some((end, t)) = self.probe else { return };
        if self.snd_una < end {
            return;
        }
        self.probe = None;
        let r = (now - t).as_nanos() as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        if !self.rto_cfg.fixed {
            let est = self.srtt.unwrap_or(r) + 4.0 * self.rttvar;
            let ns = (est as u64).clamp(self.rto_cfg.min.as_nanos(), self.rto_cfg.max.as_nanos());
            self.rto = Duration::from_nanos(ns);
        }
    }

    fn restart_timer(&mut self, now: Instant) {
        self.deadline = if self.snd_una < self.snd_nxt {
            Some(now + self.rto)
        } else {
            None
        };
    }
}

impl<C: CongestionControl> Sender for ReliableSender<C> {
    fn start(&mut self, now: Instant, out: &mut Outbox) {
        self.send_window(now, out);
    }

    fn on_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox) {
        if hdr.kind != Kind::Ack || self.finished() {
            return;
        }
        let ack = hdr.ack.min(self.total);
        if ack > self.snd_una {
            let flight = self.snd_nxt.saturating_sub(self.snd_una);
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack; // go-back-N caught up by a cumulative ACK
            }
            self.dupacks = 0;
            self.sample_rtt(now);
            match self.recover {
                Some(r) if ack < r => {
                    // NewReno partial ACK: the next hole is lost too
                    let seq = self.snd_una;
                    self.segment(now, seq, out);
                }
                Some(_) => {
                    self.recover = None;
                    self.w.cwnd = self.w.ssthresh.max(self.w.mss);
                }
                None => {
                    let info = AckInfo {
                        acked,
                        ece: hdr.ece,
                        snd_una: self.snd_una,
                        snd_nxt: self.snd_nxt,
                        flight,
                    };
                    self.cc.on_ack(&mut self.w, &info);
                }
            }
            self.restart_timer(now);
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                let flight = self.snd_nxt - self.snd_una;
                self.cc.on_fast_loss(&mut self.w, flight);
                self.recover = Some(self.snd_nxt);
                let seq = self.snd_una;
                self.segment(now, seq, out);
                self.restart_timer(now);
            }
        }
        self.send_window(now, out);
    }

    fn on_timer(&mut self, now: Instant, out: &mut Outbox) {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.finished() {
            self.deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_timeout(&mut self.w, flight);
        self.recover = None;
        self.dupacks = 0;
        self.probe = None;
        if self.cc.go_back_n() {
            self.snd_nxt = self.snd_una;
        } else {
            let seq = self.snd_una;
            self.segment(now, seq, out);
        }
        if !self.rto_cfg.fixed {
            let ns = self
                .rto
                .as_nanos()
                .saturating_mul(2)
                .min(self.rto_cfg.max.as_nanos());
            self.rto = Duration::from_nanos(ns);
        }
        self.deadline = None;
        self.send_window(now, out);
        self.restart_timer(now);
    }

    fn timer(&self) -> Option<Instant> {
        self.deadline
    }

    fn finished(&self) -> bool {
        self.snd_una >= self.total
    }

    fn stats(&self) -> SenderStats {
        self.stats
    }

    fn ect(&self) -> bool {
        self.cc.ect()
    }
}
