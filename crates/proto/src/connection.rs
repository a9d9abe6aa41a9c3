//! One peer connection: handshake state, the send and receive halves, RTT
//! estimation, epochs, rate control and pacing, control-packet reliability
//! and timers.

use crate::config::Config;
use crate::event::{EpochStats, Event, JobFailure, Role};
use crate::job::{JobError, JobSpec};
use crate::policy::{Policies, RateInput};
use crate::receiver::{DataVerdict, RecvSide};
use crate::sender::SendSide;
use crate::stats::{DropReason, EndpointStats};
use crate::time::{Duration, Instant};
use crate::timer::{Timer, TimerTable};
use crate::units::Rate;

use crate::wire::header::PacketTypeField;
use crate::wire::{
    AckRepr, Flags, HeaderRepr, HelloRepr, JobRepr, PacketType, ResetReason, HEADER_LEN,
};
use std::collections::VecDeque;
use std::net::SocketAddr;

/// Rate cuts remembered for undo.
const MAX_CUTS: usize = 8;

/// One epoch's loss-driven rate cut (eq. 3), kept so that it can be undone
/// when enough of the losses behind it prove spurious (late ACKs) — the
/// Eifel idea (RFC 3522) applied to ATP's rate instead of TCP's window.
#[derive(Clone, Copy, Debug)]
struct RateCut {
    epoch: u64,
    before: Rate,
    lost: u64,
    resolved: u64,
    tlr: f64,
    spurious: u64,
}

/// How long (epochs) a spurious timer loss keeps the tail's timer backing off.
const DOUBT_EPOCHS: u64 = 16;

/// At most `2^6 = 64` times the base RTO after consecutive timeouts.
const MAX_RTO_BACKOFF: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Client waiting for HELLO_ACK.
    Handshaking { nonce: u64 },
    /// Data may flow.
    Established,
    /// Gone; waiting to be reaped.
    Closed,
}

/// A control packet waiting to leave.
#[derive(Clone, Debug)]
enum Control {
    Hello(u64),
    Ack { h: HeaderRepr, ack: AckRepr },
    JobAck(u32),
    Job(u32),
    Fin { job: u32 },
    FinAck { job: u32, close: bool },
    Close,
    Reset(ResetReason),
}

/// A datagram produced by a connection.
pub(crate) struct Out {
    pub(crate) len: usize,
    pub(crate) queue: u8,
    pub(crate) precise_len: usize,
}

pub(crate) struct Connection {
    pub(crate) peer: SocketAddr,
    pub(crate) conn_id: u64,
    pub(crate) state: State,
    pol: Policies,
    send: SendSide,
    recv: RecvSide,
    control: VecDeque<Control>,
    pub(crate) events: VecDeque<Event>,
    timers: TimerTable,
    srtt: Option<Duration>,
    rttvar: Duration,
    /// Exponential RTO backoff (a shift): grows with each timer that
    /// declares losses, resets when a packet still in flight is
    /// acknowledged. Without it a receiver that stalls for longer than the
    /// RTO (a busy host) has every packet sent meanwhile declared lost,
    /// round after round.
    rto_backoff: u32,
    /// Recent loss-driven rate cuts, for undoing those that spurious
    /// losses caused (at most [`MAX_CUTS`]).
    cuts: VecDeque<RateCut>,
    rate: Rate,
    next_send: Instant,
    epoch: u64,
    epoch_start: Instant,
    last_heard: Instant,
    handshake_started: Instant,
    close_requested: bool,
    close_sent: Option<Instant>,
    pending_ack: Option<HeaderRepr>,
    unacked: u32,
    last_sent: Instant,
}

