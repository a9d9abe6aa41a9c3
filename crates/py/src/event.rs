//! Events and reports as small frozen Python objects.

use approxnet_proto::event::{EpochStats, GroupReport, JobFailure, Role};
use approxnet_proto::{ConnectionHandle, Event, JobReport};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3::IntoPyObjectExt;

/// Names one connection of an endpoint.
#[pyclass(name = "ConnectionHandle", module = "approxnet", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PyConnectionHandle {
    pub(crate) inner: ConnectionHandle,
}

#[pymethods]
impl PyConnectionHandle {
    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}

/// One group's outcome in a job report.
#[pyclass(name = "GroupReport", module = "approxnet", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct PyGroupReport {
    id: u16,
    messages: u32,
    must_deliver: u32,
    delivered: u32,
    abandoned: u32,
}

#[pymethods]
impl PyGroupReport {
    fn __repr__(&self) -> String {
        format!(
            "GroupReport(id={}, delivered={}/{}, must_deliver={}, abandoned={})",
            self.id, self.delivered, self.messages, self.must_deliver, self.abandoned
        )
    }
}

impl From<&GroupReport> for PyGroupReport {
    fn from(g: &GroupReport) -> Self {
        PyGroupReport {
            id: g.id,
            messages: g.messages,
            must_deliver: g.must_deliver,
            delivered: g.delivered,
            abandoned: g.abandoned,
        }
    }
}

/// Figures for a finished job (sender or receiver view).
#[pyclass(name = "JobReport", module = "approxnet", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct PyJobReport {
    job: u32,
    groups: Vec<PyGroupReport>,
    jct_ns: u64,
    packets: u64,
    retransmissions: u64,
    lost_packets: u64,
    /// Of `lost_packets`, those declared by the retransmission timer.
    lost_by_timer: u64,
    /// Declared losses whose acknowledgement came afterwards.
    spurious_losses: u64,
    bytes: u64,
    /// Sender: bytes of handed-over messages never sent (the job met its
    /// MSR first).
    unsent_bytes: u64,
    guarantee_held: bool,
    loss_rate: f64,
}

#[pymethods]
impl PyJobReport {
    /// Job completion time in seconds.
    #[getter]
    fn jct_s(&self) -> f64 {
        self.jct_ns as f64 / 1e9
    }
    fn __repr__(&self) -> String {
        format!(
            "JobReport(job={}, jct_ns={}, packets={}, retransmissions={}, lost_packets={}, guarantee_held={})",
            self.job,
            self.jct_ns,
            self.packets,
            self.retransmissions,
            self.lost_packets,
            if self.guarantee_held { "True" } else { "False" }
        )
    }
}

impl From<&JobReport> for PyJobReport {
    fn from(r: &JobReport) -> Self {
        PyJobReport {
            job: r.job,
            groups: r.groups.iter().map(PyGroupReport::from).collect(),
            jct_ns: r.jct.as_nanos(),
            packets: r.packets,
            retransmissions: r.retransmissions,
            lost_packets: r.lost_packets,
            lost_by_timer: r.lost_by_timer,
            spurious_losses: r.spurious_losses,
            bytes: r.bytes,
            unsent_bytes: r.unsent_bytes,
            guarantee_held: r.guarantee_held(),
            loss_rate: r.loss_rate(),
        }
    }
}

fn failure_name(f: &JobFailure) -> String {
    f.to_string()
}

macro_rules! repr_fields {
    ($name:literal, $self:ident, $($f:ident),*) => {
        format!(concat!($name, "(", $(stringify!($f), "={:?}, ",)* ")"), $(&$self.$f),*)
            .replace(", )", ")")
    };
}

/// Client: the handshake finished.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct Connected {
    connection: PyConnectionHandle,
}

/// Server: a new peer connection was accepted.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct Accepted {
    connection: PyConnectionHandle,
}

/// Receiver: a peer announced a job.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct JobAnnounced {
    connection: PyConnectionHandle,
    job: u32,
    messages: u64,
}

/// Receiver: every group of the job holds ceil(MSR * N) messages; the
/// sender is told and stops (raised once per job).
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct JobSatisfied {
    connection: PyConnectionHandle,
    job: u32,
}

/// Receiver: a message arrived whole.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct MessageDelivered {
    connection: PyConnectionHandle,
    job: u32,
    group: u16,
    msg: u32,
    payload: Py<PyBytes>,
    precise_len: usize,
    damaged: bool,
    unchecked: bool,
}

/// Receiver: the sender finished without this message.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct MessageAbandoned {
    connection: PyConnectionHandle,
    job: u32,
    group: u16,
    msg: u32,
}

/// Receiver: a tensor job reached its fraction `p`.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct TensorReady {
    connection: PyConnectionHandle,
    job: u32,
    /// The element bytes (missing ranges zero-filled) as a uint8 array that
    /// owns the core's buffer (no copy); `array(dtype)` views it as floats.
    data: Py<PyArray1<u8>>,
    missing: Vec<(u32, u32)>,
    fraction: f64,
    /// The sender's element type: "float16", "float32" or "float64".
    dtype: &'static str,
}

#[pymethods]
impl TensorReady {
    /// The elements viewed (no copy) as `dtype` ("float16", "float32" or
    /// "float64"; default: the sender's dtype).
    #[pyo3(signature = (dtype = None))]
    fn array<'py>(&self, py: Python<'py>, dtype: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        self.data
            .bind(py)
            .call_method1("view", (dtype.unwrap_or(self.dtype),))
    }
    fn __repr__(&self) -> String {
        repr_fields!("TensorReady", self, job, dtype, missing, fraction)
    }
}

