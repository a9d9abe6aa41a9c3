//! One peer connection: handshake state, the send and receive halves, RTT
//! estimation, epochs, rate control and pacing, control-packet reliability
//! and timers.
//!
//! The parts: [`acks`] (ACKs sent and received), [`epoch`] (end of epoch:
//! TLR, rate, queue, rate-cut undo), [`timers`] (the loss timer, tail
//! probe, timeouts and control resends), [`transmit`] (outgoing
//! datagrams) and [`window`] (the optional cap on packets in flight).

mod ack_queue;
mod acks;
mod epoch;
mod timers;
mod transmit;
mod window;

use crate::config::Config;
use crate::event::{Event, EventSink, JobFailure, Role};
use crate::job::{JobError, JobSpec};
use crate::policy::Policies;
use crate::receiver::RecvSide;
use crate::sender::SendSide;
use crate::stats::{DropReason, EndpointStats};
use crate::time::{Duration, Instant};
use crate::timer::{Timer, TimerTable};
use crate::units::Rate;
use crate::wire::{AckRepr, Flags, HeaderRepr, JobRepr, PacketType, ResetReason};
use ack_queue::AckQueue;
use epoch::RateCut;
use std::collections::VecDeque;
use std::net::SocketAddr;
use window::DeliveryWindow;

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
    /// The oldest ACK on `Connection::acks` (built there in place).
    Ack,
    /// A JOB acknowledged: the job and the messages it now announces (all
    /// groups), so that an ended stream's re-announce is confirmed only by
    /// an ACK of its shrunk counts.
    JobAck(u32, u32),
    Job(u32),
    Fin {
        job: u32,
    },
    FinAck {
        job: u32,
        close: bool,
    },
    Close,
    /// RESET with reason JobRefused for one job (the header names it).
    RefuseJob(u32),
}

/// A datagram produced by a connection.
pub(crate) struct Out {
    pub(crate) len: usize,
    pub(crate) queue: u8,
    pub(crate) precise_len: usize,
    pub(crate) extra: bool,
    /// A control packet (ACK, JOB, FIN...): sending it changed nothing the
    /// timers are derived from (see `Connection::timers_current`).
    pub(crate) control: bool,
}

