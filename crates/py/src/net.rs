//! `SocketEndpoint`: the real UDP / UDP-Lite runtime (`approxnet_net`'s
//! blocking endpoint) from Python.
//!
//! Every call that waits releases the GIL and waits in slices of at most
//! [`SLICE`], checking for signals (Ctrl-C) between slices, so that a wait
//! ends at its timeout or at an interrupt. The endpoint sits behind a mutex
//! taken only with the GIL released: several Python threads may share one
//! endpoint, one call at a time.

use crate::config::PyConfig;
use crate::endpoint::addr;
use crate::errors::{Error, Result};
use crate::event::{self, PyConnectionHandle};
use crate::job::PyJob;
use approxnet_net::{Endpoint, JobWaitError, RuntimeConfig, RuntimeStats};
use approxnet_proto::event::Role;
use approxnet_proto::{ConnectionHandle, Event};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The longest a blocking call waits with the GIL released before it looks
/// for signals.
const SLICE: Duration = Duration::from_millis(50);

/// A timeout argument in seconds: `None` waits as long as it takes.
fn timeout(field: &str, secs: Option<f64>) -> Result<Option<Duration>> {
    match secs {
        None => Ok(None),
        Some(s) if (0.0..1e9).contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(Error::ConfigValue(format!(
            "`{field}` = {s}: a finite, non-negative number of seconds"
        ))),
    }
}

/// The runtime configuration: the runtime's defaults, with the protocol
/// settings of `config` where given. `min_rto`, `pacing_burst` and
/// `ack_every` not set explicitly keep the runtime's values (`REAL_MIN_RTO`,
/// `REAL_PACING_BURST`, `REAL_ACK_EVERY`);
/// transport checksums are always on (the socket's checksum covers the header).
fn runtime_config(config: Option<&PyConfig>, udplite: bool, seed: Option<u64>) -> RuntimeConfig {
    let mut rc = if udplite {
        RuntimeConfig::udplite()
    } else {
        RuntimeConfig::default()
    };
    if let Some(c) = config {
        let mut p = c.inner;
        if !c.min_rto_set {
            p.min_rto = rc.proto.min_rto;
        }
        if !c.pacing_burst_set {
            p.pacing_burst = rc.proto.pacing_burst;
        }
        if !c.ack_every_set {
            p.ack_every = rc.proto.ack_every;
        }
        p.transport_checksums = true;
        rc.proto = p;
    }
    rc.seed = seed;
    rc
}

/// An approxnet endpoint on a real UDP (or UDP-Lite) socket. It connects
/// and accepts; the protocol runs only while a call waits (`connect`,
/// `accept`, `next_event`, `wait_job`, `finish`), so a server loops on
/// `next_event`.
#[pyclass(name = "SocketEndpoint", module = "approxnet")]
pub(crate) struct PySocketEndpoint {
    ep: Mutex<Endpoint>,
    local: String,
}

impl PySocketEndpoint {
    fn lock(&self) -> MutexGuard<'_, Endpoint> {
        self.ep.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `step` with the GIL released, in slices of at most [`SLICE`],
    /// until it yields a value or `deadline` passes (`None`: never). It
    /// always runs at least once; signals are checked between slices.
    fn wait<T: Send>(
        &self,
        py: Python<'_>,
        deadline: Option<Instant>,
        mut step: impl FnMut(&mut Endpoint, Duration) -> Result<Option<T>> + Send,
    ) -> Result<Option<T>> {
        loop {
            let slice = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()).min(SLICE),
                None => SLICE,
            };
            if let Some(x) = py.allow_threads(|| step(&mut self.lock(), slice))? {
                return Ok(Some(x));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
            py.check_signals()?;
        }
    }
}

fn deadline(t: Option<Duration>) -> Option<Instant> {
    t.map(|t| Instant::now() + t)
}

#[pymethods]
impl PySocketEndpoint {
    /// Opens a socket on `bind` ("ip:port", port 0: any free port).
    #[new]
    #[pyo3(signature = (bind = "127.0.0.1:0", config = None, udplite = false, seed = None))]
    fn new(
        py: Python<'_>,
        bind: &str,
        config: Option<&PyConfig>,
        udplite: bool,
        seed: Option<u64>,
    ) -> Result<Self> {
        let at = addr(bind)?;
        let rc = runtime_config(config, udplite, seed);
        let ep = py.allow_threads(|| Endpoint::bind(at, rc))?;
        let local = ep.local_addr().to_string();
        Ok(PySocketEndpoint {
            ep: Mutex::new(ep),
            local,
        })
    }

    /// The bound address, "ip:port".
    #[getter]
    fn local_addr(&self) -> &str {
        &self.local
    }

