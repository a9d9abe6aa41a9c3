//! The one reliable, window-based sender: cumulative ACKs, fast retransmit
//! on three duplicate ACKs with NewReno partial-ACK recovery, RFC 6298
//! retransmission timer, go-back-N after a timeout. Congestion control is a
//! plugged-in [`CongestionControl`].
//!
//! The application may produce the flow's bytes over time
//! ([`Sender::produce`]): the sender never sends past what is produced, and
//! a segment that reaches the produced end is shorter than the MSS (no
//! Nagle delay, as a latency-sensitive key-value service runs).

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
    /// Bytes the application produced so far (`<= total`).
    avail: u64,
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
    /// A sender of `total` bytes in `mss`-byte segments, all produced
    /// already (see [`ReliableSender::with_produced`]). With `pfabric_rank`
    /// every segment carries the remaining flow size as its rank: the
    /// flow's whole planned bytes (all of `total`, produced or not) minus
    /// what is acknowledged, so a flow waiting on its application does not
    /// look shorter than it is.
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
            avail: total,
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

    /// The same sender with only `bytes` produced so far (more come with
    /// [`Sender::produce`]).
    pub fn with_produced(mut self, bytes: u64) -> Self {
        self.avail = bytes.min(self.total);
        self
    }

    /// Bytes the application produced so far.
    pub fn produced(&self) -> u64 {
        self.avail
    }

    /// Next new byte to send (every byte below it was sent at least once).
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
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
        debug_assert!(seq < self.avail, "segment beyond the produced bytes");
        let len = (self.avail - seq).min(self.mss as u64) as u32;
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
            unscheduled: false,
        });
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
    }

    fn send_window(&mut self, now: Instant, out: &mut Outbox) {
        while self.snd_nxt < self.avail {
            let flight = self.snd_nxt - self.snd_una;
            let len = (self.avail - self.snd_nxt).min(self.mss as u64);
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

    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox) {
        self.avail = self.avail.max(produced.min(self.total));
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
        if self.finished() || self.snd_una >= self.avail {
            // nothing unacknowledged (waiting for the application)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::NewReno;

    fn rto() -> RtoConfig {
        RtoConfig {
            min: Duration::from_micros(100),
            initial: Duration::from_micros(100),
            max: Duration::from_millis(10),
            fixed: false,
        }
    }

    fn ack(n: u64) -> Hdr {
        Hdr {
            kind: Kind::Ack,
            seq: 0,
            len: 0,
            ack: n,
            ece: false,
        }
    }

    /// Whatever the window, nothing past the produced bytes is sent, and
    /// produced bytes go out as soon as the window allows.
    #[test]
    fn produce_never_sends_beyond_produced_bytes() {
        let cc = NewReno { init_pkts: 10 };
        let mut s = ReliableSender::new(cc, 100_000, 1000, rto(), false).with_produced(0);
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut out);
        assert!(out.is_empty());
        assert_eq!(s.timer(), None);
        let mut produced = 0;
        let mut acked = 0;
        for step in 0..200u64 {
            produced = (produced + 700 * (step % 3)).min(100_000);
            s.produce(t, produced, &mut out);
            for seg in out.drain(..) {
                assert!(seg.hdr.seq + seg.hdr.len as u64 <= produced);
                acked = acked.max(seg.hdr.seq + seg.hdr.len as u64);
            }
            // every step's production fits the (acknowledged, growing) window
            assert_eq!(s.snd_nxt(), produced);
            s.on_ack(t, &ack(acked), &mut out);
            for seg in out.drain(..) {
                assert!(seg.hdr.seq + seg.hdr.len as u64 <= produced);
            }
        }
        assert_eq!(s.produced(), produced);
        // nothing outstanding while waiting for the application: no timer
        assert_eq!(s.timer(), None);
        assert_eq!(s.stats().retx_pkts, 0);
    }

    #[test]
    fn the_window_limits_what_production_releases() {
        let cc = NewReno { init_pkts: 2 };
        let mut s = ReliableSender::new(cc, 10_000, 1000, rto(), false).with_produced(500);
        let mut out = Vec::new();
        s.start(Instant::ZERO, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].hdr.len, 500);
        s.produce(Instant::ZERO, 10_000, &mut out);
        // 500 B + 1000 B fit a 2-segment (2000 B) window, a third does not
        let sent: u64 = out.iter().map(|s| s.hdr.len as u64).sum();
        assert_eq!(sent, 1500);
    }
}