impl Connection {
    pub(crate) fn new(
        now: Instant,
        peer: SocketAddr,
        conn_id: u64,
        state: State,
        first_seq: u32,
        cfg: &Config,
    ) -> Connection {
        let pol = cfg.variant.policies(cfg.rate);
        let rate = pol.rate.initial(cfg.line_rate);
        let mut c = Connection {
            peer,
            conn_id,
            state,
            pol,
            send: SendSide::new(first_seq),
            recv: RecvSide::default(),
            control: VecDeque::new(),
            events: VecDeque::new(),
            timers: TimerTable::default(),
            srtt: None,
            rttvar: Duration::ZERO,
            rto_backoff: 0,
            cuts: VecDeque::new(),
            rate,
            next_send: now,
            epoch: 0,
            epoch_start: now,
            last_heard: now,
            handshake_started: now,
            close_requested: false,
            close_sent: None,
            pending_ack: None,
            unacked: 0,
            last_sent: now,
        };
        if let State::Handshaking { nonce } = state {
            c.control.push_back(Control::Hello(nonce));
            c.timers.set(Timer::Control, now + c.rto(cfg));
        }
        c
    }

    /// The epoch length: the smoothed RTT (seed 000 §4.2 footnote 2),
    /// floored at 1 us so that a zero RTT sample cannot make epochs empty.
    fn rtt(&self, cfg: &Config) -> Duration {
        self.srtt
            .unwrap_or(cfg.initial_rtt)
            .max(Duration::from_micros(1))
    }

    /// The retransmission timeout: RFC 6298's `SRTT + 4 RTTVAR`, at least
    /// `min_rto`.
    fn rto(&self, cfg: &Config) -> Duration {
        let base = match self.srtt {
            Some(s) => s + self.rttvar.saturating_mul(4),
            None => cfg.initial_rtt.saturating_mul(3),
        };
        base.max(cfg.min_rto)
    }

    /// The tail loss probe timeout: two smoothed RTTs plus the receiver's
    /// ACK delay (RFC 8985 section 7.2's PTO).
    fn pto(&self, cfg: &Config) -> Duration {
        self.rtt(cfg).saturating_mul(2) + cfg.max_ack_delay
    }

    /// Whether the loss timer backs off now: while data still flows, or at
    /// a tail when a timer-declared loss proved spurious in the last
    /// [`DOUBT_EPOCHS`] epochs (the RTO is known to be too short here).
    fn backs_off(&self) -> bool {
        self.send.has_data()
            || self
                .send
                .spurious_timer_epoch
                .is_some_and(|e| self.epoch.saturating_sub(e) <= DOUBT_EPOCHS)
    }

    /// The loss timer's timeout: the RTO doubled per consecutive
    /// loss-declaring timer, but never past half the idle timeout (a peer
    /// that is merely slow must not look silent). Control packets (JOB,
    /// FIN, HELLO) keep the plain RTO: DATA of an unannounced job is
    /// dropped by the receiver, so their resends must stay quick.
    fn loss_rto(&self, cfg: &Config) -> Duration {
        let rto = self.rto(cfg);
        if !self.backs_off() {
            return rto; // a tail: see `handle_timeout`
        }
        let cap = Duration::from_nanos(cfg.idle_timeout.as_nanos() / 2).max(rto);
        rto.saturating_mul(1 << self.rto_backoff).min(cap)
    }

    /// `Rmin`: one packet per RTT (seed 000 §4.2), never above line rate.
    fn rate_min(&self, cfg: &Config) -> Rate {
        let r = Rate::from_bytes_per(cfg.mtu, self.rtt(cfg));
        Rate::bps(r.as_bps().min(cfg.line_rate.as_bps()))
    }

