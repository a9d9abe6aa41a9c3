//! `Job` (a job of messages in groups, or one tensor) and `Group`.

use crate::errors::{Error, Int, Result};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::tensor::TensorSpec;
use approxnet_proto::wire::Dtype;
use approxnet_proto::{Config, Endpoint, Instant, JobSpec};
use numpy::{PyArray1, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// A group of a job: its id and minimal sampling rate.
#[pyclass(name = "Group", module = "approxnet", frozen, get_all, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyGroup {
    /// Group id.
    pub(crate) id: u16,
    /// Fraction of the group's messages that must arrive whole.
    pub(crate) msr: f64,
}

#[pymethods]
impl PyGroup {
    fn __repr__(&self) -> String {
        format!("Group(id={}, msr={})", self.id, self.msr)
    }
}

/// `ceil(msr * n)`: how many of `n` messages a group of MSR `msr` must
/// deliver (seed 000 §3.3). The one rule every layer counts with: the core's
/// `Msr::must_deliver`, exposed so that Python baselines and experiments do
/// not count again.
#[pyfunction]
pub(crate) fn must_deliver(msr: f64, n: Int) -> Result<u32> {
    let n = u32::try_from(n.0)
        .map_err(|_| Error::JobValue(format!("n must be within 0 ..= 4294967295, got {}", n.0)))?;
    Ok(approxnet_proto::job::Msr::new(msr)?.must_deliver(n))
}

/// Per-queue buffer limits in bytes of one switch egress port under seed
/// 000 §5.2 (queue q >= 1 holds `queues - q` frames, queue 0 the rest):
/// the core's `policy::netapprox_queue_limits`, which the simulator uses too.
#[pyfunction]
pub(crate) fn queue_limits(queues: Int, frame: Int, port_buffer: Int) -> Result<Vec<u64>> {
    let q = u8::try_from(queues.0).map_err(|_| {
        Error::ConfigValue(format!("queues must be within 1 ..= 255, got {}", queues.0))
    })?;
    let nonneg = |what: &str, v: i64| {
        u64::try_from(v).map_err(|_| Error::ConfigValue(format!("{what} must be >= 0, got {v}")))
    };
    approxnet_proto::policy::netapprox_queue_limits(
        q,
        nonneg("frame", frame.0)?,
        nonneg("port_buffer", port_buffer.0)?,
    )
    .map_err(Error::ConfigValue)
}

fn group_id(id: i64) -> Result<u16> {
    u16::try_from(id)
        .map_err(|_| Error::JobValue(format!("group id must be within 0 ..= 65535, got {id}")))
}

fn length(what: &str, n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::JobValue(format!("{what} must be >= 0, got {n}")))
}

/// The tensor dtypes the wire format carries, by numpy name.
/// A message of real bytes for `group` whose first `precise_len` bytes
/// (default: all) must arrive exactly; the group id and length checked as
/// `Job.message` checks them (`Job.message`, `Endpoint.push_message` and
/// `SocketEndpoint.push_message` all build messages here).
pub(crate) fn bytes_message(
    group: Int,
    data: &[u8],
    precise_len: Option<Int>,
) -> Result<MessageSpec> {
    let group = group_id(group.0)?;
    let precise_len = match precise_len {
        None => data.len(),
        Some(p) => length("precise_len", p.0)?,
    };
    Ok(MessageSpec {
        group,
        payload: Payload::Bytes(data.to_vec()),
        precise_len,
    })
}

pub(crate) fn dtype_name(d: Dtype) -> &'static str {
    match d {
        Dtype::F16 => "float16",
        Dtype::F32 => "float32",
        Dtype::F64 => "float64",
    }
}

/// A job: messages in groups, each group with its MSR; or one tensor.
#[pyclass(name = "Job", module = "approxnet")]
#[derive(Clone)]
pub(crate) struct PyJob {
    pub(crate) spec: JobSpec,
    /// Shape of the tensor, for tensor jobs.
    pub(crate) shape: Option<Vec<usize>>,
}

