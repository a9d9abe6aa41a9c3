//! One error enum per SAP operation.

use crate::error::{BindError, ConnectError, JobWaitError, SendJobError};
use approxnet_proto::event::JobFailure;
use approxnet_proto::JobError;
use std::io;
use thiserror::Error;

/// Opening or sending on a SAP socket failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SapError {
    /// The socket could not be opened.
    #[error("bind: {0}")]
    Bind(#[from] BindError),
    /// The handshake failed.
    #[error("connect: {0}")]
    Connect(#[from] ConnectError),
    /// No peer connected within the bound.
    #[error("no peer connected in time")]
    NoPeer,
    /// The datagram was refused (e.g. `precise_len` longer than the datagram).
    #[error("send: {0}")]
    Send(#[from] JobError),
    /// The connection is gone.
    #[error("connection lost: {0}")]
    Lost(JobFailure),
    /// The socket was closed.
    #[error("socket closed")]
    Closed,
    /// Waiting for the previous stream to drain failed.
    #[error("stream rollover: {0}")]
    Rollover(#[from] JobWaitError),
    /// Socket I/O.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
}

impl From<SendJobError> for SapError {
    fn from(e: SendJobError) -> SapError {
        match e {
            SendJobError::Job(j) => SapError::Send(j),
            SendJobError::Io(i) => SapError::Io(i),
        }
    }
}

/// Receiving failed or ended.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RecvError {
    /// Nothing arrived within the timeout.
    #[error("timed out")]
    TimedOut,
    /// The peer closed the connection and every datagram was taken.
    #[error("peer closed the connection")]
    Closed,
    /// The connection is gone (silent peer, reset).
    #[error("connection lost: {0}")]
    Lost(JobFailure),
    /// Socket I/O.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
}

/// Closing did not complete.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CloseError {
    /// Precise datagrams were still unacknowledged at the bound.
    #[error("precise datagrams still unacknowledged after the timeout")]
    Unacknowledged,
    /// Every precise datagram was acknowledged but the FIN was not (lost
    /// on the link, or the peer is gone): the peer learns of the close
    /// only through its idle timeout.
    #[error("FIN not acknowledged within the timeout")]
    FinUnacknowledged,
    /// The connection was lost while closing.
    #[error("connection lost: {0}")]
    Lost(JobFailure),
    /// Socket I/O.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
}