    fn on_rtt_sample(&mut self, sample: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(sample);
                self.rttvar = Duration::from_nanos(sample.as_nanos() / 2);
            }
            Some(s) => {
                let (s, r, x) = (
                    s.as_nanos() as i128,
                    self.rttvar.as_nanos() as i128,
                    sample.as_nanos() as i128,
                );
                let var = (3 * r + (s - x).abs()) / 4;
                let srtt = (7 * s + x) / 8;
                self.rttvar = Duration::from_nanos(var as u64);
                self.srtt = Some(Duration::from_nanos(srtt as u64));
            }
        }
    }

    /// Application: queue a job.
    pub(crate) fn send_job(
        &mut self,
        now: Instant,
        spec: JobSpec,
        cfg: &Config,
    ) -> Result<u32, JobError> {
        if self.state == State::Closed || self.close_requested {
            return Err(JobError::NoConnection);
        }
        // Restart after idle (as TCP does after an RTO of silence): a new
        // job on a quiet connection starts from the initial rate, not from
        // whatever earlier jobs' congestion left behind.
        let idle = !self.send.has_open_jobs()
            && self.send.in_flight == 0
            && now - self.last_sent >= self.rto(cfg);
        if idle {
            self.rate = self.pol.rate.initial(cfg.line_rate);
        }
        let id = self.send.add_job(now, spec, cfg, &self.pol)?;
        if self.state == State::Established {
            self.announce(now, id, cfg);
        }
        if self.state == State::Established
            && self.timers.get(Timer::Epoch).is_none_or(|t| t <= now)
        {
            self.epoch_start = now;
            self.timers.set(Timer::Epoch, now + self.rtt(cfg));
        }
        self.last_heard = self.last_heard.max(now);
        Ok(id)
    }

    fn announce(&mut self, now: Instant, id: u32, cfg: &Config) {
        self.control.push_back(Control::Job(id));
        if let Some(j) = self.send.job_mut(id) {
            j.control_sent = Some(now);
        }
        self.arm_control(now, cfg);
    }

    fn arm_control(&mut self, now: Instant, cfg: &Config) {
        if self.timers.get(Timer::Control).is_none() {
            self.timers.set(Timer::Control, now + self.rto(cfg));
        }
    }

    /// Application: close after every job finished.
    pub(crate) fn close(&mut self, now: Instant, cfg: &Config) {
        self.close_requested = true;
        self.maybe_send_close(now, cfg);
    }

    fn maybe_send_close(&mut self, now: Instant, cfg: &Config) {
        if self.close_requested
            && self.close_sent.is_none()
            && self.state == State::Established
            && !self.send.busy()
        {
            self.control.push_back(Control::Close);
            self.close_sent = Some(now);
            self.arm_control(now, cfg);
        }
    }

    /// Client: the server answered our HELLO.
    pub(crate) fn on_hello_ack(&mut self, now: Instant, conn_id: u64, cfg: &Config) {
        self.conn_id = conn_id;
        self.state = State::Established;
        self.last_heard = now;
        let sample = now - self.handshake_started;
        self.on_rtt_sample(sample);
        self.timers.stop(Timer::Control);
        self.events.push_back(Event::Connected);
        let ids: Vec<u32> = self.send.jobs.iter().map(|j| j.id).collect();
        for id in ids {
            self.announce(now, id, cfg);
        }
        self.epoch_start = now;
        self.timers.set(Timer::Epoch, now + self.rtt(cfg));
    }

    /// A verified packet for this connection.
    pub(crate) fn on_packet(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        stats: &mut EndpointStats,
    ) {
        if self.state == State::Closed {
            return;
        }
        self.last_heard = now;
        match h.ty.0 {
            PacketType::Data => self.on_data(now, h, body, cfg, stats),
            PacketType::Ack => match AckRepr::parse(body) {
                Ok(a) => self.on_ack(now, h, &a, cfg),
                Err(_) => stats.drop(DropReason::Malformed),
            },
            PacketType::Job => match JobRepr::parse(body) {
                Ok(j) => match self.recv.on_job(now, h.job_id, j, cfg) {
                    Ok(fresh) => {
                        // A JOB's header carries the peer's first DATA
                        // sequence number; no DATA is taken before one.
                        self.recv.seqs.start(h.seq);
                        if fresh {
                            let messages = self.peer_job_messages(body);
                            self.events.push_back(Event::JobAnnounced {
                                job: h.job_id,
                                messages,
                            });
                        }
                        self.control.push_back(Control::JobAck(h.job_id));
                    }
                    Err(r) => {
                        stats.drop(r);
                        self.control
                            .push_back(Control::Reset(ResetReason::JobRefused));
                    }
                },
                Err(_) => stats.drop(DropReason::Malformed),
            },
            PacketType::Fin if h.flags.has(Flags::CLOSE) => {
                self.control.push_back(Control::FinAck {
                    job: 0,
                    close: true,
                });
                self.shutdown(JobFailure::Reset, false);
            }
            PacketType::Fin => {
                if self.recv.on_fin(now, h.job_id, &mut self.events) {
                    self.control.push_back(Control::FinAck {
                        job: h.job_id,
                        close: false,
                    });
                } else {
                    stats.drop(DropReason::UnknownJob);
                }
            }
            PacketType::FinAck if h.flags.has(Flags::CLOSE) => {
                self.state = State::Closed;
            }
            PacketType::FinAck => {
                if let Some(j) = self.send.job_mut(h.job_id) {
                    if j.done {
                        j.fin_acked = true;
                    }
                }
                self.send.reap();
                self.maybe_send_close(now, cfg);
            }
            PacketType::Reset => {
                self.shutdown(JobFailure::Reset, true);
            }
            PacketType::Hello | PacketType::HelloAck => stats.drop(DropReason::Unexpected),
            PacketType::Unknown(_) => stats.drop(DropReason::UnknownType),
        }
    }

    fn peer_job_messages(&self, body: &[u8]) -> u64 {
        JobRepr::parse(body)
            .map(|j| j.groups.iter().map(|g| g.messages as u64).sum())
            .unwrap_or(0)
    }

    fn on_data(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        stats: &mut EndpointStats,
    ) {
        if !self.recv.epoch_ok(h.epoch) {
            stats.drop(DropReason::StaleEpoch);
            return;
        }
        match self.recv.on_data(h, body, cfg, &mut self.events) {
            DataVerdict::Drop(r) => {
                stats.drop(r);
                return;
            }
            DataVerdict::Ack | DataVerdict::Late => {}
        }
        let ce = h.flags.has(Flags::CE);
        self.recv.recv_count = self.recv.recv_count.wrapping_add(1);
        if ce {
            self.recv.ce_count = self.recv.ce_count.wrapping_add(1);
        }
        self.recv.seqs.insert(h.seq);
        let mut echo = *h;
        echo.ty = PacketTypeField(PacketType::Ack);
        echo.flags = Flags(if ce { Flags::ECE } else { 0 });
        echo.elem_start = 0;
        echo.elem_end = 0;
        self.pending_ack = Some(echo);
        self.unacked += 1;
        // A full batch (or, when ECN is acted upon, a CE mark) is echoed at
        // once; otherwise the ACK waits a little.
        if (ce && cfg.ecn_reaction) || self.unacked >= cfg.ack_every {
            self.flush_ack();
        } else if self.timers.get(Timer::AckDelay).is_none() {
            self.timers.set(Timer::AckDelay, now + cfg.max_ack_delay);
        }
    }

    /// Whether a coalesced ACK is waiting (see `Endpoint::flush_acks`).
    pub(crate) fn holds_ack(&self) -> bool {
        self.pending_ack.is_some()
    }

    pub(crate) fn flush_ack(&mut self) {
        if let Some(echo) = self.pending_ack.take() {
            if let Some(ack) = self.recv.seqs.ack(self.recv.ce_count, self.recv.recv_count) {
                self.control.push_back(Control::Ack { h: echo, ack });
            }
        }
        self.unacked = 0;
        self.timers.stop(Timer::AckDelay);
    }

    fn on_ack(&mut self, now: Instant, h: &HeaderRepr, a: &AckRepr, cfg: &Config) {
        if h.flags.has(Flags::JOB_KNOWN) {
            if let Some(j) = self.send.job_mut(h.job_id) {
                j.job_acked = true;
                if !j.done {
                    j.control_sent = None;
                }
            }
            return;
        }
        if let Some(a) = self.send.on_acked(h.seq, &self.pol) {
            self.on_rtt_sample(now - a.sent);
            if !a.spurious {
                self.rto_backoff = 0;
            }
            if h.flags.has(Flags::ECE) {
                self.send.epoch.marked += 1;
            }
        }
        for &r in a.ranges() {
            self.send.on_acked_range(r, &self.pol);
        }
        self.send.on_cumulative(a.cumulative, &self.pol);
        self.send.detect_fast(cfg.reorder_threshold, cfg, &self.pol);
        if let Some(sent) = self.send.take_probe_answer() {
            // The tail probe arrived: what was sent a quarter RTT or more
            // before it and is still unacknowledged did not (RACK's
            // reordering window, RFC 8985 section 6.2).
            let window = Duration::from_nanos(self.rtt(cfg).as_nanos() / 4);
            let deadline = Instant::from_nanos(sent.as_nanos().saturating_sub(window.as_nanos()));
            self.send.detect_timeout(deadline, cfg, &self.pol);
        }
        self.undo_spurious_cuts();
        self.after_progress(now, cfg);
    }

    /// Restores the rate from before a cut once the losses behind it, less
    /// those that proved spurious, no longer reach the TLR that triggered it.
    fn undo_spurious_cuts(&mut self) {
        if self.send.spurious_epochs.is_empty() {
            return;
        }
        for e in std::mem::take(&mut self.send.spurious_epochs) {
            let Some(i) = self.cuts.iter().position(|c| c.epoch == e) else {
                continue;
            };
            let c = &mut self.cuts[i];
            c.spurious += 1;
            let real = c.lost.saturating_sub(c.spurious);
            let rho = real as f64 / c.resolved.max(1) as f64;
            if real == 0 || rho < c.tlr {
                self.rate = Rate::bps(self.rate.as_bps().max(c.before.as_bps()));
                self.cuts.remove(i);
            }
        }
    }

    fn after_progress(&mut self, now: Instant, cfg: &Config) {
        for report in self.send.take_finished(now) {
            let id = report.job;
            self.events.push_back(Event::JobComplete {
                job: id,
                role: Role::Sender,
                outcome: Ok(report),
            });
            self.control.push_back(Control::Fin { job: id });
            if let Some(j) = self.send.job_mut(id) {
                j.control_sent = Some(now);
            }
            self.arm_control(now, cfg);
        }
        self.arm_loss_timer(cfg);
    }

    fn arm_loss_timer(&mut self, cfg: &Config) {
        let loss = self.send.oldest_in_flight().map(|t| t + self.loss_rto(cfg));
        match loss {
            Some(t) => self.timers.set(Timer::Loss, t),
            None => self.timers.stop(Timer::Loss),
        }
        // A tail: probe one PTO after the last packet, where that comes
        // before the loss timer (whose RTO carries 4 RTTVAR and backoff).
        let probe = self.last_sent + self.pto(cfg);
        match loss {
            Some(t) if probe < t && self.send.can_probe() => self.timers.set(Timer::Probe, probe),
            _ => self.timers.stop(Timer::Probe),
        }
    }

    /// Tears the connection down, failing open jobs.
    pub(crate) fn shutdown(&mut self, reason: JobFailure, report_lost: bool) {
        for id in self.send.fail_all() {
            self.events.push_back(Event::JobComplete {
                job: id,
                role: Role::Sender,
                outcome: Err(reason.clone()),
            });
        }
        for id in self.recv.fail_all() {
            self.events.push_back(Event::JobComplete {
                job: id,
                role: Role::Receiver,
                outcome: Err(reason.clone()),
            });
        }
        if report_lost {
            self.events.push_back(Event::ConnectionLost { reason });
        }
        self.state = State::Closed;
        self.control.retain(|c| matches!(c, Control::FinAck { .. }));
        for t in [
            Timer::Pacing,
            Timer::Loss,
            Timer::Epoch,
            Timer::Control,
            Timer::Idle,
            Timer::Probe,
        ] {
            self.timers.stop(t);
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant, cfg: &Config) {
        if self.state == State::Closed {
            return;
        }
        if let State::Handshaking { nonce } = self.state {
            if now - self.handshake_started >= cfg.idle_timeout {
                self.shutdown(JobFailure::PeerUnresponsive, true);
                return;
            }
            if self.timers.expired(Timer::Control, now) {
                self.control.push_back(Control::Hello(nonce));
                self.timers.set(Timer::Control, now + self.rto(cfg));
            }
            return;
        }
        let outstanding = self.send.busy() || self.close_sent.is_some();
        if outstanding && now - self.last_heard >= cfg.idle_timeout {
            self.shutdown(JobFailure::PeerUnresponsive, true);
            return;
        }
        if self.timers.expired(Timer::Loss, now) {
            // While data still flows, only packets older than the
            // backed-off RTO are declared, and each such round backs the
            // timer off: a stalled receiver must not have every packet sent
            // meanwhile declared lost again and again. At a tail (nothing
            // left to send) no later packet can reveal a loss and the timer
            // is the only detector: it keeps the plain RTO (a tail lost
            // packet by packet would otherwise wait RTO, 2 RTO, 4 RTO...),
            // unless timer losses proved spurious lately (incast behind a
            // stalled receiver: the plain RTO there declared ~11 000
            // packets that arrived).
            let backs_off = self.backs_off();
            let age = self.loss_rto(cfg);
            let deadline = Instant::from_nanos(now.as_nanos().saturating_sub(age.as_nanos()));
            if self.send.detect_timeout(deadline, cfg, &self.pol) > 0 && backs_off {
                self.rto_backoff = (self.rto_backoff + 1).min(MAX_RTO_BACKOFF);
            }
            self.after_progress(now, cfg);
        }
        if self.timers.expired(Timer::Probe, now) {
            self.timers.stop(Timer::Probe);
            if self.send.can_probe() {
                self.send.queue_probe(&self.pol);
            }
        }
        if self.timers.expired(Timer::Epoch, now) {
            self.end_epoch(now, cfg);
        }
        if self.timers.expired(Timer::Control, now) {
            self.timers.stop(Timer::Control);
            self.resend_control(now, cfg);
        }
        if self.timers.expired(Timer::AckDelay, now) {
            self.flush_ack();
        }
    }

    fn resend_control(&mut self, now: Instant, cfg: &Config) {
        let rto = self.rto(cfg);
        let mut any = false;
        let due: Vec<(u32, bool)> = self
            .send
            .jobs
            .iter()
            .filter_map(|j| match j.control_sent {
                Some(t) if t + rto <= now => Some((j.id, j.done)),
                Some(_) => {
                    any = true;
                    None
                }
                None => None,
            })
            .collect();
        for (id, done) in due {
            self.control.push_back(if done {
                Control::Fin { job: id }
            } else {
                Control::Job(id)
            });
            if let Some(j) = self.send.job_mut(id) {
                j.control_sent = Some(now);
            }
            any = true;
        }
        if let Some(t) = self.close_sent {
            if t + rto <= now {
                self.control.push_back(Control::Close);
                self.close_sent = Some(now);
            }
            any = true;
        }
        if any {
            self.timers.set(Timer::Control, now + rto);
        }
    }

    /// End of epoch `i`: eq. 1 for every group, eq. 2-3 for the rate, and
    /// the queue for the next epoch (seed 000 §4.2, §5.2).
    fn end_epoch(&mut self, now: Instant, cfg: &Config) {
        let count = std::mem::take(&mut self.send.epoch);
        let resolved = count.acked + count.lost;
        let rho = if resolved > 0 {
            count.lost as f64 / resolved as f64
        } else {
            f64::NAN
        };
        let marked = if cfg.ecn_reaction && count.acked > 0 {
            count.marked as f64 / count.acked as f64
        } else {
            0.0
        };
        // Connection TLR: eq. 1 over all active groups, weighted by the
        // messages each still has to deliver (exactly eq. 1 for one group).
        let (mut num, mut den) = (0.0, 0.0);
        let mut queue = None;
        for j in self.send.jobs.iter_mut().filter(|j| !j.done) {
            for g in j.groups.iter_mut().filter(|g| g.unresolved() > 0) {
                g.tlr = self.pol.tlr.tlr(&g.progress());
                g.queue = self
                    .pol
                    .queue
                    .queue(g.reliable(), g.tlr0, g.tlr, cfg.queues);
                let w = (g.messages - g.delivered) as f64;
                num += g.tlr * w;
                den += w;
                if !g.reliable() && queue.is_none() {
                    queue = Some(g.queue);
                }
            }
        }
        let active = den > 0.0;
        let tlr = if active { num / den } else { 0.0 };
        if active && !rho.is_nan() {
            let input = RateInput {
                rho,
                tlr,
                max: cfg.line_rate,
                min: self.rate_min(cfg),
                marked,
            };
            let before = self.rate;
            self.rate = self.pol.rate.next(self.rate, &input);
            if count.lost > 0 && self.rate < before {
                if self.cuts.len() >= MAX_CUTS {
                    self.cuts.pop_front();
                }
                self.cuts.push_back(RateCut {
                    epoch: self.epoch,
                    before,
                    lost: count.lost,
                    resolved,
                    tlr,
                    spurious: 0,
                });
            }
        }
        if active {
            self.events.push_back(Event::Epoch(EpochStats {
                epoch: self.epoch,
                tlr,
                rho: if rho.is_nan() { 0.0 } else { rho },
                rate: self.rate,
                queue: queue.unwrap_or(0),
                length: self.rtt(cfg),
            }));
        }
        self.epoch += 1;
        self.send.epoch_id = self.epoch;
        self.epoch_start = now;
        if active || self.send.in_flight > 0 {
            self.timers.set(Timer::Epoch, now + self.rtt(cfg));
        } else {
            self.timers.stop(Timer::Epoch);
        }
    }

    pub(crate) fn poll_timeout(&mut self, now: Instant, cfg: &Config) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        if self.state == State::Established && (self.send.busy() || self.close_sent.is_some()) {
            self.timers
                .set(Timer::Idle, self.last_heard + cfg.idle_timeout);
        } else if let State::Handshaking { .. } = self.state {
            self.timers
                .set(Timer::Idle, self.handshake_started + cfg.idle_timeout);
        } else {
            self.timers.stop(Timer::Idle);
        }
        if self.state == State::Established && self.send.has_data() && self.next_send > now {
            self.timers.set(Timer::Pacing, self.next_send);
        } else {
            self.timers.stop(Timer::Pacing);
        }
        self.timers.next()
    }

    /// Whether a packet could be emitted now.
    pub(crate) fn wants_to_send(&self, now: Instant) -> bool {
        !self.control.is_empty()
            || (self.state == State::Established && self.send.has_data() && self.next_send <= now)
    }

    pub(crate) fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        cfg: &Config,
    ) -> Option<Out> {
        if let Some(c) = self.control.pop_front() {
            return Some(self.emit_control(c, buf));
        }
        if self.state != State::Established || now < self.next_send {
            return None;
        }
        if buf.len() < cfg.mtu {
            return None;
        }
        let np = self.send.next_packet(&self.pol, cfg.bundle_bytes)?;
        let (body_len, precise, approx, elems) = self.send.write_body(&np, &mut buf[HEADER_LEN..]);
        let bundle = self.send.bundling();
        let seq = self.send.on_sent(now, &np);
        self.last_sent = now;
        let queue = self
            .send
            .job_mut(np.job)
            .map_or(0, |j| j.groups[np.group_idx as usize].queue);
        let mut flags = Flags::default();
        flags.set(Flags::APPROX_CRC, approx);
        flags.set(Flags::TENSOR, elems.is_some());
        flags.set(Flags::BUNDLE, bundle);
        flags.set(
            Flags::PREFIX_BY_TRANSPORT,
            cfg.transport_checksums && precise > 0,
        );
        let (es, ee) = elems.unwrap_or((0, 0));
        let h = HeaderRepr {
            ty: PacketTypeField(PacketType::Data),
            flags,
            conn_id: self.conn_id,
            job_id: np.job,
            group: np.group_id,
            epoch: self.epoch as u16,
            msg_id: np.msg_id,
            seq,
            pkt_index: np.pkt,
            pkt_count: np.pkt_count,
            elem_start: es,
            elem_end: ee,
            precise_len: precise as u16,
            body_len: body_len as u16,
        };
        h.emit(buf);
        let len = HEADER_LEN + body_len;
        crate::wire::Packet::new_unchecked(&mut buf[..len]).fill_checksum();
        // Pacing: the next packet may leave one serialisation time later;
        // a sender woken late may catch up by at most `pacing_burst`.
        let gap = self.rate.time_for(len);
        let floor = Instant::from_nanos(now.as_nanos().saturating_sub(cfg.pacing_burst.as_nanos()));
        self.next_send = self.next_send.max(floor) + gap;
        if !self.send.has_data() {
            self.arm_loss_timer(cfg); // a tail begins: the probe too
        } else if self.timers.get(Timer::Loss).is_none() {
            self.timers.set(Timer::Loss, now + self.loss_rto(cfg));
        }
        Some(Out {
            len,
            queue,
            precise_len: precise,
        })
    }

    fn emit_control(&mut self, c: Control, buf: &mut [u8]) -> Out {
        let mut h = HeaderRepr {
            conn_id: self.conn_id,
            ..HeaderRepr::default()
        };
        let mut body = [0u8; 16 + 8 * crate::wire::MAX_ACK_RANGES];
        let mut job_body = Vec::new();
        let n = match c {
            Control::Hello(nonce) => {
                h.ty = PacketTypeField(PacketType::Hello);
                h.conn_id = 0;
                HelloRepr { nonce }.emit(&mut body);
                HelloRepr::LEN
            }
            Control::Ack { h: echo, ack } => {
                h = echo;
                ack.emit(&mut body);
                ack.buffer_len()
            }
            Control::JobAck(job) => {
                h.ty = PacketTypeField(PacketType::Ack);
                h.job_id = job;
                h.flags = Flags(Flags::JOB_KNOWN);
                let a = AckRepr::new(0, 0, 0);
                a.emit(&mut body);
                a.buffer_len()
            }
            Control::Job(job) => {
                h.ty = PacketTypeField(PacketType::Job);
                h.job_id = job;
                h.seq = self.send.first_seq();
                if let Some(j) = self.send.job_mut(job) {
                    job_body = vec![0u8; j.repr.buffer_len()];
                    j.repr.emit(&mut job_body);
                }
                0
            }
            Control::Fin { job } => {
                h.ty = PacketTypeField(PacketType::Fin);
                h.job_id = job;
                0
            }
            Control::FinAck { job, close } => {
                h.ty = PacketTypeField(PacketType::FinAck);
                h.job_id = job;
                h.flags.set(Flags::CLOSE, close);
                0
            }
            Control::Close => {
                h.ty = PacketTypeField(PacketType::Fin);
                h.flags = Flags(Flags::CLOSE);
                0
            }
            Control::Reset(r) => {
                h.ty = PacketTypeField(PacketType::Reset);
                body[0] = r.code();
                1
            }
        };
        let b: &[u8] = if job_body.is_empty() {
            &body[..n]
        } else {
            &job_body
        };
        h.body_len = b.len() as u16;
        h.precise_len = b.len() as u16;
        let len = h.emit_with_body(buf, b);
        Out {
            len,
            queue: 0,
            precise_len: b.len(),
        }
    }

    /// Whether the connection can be forgotten.
    pub(crate) fn is_closed(&self) -> bool {
        self.state == State::Closed && self.control.is_empty() && self.events.is_empty()
    }

    /// Payload bytes held for reassembly.
    pub(crate) fn buffered(&self) -> usize {
        self.recv.buffered()
    }

    /// Current sending rate.
    pub(crate) fn rate(&self) -> Rate {
        self.rate
    }
}
