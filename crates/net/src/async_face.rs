//! The async face: the same endpoint driven by a tokio task.
//!
//! Readiness comes from tokio's reactor (`AsyncFd`), timers from
//! `tokio::time` (1 ms resolution, so the core's pacing credit is at least
//! 2 ms here). Each `async fn` drives the endpoint while it waits; the endpoint
//! is owned by one task (`&mut self`), with no background task or lock.

use crate::config::RuntimeConfig;
use crate::driver::{Driver, EpochSample};
use crate::error::{BindError, ConnectError, JobWaitError, SendJobError};
use crate::events::EventQueue;
use crate::stats::RuntimeStats;
use crate::sys::Socket;
use approxnet_proto::job::MessageSpec;
use approxnet_proto::{
    ConnectionHandle, Endpoint as ProtoEndpoint, Event, JobReport, JobSpec, Pushed,
};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant as StdInstant};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant as TokioInstant;

/// tokio's timer wheel resolution.
const TOKIO_TICK: Duration = Duration::from_millis(1);

/// The socket's descriptor, registered with tokio; the socket itself stays
/// in the driver and outlives the registration (field order below).
struct FdRef(RawFd);

impl AsRawFd for FdRef {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// An approxnet endpoint on a real socket, for tokio applications.
/// Same semantics as [`crate::Endpoint`]; see there.
pub struct AsyncEndpoint {
    // Declared first so it is dropped (deregistered) before the socket closes.
    io: AsyncFd<FdRef>,
    d: Driver,
}

impl AsyncEndpoint {
    /// Opens a socket on `addr` and an endpoint on it. Must be called
    /// inside a tokio runtime with I/O and time enabled. tokio's timers wake
    /// up to a tick (1 ms) late, so the core's `pacing_burst` is raised to
    /// at least two ticks here.
    pub fn bind(addr: SocketAddr, mut cfg: RuntimeConfig) -> Result<AsyncEndpoint, BindError> {
        let two_ticks = approxnet_proto::Duration::from_nanos(2 * TOKIO_TICK.as_nanos() as u64);
        if cfg.proto.pacing_burst < two_ticks {
            cfg.proto.pacing_burst = two_ticks;
        }
        cfg.validate()?;
        let ep = ProtoEndpoint::new(cfg.proto, cfg.core_seed()?)?;
        let sock = Socket::bind(addr, &cfg.socket_options())?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(BindError::Io(io::Error::other(
                "AsyncEndpoint::bind must run inside a tokio runtime",
            )));
        }
        // SAFETY: the descriptor belongs to `sock`, which moves into the
        // driver below and is dropped after this registration (field order
        // of `AsyncEndpoint`); it is never closed or replaced before that.
        let io = unsafe { AsyncFd::register(FdRef(sock.as_raw_fd())) }.map_err(io::Error::from)?;
        Ok(AsyncEndpoint {
            io,
            d: Driver::new(ep, sock, cfg, Duration::ZERO),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.d.local_addr()
    }

    /// Starts a handshake and returns at once (see [`crate::Endpoint::start_connect`]).
    pub fn start_connect(&mut self, peer: SocketAddr) -> Result<ConnectionHandle, ConnectError> {
        let now = self.d.now();
        let h = self.d.connect(now, peer)?;
        self.d.service()?;
        Ok(h)
    }

    /// Connects and waits for the handshake (bounded by the core's idle timeout).
    pub async fn connect(&mut self, peer: SocketAddr) -> Result<ConnectionHandle, ConnectError> {
        let h = self.start_connect(peer)?;
        match self.drive_until(None, |q| q.take_connected(h)).await? {
            Some(r) => r.map(|()| h),
            None => Err(ConnectError::TimedOut),
        }
    }

    /// Waits for a peer to open a connection (see [`crate::Endpoint::accept`]).
    pub async fn accept(
        &mut self,
        timeout: Option<Duration>,
    ) -> io::Result<Option<ConnectionHandle>> {
        let deadline = timeout.map(|t| TokioInstant::now() + t);
        self.drive_until(deadline, |q| q.take_accepted()).await
    }

    /// Queues a job; returns its id at once.
    pub fn send_job(&mut self, h: ConnectionHandle, spec: JobSpec) -> Result<u32, SendJobError> {
        self.d.send_job(h, spec)
    }

    /// Hands over messages of streaming job `job` as they are produced
    /// (see `JobSpec::announce`); [`Pushed::JobComplete`] once the job met
    /// its MSR and they are discarded.
    pub fn push_messages(
        &mut self,
        h: ConnectionHandle,
        job: u32,
        msgs: Vec<MessageSpec>,
    ) -> Result<Pushed, SendJobError> {
        self.d.push_messages(h, job, msgs)
    }

    /// Ends streaming job `job` of `h` at what was pushed (see
    /// [`crate::Endpoint::end_stream`]).
    pub fn end_stream(&mut self, h: ConnectionHandle, job: u32) -> Result<(), SendJobError> {
        self.d.end_stream(h, job)
    }

    /// Waits for `job` on `h` to complete (see [`crate::Endpoint::wait_job`]).
    pub async fn wait_job(
        &mut self,
        h: ConnectionHandle,
        job: u32,
        timeout: Option<Duration>,
    ) -> Result<JobReport, JobWaitError> {
        let deadline = timeout.map(|t| TokioInstant::now() + t);
        let found = self
            .drive_until(deadline, |q| q.take_job_done(h, job))
            .await?;
        match found {
            Some(r) => r,
            None if self.d.ep.peer(h).is_none() => Err(JobWaitError::NoConnection),
            None => Err(JobWaitError::TimedOut),
        }
    }

    /// Closes a connection once its jobs are done.
    pub fn close(&mut self, h: ConnectionHandle) -> io::Result<()> {
        let now = self.d.now();
        self.d.ep.close(now, h);
        self.d.service()
    }

    /// The next event, driving until one arrives or `timeout` passes.
    pub async fn next_event(
        &mut self,
        timeout: Option<Duration>,
    ) -> io::Result<Option<(ConnectionHandle, Event)>> {
        let deadline = timeout.map(|t| TokioInstant::now() + t);
        self.drive_until(deadline, |q| q.pop()).await
    }

    /// An event already received, without I/O.
    pub fn poll_event(&mut self) -> Option<(ConnectionHandle, Event)> {
        self.d.events.pop()
    }

    /// Drives until nothing is queued and no connection remains, or `timeout`.
    pub async fn finish(&mut self, timeout: Duration) -> io::Result<bool> {
        let deadline = TokioInstant::now() + timeout;
        loop {
            if self.d.ep.connection_count() == 0 && !self.d.wait_spec().0 {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(TokioInstant::now());
            if left.is_zero() {
                return Ok(false);
            }
            self.drive(Some(left)).await?;
        }
    }

    /// One round: send what is due, wait for readiness or the next timer
    /// (at most `timeout`), receive, send again.
    pub async fn drive(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        // A plain non-blocking read first; readiness is cleared only inside
        // try_io below, so nothing is lost if this finds the socket empty.
        let seen = self.d.events.pushed();
        self.d.pump()?;
        if self.d.events.pushed() != seen {
            return Ok(()); // new events: let the caller look before waiting
        }
        let (want_write, timer) = self.d.wait_spec();
        let wait = match (timer, timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = async move {
            match wait {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        // Each wait is a sleep, counted as the blocking face counts its
        // `ppoll` (`RuntimeStats::sleeps`, `sleep_causes`): under what held
        // sending back when it began, with the time until the task ran on.
        let hold = self.d.ep.send_hold();
        let t0 = StdInstant::now();
        let io = &self.io;
        let d = &mut self.d;
        tokio::select! {
            r = io.readable() => {
                let mut g = r?;
                // try_io clears readiness only on WouldBlock, i.e. once drained.
                if let Ok(Err(e)) = g.try_io(|_| d.recv_some()) {
                    return Err(e);
                }
            }
            w = io.writable(), if want_write => {
                let mut g = w?;
                if let Ok(Err(e)) = g.try_io(|_| d.flush()) {
                    return Err(e);
                }
            }
            _ = sleep => {}
        }
        self.d.note_sleep(want_write, hold, t0.elapsed());
        self.d.service()
    }

    async fn drive_until<T>(
        &mut self,
        deadline: Option<TokioInstant>,
        mut pick: impl FnMut(&mut EventQueue) -> Option<T>,
    ) -> io::Result<Option<T>> {
        loop {
            if let Some(x) = pick(&mut self.d.events) {
                return Ok(Some(x));
            }
            let left = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(TokioInstant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    Some(left)
                }
                None => None,
            };
            self.drive(left).await?;
        }
    }

    /// Events received and not yet taken by the application.
    pub fn pending_events(&self) -> usize {
        self.d.events.len()
    }

    /// Runtime counters.
    pub fn stats(&self) -> RuntimeStats {
        self.d.stats
    }

    /// The protocol core.
    pub fn core(&self) -> &ProtoEndpoint {
        &self.d.ep
    }

    /// Takes the rate-control samples gathered so far.
    pub fn take_epochs(&mut self) -> Vec<EpochSample> {
        self.d.epochs.drain(..).collect()
    }

    /// The socket.
    pub fn socket(&self) -> &Socket {
        &self.d.sock
    }
}