/// A job ended, on either side.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct JobComplete {
    connection: PyConnectionHandle,
    job: u32,
    /// "sender" or "receiver".
    role: &'static str,
    /// The figures, when the job finished with its guarantee.
    report: Option<PyJobReport>,
    /// Why the job failed, when it did.
    failure: Option<String>,
}

#[pymethods]
impl JobComplete {
    /// Whether the job finished (with a report).
    #[getter]
    fn ok(&self) -> bool {
        self.report.is_some()
    }
    fn __repr__(&self) -> String {
        repr_fields!("JobComplete", self, job, role, failure)
    }
}

/// End of a rate-control epoch (sender).
#[pyclass(name = "Epoch", module = "approxnet", frozen, get_all)]
pub(crate) struct PyEpoch {
    connection: PyConnectionHandle,
    epoch: u64,
    tlr: f64,
    rho: f64,
    rate_gbps: f64,
    queue: u8,
    length_ns: u64,
}

/// The connection is gone.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct ConnectionLost {
    connection: PyConnectionHandle,
    reason: String,
}

/// An event this version of the bindings does not know yet.
#[pyclass(module = "approxnet", frozen, get_all)]
pub(crate) struct OtherEvent {
    connection: PyConnectionHandle,
    description: String,
}

macro_rules! simple_repr {
    ($($t:ident => $name:literal [$($f:ident),*]);* $(;)?) => {
        $(
            #[pymethods]
            impl $t {
                fn __repr__(&self) -> String {
                    repr_fields!($name, self, $($f),*)
                }
            }
        )*
    };
}

impl std::fmt::Debug for PyConnectionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.inner)
    }
}

simple_repr! {
    Connected => "Connected" [connection];
    Accepted => "Accepted" [connection];
    JobAnnounced => "JobAnnounced" [connection, job, messages];
    JobSatisfied => "JobSatisfied" [connection, job];
    MessageDelivered => "MessageDelivered" [job, group, msg, precise_len, damaged, unchecked];
    MessageAbandoned => "MessageAbandoned" [job, group, msg];
    PyEpoch => "Epoch" [epoch, tlr, rho, rate_gbps, queue, length_ns];
    ConnectionLost => "ConnectionLost" [reason];
    OtherEvent => "OtherEvent" [description];
}

fn epoch(connection: PyConnectionHandle, s: &EpochStats) -> PyEpoch {
    PyEpoch {
        connection,
        epoch: s.epoch,
        tlr: s.tlr,
        rho: s.rho,
        rate_gbps: s.rate.as_bps() / 1e9,
        queue: s.queue,
        length_ns: s.length.as_nanos(),
    }
}

/// Converts one core event into its Python object (moving payloads, not copying tensors).
pub(crate) fn to_py(py: Python<'_>, h: ConnectionHandle, e: Event) -> PyResult<PyObject> {
    let connection = PyConnectionHandle { inner: h };
    match e {
        Event::Connected => Connected { connection }.into_py_any(py),
        Event::Accepted => Accepted { connection }.into_py_any(py),
        Event::JobAnnounced { job, messages } => JobAnnounced {
            connection,
            job,
            messages,
        }
        .into_py_any(py),
        Event::MessageDelivered {
            job,
            group,
            msg,
            payload,
            precise_len,
            damaged,
            unchecked,
        } => MessageDelivered {
            connection,
            job,
            group,
            msg,
            payload: PyBytes::new(py, &payload).unbind(),
            precise_len,
            damaged,
            unchecked,
        }
        .into_py_any(py),
        Event::MessageAbandoned { job, group, msg } => MessageAbandoned {
            connection,
            job,
            group,
            msg,
        }
        .into_py_any(py),
        Event::TensorReady {
            job,
            dtype,
            data,
            missing,
            fraction,
        } => TensorReady {
            connection,
            job,
            data: PyArray1::from_vec(py, data).unbind(),
            missing,
            fraction,
            dtype: crate::job::dtype_name(dtype),
        }
        .into_py_any(py),
        Event::JobComplete { job, role, outcome } => {
            let (report, failure) = match &outcome {
                Ok(r) => (Some(PyJobReport::from(r)), None),
                Err(f) => (None, Some(failure_name(f))),
            };
            JobComplete {
                connection,
                job,
                role: match role {
                    Role::Sender => "sender",
                    Role::Receiver => "receiver",
                },
                report,
                failure,
            }
            .into_py_any(py)
        }
        Event::JobSatisfied { job } => JobSatisfied { connection, job }.into_py_any(py),
        Event::Epoch(s) => epoch(connection, &s).into_py_any(py),
        Event::ConnectionLost { reason } => ConnectionLost {
            connection,
            reason: failure_name(&reason),
        }
        .into_py_any(py),
        other => OtherEvent {
            connection,
            description: format!("{other:?}"),
        }
        .into_py_any(py),
    }
}

/// Adds the event and report classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyConnectionHandle>()?;
    m.add_class::<PyGroupReport>()?;
    m.add_class::<PyJobReport>()?;
    m.add_class::<Connected>()?;
    m.add_class::<Accepted>()?;
    m.add_class::<JobAnnounced>()?;
    m.add_class::<JobSatisfied>()?;
    m.add_class::<MessageDelivered>()?;
    m.add_class::<MessageAbandoned>()?;
    m.add_class::<TensorReady>()?;
    m.add_class::<JobComplete>()?;
    m.add_class::<PyEpoch>()?;
    m.add_class::<ConnectionLost>()?;
    m.add_class::<OtherEvent>()?;
    Ok(())
}
