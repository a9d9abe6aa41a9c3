//! The thin loop between a sans-IO [`approxnet_proto::Endpoint`] and a socket.
//!
//! One wake-up is: [`Driver::recv_some`] (at most `recv_budget` datagrams,
//! one `handle_datagrams` call per `recvmmsg`: `deliver`), then
//! [`Driver::service`] (due timers, then `poll_transmit` into the send
//! queue, one batched flush, events out).
//! Between wake-ups the caller waits for the socket or for
//! [`Driver::wait_spec`]'s timeout: the blocking face in `poll(2)`, the
//! async face in tokio.
//!
//! Pacing: the core releases DATA packets one serialisation time apart. A
//! wake-up per packet would cost a syscall and a context switch each (and,
//! on a busy host, a scheduling delay each), so once a packet is due the
//! driver moves the core's clock forward through the timers of the next
//! `pacing_lookahead` and keeps going; the packets of that window leave in
//! one `sendmmsg` / GSO batch. The driver wakes half a window before the
//! next timer, so a wake-up that comes late by up to that much loses no
//! sending time (the core does not catch up on lost pacing time).

use crate::clock::Clock;
use crate::config::RuntimeConfig;
use crate::deliver::deliver;
use crate::error::SendJobError;
use crate::events::EventQueue;
use crate::stats::RuntimeStats;
use crate::sys::{socket::cscov_for, Marking, RecvQueue, SendQueue, Socket, SocketKind};
use approxnet_proto::event::EpochStats;
use approxnet_proto::{ConnectionHandle, Endpoint as ProtoEndpoint, Event, Instant, Transmit};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// Socket errors tolerated in one wake-up before timers get a turn.
const MAX_RECV_ERRORS_PER_WAKEUP: u32 = 16;
/// Shortest timer wait while the send queue is blocked on the kernel.
const BLOCKED_TIMER_FLOOR: Duration = Duration::from_millis(1);
/// ECN ECT(0) codepoint.
const ECN_ECT0: u8 = 0b10;

/// An epoch sample with the connection it belongs to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochSample {
    /// Which connection.
    pub conn: ConnectionHandle,
    /// Core time of the sample, in nanoseconds since the endpoint opened.
    pub at: Instant,
    /// The controller state.
    pub stats: EpochStats,
}

/// Socket + core + queues; see the module docs.
pub(crate) struct Driver {
    pub(crate) ep: ProtoEndpoint,
    pub(crate) sock: Socket,
    sq: SendQueue,
    rq: RecvQueue,
    clock: Clock,
    pub(crate) events: EventQueue,
    pub(crate) epochs: VecDeque<EpochSample>,
    cfg: RuntimeConfig,
    mtu: usize,
    lookahead: Duration,
    batch: Duration,
    /// Datagrams read since the blocking face last waited.
    pub(crate) rx_since_wait: u64,
    /// The OS socket was connected to an accepted peer (`connect_accepted`).
    accept_connected: bool,
    /// Flowing waits left that skip receive coalescing after an empty nap.
    pub(crate) nap_skip: u32,
    /// The last read stopped with data possibly left (budget or event cap).
    pub(crate) rx_backlog: bool,
    pub(crate) stats: RuntimeStats,
}

impl Driver {
    pub(crate) fn new(
        ep: ProtoEndpoint,
        sock: Socket,
        cfg: RuntimeConfig,
        min_batch: Duration,
    ) -> Driver {
        let mtu = ep.config().mtu;
        let slot = if sock.gro_enabled() {
            65_535
        } else {
            mtu.max(2048)
        };
        let send_queue = cfg.send_queue.max(1);
        Driver {
            sq: SendQueue::new(send_queue, send_queue * mtu).with_gso_segments(cfg.gso_segments),
            rq: RecvQueue::new(cfg.recv_slots, slot),
            clock: Clock::new(),
            events: EventQueue::default(),
            epochs: VecDeque::new(),
            lookahead: cfg.pacing_lookahead,
            batch: cfg.pacing_batch.max(min_batch),
            cfg,
            mtu,
            rx_since_wait: 0,
            accept_connected: false,
            nap_skip: 0,
            rx_backlog: false,
            stats: RuntimeStats::default(),
            ep,
            sock,
        }
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.sock.local_addr()
    }