    /// Connects to `peer` and waits for the handshake; raises
    /// `ConnectError` when it does not finish within `timeout_s`.
    #[pyo3(signature = (peer, timeout_s = 5.0))]
    fn connect(&self, py: Python<'_>, peer: &str, timeout_s: f64) -> Result<PyConnectionHandle> {
        let to = timeout("timeout_s", Some(timeout_s))?;
        let at = addr(peer)?;
        let end = deadline(to);
        let mut h = py.allow_threads(|| self.lock().start_connect(at))?;
        // The core gives a handshake up after its idle timeout (1 s); a
        // caller who allows longer gets new attempts until `timeout_s`.
        let done = loop {
            let r = self.wait(py, end, |ep, s| {
                Ok(ep.wait_connected(h, Some(s))?.then_some(()))
            });
            match r {
                Err(Error::NetConnect(approxnet_net::ConnectError::Lost(
                    approxnet_proto::event::JobFailure::PeerUnresponsive,
                ))) if end.is_some_and(|d| Instant::now() < d) => {
                    h = py.allow_threads(|| self.lock().start_connect(at))?;
                }
                r => break r?,
            }
        };
        match done {
            Some(()) => Ok(PyConnectionHandle { inner: h }),
            None => {
                py.allow_threads(|| self.lock().close(h))?;
                Err(Error::ConnectTimeout(format!(
                    "no handshake with {peer} within {timeout_s} s"
                )))
            }
        }
    }

    /// Waits for a peer to open a connection (its first job arrives);
    /// `None` when `timeout_s` passes first (`None`: wait as long as it takes).
    #[pyo3(signature = (timeout_s = None))]
    fn accept(&self, py: Python<'_>, timeout_s: Option<f64>) -> Result<Option<PyConnectionHandle>> {
        let end = deadline(timeout("timeout_s", timeout_s)?);
        let h = self.wait(py, end, |ep, s| Ok(ep.accept(Some(s))?))?;
        Ok(h.map(|inner| PyConnectionHandle { inner }))
    }

    /// Queues `job` on a connection and starts sending; returns the job id.
    fn send_job(
        &self,
        py: Python<'_>,
        connection: &PyConnectionHandle,
        job: &PyJob,
    ) -> Result<u32> {
        let h = connection.inner;
        let spec = job.spec.clone();
        Ok(py.allow_threads(|| self.lock().send_job(h, spec))?)
    }

    /// Hands one produced message of streaming job `job` over (see
    /// `Job.announce`); its first `precise_len` bytes (default: all) must
    /// arrive exactly. Returns False when the job already met its MSR and
    /// the message is discarded.
    #[pyo3(signature = (connection, job, group, data, precise_len = None))]
    fn push_message(
        &self,
        py: Python<'_>,
        connection: &PyConnectionHandle,
        job: u32,
        group: crate::errors::Int,
        data: &[u8],
        precise_len: Option<crate::errors::Int>,
    ) -> Result<bool> {
        let h = connection.inner;
        let m = crate::job::bytes_message(group, data, precise_len)?;
        let r = py.allow_threads(|| self.lock().push_messages(h, job, vec![m]))?;
        Ok(matches!(r, approxnet_proto::Pushed::Queued(_)))
    }

    /// The next event (the same classes as `Endpoint.poll_event`), driving
    /// the protocol until one arrives; `None` when `timeout_s` passes first.
    #[pyo3(signature = (timeout_s = None))]
    fn next_event(&self, py: Python<'_>, timeout_s: Option<f64>) -> Result<Option<PyObject>> {
        let end = deadline(timeout("timeout_s", timeout_s)?);
        match self.wait(py, end, |ep, s| Ok(ep.next_event(Some(s))?))? {
            Some((h, e)) => Ok(Some(event::to_py(py, h, e)?)),
            None => Ok(None),
        }
    }

    /// An event already received, without any I/O; `None` if none waits.
    fn poll_event(&self, py: Python<'_>) -> Result<Option<PyObject>> {
        match py.allow_threads(|| self.lock().poll_event()) {
            Some((h, e)) => Ok(Some(event::to_py(py, h, e)?)),
            None => Ok(None),
        }
    }