pub(crate) struct Connection {
    pub(crate) peer: SocketAddr,
    pub(crate) conn_id: u64,
    pub(crate) state: State,
    pol: Policies,
    send: SendSide,
    recv: RecvSide,
    control: VecDeque<Control>,
    /// The ACKs behind the `Control::Ack` entries of `control`, in order.
    acks: AckQueue,
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
    /// losses caused (at most [`epoch::MAX_CUTS`]).
    cuts: VecDeque<RateCut>,
    rate: Rate,
    /// The pacing gap last computed from `rate` (`poll_transmit`).
    gap_memo: crate::units::TimeForMemo,
    /// Delivery rate and min RTT for the in-flight cap (`Config::window_gain`).
    window: DeliveryWindow,
    /// `Config::window_gain`, kept here for `wants_to_send`.
    window_gain: Option<f64>,
    /// `Config::max_ack_delay`, for the cap's packet age (`cap_age`).
    window_ack_delay: Duration,
    next_send: Instant,
    epoch: u64,
    epoch_start: Instant,
    /// The epoch number DATA carries (16 bits on the wire): it counts the
    /// epochs in which DATA left, not all of them (`Connection::end_epoch`).
    wire_epoch: u16,
    /// DATA left during the running epoch.
    epoch_sent: bool,
    last_heard: Instant,
    /// The `last_heard` a late wake-up's grace set (`Connection::idle_grace`):
    /// while it stands, the peer was not heard since and gets no second one.
    idle_grace: Option<Instant>,
    /// When the handshake began (client) or the first JOB opened the
    /// connection (server).
    handshake_started: Instant,
    /// Whether a HELLO was sent again (its answer gives no RTT sample).
    hello_resent: bool,
    close_requested: bool,
    close_sent: Option<Instant>,
    /// An ACK is pending: the DATA header it echoes is in `acks`'
    /// pending slot.
    pending_ack: bool,
    /// The job of the pending ACK holds its MSR at this receiver.
    pending_satisfied: bool,
    /// When the last keepalive (a resent JOB) left.
    last_keepalive: Instant,
    /// The `now` of the last `poll_timeout`: the derived timers (idle,
    /// keepalive, pacing) are current at that instant until the
    /// connection changes.
    timers_now: Option<Instant>,
    unacked: u32,
    last_sent: Instant,
    /// Set by the endpoint around a call of a batch (an ACK of a run
    /// received, a DATA packet of a burst sent): the loss and probe
    /// timers are then armed once, when the run ends
    /// ([`Connection::settle_loss`]), not after every packet.
    pub(crate) defer_loss: bool,
    /// The loss and probe timers wait to be armed (`defer_loss`).
    loss_stale: bool,
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
        let pol = cfg.variant.policies_with(cfg.rate, cfg.queue_rule);
        let rate = pol.rate.initial(cfg.line_rate);
        let mut c = Connection {
            peer,
            conn_id,
            state,
            pol,
            send: SendSide::new(first_seq),
            recv: RecvSide::default(),
            control: VecDeque::new(),
            acks: AckQueue::default(),
            events: VecDeque::new(),
            timers: TimerTable::default(),
            srtt: None,
            rttvar: Duration::ZERO,
            rto_backoff: 0,
            cuts: VecDeque::new(),
            rate,
            gap_memo: crate::units::TimeForMemo::new(),
            window: DeliveryWindow::default(),
            window_gain: cfg.window_gain,
            window_ack_delay: cfg.max_ack_delay,
            next_send: now,
            epoch: 0,
            epoch_start: now,
            wire_epoch: 0,
            epoch_sent: false,
            last_heard: now,
            idle_grace: None,
            handshake_started: now,
            hello_resent: false,
            close_requested: false,
            close_sent: None,
            pending_ack: false,
            pending_satisfied: false,
            last_keepalive: now,
            timers_now: None,
            unacked: 0,
            last_sent: now,
            defer_loss: false,
            loss_stale: false,
        };
        if let State::Handshaking { nonce } = state {
            c.control.push_back(Control::Hello(nonce));
            c.timers.set(Timer::Control, now + c.rto(cfg));
        }
        c
    }

    /// The epoch length: the smoothed RTT (seed 000 §4.2 footnote 2),
    /// floored at 1 us so that a zero RTT sample cannot make epochs empty.
    pub(super) fn rtt(&self, cfg: &Config) -> Duration {
        self.srtt
            .unwrap_or(cfg.initial_rtt)
            .max(Duration::from_micros(1))
    }

    pub(super) fn on_rtt_sample(&mut self, sample: Duration) {
        self.window.on_rtt(sample);
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

    /// Application: messages of streaming job `job`, as produced.
    pub(crate) fn push_messages(
        &mut self,
        now: Instant,
        job: u32,
        msgs: &mut Vec<crate::job::MessageSpec>,
        cfg: &Config,
    ) -> Result<crate::sender::Pushed, JobError> {
        if self.state == State::Closed {
            return Err(JobError::NoConnection);
        }
        // The pacer had room and nothing waited: the job is limited by its
        // production (`Config::production_aware_rate`).
        let starved = self.state == State::Established
            && self.next_send <= now
            && !self.send.has_needed_data()
            && self.send.producing();
        let r = self.send.push_messages(job, msgs, cfg, &self.pol)?;
        if starved && matches!(r, crate::sender::Pushed::Queued(_)) {
            self.send.production_limited = true;
        }
        // Data after a quiet spell: the epoch clock restarts with it.
        if self.state == State::Established
            && self.timers.get(Timer::Epoch).is_none_or(|t| t <= now)
        {
            self.epoch_start = now;
            self.timers.set(Timer::Epoch, now + self.rtt(cfg));
        }
        Ok(r)
    }

    /// Application: ends streaming job `job` at what was produced (see
    /// `SendSide::end_stream`) and announces the new counts.
    pub(crate) fn end_stream(
        &mut self,
        now: Instant,
        job: u32,
        cfg: &Config,
    ) -> Result<(), JobError> {
        if self.state == State::Closed {
            return Err(JobError::NoConnection);
        }
        if self.send.end_stream(job)? && self.state == State::Established {
            self.announce(now, job, cfg);
        }
        Ok(())
    }

    fn announce(&mut self, now: Instant, id: u32, cfg: &Config) {
        self.control.push_back(Control::Job(id));
        if let Some(j) = self.send.job_mut(id) {
            j.control_sent = Some(now);
            j.last_tx = now;
        }
        self.arm_control(now, cfg);
    }

    pub(super) fn arm_control(&mut self, now: Instant, cfg: &Config) {
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
        // Karn's rule (RFC 6298 section 3): after a resent HELLO the answer
        // may be to any of them. Counted from the first, the resends' RTOs
        // made a SAP connection over a lossy link start with an 80 ms
        // "RTT" and a 240 ms RTO, its first JOB resent only that often.
        if !self.hello_resent {
            self.on_rtt_sample(now - self.handshake_started);
        }
        self.timers.stop(Timer::Control);
        self.events.push_back(Event::Connected);
        let ids: Vec<u32> = self.send.jobs.iter().map(|j| j.id).collect();
        for id in ids {
            self.announce(now, id, cfg);
        }
        self.epoch_start = now;
        self.timers.set(Timer::Epoch, now + self.rtt(cfg));
    }

    /// A verified DATA packet for this connection; the events it raises go
    /// to `events` (the endpoint's queue: see `Endpoint::handle_datagram`).
    pub(crate) fn on_data_packet(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        stats: &mut EndpointStats,
        events: &mut impl EventSink,
    ) {
        if self.state == State::Closed {
            return;
        }
        self.last_heard = now;
        self.on_data(now, h, body, cfg, stats, events);
    }

    /// A verified FIN of a job (not a connection's CLOSE) for this
    /// connection; its events go to `events` (the endpoint's queue: see
    /// `Endpoint::handle_datagram`).
    pub(crate) fn on_fin_packet(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        stats: &mut EndpointStats,
        events: &mut impl EventSink,
    ) {
        debug_assert!(h.ty.0 == PacketType::Fin && !h.flags.has(Flags::CLOSE));
        if self.state == State::Closed {
            return;
        }
        self.last_heard = now;
        self.on_fin(now, h, stats, events);
    }

    fn on_fin(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        stats: &mut EndpointStats,
        events: &mut impl EventSink,
    ) {
        if self.recv.on_fin(now, h.job_id, events) {
            self.control.push_back(Control::FinAck {
                job: h.job_id,
                close: false,
            });
        } else {
            stats.drop(DropReason::UnknownJob);
        }
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
            PacketType::Data => {
                let mut events = std::mem::take(&mut self.events);
                self.on_data(now, h, body, cfg, stats, &mut events);
                self.events = events;
            }
            PacketType::Ack => {
                let mut a = AckRepr::default();
                match AckRepr::parse_into(body, &mut a) {
                    Ok(()) => self.on_ack(now, h, &a, cfg),
                    Err(_) => stats.drop(DropReason::Malformed),
                }
            }
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
                        let announced = self.recv.announced(h.job_id).unwrap_or(0);
                        self.control.push_back(Control::JobAck(h.job_id, announced));
                    }
                    // A known job announced with counts that do not
                    // fit it: dropped, the job goes on as it was.
                    Err(DropReason::Inconsistent) => stats.drop(DropReason::Inconsistent),
                    Err(r) => {
                        // Refuse this job alone: a cap protects the
                        // connection, it never ends it.
                        stats.drop(r);
                        self.control.push_back(Control::RefuseJob(h.job_id));
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
                let mut events = std::mem::take(&mut self.events);
                self.on_fin(now, h, stats, &mut events);
                self.events = events;
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
                let refused = ResetReason::parse(body) == Ok(ResetReason::JobRefused);
                if refused {
                    // Only a job whose JOB the receiver never acknowledged
                    // can have been refused; a running job is not touched.
                    if self.send.fail_unannounced(h.job_id) {
                        self.events.push_back(Event::JobComplete {
                            job: h.job_id,
                            role: Role::Sender,
                            outcome: Err(JobFailure::Refused),
                        });
                        self.send.reap();
                    }
                } else {
                    self.shutdown(JobFailure::Reset, true);
                }
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
        self.loss_stale = false; // every timer stops here
        self.control.retain(|c| matches!(c, Control::FinAck { .. }));
        self.acks.clear();
        for t in [
            Timer::Pacing,
            Timer::Loss,
            Timer::Epoch,
            Timer::Control,
            Timer::Idle,
            Timer::Probe,
            Timer::Keepalive,
        ] {
            self.timers.stop(t);
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

    /// Messages with packets waiting to leave.
    pub(crate) fn waiting(&self) -> usize {
        self.send.waiting()
    }

    /// Current sending rate.
    pub(crate) fn rate(&self) -> Rate {
        self.rate
    }

    /// Whether this connection may be evicted for a new one: it holds no
    /// job of its own and has not received a single DATA packet in the
    /// `grace` since it was opened (what forged JOBs leave behind, however
    /// often they are repeated; a real peer sends DATA right after its JOB).
    pub(crate) fn unproven(&self, now: Instant, grace: Duration) -> bool {
        self.state == State::Established
            && self.recv.recv_count == 0
            && self.send.jobs.is_empty()
            && now - self.handshake_started >= grace
    }

    /// Fails everything for eviction (see [`Connection::unproven`]).
    pub(crate) fn evict(&mut self) {
        self.shutdown(JobFailure::Evicted, true);
    }
}
