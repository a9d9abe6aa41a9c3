//! `Endpoint`: the sans-IO core driven from Python. Time is an integer
//! number of nanoseconds chosen by the caller; it must never go backwards.

use crate::config::PyConfig;
use crate::errors::{Error, Result};
use crate::event::{self, PyConnectionHandle};
use crate::job::PyJob;
use approxnet_proto::{Config, Endpoint, Instant};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::net::SocketAddr;
use std::sync::Mutex;

pub(crate) fn addr(s: &str) -> Result<SocketAddr> {
    s.parse().map_err(|_| {
        Error::Address(format!(
            "{s:?} is not a socket address like '10.0.0.2:4433'"
        ))
    })
}

/// A datagram to send.
#[pyclass(name = "Transmit", module = "approxnet", frozen, get_all)]
pub(crate) struct PyTransmit {
    /// Destination, "ip:port".
    dst: String,
    /// The datagram.
    data: Py<PyBytes>,
    /// Switch priority queue (0 = highest).
    queue: u8,
    /// DSCP codepoint (`queue << 3`).
    dscp: u8,
    /// Payload bytes after the header that the checksum covers.
    precise_len: usize,
    /// UDP-Lite checksum coverage: header + precise prefix.
    checksum_coverage: usize,
}

#[pymethods]
impl PyTransmit {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Transmit(dst={:?}, len={}, queue={}, dscp={}, checksum_coverage={})",
            self.dst,
            self.data.bind(py).as_bytes().len(),
            self.queue,
            self.dscp,
            self.checksum_coverage
        )
    }
}

/// The sans-IO approxnet endpoint (see the crate docs for the call order:
/// after any input drain `poll_transmit`, then `poll_event`, then arm a timer
/// at `poll_timeout`).
#[pyclass(name = "Endpoint", module = "approxnet")]
pub(crate) struct PyEndpoint {
    // The core's policy objects are `Send` but not `Sync`; a Python object
    // may be reached from several threads, so it sits behind a mutex that
    // `&mut self` methods open with `get_mut` (no locking: PyO3's borrow
    // checking already makes the access exclusive).
    state: Mutex<State>,
}

struct State {
    ep: Endpoint,
    buf: Vec<u8>,
}

impl PyEndpoint {
    fn st(&mut self) -> &mut State {
        self.state.get_mut().unwrap_or_else(|e| e.into_inner())
    }
    fn ep(&mut self) -> &mut Endpoint {
        &mut self.st().ep
    }
}

#[pymethods]
impl PyEndpoint {
    /// A new endpoint; `seed` drives every random choice.
    #[new]
    #[pyo3(signature = (config = None, seed = 0))]
    fn new(config: Option<&PyConfig>, seed: u64) -> Result<Self> {
        let cfg = config.map_or_else(Config::default, |c| c.inner);
        let ep = Endpoint::new(cfg, seed)?;
        Ok(PyEndpoint {
            state: Mutex::new(State {
                buf: vec![0; cfg.mtu.max(2048)],
                ep,
            }),
        })
    }

    /// Opens a connection to `peer` ("ip:port"); jobs may be queued at once.
    fn connect(&mut self, now: u64, peer: &str) -> Result<PyConnectionHandle> {
        let peer = addr(peer)?;
        let h = self.ep().connect(Instant::from_nanos(now), peer)?;
        Ok(PyConnectionHandle { inner: h })
    }

    /// Queues `job` on a connection; returns the job id.
    fn send_job(&mut self, now: u64, connection: &PyConnectionHandle, job: &PyJob) -> Result<u32> {
        Ok(self
            .ep()
            .send_job(Instant::from_nanos(now), connection.inner, job.spec.clone())?)
    }

    /// Hands one produced message of streaming job `job` over (see
    /// `Job.announce`); its first `precise_len` bytes (default: all) must
    /// arrive exactly. Returns False when the job already met its MSR and
    /// the message is discarded.
    #[pyo3(signature = (now, connection, job, group, data, precise_len = None))]
    fn push_message(
        &mut self,
        now: u64,
        connection: &PyConnectionHandle,
        job: u32,
        group: crate::errors::Int,
        data: &[u8],
        precise_len: Option<crate::errors::Int>,
    ) -> Result<bool> {
        let m = crate::job::bytes_message(group, data, precise_len)?;
        let r =
            self.ep()
                .push_messages(Instant::from_nanos(now), connection.inner, job, vec![m])?;
        Ok(matches!(r, approxnet_proto::Pushed::Queued(_)))
    }

    /// Closes a connection once its jobs are done.
    fn close(&mut self, now: u64, connection: &PyConnectionHandle) {
        self.ep().close(Instant::from_nanos(now), connection.inner);
    }

    /// Feeds a datagram that arrived from `peer` ("ip:port").
    fn handle_datagram(&mut self, now: u64, peer: &str, data: &[u8]) -> Result<()> {
        let peer = addr(peer)?;
        self.ep()
            .handle_datagram(Instant::from_nanos(now), peer, data);
        Ok(())
    }

    /// The time from `poll_timeout` has come.
    fn handle_timeout(&mut self, now: u64) {
        self.ep().handle_timeout(Instant::from_nanos(now));
    }

    /// The next datagram to send, or None.
    fn poll_transmit(&mut self, py: Python<'_>, now: u64) -> Option<PyTransmit> {
        let State { ep, buf } = self.st();
        let t = ep.poll_transmit(Instant::from_nanos(now), buf)?;
        Some(PyTransmit {
            dst: t.dst.to_string(),
            data: PyBytes::new(py, &buf[..t.len]).unbind(),
            queue: t.queue,
            dscp: t.dscp,
            precise_len: t.precise_len,
            checksum_coverage: t.checksum_coverage(),
        })
    }

    /// The next event, or None.
    fn poll_event(&mut self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match self.ep().poll_event() {
            Some((h, e)) => Ok(Some(event::to_py(py, h, e)?)),
            None => Ok(None),
        }
    }

    /// When `handle_timeout` must next be called (ns), or None.
    fn poll_timeout(&mut self) -> Option<u64> {
        self.ep().poll_timeout().map(|t| t.as_nanos())
    }

    /// Connections currently held.
    #[getter]
    fn connection_count(&mut self) -> usize {
        self.ep().connection_count()
    }

    /// Datagrams accepted and transmitted, and the total dropped.
    fn stats(&mut self) -> (u64, u64, u64) {
        let s = self.ep().stats();
        (s.accepted, s.transmitted, s.dropped_total())
    }

    fn __repr__(&mut self) -> String {
        let ep = self.ep();
        format!(
            "Endpoint(variant={:?}, connections={})",
            ep.config().variant.name(),
            ep.connection_count()
        )
    }
}
