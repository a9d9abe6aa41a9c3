//! SAP sockets (`approxnet_net::sap`, seed 002) from Python:
//! `SapListener`, `SapSocket` and the received `SapDatagram`.
//!
//! Waiting calls release the GIL and wait in slices of at most 50 ms,
//! checking for signals between slices, as `SocketEndpoint` does.

use crate::endpoint::addr;
use crate::errors::{Error, Result};
use crate::net::{deadline, timeout};
use approxnet_net::sap::{
    CloseError, Datagram, Mode, RecvError, SapConfig, SapError, SapListener, SapSocket,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(50);

fn config(accept_damaged: bool) -> SapConfig {
    SapConfig {
        accept_damaged,
        ..SapConfig::default()
    }
}

/// The sender's line rate (the core's Rmax; pacing starts there): the
/// rate of the host's own link, when it is slower than the default.
fn with_line_rate(mut c: SapConfig, mbps: Option<f64>) -> Result<SapConfig> {
    if let Some(m) = mbps {
        if !(m.is_finite() && m > 0.0) {
            return Err(Error::ConfigValue(format!(
                "`line_rate_mbps` = {m}: a positive, finite rate"
            )));
        }
        c.runtime.proto.line_rate = approxnet_proto::Rate::mbps(m);
    }
    Ok(c)
}

fn mode(name: &str) -> Result<Mode> {
    match name {
        "precise" => Ok(Mode::Precise),
        "approximate" => Ok(Mode::Approximate),
        _ => Err(Error::ConfigValue(format!(
            "`mode` = {name:?}: expected 'precise' or 'approximate'"
        ))),
    }
}

/// Runs `step` with the GIL released in slices until it yields a value or
/// `end` passes; signals are checked between slices.
fn sliced<T: Send, S: Send>(
    py: Python<'_>,
    state: &Mutex<S>,
    end: Option<Instant>,
    mut step: impl FnMut(&mut S, Duration) -> Result<Option<T>> + Send,
) -> Result<Option<T>> {
    loop {
        let slice = end.map_or(SLICE, |d| {
            d.saturating_duration_since(Instant::now()).min(SLICE)
        });
        let got = py.allow_threads(|| {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            step(&mut s, slice)
        })?;
        if got.is_some() {
            return Ok(got);
        }
        if end.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        py.check_signals()?;
    }
}

/// One received datagram.
#[pyclass(name = "SapDatagram", module = "approxnet", frozen, get_all)]
pub(crate) struct PyDatagram {
    /// Its bytes.
    data: Py<PyBytes>,
    /// Sent in approximate mode (else precise: exact and in order).
    approximate: bool,
    /// Leading bytes covered by the checksum (exact).
    precise_len: usize,
    /// The approximate bytes failed their CRC32C (damaged on the way).
    damaged: bool,
}

#[pymethods]
impl PyDatagram {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SapDatagram(len={}, approximate={}, precise_len={}, damaged={})",
            self.data.bind(py).as_bytes().len(),
            self.approximate,
            self.precise_len,
            self.damaged
        )
    }
}

fn datagram(py: Python<'_>, d: Datagram) -> PyDatagram {
    PyDatagram {
        data: PyBytes::new(py, &d.bytes).unbind(),
        approximate: d.approximate,
        precise_len: d.precise_len,
        damaged: d.damaged,
    }
}

/// Waits for one SAP peer on a UDP-Lite port (the paper's `sap_listen`).
#[pyclass(name = "SapListener", module = "approxnet")]
pub(crate) struct PyListener {
    inner: Mutex<Option<SapListener>>,
    local: String,
}

#[pymethods]
impl PyListener {
    /// Binds `bind` ("ip:port"); `accept_damaged`: deliver approximate
    /// datagrams whose approximate bytes were damaged (flagged), or drop them.
    #[new]
    #[pyo3(signature = (bind = "127.0.0.1:0", accept_damaged = true))]
    fn new(py: Python<'_>, bind: &str, accept_damaged: bool) -> Result<Self> {
        let at = addr(bind)?;
        let l = py.allow_threads(|| SapListener::bind(at, config(accept_damaged)))?;
        let local = l.local_addr().to_string();
        Ok(PyListener {
            inner: Mutex::new(Some(l)),
            local,
        })
    }

    /// The bound address, "ip:port".
    #[getter]
    fn local_addr(&self) -> &str {
        &self.local
    }

    /// Waits for a peer (its first datagram announces its stream) and
    /// returns the connected `SapSocket`; `None` when `timeout_s` passes
    /// first. A listener accepts once.
    #[pyo3(signature = (timeout_s = None))]
    fn accept(&self, py: Python<'_>, timeout_s: Option<f64>) -> Result<Option<PySapSocket>> {
        let end = deadline(timeout("timeout_s", timeout_s)?);
        let got = sliced(py, &self.inner, end, |l, s| match l {
            Some(l) => Ok(l.poll_accept(Some(s))?.then_some(())),
            None => Err(Error::Sap(SapError::Closed)),
        })?;
        if got.is_none() {
            return Ok(None);
        }
        let l = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or(Error::Sap(SapError::Closed))?;
        let sock = py.allow_threads(|| l.accept(Some(Duration::ZERO)))?;
        Ok(Some(PySapSocket::wrap(sock)))
    }
}

