//! The exception hierarchy and the one place where Rust errors become
//! Python exceptions.
//!
//! ```text
//! ApproxnetError            every error raised by approxnet
//! ├── ConfigError           an endpoint / link configuration value out of range
//! ├── JobError              a job refused: bad MSR, empty job, bad tensor, ...
//! ├── ConnectError          a connection could not be opened
//! ├── AddressError          a socket address that does not parse or cannot be bound
//! ├── ScenarioError         a simulator scenario that cannot be read or built
//! ├── NetError              a socket operation of the real runtime failed
//! └── TransferError         a job failed, its connection was lost, or a wait
//!                           ran past its deadline (real runtime)
//! ```

use approxnet_net::{BindError, JobWaitError, SendJobError};
use approxnet_proto::config::ConfigError;
use approxnet_proto::endpoint::ConnectError;
use approxnet_proto::JobError;
use approxnet_sim::scenario::ScenarioError;
use pyo3::prelude::*;
use std::io;

/// The Python exception classes (named as Python sees them).
#[allow(unreachable_pub, missing_docs)]
pub(crate) mod exc {
    use pyo3::create_exception;
    use pyo3::exceptions::PyException;

    create_exception!(
        approxnet,
        ApproxnetError,
        PyException,
        "Base class of every error raised by approxnet."
    );
    create_exception!(
        approxnet,
        ConfigError,
        ApproxnetError,
        "A configuration value is out of its allowed range."
    );
    create_exception!(
        approxnet,
        JobError,
        ApproxnetError,
        "A job was refused: MSR outside [0, 1] or NaN, no messages, an unknown group, a bad tensor, ..."
    );
    create_exception!(
        approxnet,
        ConnectError,
        ApproxnetError,
        "A connection could not be opened."
    );
    create_exception!(
        approxnet,
        AddressError,
        ApproxnetError,
        "A socket address that does not parse (expected 'ip:port')."
    );
    create_exception!(
        approxnet,
        ScenarioError,
        ApproxnetError,
        "A simulator scenario that cannot be read, parsed or built."
    );
    create_exception!(
        approxnet,
        NetError,
        ApproxnetError,
        "A socket operation of the real runtime failed."
    );
    create_exception!(
        approxnet,
        TransferError,
        ApproxnetError,
        "A job failed, its connection was lost, or a wait ran past its deadline."
    );
}

/// Every error the bindings can raise, before it becomes a Python exception.
#[derive(Debug)]
pub(crate) enum Error {
    /// An endpoint configuration out of range (from the core).
    Config(ConfigError),
    /// A binding-level configuration value out of range.
    ConfigValue(String),
    /// A job refused by the core.
    Job(JobError),
    /// A job refused by the bindings before it reached the core.
    JobValue(String),
    /// A connection refused.
    Connect(ConnectError),
    /// A bad socket address.
    Address(String),
    /// A scenario that cannot be loaded or built.
    Scenario(ScenarioError),
    /// Writing simulator results failed.
    Output(String),
    /// A socket could not be opened or bound (real runtime).
    Bind(BindError),
    /// A real-runtime connection failed or timed out.
    NetConnect(approxnet_net::ConnectError),
    /// A real-runtime connect did not finish within the caller's timeout.
    ConnectTimeout(String),
    /// Waiting for a job failed (real runtime).
    JobWait(JobWaitError),
    /// A job could not be started (real runtime).
    SendJob(SendJobError),
    /// A socket error (real runtime).
    Io(io::Error),
    /// A SAP socket could not be opened or refused a datagram.
    Sap(approxnet_net::sap::SapError),
    /// Receiving on a SAP socket failed.
    SapRecv(approxnet_net::sap::RecvError),
    /// Flushing or closing a SAP socket did not complete.
    SapClose(approxnet_net::sap::CloseError),
    /// Already a Python exception (raised by Python code the bindings called).
    Python(PyErr),
}

impl From<approxnet_net::sap::SapError> for Error {
    fn from(e: approxnet_net::sap::SapError) -> Self {
        use approxnet_net::sap::SapError as S;
        match e {
            S::Bind(b) => Error::Bind(b),
            S::Connect(c) => Error::NetConnect(c),
            S::Send(j) => Error::Job(j),
            S::Io(i) => Error::Io(i),
            other => Error::Sap(other),
        }
    }
}

impl From<BindError> for Error {
    fn from(e: BindError) -> Self {
        Error::Bind(e)
    }
}

impl From<approxnet_net::ConnectError> for Error {
    fn from(e: approxnet_net::ConnectError) -> Self {
        Error::NetConnect(e)
    }
}

impl From<JobWaitError> for Error {
    fn from(e: JobWaitError) -> Self {
        Error::JobWait(e)
    }
}

