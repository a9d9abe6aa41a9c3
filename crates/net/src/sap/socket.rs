//! The SAP socket: one connection, one open-ended stream per direction.

use super::config::{Mode, SapConfig};
use super::error::{CloseError, RecvError, SapError};
use crate::blocking::Endpoint;
use crate::error::JobWaitError;
use crate::stats::RuntimeStats;
use approxnet_proto::event::{JobFailure, Role};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::{ConnectionHandle, Event, JobError, JobSpec, Pushed};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Group of precise datagrams (MSR 1).
pub(crate) const PRECISE_GROUP: u16 = 0;
/// Group of approximate datagrams (MSR 0).
pub(crate) const APPROX_GROUP: u16 = 1;

/// One received datagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Sent in approximate mode (otherwise precise: exact, in order).
    pub approximate: bool,
    /// Bytes at the start that the checksum covered (exact even when
    /// approximate); the whole datagram when precise.
    pub precise_len: usize,
    /// The approximate bytes failed their CRC32C: they were damaged on the
    /// way (only delivered when the socket accepts damaged data).
    pub damaged: bool,
}

/// Waits for one peer (the paper's `sap_listen`).
pub struct SapListener {
    ep: Endpoint,
    cfg: SapConfig,
    conn: Option<ConnectionHandle>,
}