/// A SAP socket: precise by default, switchable to approximate and back.
#[pyclass(name = "SapSocket", module = "approxnet")]
pub(crate) struct PySapSocket {
    inner: Mutex<SapSocket>,
    local: String,
}

impl PySapSocket {
    fn wrap(s: SapSocket) -> PySapSocket {
        let local = s.local_addr().to_string();
        PySapSocket {
            inner: Mutex::new(s),
            local,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SapSocket> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl PySapSocket {
    /// Connects from `bind` to `peer` with a precise handshake;
    /// `line_rate_mbps`: the sender's link rate (default: the core's);
    /// `congestion_window`: cap packets in flight at 2 x delivery rate x
    /// min RTT (default; False only to measure what it prevents).
    #[staticmethod]
    #[pyo3(signature = (peer, bind = "0.0.0.0:0", accept_damaged = true, line_rate_mbps = None, congestion_window = true))]
    fn connect(
        py: Python<'_>,
        peer: &str,
        bind: &str,
        accept_damaged: bool,
        line_rate_mbps: Option<f64>,
        congestion_window: bool,
    ) -> Result<Self> {
        let (at, to) = (addr(bind)?, addr(peer)?);
        let mut cfg = with_line_rate(config(accept_damaged), line_rate_mbps)?;
        if !congestion_window {
            cfg.runtime.proto.window_gain = None;
        }
        let s = py.allow_threads(|| SapSocket::connect(at, to, cfg))?;
        Ok(PySapSocket::wrap(s))
    }

    /// The bound address, "ip:port".
    #[getter]
    fn local_addr(&self) -> &str {
        &self.local
    }

    /// The send mode: "precise" or "approximate" (settable at any time).
    #[getter]
    fn get_mode(&self) -> &'static str {
        match self.lock().mode() {
            Mode::Precise => "precise",
            Mode::Approximate => "approximate",
        }
    }

    #[setter]
    fn set_mode(&self, value: &str) -> Result<()> {
        let m = mode(value)?;
        self.lock().set_mode(m);
        Ok(())
    }

    /// Sends `data` as one datagram in the current mode; in approximate
    /// mode its first `precise_len` bytes (default 0) are checksummed.
    #[pyo3(signature = (data, precise_len = None))]
    fn send(&self, py: Python<'_>, data: &[u8], precise_len: Option<usize>) -> Result<()> {
        let data = data.to_vec();
        py.allow_threads(|| {
            let mut s = self.lock();
            match precise_len {
                Some(p) => s.send_with_prefix(&data, p),
                None => s.send(&data),
            }
        })?;
        Ok(())
    }

    /// The next datagram; `None` when `timeout_s` passes first or the
    /// peer closed (see `peer_closed`). Raises `TransferError` when the
    /// connection is lost.
    #[pyo3(signature = (timeout_s = None))]
    fn recv(&self, py: Python<'_>, timeout_s: Option<f64>) -> Result<Option<PyDatagram>> {
        let end = deadline(timeout("timeout_s", timeout_s)?);
        let got = sliced(py, &self.inner, end, |s, t| match s.recv(Some(t)) {
            Ok(d) => Ok(Some(Some(d))),
            Err(RecvError::TimedOut) => Ok(None),
            Err(RecvError::Closed) => Ok(Some(None)),
            Err(e) => Err(Error::SapRecv(e)),
        })?;
        Ok(got.flatten().map(|d| datagram(py, d)))
    }

    /// Whether the peer closed the connection (nothing more will come).
    #[getter]
    fn peer_closed(&self) -> bool {
        self.lock().peer_addr().is_none()
    }

    /// Ends this side's stream and waits until every precise datagram is
    /// acknowledged; raises `TransferError` past `timeout_s`.
    #[pyo3(signature = (timeout_s = 10.0))]
    fn flush(&self, py: Python<'_>, timeout_s: f64) -> Result<()> {
        let t = timeout("timeout_s", Some(timeout_s))?.unwrap_or_default();
        py.allow_threads(|| self.lock().flush(t))
            .map_err(Error::SapClose)
    }

    /// `flush`, then FIN; raises `TransferError` when the FIN is not
    /// acknowledged within `timeout_s` or the peer fell silent.
    #[pyo3(signature = (timeout_s = 10.0))]
    fn close(&self, py: Python<'_>, timeout_s: f64) -> Result<()> {
        let t = timeout("timeout_s", Some(timeout_s))?.unwrap_or_default();
        py.allow_threads(|| self.lock().close(t))
            .map_err(Error::SapClose)
    }
}

/// Adds the SAP classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyListener>()?;
    m.add_class::<PySapSocket>()?;
    m.add_class::<PyDatagram>()?;
    Ok(())
}

impl From<CloseError> for Error {
    fn from(e: CloseError) -> Self {
        Error::SapClose(e)
    }
}