    /// Waits until job `job` sent on `connection` completes and returns the
    /// sender's `JobComplete`; raises `TransferError` when the job fails,
    /// the connection is lost, or `timeout_s` passes first (`None`: until
    /// the core gives up on a silent peer). Other events stay queued.
    #[pyo3(signature = (connection, job, timeout_s = None))]
    fn wait_job(
        &self,
        py: Python<'_>,
        connection: &PyConnectionHandle,
        job: u32,
        timeout_s: Option<f64>,
    ) -> Result<PyObject> {
        let h = connection.inner;
        let end = deadline(timeout("timeout_s", timeout_s)?);
        let report = self.wait(py, end, |ep, s| match ep.wait_job(h, job, Some(s)) {
            Ok(r) => Ok(Some(r)),
            Err(JobWaitError::TimedOut) => Ok(None),
            Err(e) => Err(e.into()),
        })?;
        match report {
            Some(r) => Ok(job_complete(py, h, job, r)?),
            None => Err(Error::JobWait(JobWaitError::TimedOut)),
        }
    }

    /// Closes a connection once its jobs are done (the FIN exchange runs
    /// during later calls, e.g. `finish`).
    fn close(&self, py: Python<'_>, connection: &PyConnectionHandle) -> Result<()> {
        let h = connection.inner;
        Ok(py.allow_threads(|| self.lock().close(h))?)
    }

    /// Drives the endpoint until nothing is left to send and no connection
    /// remains, or `timeout_s` passes; returns whether it finished.
    #[pyo3(signature = (timeout_s = 5.0))]
    fn finish(&self, py: Python<'_>, timeout_s: f64) -> Result<bool> {
        let end = deadline(timeout("timeout_s", Some(timeout_s))?);
        let done = self.wait(py, end, |ep, s| Ok(ep.finish(s)?.then_some(())))?;
        Ok(done.is_some())
    }

    /// The peer address of an open connection, or None.
    fn peer(&self, py: Python<'_>, connection: &PyConnectionHandle) -> Option<String> {
        let h = connection.inner;
        py.allow_threads(|| self.lock().core().peer(h))
            .map(|a| a.to_string())
    }

    /// Connections currently held.
    #[getter]
    fn connection_count(&self, py: Python<'_>) -> usize {
        py.allow_threads(|| self.lock().core().connection_count())
    }

    /// Events received and not yet taken.
    #[getter]
    fn pending_events(&self, py: Python<'_>) -> usize {
        py.allow_threads(|| self.lock().pending_events())
    }

    /// Counters of the socket layer and the protocol core, by name.
    fn stats(&self, py: Python<'_>) -> BTreeMap<&'static str, u64> {
        let (rt, core) = py.allow_threads(|| {
            let ep = self.lock();
            (ep.stats(), ep.core().stats().clone())
        });
        let mut m = runtime_stats(&rt);
        m.insert("core_accepted", core.accepted);
        m.insert("core_transmitted", core.transmitted);
        m.insert("core_dropped", core.dropped_total());
        m
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SocketEndpoint(local_addr={:?}, connections={})",
            self.local,
            self.connection_count(py)
        )
    }
}

fn runtime_stats(s: &RuntimeStats) -> BTreeMap<&'static str, u64> {
    BTreeMap::from([
        ("send_datagrams", s.send.datagrams),
        ("send_bytes", s.send.bytes),
        ("send_syscalls", s.send.syscalls),
        ("send_gso_messages", s.send.gso_messages),
        ("send_would_block", s.send.would_block),
        ("send_errors", s.send.errors),
        ("send_queue_full", s.send.queue_full),
        ("recv_datagrams", s.recv.datagrams),
        ("recv_bytes", s.recv.bytes),
        ("recv_syscalls", s.recv.syscalls),
        ("recv_gro_messages", s.recv.gro_messages),
        ("recv_truncated", s.recv.truncated),
        ("recv_bad_source", s.recv.bad_source),
        ("recv_errors", s.recv_errors),
        ("wakeups", s.wakeups),
        ("recv_budget_exhausted", s.recv_budget_exhausted),
        ("recv_paused", s.recv_paused),
        ("ce_marked", s.ce_marked),
        ("epochs_dropped", s.epochs_dropped),
        ("transmit_refused", s.transmit_refused),
    ])
}

/// The sender's `JobComplete` event object for a finished job.
fn job_complete(
    py: Python<'_>,
    h: ConnectionHandle,
    job: u32,
    report: approxnet_proto::JobReport,
) -> PyResult<PyObject> {
    event::to_py(
        py,
        h,
        Event::JobComplete {
            job,
            role: Role::Sender,
            outcome: Ok(report),
        },
    )
}

/// Runs the `approxnet-perf` load generator in this process with `argv`
/// (without the program name) and returns its exit status; it prints to
/// the process's stdout / stderr. The GIL is released while it runs; it
/// ends by itself (its `--duration` / `--jobs` / `--idle` bounds), not on
/// Ctrl-C, so the `approxnet perf` command runs it in a child process.
#[pyfunction]
pub(crate) fn perf_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.allow_threads(move || approxnet_net::perf::main(argv))
}
