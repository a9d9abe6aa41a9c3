//! The blocking face: one thread drives the endpoint inside each call.

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
use std::time::{Duration, Instant as StdInstant};

/// How long the next wait sleeps without watching the socket (receive
/// coalescing, [`RuntimeConfig::rx_coalesce`]), or `None` for a normal
/// wait: only while data flows (the reads since the last wait found at
/// least [`crate::config::RX_COALESCE_MIN_DATAGRAMS`] datagrams), never
/// while the kernel refuses our datagrams (that wait is for writability)
/// or datagrams are left unread (the caller passes both as `want_write`),
/// and never past the next timer (`wait`). While `skip` (set after a nap
/// that found nothing) is above 0, a wait that would nap does not and
/// counts it down.
fn coalesce_nap(
    coalesce: Duration,
    rx_since_wait: u64,
    want_write: bool,
    wait: Option<Duration>,
    skip: &mut u32,
) -> Option<Duration> {
    if coalesce.is_zero() || want_write || rx_since_wait < crate::config::RX_COALESCE_MIN_DATAGRAMS
    {
        return None;
    }
    if *skip > 0 {
        *skip -= 1;
        return None;
    }
    Some(wait.map_or(coalesce, |w| w.min(coalesce)))
}

/// An approxnet endpoint on a real socket, driven by the calling thread.
///
/// It both connects (client) and accepts (server). Every call that waits
/// drives the protocol while it waits; between calls nothing happens, so
/// a server loops on [`Endpoint::next_event`]. Memory is bounded by
/// [`RuntimeConfig`] (queues, event cap) and the core's `Limits`.
pub struct Endpoint {
    d: Driver,
}