    /// The core's time now.
    pub(crate) fn now(&mut self) -> Instant {
        self.clock.now()
    }

    /// Reads up to `recv_budget` datagrams into the core. `Ok(n)` when the
    /// budget ran out (or reading is paused) with data possibly left;
    /// `Err(WouldBlock)` when the socket is drained: a `recvmmsg` that found
    /// nothing, or one that filled fewer slots than it had (the kernel
    /// stops a batch only at an empty queue), which saves the confirming
    /// empty call per wake-up. What arrives later makes the socket readable
    /// again for `poll(2)` / tokio (level-triggered, resp. a new edge).
    pub(crate) fn recv_some(&mut self) -> io::Result<usize> {
        let mut handled = 0;
        let mut errors = 0;
        while handled < self.cfg.recv_budget {
            if self.events.len() >= self.cfg.max_events
                || self.events.bytes() >= self.cfg.max_event_bytes
            {
                self.stats.recv_paused += 1;
                self.rx_backlog = true;
                return Ok(handled);
            }
            let filled = match self.rq.recv(&self.sock) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.recv = self.rq.stats;
                    self.rx_backlog = false;
                    return Err(e);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // ENOBUFS, ICMP-reported errors and the like: count, go on.
                    self.stats.recv_errors += 1;
                    errors += 1;
                    if errors >= MAX_RECV_ERRORS_PER_WAKEUP {
                        self.rx_backlog = true;
                        return Ok(handled);
                    }
                    continue;
                }
            };
            let now = self.clock.now();
            // One call per batch (`deliver`): the core derives each
            // connection's timers once per run of its datagrams.
            let d = deliver(&mut self.ep, now, &mut self.rq, self.cfg.marking.ecn);
            handled += d.datagrams;
            self.rx_since_wait += d.datagrams as u64;
            self.stats.ce_marked += d.ce_marked;
            // One ACK per connection per batch (with `ack_every` > 1).
            self.ep.flush_acks(now);
            // Handshake replies leave now, not after the whole backlog (up
            // to `recv_budget` datagrams of a flood); no timer fires and no
            // connection sends before the rest of the backlog was read.
            if self.ep.has_replies() && self.fill(now, false)?.0 > 0 {
                let _ = self.flush();
            }
            self.collect_events();
            if filled < self.rq.slots() {
                self.stats.recv = self.rq.stats;
                self.rx_backlog = false;
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        self.stats.recv = self.rq.stats;
        self.stats.recv_budget_exhausted += 1;
        self.rx_backlog = true;
        Ok(handled)
    }

