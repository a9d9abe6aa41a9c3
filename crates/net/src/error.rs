//! Errors of the runtime's operations, one enum per operation.

use approxnet_proto::config::ConfigError;
use approxnet_proto::event::JobFailure;
use approxnet_proto::JobError;
use std::io;
use thiserror::Error;

/// Why an endpoint could not be opened.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BindError {
    /// The protocol configuration is invalid.
    #[error("invalid protocol configuration: {0}")]
    Config(#[from] ConfigError),
    /// A runtime field of the configuration is invalid.
    #[error("invalid runtime configuration: {0}")]
    Runtime(#[from] crate::config::RuntimeConfigError),
    /// The socket could not be opened, configured or bound.
    #[error("cannot open socket: {0}")]
    Io(#[from] io::Error),
}

/// Why a connection could not be established.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The endpoint holds as many connections as its cap allows.
    #[error(transparent)]
    Refused(#[from] approxnet_proto::endpoint::ConnectError),
    /// The handshake failed: the peer did not answer within the core's
    /// idle timeout, or reset the connection.
    #[error("connection failed: {0}")]
    Lost(JobFailure),
    /// The caller's deadline passed before the handshake finished.
    #[error("connect did not finish within the caller's deadline")]
    TimedOut,
    /// A socket error.
    #[error("socket error: {0}")]
    Io(#[from] io::Error),
}

/// Why waiting for a job failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum JobWaitError {
    /// The job ended without its guarantee (peer unresponsive, reset, ...).
    #[error("job failed: {0}")]
    Failed(JobFailure),
    /// The connection was lost before the job completed.
    #[error("connection lost: {0}")]
    ConnectionLost(JobFailure),
    /// The connection handle is unknown or already closed.
    #[error("no such open connection")]
    NoConnection,
    /// The caller's deadline passed first (the job may still complete).
    #[error("job did not complete within the caller's deadline")]
    TimedOut,
    /// A socket error.
    #[error("socket error: {0}")]
    Io(#[from] io::Error),
}

/// Why a job could not be started.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SendJobError {
    /// The core refused the job (bad MSR, too many jobs, unknown connection...).
    #[error(transparent)]
    Job(#[from] JobError),
    /// A socket error while sending its first packets.
    #[error("socket error: {0}")]
    Io(#[from] io::Error),
}
