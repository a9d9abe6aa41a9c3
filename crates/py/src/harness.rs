//! `transfer`: one job through the deterministic two-endpoint harness
//! (virtual time, lossy virtual link), for quick experiments.

use crate::config::{PyConfig, PyLinkConfig};
use crate::errors::{Error, Result};
use crate::event::{self};
use crate::job::{dtype_name, PyJob};
use approxnet_proto::harness::{LinkConfig, LinkStats, Pair, SERVER_ADDR};
use approxnet_proto::{Config, ConnectionHandle, Duration, Event};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What `transfer` returns.
#[pyclass(name = "Transfer", module = "approxnet", frozen, get_all)]
pub(crate) struct PyTransfer {
    /// Whether both sides reported the job complete within the time limit.
    completed: bool,
    /// The job id.
    job: u32,
    /// Virtual time when the run stopped, ns.
    elapsed_ns: u64,
    /// Datagrams the harness moved.
    datagrams: u64,
    /// Sender's `JobComplete` event, if any.
    sender: Option<PyObject>,
    /// Receiver's `JobComplete` event, if any.
    receiver: Option<PyObject>,
    /// Messages delivered whole at the receiver.
    delivered: usize,
    /// Every event the client saw, in order.
    client_events: Vec<PyObject>,
    /// Every event the server saw, in order.
    server_events: Vec<PyObject>,
    /// Forward link counters.
    forward: Py<PyDict>,
    /// Reverse link counters.
    reverse: Py<PyDict>,
    /// The tensor's numpy dtype name, for tensor jobs.
    dtype: Option<&'static str>,
}

struct Outcome {
    job: u32,
    completed: bool,
    elapsed_ns: u64,
    datagrams: u64,
    client: Vec<(ConnectionHandle, Event)>,
    server: Vec<(ConnectionHandle, Event)>,
    forward: LinkStats,
    reverse: LinkStats,
}

fn stats_dict<'py>(py: Python<'py>, s: &LinkStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("offered", s.offered)?;
    d.set_item("buffer_drops", s.buffer_drops)?;
    d.set_item("random_drops", s.random_drops)?;
    d.set_item("delivered", s.delivered)?;
    d.set_item("ce_marks", s.ce_marks)?;
    d.set_item("flipped", s.flipped)?;
    Ok(d)
}

/// Sends `job` from a client to a server endpoint over the virtual link
/// (`link` forward; `reverse` defaults to `link` without loss or bit
/// flips) and runs virtual time until both sides report the job complete or
/// `time_limit_ms` of virtual time passed. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (job, *, link = None, reverse = None, config = None, server_config = None,
    seed = 1, time_limit_ms = 1000.0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn transfer(
    py: Python<'_>,
    job: &PyJob,
    link: Option<&PyLinkConfig>,
    reverse: Option<&PyLinkConfig>,
    config: Option<&PyConfig>,
    server_config: Option<&PyConfig>,
    seed: u64,
    time_limit_ms: f64,
) -> Result<PyTransfer> {
    if !(time_limit_ms.is_finite() && time_limit_ms > 0.0) {
        return Err(Error::ConfigValue(format!(
            "time_limit_ms = {time_limit_ms}: a positive, finite number of milliseconds"
        )));
    }
    let fwd = link.map_or_else(LinkConfig::default, |l| l.inner);
    let rev = reverse.map_or(
        LinkConfig {
            loss: 0.0,
            bit_flip: 0.0,
            burst_enter: 0.0,
            ..fwd
        },
        |l| l.inner,
    );
    let ccfg = config.map_or_else(Config::default, |c| c.inner);
    let scfg = server_config.map_or(ccfg, |c| c.inner);
    let spec = job.spec.clone();
    let limit = Duration::from_nanos((time_limit_ms * 1e6).min(u64::MAX as f64) as u64);
    let out = py.allow_threads(move || -> Result<Outcome> {
        let mut p = Pair::new(ccfg, scfg, fwd, rev, seed);
        let h = p.client.connect(p.now, SERVER_ADDR)?;
        let job = p.client.send_job(p.now, h, spec)?;
        let completed = p.run_until(limit, |p| {
            p.job_done_at_client(job) && p.job_done_at_server(job)
        });
        Ok(Outcome {
            job,
            completed,
            elapsed_ns: p.now.as_nanos(),
            datagrams: p.datagrams,
            client: std::mem::take(&mut p.client_events),
            server: std::mem::take(&mut p.server_events),
            forward: p.forward.stats,
            reverse: p.reverse.stats,
        })
    })?;
    let delivered = out
        .server
        .iter()
        .filter(|(_, e)| matches!(e, Event::MessageDelivered { job, .. } if *job == out.job))
        .count();
    let is_done = |e: &Event| matches!(e, Event::JobComplete { job, .. } if *job == out.job);
    let mut sender = None;
    let mut client_events = Vec::with_capacity(out.client.len());
    for (h, e) in out.client {
        let done = is_done(&e);
        let o = event::to_py(py, h, e)?;
        if done {
            sender = Some(o.clone_ref(py));
        }
        client_events.push(o);
    }
    let mut receiver = None;
    let mut server_events = Vec::with_capacity(out.server.len());
    for (h, e) in out.server {
        let done = is_done(&e);
        let o = event::to_py(py, h, e)?;
        if done {
            receiver = Some(o.clone_ref(py));
        }
        server_events.push(o);
    }
    Ok(PyTransfer {
        completed: out.completed,
        job: out.job,
        elapsed_ns: out.elapsed_ns,
        datagrams: out.datagrams,
        sender,
        receiver,
        delivered,
        client_events,
        server_events,
        forward: stats_dict(py, &out.forward)?.unbind(),
        reverse: stats_dict(py, &out.reverse)?.unbind(),
        dtype: job.spec.tensor.as_ref().map(|t| dtype_name(t.dtype)),
    })
}

#[pymethods]
impl PyTransfer {
    fn __repr__(&self) -> String {
        format!(
            "Transfer(job={}, completed={}, delivered={}, elapsed_ns={}, datagrams={})",
            self.job,
            if self.completed { "True" } else { "False" },
            self.delivered,
            self.elapsed_ns,
            self.datagrams
        )
    }
}