    /// Opens a connection to `peer` in the core (both faces' `start_connect`);
    /// with `connect_socket`, the OS socket is connected to the first peer
    /// and a connect to any other is an error (see the field).
    pub(crate) fn connect(
        &mut self,
        now: Instant,
        peer: SocketAddr,
    ) -> Result<ConnectionHandle, crate::error::ConnectError> {
        if self.cfg.connect_socket {
            match self.sock.connected_peer() {
                None if self.ep.connection_count() == 0 => self.sock.connect_to(peer)?,
                Some(p) if p != peer => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "connect_socket: the socket is connected to {p}, so {peer} \
                             could not answer; such an endpoint talks to one peer only"
                        ),
                    )
                    .into())
                }
                _ => {}
            }
        }
        Ok(self.ep.connect(now, peer)?)
    }

    /// Opens job `spec` on `h` and sends what is due (both faces' `send_job`).
    pub(crate) fn send_job(
        &mut self,
        h: ConnectionHandle,
        spec: approxnet_proto::JobSpec,
    ) -> Result<u32, SendJobError> {
        let now = self.now();
        let job = self.ep.send_job(now, h, spec)?;
        self.service()?;
        Ok(job)
    }

    /// Hands produced messages to streaming job `job` and sends what is due
    /// (both faces' `push_messages`).
    pub(crate) fn push_messages(
        &mut self,
        h: ConnectionHandle,
        job: u32,
        msgs: Vec<approxnet_proto::job::MessageSpec>,
    ) -> Result<approxnet_proto::Pushed, SendJobError> {
        let now = self.now();
        let r = self.ep.push_messages(now, h, job, msgs)?;
        self.service()?;
        Ok(r)
    }

    /// Ends streaming job `job` of `h` at what was pushed (both faces).
    pub(crate) fn end_stream(&mut self, h: ConnectionHandle, job: u32) -> Result<(), SendJobError> {
        let now = self.now();
        self.ep.end_stream(now, h, job)?;
        self.service()?;
        Ok(())
    }

    /// Fires due timers, moves everything the core wants to send into the
    /// send queue, flushes once, and collects events.
    ///
    /// Batch release: once something was due and sent, the core's clock is
    /// run forward through the timers of the next `pacing_lookahead`, so the
    /// paced packets of that window leave together (one `sendmmsg`, GSO).
    /// Nothing is released early unless something was due: the next wake-up
    /// is then the next timer itself, one window later, not one packet gap.
    pub(crate) fn service(&mut self) -> io::Result<()> {
        self.stats.wakeups += 1;
        let mut now = self.clock.now();
        let real = self.clock.real();
        let horizon = real + self.lookahead_core();
        // A timer this close counts as due: the wake-up was aimed this much
        // early so that a late wake-up (a busy host) loses no sending time.
        let due_by = real + self.early_core();
        let mut releasing = false;
        loop {
            if self.ep.poll_timeout().is_some_and(|t| t <= now) {
                self.ep.handle_timeout(now);
            }
            let (sent, blocked) = self.fill(now, true)?;
            if blocked {
                break; // kernel send buffer full: wait for writability
            }
            releasing |= sent > 0;
            match self.ep.poll_timeout() {
                Some(t) if t > now && t <= horizon && (releasing || t <= due_by) => {
                    releasing = true;
                    now = self.clock.advance_to(t);
                }
                _ => break,
            }
        }
        let _ = self.flush();
        self.collect_events();
        if self.accept_connected && self.ep.connection_count() == 0 {
            self.accept_connected = false;
            let _ = self.sock.disconnect(); // bound to an explicit port: see connect_accepted
        }
        Ok(())
    }

    /// With `connect_socket` on an accepting endpoint bound to an explicit
    /// port: the OS socket is connected to the first peer accepted while no
    /// other connection exists (the kernel then keeps the route for the
    /// ACKs and finds the socket by early demux), until the last connection
    /// is gone (`service`). Other peers cannot reach it meanwhile.
    fn connect_accepted(&mut self, h: ConnectionHandle) {
        if !self.cfg.connect_socket
            || self.sock.connected_peer().is_some()
            || self.ep.connection_count() != 1
            || !self.sock.port_fixed()
        {
            return;
        }
        if let Some(peer) = self.ep.peer(h) {
            // A refusal leaves the socket unconnected: slower, not wrong.
            self.accept_connected = self.sock.connect_to(peer).is_ok();
        }
    }

    /// Moves datagrams from the core into the send queue (with `timers`
    /// false, only handshake replies: `Endpoint::poll_reply`).
    /// Returns how many, and whether the queue is full and the kernel will
    /// not take more now.
    fn fill(&mut self, now: Instant, timers: bool) -> io::Result<(usize, bool)> {
        let mut sent = 0;
        loop {
            if self.sq.is_full_for(self.mtu) {
                match self.flush() {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                if self.sq.is_full_for(self.mtu) {
                    return Ok((sent, true));
                }
            }
            let Some(slot) = self.sq.reserve(self.mtu) else {
                return Ok((sent, true));
            };
            let polled = if timers {
                self.ep.poll_transmit(now, slot)
            } else {
                self.ep.poll_reply(now, slot)
            };
            let Some(t) = polled else {
                return Ok((sent, false));
            };
            let (mark, cscov) = self.marking(&t);
            let gso = self.sock.gso_enabled();
            if self.sq.commit(t.len.min(self.mtu), t.dst, mark, cscov, gso) {
                sent += 1;
            } else {
                self.stats.transmit_refused += 1;
            }
        }
    }

    fn marking(&self, t: &Transmit) -> (Marking, u16) {
        let m = self.cfg.marking;
        let dscp = if m.dscp { t.dscp } else { 0 };
        let ecn = if m.ecn { ECN_ECT0 } else { 0 };
        let prio = m
            .priority
            .then(|| 7u32.saturating_sub(u32::from(t.queue.min(7))));
        let cscov = match self.sock.kind() {
            SocketKind::UdpLite => cscov_for(t.checksum_coverage(), t.len),
            SocketKind::Udp => 0,
        };
        (Marking::new(dscp, ecn, prio), cscov)
    }

    fn lookahead_core(&self) -> approxnet_proto::Duration {
        approxnet_proto::Duration::from_nanos(self.lookahead.as_nanos().min(u64::MAX as u128) as u64)
    }

    /// How early the driver wakes before a timer: half the lookahead.
    fn early_core(&self) -> approxnet_proto::Duration {
        approxnet_proto::Duration::from_nanos(self.lookahead_core().as_nanos() / 2)
    }

    /// Reads what is already waiting (without blocking), then services:
    /// datagrams that arrived while the process was not running are seen
    /// before timers fire, so a late wake-up does not turn ACKs still in
    /// the socket buffer into declared losses.
    pub(crate) fn pump(&mut self) -> io::Result<()> {
        match self.recv_some() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        self.service()
    }

    /// Busy polling (the blocking face's `RuntimeConfig::busy_poll`): reads
    /// the socket without sleeping until datagrams were handled (`true`) or
    /// `limit` passed with none (`false`). Each attempt is one non-blocking
    /// `recvmmsg`; no allocation.
    pub(crate) fn spin(&mut self, limit: Duration) -> io::Result<bool> {
        let start = std::time::Instant::now();
        loop {
            let before = self.rq.stats.syscalls;
            match self.recv_some() {
                // The budget ran out or reading paused: the caller looks.
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.rq.stats.syscalls != before {
                        return Ok(true);
                    }
                }
                Err(e) => return Err(e),
            }
            if start.elapsed() >= limit {
                return Ok(false);
            }
            std::hint::spin_loop();
        }
    }

    /// Counts one sleep of either face (`RuntimeStats::sleeps`) under
    /// what held sending back when it began (`blocked`: the kernel refused
    /// queued datagrams; else the core's `hold`), with its wall time.
    pub(crate) fn note_sleep(
        &mut self,
        blocked: bool,
        hold: approxnet_proto::SendHold,
        slept: Duration,
    ) {
        self.stats.sleeps += 1;
        let cause = self.stats.sleep_causes.entry(blocked, hold);
        cause.sleeps += 1;
        cause.slept_us += u64::try_from(slept.as_micros()).unwrap_or(u64::MAX);
    }

    /// The configured receive-coalescing nap.
    pub(crate) fn rx_coalesce(&self) -> Duration {
        self.cfg.rx_coalesce
    }

    /// The configured busy-poll bound.
    pub(crate) fn busy_poll(&self) -> Duration {
        self.cfg.busy_poll
    }

    /// Sends what the kernel takes; `Err(WouldBlock)` if datagrams remain.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.sq.flush(&self.sock)?;
        self.stats.send = self.sq.stats;
        if self.sq.is_empty() {
            Ok(())
        } else {
            Err(io::ErrorKind::WouldBlock.into())
        }
    }

    fn collect_events(&mut self) {
        while let Some((h, e)) = self.ep.poll_event() {
            match e {
                Event::Epoch(s) => {
                    if self.epochs.len() >= self.cfg.epoch_history {
                        self.epochs.pop_front();
                        self.stats.epochs_dropped += 1;
                    }
                    if self.cfg.epoch_history > 0 {
                        let at = self.clock.now();
                        self.epochs.push_back(EpochSample {
                            conn: h,
                            at,
                            stats: s,
                        });
                    }
                }
                Event::Accepted => {
                    self.connect_accepted(h);
                    self.events.push(h, Event::Accepted);
                }
                e => self.events.push(h, e),
            }
        }
    }

    /// What to wait for: writability (datagrams queued) and for how long
    /// (until the next core timer; `None`: no timer).
    pub(crate) fn wait_spec(&mut self) -> (bool, Option<Duration>) {
        let early = self.early_core();
        let batch = self.batch;
        let timeout = self.ep.poll_timeout().map(|t| {
            self.clock.until(Instant::from_nanos(
                t.as_nanos().saturating_sub(early.as_nanos()),
            )) + batch
        });
        let blocked = !self.sq.is_empty();
        // While the kernel refuses datagrams, a due pacing timer cannot be
        // served anyway: wait for writability (or the floor) instead of spinning.
        let timeout = if blocked {
            timeout.map(|t| t.max(BLOCKED_TIMER_FLOOR))
        } else {
            timeout
        };
        (blocked, timeout)
    }
}
