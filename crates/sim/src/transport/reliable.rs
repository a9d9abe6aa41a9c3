//! The one reliable, window-based sender: cumulative ACKs, fast retransmit
//! on three duplicate ACKs with NewReno partial-ACK recovery (RFC 6582),
//! limited transmit (RFC 3042), RFC 6298 retransmission timer with RTT
//! samples from timestamps (RFC 7323) or one timed segment per RTT (Karn),
//! go-back-N after a timeout, congestion window validation (RFC 7661 as
//! Linux does it), and back-pressure from the host NIC (TCP small queues).
//! With SACK (`TcpOptions::sack`) loss recovery is RFC 6675's instead
//! (`sack_recovery.rs`): a scoreboard, `pipe`, proportional rate reduction
//! (RFC 6937) and, after a timeout, retransmission of the unSACKed bytes only.
//! Congestion control is a plugged-in [`CongestionControl`].
//!
//! The application may produce the flow's bytes over time
//! ([`Sender::produce`]): the sender never sends past what is produced, and
//! a segment that reaches the produced end is shorter than the MSS (no
//! Nagle delay, as a latency-sensitive key-value service runs).

mod sack_recovery;

use super::cc::{AckInfo, CongestionControl, Window};
pub use super::rtt::RtoConfig;
use super::rtt::RttEstimator;
use super::{f64_of, Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::Instant;

/// TCP options of the reliable sender (`[transport]` keys `timestamps`,
/// `limited_transmit`, `sack`, `prr`; all on by default, as in Linux and
/// ns-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpOptions {
    /// RFC 7323 timestamps: every ACK that advances the window is an RTT
    /// sample, retransmissions included, so a backed-off RTO returns to
    /// the estimate on the first new ACK after a timeout. Off: one timed
    /// segment per RTT, never a retransmitted one (Karn), as ns-2.
    pub timestamps: bool,
    /// RFC 3042 limited transmit: the first and second duplicate ACK each
    /// release one new segment beyond the window, so a small window still
    /// gets the three duplicate ACKs fast retransmit needs.
    pub limited_transmit: bool,
    /// RFC 2018 SACK options on ACKs and RFC 6675 loss recovery: every hole
    /// the receiver reports is retransmitted in one recovery, and a timeout
    /// resends only unSACKed bytes. Off: NewReno (RFC 6582), one hole per
    /// round trip, go-back-N after a timeout.
    pub sack: bool,
    /// With SACK, proportional rate reduction (RFC 6937, ns-3 3.44's
    /// default `TcpPrrRecovery`) sets what recovery sends per ACK; off:
    /// RFC 6675's `cwnd = ssthresh` at once (ns-3 `TcpClassicRecovery`).
    pub prr: bool,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions {
            timestamps: true,
            limited_transmit: true,
            sack: true,
            prr: true,
        }
    }
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
    opts: TcpOptions,
    snd_una: u64,
    snd_nxt: u64,
    high_tx: u64,
    dupacks: u32,
    /// Bytes sent by limited transmit since the last new ACK (not counted
    /// in the flight that sets ssthresh, RFC 3042 section 2).
    lt_sent: u64,
    recover: Option<u64>,
    /// SACK recovery state, made at the first SACK block or timeout (most
    /// flows never need it: ~130 bytes saved per flow).
    sack: Option<Box<sack_recovery::SackState>>,
    rtt: RttEstimator,
    deadline: Option<Instant>,
    probe: Option<(u64, Instant)>,
    /// Packets the host NIC may still take from this flow (TCP small
    /// queues); `u32::MAX` = no back-pressure.
    tx_room: u32,
    /// Congestion window validation state (Linux `tcp_cwnd_validate`).
    max_flight: u64,
    cwnd_usage_seq: u64,
    is_cwnd_limited: bool,
    stats: SenderStats,
}