#[pymethods]
impl PyJob {
    /// An empty job whose group 0 has MSR `msr`.
    #[new]
    #[pyo3(signature = (msr = 1.0))]
    fn new(msr: f64) -> Result<Self> {
        Ok(PyJob {
            spec: JobSpec::new(msr)?,
            shape: None,
        })
    }

    /// Defines (or redefines) group `id` with its own MSR; returns the job.
    fn group(mut slf: PyRefMut<'_, Self>, id: Int, msr: f64) -> Result<PyRefMut<'_, Self>> {
        slf.no_tensor()?;
        let id = group_id(id.0)?;
        let spec = std::mem::replace(&mut slf.spec, JobSpec::new(1.0)?);
        slf.spec = match spec.clone().group(id, msr) {
            Ok(s) => s,
            Err(e) => {
                slf.spec = spec;
                return Err(e.into());
            }
        };
        Ok(slf)
    }

    /// Announces that `group` will have `n` messages in all: the job
    /// streams, and messages not added before `send_job` are handed over
    /// later with `Endpoint.push_message` as they are produced (seed 000
    /// §3.3.2). Returns the job.
    fn announce(mut slf: PyRefMut<'_, Self>, group: Int, n: Int) -> Result<PyRefMut<'_, Self>> {
        slf.no_tensor()?;
        let id = group_id(group.0)?;
        let n = u32::try_from(n.0).map_err(|_| {
            crate::errors::Error::JobValue(format!("n must be within 1..=4294967295, got {}", n.0))
        })?;
        let spec = std::mem::replace(&mut slf.spec, JobSpec::new(1.0)?);
        slf.spec = match spec.clone().announce(id, n) {
            Ok(s) => s,
            Err(e) => {
                slf.spec = spec;
                return Err(e.into());
            }
        };
        Ok(slf)
    }

    /// Adds a message of real bytes to `group`; its first `precise_len`
    /// bytes (default: all of them) must arrive exactly. Returns the job.
    #[pyo3(signature = (group, data, precise_len = None))]
    fn message<'a>(
        mut slf: PyRefMut<'a, Self>,
        group: Int,
        data: &[u8],
        precise_len: Option<Int>,
    ) -> Result<PyRefMut<'a, Self>> {
        slf.no_tensor()?;
        let m = bytes_message(group, data, precise_len)?;
        slf.spec.messages.push(m);
        Ok(slf)
    }