impl Endpoint {
    /// Opens a socket on `addr` (port 0: any free port) and an endpoint on it.
    pub fn bind(addr: SocketAddr, cfg: RuntimeConfig) -> Result<Endpoint, BindError> {
        cfg.validate()?;
        let ep = ProtoEndpoint::new(cfg.proto, cfg.core_seed()?)?;
        let sock = Socket::bind(addr, &cfg.socket_options())?;
        Ok(Endpoint {
            d: Driver::new(ep, sock, cfg, Duration::ZERO),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.d.local_addr()
    }

    /// Starts a handshake with `peer` and returns at once; jobs may be
    /// queued on the handle immediately. `Event::Connected` follows.
    pub fn start_connect(&mut self, peer: SocketAddr) -> Result<ConnectionHandle, ConnectError> {
        let now = self.d.now();
        let h = self.d.connect(now, peer)?;
        self.d.service()?;
        Ok(h)
    }

    /// Connects to `peer` and waits for the handshake. Bounded by the
    /// core's `idle_timeout` (then [`ConnectError::Lost`]).
    pub fn connect(&mut self, peer: SocketAddr) -> Result<ConnectionHandle, ConnectError> {
        let h = self.start_connect(peer)?;
        self.wait_connected(h, None).map(|_| h)
    }

    /// Waits up to `timeout` (`None`: as long as the core allows) for the
    /// handshake of `h` (from [`Endpoint::start_connect`]) to finish, leaving
    /// every other event queued. `Ok(true)`: connected; `Ok(false)`: still in
    /// progress when `timeout` passed (call again, or give up and `close`).
    pub fn wait_connected(
        &mut self,
        h: ConnectionHandle,
        timeout: Option<Duration>,
    ) -> Result<bool, ConnectError> {
        let deadline = timeout.map(|t| StdInstant::now() + t);
        match self.drive_until(deadline, |q| q.take_connected(h))? {
            Some(r) => r.map(|()| true),
            None => Ok(false),
        }
    }

    /// Waits for a peer to open a connection (its first job arrives) and
    /// returns it; other events stay queued for [`Endpoint::next_event`].
    /// `None` when `timeout` passes first.
    pub fn accept(&mut self, timeout: Option<Duration>) -> io::Result<Option<ConnectionHandle>> {
        let deadline = timeout.map(|t| StdInstant::now() + t);
        self.drive_until(deadline, |q| q.take_accepted())
    }

    /// Queues a job on a connection; returns its id at once.
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

    /// Waits until `job` (sent on `h`) completes and returns the sender's
    /// report. Ends with an error when the job fails or the connection is
    /// lost (the core gives up on a silent peer after `idle_timeout`), or
    /// when `timeout` passes first.
    pub fn wait_job(
        &mut self,
        h: ConnectionHandle,
        job: u32,
        timeout: Option<Duration>,
    ) -> Result<JobReport, JobWaitError> {
        let deadline = timeout.map(|t| StdInstant::now() + t);
        let found = self.drive_until(deadline, |q| q.take_job_done(h, job))?;
        match found {
            Some(r) => r,
            None if self.d.ep.peer(h).is_none() => Err(JobWaitError::NoConnection),
            None => Err(JobWaitError::TimedOut),
        }
    }

    /// Ends streaming job `job` of `h` at the messages pushed so far (see
    /// `approxnet_proto::Endpoint::end_stream`); it then completes like any
    /// job ([`Endpoint::wait_job`]).
    pub fn end_stream(&mut self, h: ConnectionHandle, job: u32) -> Result<(), SendJobError> {
        self.d.end_stream(h, job)
    }

    /// Closes a connection once its jobs are done (FIN exchange follows).
    pub fn close(&mut self, h: ConnectionHandle) -> io::Result<()> {
        let now = self.d.now();
        self.d.ep.close(now, h);
        self.d.service()
    }

    /// The next event, driving the endpoint until one arrives or `timeout`
    /// passes (`None`: wait as long as it takes).
    pub fn next_event(
        &mut self,
        timeout: Option<Duration>,
    ) -> io::Result<Option<(ConnectionHandle, Event)>> {
        let deadline = timeout.map(|t| StdInstant::now() + t);
        self.drive_until(deadline, |q| q.pop())
    }

    /// An event already received, without doing any I/O.
    pub fn poll_event(&mut self) -> Option<(ConnectionHandle, Event)> {
        self.d.events.pop()
    }

    /// Drives the endpoint until nothing is queued for sending and no
    /// connection remains, or `timeout` passes. Returns whether it finished.
    pub fn finish(&mut self, timeout: Duration) -> io::Result<bool> {
        let deadline = StdInstant::now() + timeout;
        loop {
            if self.d.ep.connection_count() == 0 && !self.d.wait_spec().0 {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(StdInstant::now());
            if left.is_zero() {
                return Ok(false);
            }
            self.drive(Some(left))?;
        }
    }

    /// One round: send what is due, wait for the socket or the next timer
    /// (at most `timeout`), receive, send again.
    pub fn drive(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let seen = self.d.events.pushed();
        let live = self.d.ep.connection_count();
        self.d.pump()?;
        // New events, or a connection that ended quietly (the peer's
        // close): let the caller look before blocking.
        if self.d.events.pushed() != seen || self.d.ep.connection_count() != live {
            return Ok(());
        }
        let (want_write, timer) = self.d.wait_spec();
        let mut wait = match (timer, timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Busy polling: keep reading for a bounded time instead of going to
        // sleep at once (not while the kernel refuses our datagrams: that
        // wait is for writability).
        // Receive coalescing: data is flowing, so sleep a short time
        // without watching the socket and read what came meanwhile at once.
        // Never nap on a backlog (a flood, the event cap): the socket is
        // not drained, and napping would only cut the reading rate.
        let nap = coalesce_nap(
            self.d.rx_coalesce(),
            self.d.rx_since_wait,
            want_write || self.d.rx_backlog,
            wait,
            &mut self.d.nap_skip,
        );
        self.d.rx_since_wait = 0;
        if let Some(nap) = nap {
            self.d.stats.naps += 1;
            let t0 = StdInstant::now();
            std::thread::sleep(nap);
            let late = t0.elapsed().saturating_sub(nap);
            if self.note_lateness(late) {
                self.d.stats.naps_late += 1;
            }
            match self.d.recv_some() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // A nap that found (almost) nothing: the flow is slower than
            // the nap; wait on the socket for the next few batches.
            if self.d.rx_since_wait < crate::config::RX_COALESCE_MIN_DATAGRAMS {
                self.d.nap_skip = crate::config::RX_COALESCE_BACKOFF;
            }
            return self.d.service();
        }
        let spin = match wait {
            _ if want_write => Duration::ZERO,
            Some(w) => w.min(self.d.busy_poll()),
            None => self.d.busy_poll(),
        };
        if !spin.is_zero() {
            let t0 = StdInstant::now();
            let got = self.d.spin(spin)?;
            let spent = t0.elapsed();
            if got || wait.is_some_and(|w| spent >= w) {
                self.d.stats.busy_polls += 1;
                return self.d.service();
            }
            wait = wait.map(|w| w.saturating_sub(spent));
        }
        let hold = self.d.ep.send_hold();
        let t0 = StdInstant::now();
        self.d.sock.wait(want_write, wait)?;
        let slept = t0.elapsed();
        self.d.note_sleep(want_write, hold, slept);
        let got = match self.d.recv_some() {
            Ok(_) => self.d.rx_since_wait > 0,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
            Err(e) => return Err(e),
        };
        // A wait its timeout ended (nothing to read): how late it woke.
        if let (false, Some(w)) = (got, wait) {
            if self.note_lateness(slept.saturating_sub(w)) {
                self.d.stats.sleeps_late += 1;
            }
        }
        self.d.service()
    }

    /// Keeps the longest wake-up lateness; whether `late` counts as late.
    fn note_lateness(&mut self, late: Duration) -> bool {
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        let st = &mut self.d.stats;
        st.wake_late_max_us = st.wake_late_max_us.max(us);
        late > crate::stats::LATE_WAKE
    }

    fn drive_until<T>(
        &mut self,
        deadline: Option<StdInstant>,
        mut pick: impl FnMut(&mut EventQueue) -> Option<T>,
    ) -> io::Result<Option<T>> {
        loop {
            if let Some(x) = pick(&mut self.d.events) {
                return Ok(Some(x));
            }
            let left = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(StdInstant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    Some(left)
                }
                None => None,
            };
            self.drive(left)?;
        }
    }

    /// Events received and not yet taken by the application.
    pub fn pending_events(&self) -> usize {
        self.d.events.len()
    }

    /// Runtime counters (socket, batching, back-pressure).
    pub fn stats(&self) -> RuntimeStats {
        self.d.stats
    }

    /// The protocol core, for its counters (`stats()`), rates and peers.
    pub fn core(&self) -> &ProtoEndpoint {
        &self.d.ep
    }

    /// Takes the rate-control samples gathered so far (bounded history).
    pub fn take_epochs(&mut self) -> Vec<EpochSample> {
        self.d.epochs.drain(..).collect()
    }

    /// The socket, e.g. to read UDP-Lite coverage back.
    pub fn socket(&self) -> &Socket {
        &self.d.sock
    }
}

#[cfg(test)]
mod tests {
    use super::coalesce_nap;
    use crate::config::RX_COALESCE_MIN_DATAGRAMS as MIN;
    use std::time::Duration;

    #[test]
    fn coalescing_naps_only_while_data_flows_and_never_past_a_timer() {
        let c = Duration::from_micros(100);
        let us = Duration::from_micros;
        let nap = |rx, want_write, wait| coalesce_nap(c, rx, want_write, wait, &mut 0);
        assert_eq!(nap(MIN, false, None), Some(c));
        assert_eq!(nap(MIN + 500, false, Some(us(1000))), Some(c));
        assert_eq!(nap(MIN, false, Some(us(30))), Some(us(30)));
        assert_eq!(nap(MIN, false, Some(Duration::ZERO)), Some(Duration::ZERO));
        assert_eq!(nap(MIN - 1, false, None), None, "too little data");
        assert_eq!(nap(0, false, Some(us(30))), None, "idle");
        assert_eq!(nap(MIN, true, None), None, "waiting to write");
        let off = coalesce_nap(Duration::ZERO, MIN, false, None, &mut 0);
        assert_eq!(off, None, "off");
    }

    #[test]
    fn after_an_empty_nap_the_next_flowing_waits_skip_it() {
        let c = Duration::from_micros(100);
        let mut skip = 2;
        // A slow spell does not count down the skip; flowing waits do.
        assert_eq!(coalesce_nap(c, 1, false, None, &mut skip), None);
        assert_eq!(skip, 2);
        assert_eq!(coalesce_nap(c, MIN, false, None, &mut skip), None);
        assert_eq!(coalesce_nap(c, MIN, false, None, &mut skip), None);
        assert_eq!(skip, 0);
        assert_eq!(coalesce_nap(c, MIN, false, None, &mut skip), Some(c));
    }
}