impl<C: CongestionControl> ReliableSender<C> {
    /// A sender of `total` bytes in `mss`-byte segments, all produced
    /// already (see [`ReliableSender::with_produced`]), with no TCP options
    /// (see [`ReliableSender::with_options`]). With `pfabric_rank` every
    /// segment carries the remaining flow size as its rank: the flow's
    /// whole planned bytes (all of `total`, produced or not) minus what is
    /// acknowledged, so a flow waiting on its application does not look
    /// shorter than it is.
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
            opts: TcpOptions {
                timestamps: false,
                limited_transmit: false,
                sack: false,
                prr: false,
            },
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            dupacks: 0,
            lt_sent: 0,
            recover: None,
            sack: None,
            rtt: RttEstimator::new(rto_cfg),
            deadline: None,
            probe: None,
            tx_room: u32::MAX,
            max_flight: 0,
            cwnd_usage_seq: 0,
            is_cwnd_limited: false,
            stats: SenderStats::default(),
        }
    }

    /// The same sender with only `bytes` produced so far (more come with
    /// [`Sender::produce`]).
    pub fn with_produced(mut self, bytes: u64) -> Self {
        self.avail = bytes.min(self.total);
        self
    }

    /// The same sender with TCP options `opts`.
    pub fn with_options(mut self, opts: TcpOptions) -> Self {
        self.opts = opts;
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

    /// The current retransmission timeout.
    pub fn rto(&self) -> approxnet_proto::time::Duration {
        self.rtt.rto()
    }

    /// The congestion-control policy.
    pub fn cc(&self) -> &C {
        &self.cc
    }

    fn segment(&mut self, now: Instant, seq: u64, out: &mut Outbox<'_>) {
        debug_assert!(seq < self.avail, "segment beyond the produced bytes");
        let len = (self.avail - seq).min(self.mss as u64) as u32;
        self.segment_len(now, seq, len, out);
    }

    /// Emits `[seq, seq + len)`.
    fn segment_len(&mut self, now: Instant, seq: u64, len: u32, out: &mut Outbox<'_>) {
        let retx = seq < self.high_tx;
        if retx {
            self.stats.retx_pkts += 1;
            // Karn: never time a retransmitted segment
            if matches!(self.probe, Some((end, _)) if end > seq) {
                self.probe = None;
            }
        } else if self.probe.is_none() && !self.opts.timestamps {
            self.probe = Some((seq + len as u64, now));
        }
        self.stats.sent_pkts += 1;
        self.tx_room = self.tx_room.saturating_sub(1);
        self.high_tx = self.high_tx.max(seq + len as u64);
        out.push(Segment {
            hdr: Hdr {
                kind: Kind::Data,
                seq,
                len,
                ack: 0,
                ece: false,
                // TSval: the send time, + 1 ns so that 0 means "none"
                ts: if self.opts.timestamps {
                    now.as_nanos() + 1
                } else {
                    0
                },
                ..Hdr::default()
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
            self.deadline = Some(now + self.rtt.rto());
        }
    }

    /// Sends new data while the window (plus limited transmit's allowance)
    /// and the NIC's room allow.
    fn send_window(&mut self, now: Instant, out: &mut Outbox<'_>) {
        if self.opts.sack {
            self.sack_send(now, out);
            return;
        }
        let lt_allow = if self.opts.limited_transmit && self.recover.is_none() {
            self.dupacks.min(2) as f64 * self.w.mss
        } else {
            0.0
        };
        let mut sent = false;
        while self.snd_nxt < self.avail && self.tx_room > 0 {
            let flight = self.snd_nxt - self.snd_una;
            let len = (self.avail - self.snd_nxt).min(self.mss as u64);
            if flight > 0 && f64_of(flight + len) > self.w.cwnd {
                if f64_of(flight + len) > self.w.cwnd + lt_allow {
                    break;
                }
                self.lt_sent += len;
            }
            let seq = self.snd_nxt;
            self.snd_nxt += len;
            self.segment(now, seq, out);
            sent = true;
        }
        let flight = self.snd_nxt - self.snd_una;
        let limited = f64_of(flight) + self.w.mss > self.w.cwnd;
        if sent || limited {
            self.validate_cwnd(limited);
        }
    }

    /// Linux `tcp_cwnd_validate`: remember the largest flight of the last
    /// window and whether the window limited it.
    fn validate_cwnd(&mut self, limited: bool) {
        let flight = self.snd_nxt - self.snd_una;
        if self.snd_una >= self.cwnd_usage_seq || limited || flight > self.max_flight {
            self.max_flight = flight;
            self.cwnd_usage_seq = self.snd_nxt;
            self.is_cwnd_limited = limited;
        }
    }

    /// Linux `tcp_is_cwnd_limited` (RFC 7661): whether the window may grow.
    fn cwnd_limited(&self) -> bool {
        if self.w.cwnd < self.w.ssthresh {
            self.w.cwnd < 2.0 * f64_of(self.max_flight)
        } else {
            self.is_cwnd_limited
        }
    }

    /// Inlined into the ACK paths (once an ACK): as a call it cost its
    /// frame, ~2.5 instructions a hop of the ns-3 dumbbell.
    #[inline(always)]
    fn sample_rtt(&mut self, now: Instant, hdr: &Hdr) {
        if self.opts.timestamps {
            if hdr.ts > 0 {
                let sent = Instant::from_nanos(hdr.ts - 1);
                self.rtt.sample(now - sent);
            }
            return;
        }
        let Some((end, t)) = self.probe else { return };
        if self.snd_una < end {
            return;
        }
        self.probe = None;
        self.rtt.sample(now - t);
    }

    fn restart_timer(&mut self, now: Instant) {
        self.deadline = if self.snd_una < self.snd_nxt {
            Some(now + self.rtt.rto())
        } else {
            None
        };
    }
}

impl<C: CongestionControl> Sender for ReliableSender<C> {
    fn start(&mut self, now: Instant, out: &mut Outbox<'_>) {
        self.send_window(now, out);
    }

    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox<'_>) {
        self.avail = self.avail.max(produced.min(self.total));
        self.send_window(now, out);
    }

    fn on_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>) {
        if hdr.kind != Kind::Ack || self.finished() {
            return;
        }
        if self.opts.sack {
            self.sack_ack(now, hdr, out);
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
            self.lt_sent = 0;
            self.sample_rtt(now, hdr);
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
                        cwnd_limited: self.cwnd_limited(),
                    };
                    self.cc.on_ack(&mut self.w, &info);
                }
            }
            self.restart_timer(now);
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                // limited transmit's segments do not count (RFC 3042)
                let flight = self.snd_nxt - self.snd_una - self.lt_sent;
                self.cc.on_fast_loss(&mut self.w, flight);
                self.recover = Some(self.snd_nxt);
                let seq = self.snd_una;
                self.segment(now, seq, out);
                self.restart_timer(now);
            }
        }
        self.send_window(now, out);
    }

    fn on_timer(&mut self, now: Instant, out: &mut Outbox<'_>) {
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
        if self.opts.sack {
            self.sack_timeout(now, out);
            return;
        }
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_timeout(&mut self.w, flight);
        self.recover = None;
        self.dupacks = 0;
        self.lt_sent = 0;
        self.probe = None;
        if self.cc.go_back_n() {
            self.snd_nxt = self.snd_una;
        } else {
            let seq = self.snd_una;
            self.segment(now, seq, out);
        }
        self.rtt.back_off();
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

    fn set_tx_room(&mut self, pkts: u32) {
        self.tx_room = pkts;
    }

    /// Once every byte is acknowledged: `on_ack` returns at once, a send
    /// finds nothing at or past `snd_una` (= the flow's end; the SACK
    /// scoreboard was advanced to it), `on_timer` only clears a due
    /// deadline, and the counters no longer change.
    fn retired(&self) -> Option<super::done::DoneSender> {
        self.finished().then(|| super::done::DoneSender {
            stats: self.stats,
            deadline: self.deadline,
            ect: self.cc.ect(),
        })
    }
}

#[cfg(test)]
#[path = "reliable/reliable_tests.rs"]
mod tests;