    /// Adds `count` messages of `size` zero bytes (never materialised at the
    /// sender) to `group`; for experiments that only need sizes. Returns the job.
    #[pyo3(signature = (group, size, count = None))]
    fn synthetic(
        mut slf: PyRefMut<'_, Self>,
        group: Int,
        size: Int,
        count: Option<Int>,
    ) -> Result<PyRefMut<'_, Self>> {
        slf.no_tensor()?;
        let group = group_id(group.0)?;
        let size = length("size", size.0)?;
        let count = length("count", count.map_or(1, |c| c.0))?;
        if count > 1 << 24 {
            return Err(Error::JobValue(format!(
                "count must be at most {}, got {count}",
                1 << 24
            )));
        }
        slf.spec.messages.extend((0..count).map(|_| MessageSpec {
            group,
            payload: Payload::Synthetic(size),
            precise_len: 0,
        }));
        Ok(slf)
    }

    /// A job carrying one numpy array (float16, float32 or float64, any
    /// shape); the receiver may use it once a fraction `p` of its elements
    /// arrived. The elements are copied once into the job. `protect_bits`:
    /// the most significant bits of every element sent precisely (seed 004
    /// §4.1's protection level; each chunk in the byte-plane layout of
    /// `approxnet.approx_types`, its protected bits the precise prefix).
    #[staticmethod]
    #[pyo3(signature = (array, p, protect_bits = 0))]
    fn tensor(array: &Bound<'_, PyAny>, p: f64, protect_bits: i64) -> Result<Self> {
        let py = array.py();
        let arr = array.downcast::<PyUntypedArray>().map_err(|_| {
            Error::JobValue(format!(
                "tensor must be a numpy array, got {}",
                array
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "?".into())
            ))
        })?;
        let name = arr.dtype().str().map(|s| s.to_string()).unwrap_or_default();
        let dtype = match name.as_str() {
            "float16" => Dtype::F16,
            "float32" => Dtype::F32,
            "float64" => Dtype::F64,
            _ => {
                return Err(Error::JobValue(format!(
                "tensor dtype must be float16, float32 or float64 (native byte order), got {name}"
            )))
            }
        };
        let shape = arr.shape().to_vec();
        let data = bytes_of(py, arr).map_err(|e| Error::JobValue(format!("tensor: {e}")))?;
        let bits = u8::try_from(protect_bits)
            .ok()
            .filter(|&b| usize::from(b) <= dtype.size() * 8)
            .ok_or_else(|| {
                Error::JobValue(format!(
                    "protect_bits: {protect_bits}, expected 0 ..= {} for {name}",
                    dtype.size() * 8
                ))
            })?;
        let t = TensorSpec {
            dtype,
            data,
            deliver_fraction: p,
            protect_bits: bits,
        };
        t.validate()?;
        Ok(PyJob {
            spec: JobSpec::tensor(t),
            shape: Some(shape),
        })
    }

    /// The groups, group 0 first.
    #[getter]
    fn groups(&self) -> Vec<PyGroup> {
        self.spec
            .groups
            .iter()
            .map(|g| PyGroup {
                id: g.id,
                msr: g.msr.get(),
            })
            .collect()
    }

    /// Whether the job is one tensor.
    #[getter]
    fn is_tensor(&self) -> bool {
        self.spec.tensor.is_some()
    }

    /// The tensor's numpy dtype name, for tensor jobs.
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        self.spec.tensor.as_ref().map(|t| dtype_name(t.dtype))
    }

    /// The tensor's shape, for tensor jobs.
    #[getter]
    fn shape(&self) -> Option<Vec<usize>> {
        self.shape.clone()
    }

    /// Payload bytes the job carries.
    #[getter]
    fn nbytes(&self) -> usize {
        match &self.spec.tensor {
            Some(t) => t.data.len(),
            None => self.spec.messages.iter().map(|m| m.payload.len()).sum(),
        }
    }

    /// Checks the job as `Endpoint.send_job` would (empty job, unknown
    /// groups, precise prefixes, sizes) without sending it.
    #[pyo3(signature = (config = None))]
    fn validate(&self, config: Option<&crate::config::PyConfig>) -> Result<()> {
        let cfg = config.map_or_else(Config::default, |c| c.inner);
        let mut ep = Endpoint::new(cfg, 0)?;
        let h = ep.connect(Instant::ZERO, approxnet_proto::harness::SERVER_ADDR)?;
        ep.send_job(Instant::ZERO, h, self.spec.clone())?;
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.spec.messages.len()
    }

    fn __repr__(&self) -> String {
        match (&self.spec.tensor, &self.shape) {
            (Some(t), Some(s)) => format!(
                "Job.tensor(dtype={}, shape={:?}, p={})",
                dtype_name(t.dtype),
                s,
                t.deliver_fraction
            ),
            _ => format!(
                "Job(messages={}, groups={:?})",
                self.spec.messages.len(),
                self.spec
                    .groups
                    .iter()
                    .map(|g| (g.id, g.msr.get()))
                    .collect::<Vec<_>>()
            ),
        }
    }
}

impl PyJob {
    fn no_tensor(&self) -> Result<()> {
        if self.spec.tensor.is_some() {
            return Err(Error::JobValue(
                "a tensor job carries only its tensor; groups and messages cannot be added".into(),
            ));
        }
        Ok(())
    }
}

/// The array's elements as bytes in native (little-endian) order: a view
/// of the raveled array as uint8, copied once.
fn bytes_of(py: Python<'_>, arr: &Bound<'_, PyUntypedArray>) -> PyResult<Vec<u8>> {
    let np = py.import("numpy")?;
    let flat = arr.call_method1("ravel", ("C",))?;
    let flat = np.call_method1("ascontiguousarray", (flat,))?;
    let bytes = flat.call_method1("view", (np.getattr("uint8")?,))?;
    let bytes = bytes.downcast::<PyArray1<u8>>()?.readonly();
    Ok(bytes.as_slice()?.to_vec())
}