impl From<SendJobError> for Error {
    fn from(e: SendJobError) -> Self {
        Error::SendJob(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Python(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl From<JobError> for Error {
    fn from(e: JobError) -> Self {
        Error::Job(e)
    }
}

impl From<ConnectError> for Error {
    fn from(e: ConnectError) -> Self {
        Error::Connect(e)
    }
}

impl From<ScenarioError> for Error {
    fn from(e: ScenarioError) -> Self {
        Error::Scenario(e)
    }
}

impl From<approxnet_phy::approx_types::ApproxTypeError> for Error {
    fn from(e: approxnet_phy::approx_types::ApproxTypeError) -> Self {
        Error::ConfigValue(e.to_string())
    }
}

impl From<approxnet_phy::channel::ChannelError> for Error {
    fn from(e: approxnet_phy::channel::ChannelError) -> Self {
        Error::ConfigValue(e.to_string())
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Config(e) => exc::ConfigError::new_err(e.to_string()),
            Error::ConfigValue(m) => exc::ConfigError::new_err(m),
            Error::Job(e) => exc::JobError::new_err(e.to_string()),
            Error::JobValue(m) => exc::JobError::new_err(m),
            Error::Connect(e) => exc::ConnectError::new_err(e.to_string()),
            Error::Address(m) => exc::AddressError::new_err(m),
            Error::Scenario(e) => exc::ScenarioError::new_err(e.to_string()),
            Error::Output(m) => exc::ScenarioError::new_err(m),
            Error::Bind(BindError::Config(e)) => exc::ConfigError::new_err(e.to_string()),
            Error::Bind(BindError::Runtime(e)) => exc::ConfigError::new_err(e.to_string()),
            Error::Bind(BindError::Io(e)) => match e.kind() {
                io::ErrorKind::AddrInUse
                | io::ErrorKind::AddrNotAvailable
                | io::ErrorKind::PermissionDenied
                | io::ErrorKind::InvalidInput => {
                    exc::AddressError::new_err(format!("cannot bind the socket: {e}"))
                }
                _ => exc::NetError::new_err(format!("cannot open the socket: {e}")),
            },
            Error::Bind(e) => exc::NetError::new_err(e.to_string()),
            Error::NetConnect(approxnet_net::ConnectError::Refused(e)) => {
                exc::ConnectError::new_err(e.to_string())
            }
            Error::NetConnect(approxnet_net::ConnectError::Io(e)) => {
                exc::NetError::new_err(format!("socket error: {e}"))
            }
            Error::NetConnect(e) => exc::ConnectError::new_err(e.to_string()),
            Error::ConnectTimeout(m) => exc::ConnectError::new_err(m),
            Error::JobWait(JobWaitError::Io(e)) => {
                exc::NetError::new_err(format!("socket error: {e}"))
            }
            Error::JobWait(e) => exc::TransferError::new_err(e.to_string()),
            Error::SendJob(SendJobError::Job(e)) => exc::JobError::new_err(e.to_string()),
            Error::SendJob(e) => exc::NetError::new_err(e.to_string()),
            Error::Io(e) => exc::NetError::new_err(format!("socket error: {e}")),
            Error::Sap(e) => exc::TransferError::new_err(e.to_string()),
            Error::SapRecv(approxnet_net::sap::RecvError::Io(e)) => {
                exc::NetError::new_err(format!("socket error: {e}"))
            }
            Error::SapRecv(e) => exc::TransferError::new_err(e.to_string()),
            Error::SapClose(approxnet_net::sap::CloseError::Io(e)) => {
                exc::NetError::new_err(format!("socket error: {e}"))
            }
            Error::SapClose(e) => exc::TransferError::new_err(e.to_string()),
            Error::Python(e) => e,
        }
    }
}

/// Result type of binding code.
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ApproxnetError", py.get_type::<exc::ApproxnetError>())?;
    m.add("ConfigError", py.get_type::<exc::ConfigError>())?;
    m.add("JobError", py.get_type::<exc::JobError>())?;
    m.add("ConnectError", py.get_type::<exc::ConnectError>())?;
    m.add("AddressError", py.get_type::<exc::AddressError>())?;
    m.add("ScenarioError", py.get_type::<exc::ScenarioError>())?;
    m.add("NetError", py.get_type::<exc::NetError>())?;
    m.add("TransferError", py.get_type::<exc::TransferError>())?;
    Ok(())
}

/// A Python int argument of any size, saturated into `i64` so that range
/// checks (and their typed errors) see huge values instead of an
/// `OverflowError` from the conversion.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Int(pub(crate) i64);

impl<'py> FromPyObject<'py> for Int {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        match ob.extract::<i64>() {
            Ok(v) => Ok(Int(v)),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(ob.py()) => {
                Ok(Int(if ob.lt(0)? { i64::MIN } else { i64::MAX }))
            }
            Err(e) => Err(e),
        }
    }
}