impl SapListener {
    /// Binds `addr` (port 0: any free port).
    pub fn bind(addr: SocketAddr, cfg: SapConfig) -> Result<SapListener, SapError> {
        Ok(SapListener {
            ep: Endpoint::bind(addr, cfg.runtime())?,
            cfg,
            conn: None,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.ep.local_addr()
    }

    /// Drives the handshake for up to `timeout` (None: without bound);
    /// true once a peer connected (then [`SapListener::accept`] returns at
    /// once). A peer counts once its stream is announced (the core keeps
    /// no state for a handshake alone).
    pub fn poll_accept(&mut self, timeout: Option<Duration>) -> Result<bool, SapError> {
        if self.conn.is_none() {
            self.conn = self.ep.accept(timeout)?;
        }
        Ok(self.conn.is_some())
    }

    /// Waits up to `timeout` (None: without bound) for a peer; the socket
    /// takes the listener's port (one connection per socket, as in the
    /// paper: no multiplexing).
    pub fn accept(mut self, timeout: Option<Duration>) -> Result<SapSocket, SapError> {
        if !self.poll_accept(timeout)? {
            return Err(SapError::NoPeer);
        }
        let conn = self.conn.ok_or(SapError::NoPeer)?;
        Ok(SapSocket::new(self.ep, conn, self.cfg))
    }
}

/// A SAP socket: precise by default, switchable at run time.
pub struct SapSocket {
    ep: Endpoint,
    conn: ConnectionHandle,
    cfg: SapConfig,
    mode: Mode,
    /// This side's open-ended stream, once something was sent.
    tx_job: Option<u32>,
    inbox: VecDeque<Datagram>,
    lost: Option<JobFailure>,
    closed: bool,
}

impl SapSocket {
    fn new(ep: Endpoint, conn: ConnectionHandle, cfg: SapConfig) -> SapSocket {
        SapSocket {
            ep,
            conn,
            cfg,
            mode: Mode::Precise,
            tx_job: None,
            inbox: VecDeque::new(),
            lost: None,
            closed: false,
        }
    }

    /// Binds `local` and connects to `peer` (the paper's `sap_connect`:
    /// a precise handshake, bounded by the core's idle timeout).
    pub fn connect(
        local: SocketAddr,
        peer: SocketAddr,
        cfg: SapConfig,
    ) -> Result<SapSocket, SapError> {
        let mut ep = Endpoint::bind(local, cfg.runtime())?;
        let conn = ep.connect(peer)?;
        Ok(SapSocket::new(ep, conn, cfg))
    }

    /// The current send mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches the send mode; datagrams already handed over keep theirs.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Sends `bytes` as one datagram in the current mode (approximate: no
    /// precise prefix).
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), SapError> {
        self.send_with_prefix(
            bytes,
            if self.mode == Mode::Precise {
                bytes.len()
            } else {
                0
            },
        )
    }

    /// Sends `bytes` as one datagram whose first `precise_len` bytes are
    /// checksummed (a damaged prefix loses the datagram). In precise mode
    /// the whole datagram is precise and `precise_len` must be its length
    /// or less. A `precise_len` past the end is an error, never clamped.
    pub fn send_with_prefix(&mut self, bytes: &[u8], precise_len: usize) -> Result<(), SapError> {
        if self.closed {
            return Err(SapError::Closed);
        }
        if let Some(f) = &self.lost {
            return Err(SapError::Lost(f.clone()));
        }
        if precise_len > bytes.len() {
            return Err(SapError::Send(JobError::PreciseTooLong {
                msg: 0,
                precise: precise_len,
                len: bytes.len(),
            }));
        }
        let (group, precise_len) = match self.mode {
            Mode::Precise => (PRECISE_GROUP, bytes.len()),
            Mode::Approximate => (APPROX_GROUP, precise_len),
        };
        let msg = MessageSpec {
            group,
            payload: Payload::Bytes(bytes.to_vec()),
            precise_len,
        };
        let job = self.stream()?;
        let pushed = self.ep.push_messages(self.conn, job, vec![msg.clone()]);
        // A sender that only sends must still read its ACKs (else its
        // peer looks silent after the idle timeout): one non-blocking
        // round of I/O per datagram, events filed.
        self.ep.drive(Some(Duration::ZERO))?;
        while let Some((_, ev)) = self.ep.poll_event() {
            self.take(ev);
        }
        self.wait_for_room()?;
        match pushed {
            Ok(Pushed::Queued(_)) => Ok(()),
            // The stream filled a group: end it, wait until its precise
            // datagrams are all acknowledged (order across streams), then
            // go on in a new one.
            Err(crate::SendJobError::Job(JobError::GroupFull { .. })) => {
                self.rollover(job)?;
                let job = self.stream()?;
                self.ep.push_messages(self.conn, job, vec![msg])?;
                Ok(())
            }
            Ok(Pushed::JobComplete) => Err(SapError::Closed),
            Err(e) => Err(e.into()),
        }
    }

    /// Drives I/O while more than `max_waiting` datagrams wait to leave
    /// (back-pressure: pacing and the in-flight cap set the pace). A lost
    /// connection ends the wait; the next call reports it.
    fn wait_for_room(&mut self) -> Result<(), SapError> {
        while self.lost.is_none()
            && self
                .ep
                .core()
                .waiting_messages(self.conn)
                .is_some_and(|w| w > self.cfg.max_waiting)
        {
            self.ep.drive(Some(Duration::from_millis(10)))?;
            while let Some((_, ev)) = self.ep.poll_event() {
                self.take(ev);
            }
        }
        Ok(())
    }

    /// This side's stream, opened on first use: both groups announced with
    /// the configured capacity.
    fn stream(&mut self) -> Result<u32, SapError> {
        if let Some(j) = self.tx_job {
            return Ok(j);
        }
        let n = self.cfg.stream_capacity();
        let spec = JobSpec::new(1.0)?
            .group(APPROX_GROUP, 0.0)?
            .announce(PRECISE_GROUP, n)?
            .announce(APPROX_GROUP, n)?;
        let job = self.ep.send_job(self.conn, spec)?;
        self.tx_job = Some(job);
        Ok(job)
    }

    fn rollover(&mut self, job: u32) -> Result<(), SapError> {
        self.ep.end_stream(self.conn, job)?;
        self.tx_job = None;
        match self.ep.wait_job(self.conn, job, None) {
            Ok(_) => Ok(()),
            Err(JobWaitError::Failed(f) | JobWaitError::ConnectionLost(f)) => {
                self.lost = Some(f.clone());
                Err(SapError::Lost(f))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The next datagram, waiting up to `timeout` (None: without bound).
    /// Precise datagrams come in the order sent; approximate ones as they
    /// arrive.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Result<Datagram, RecvError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Some(d) = self.inbox.pop_front() {
                return Ok(d);
            }
            if let Some(f) = &self.lost {
                return Err(RecvError::Lost(f.clone()));
            }
            if self.ep.core().peer(self.conn).is_none() {
                return Err(RecvError::Closed);
            }
            let left = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(RecvError::TimedOut);
                    }
                    Some(left)
                }
                None => None,
            };
            // One round of I/O (returns on socket activity, e.g. the
            // peer's FIN, or at the bound), then file what it brought.
            self.ep.drive(left)?;
            while let Some((_, ev)) = self.ep.poll_event() {
                self.take(ev);
            }
        }
    }

    /// Files one event: datagrams into the inbox, a lost connection.
    fn take(&mut self, ev: Event) {
        match ev {
            Event::MessageDelivered {
                group,
                payload,
                precise_len,
                damaged,
                ..
            } => self.inbox.push_back(Datagram {
                approximate: group != PRECISE_GROUP,
                precise_len,
                damaged,
                bytes: payload,
            }),
            Event::ConnectionLost { reason } => self.lost = Some(reason),
            // The peer's stream ended without its FIN (it fell silent, or
            // reset): nothing more will come.
            Event::JobComplete {
                role: Role::Receiver,
                outcome: Err(f),
                ..
            } => self.lost = Some(f),
            _ => {}
        }
    }

    /// Ends this side's stream at what was sent and waits up to `timeout`
    /// until every precise datagram of it is acknowledged (approximate ones
    /// are not waited for). Later sends go in a new stream, announced
    /// before the old one ends: an open stream keeps the connection
    /// watched (the sender's keepalives, the receiver's idle timer), so a
    /// peer that falls silent after a flush — its FIN lost on the link,
    /// say — is reported within the idle timeout instead of never.
    pub fn flush(&mut self, timeout: Duration) -> Result<(), CloseError> {
        self.end_stream(timeout, true)
    }

    /// [`SapSocket::flush`]; `reopen`: announce the next stream first.
    fn end_stream(&mut self, timeout: Duration, reopen: bool) -> Result<(), CloseError> {
        if let Some(f) = &self.lost {
            return Err(CloseError::Lost(f.clone()));
        }
        let Some(job) = self.tx_job.take() else {
            return Ok(());
        };
        if reopen {
            if let Err(e) = self.stream() {
                return Err(match e {
                    SapError::Io(i) => CloseError::Io(i),
                    SapError::Lost(f) => CloseError::Lost(f),
                    _ => CloseError::Lost(JobFailure::Reset),
                });
            }
        }
        if let Err(e) = self.ep.end_stream(self.conn, job) {
            return match e {
                crate::SendJobError::Io(i) => Err(CloseError::Io(i)),
                crate::SendJobError::Job(_) => Err(CloseError::Lost(JobFailure::Reset)),
            };
        }
        if self.wait_sender_done(job, timeout)? {
            Ok(())
        } else {
            Err(CloseError::Unacknowledged)
        }
    }

    /// Closes (the paper's FIN then `sap_close`): [`SapSocket::flush`],
    /// then closes the connection with FIN and waits for its
    /// acknowledgement, all within `timeout`. Datagrams that arrive
    /// meanwhile stay readable with [`SapSocket::recv`].
    pub fn close(&mut self, timeout: Duration) -> Result<(), CloseError> {
        let deadline = Instant::now() + timeout;
        self.end_stream(timeout, false)?;
        self.closed = true;
        self.ep.close(self.conn)?;
        let left = deadline.saturating_duration_since(Instant::now());
        let finished = self.ep.finish(left)?;
        while let Some((_, ev)) = self.ep.poll_event() {
            self.take(ev);
        }
        // Gone without the FIN's acknowledgement: the peer fell silent.
        if let Some(f) = &self.lost {
            return Err(CloseError::Lost(f.clone()));
        }
        if finished {
            Ok(())
        } else {
            Err(CloseError::FinUnacknowledged)
        }
    }

    /// Drives until `job` completed at this (sending) side, filing other
    /// events; false at the bound.
    fn wait_sender_done(&mut self, job: u32, left: Duration) -> Result<bool, CloseError> {
        let deadline = Instant::now() + left;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let Some((_, ev)) = self.ep.next_event(Some(left))? else {
                continue;
            };
            match ev {
                Event::JobComplete {
                    job: j,
                    role: Role::Sender,
                    outcome,
                } if j == job => {
                    return match outcome {
                        Ok(_) => Ok(true),
                        Err(f) => {
                            self.lost = Some(f.clone());
                            Err(CloseError::Lost(f))
                        }
                    };
                }
                other => self.take(other),
            }
            if let Some(f) = &self.lost {
                return Err(CloseError::Lost(f.clone()));
            }
        }
    }

    /// The local address.
    pub fn local_addr(&self) -> SocketAddr {
        self.ep.local_addr()
    }

    /// Whether this side closed ([`SapSocket::close`]).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The peer's address (None once the connection is gone).
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.ep.core().peer(self.conn)
    }

    /// Runtime counters of the socket underneath.
    pub fn stats(&self) -> RuntimeStats {
        self.ep.stats()
    }

    /// The endpoint underneath (core counters: drops by reason).
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }
}
