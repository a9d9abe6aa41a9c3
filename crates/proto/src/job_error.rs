//! Why a job was refused (its own module so that `job` and `tensor`,
//! which both refuse jobs, do not import each other).

use thiserror::Error;

/// Why a job was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum JobError {
    /// MSR outside `[0, 1]` or NaN.
    #[error("MSR must be within [0, 1], got {0}")]
    BadMsr(f64),
    /// The job has no messages.
    #[error("a job needs at least one message")]
    Empty,
    /// A message names a group the job does not define.
    #[error("message {msg} names group {group}, which the job does not define")]
    UnknownGroup {
        /// Message index.
        msg: usize,
        /// Group id.
        group: u16,
    },
    /// Two groups share an id.
    #[error("group {0} is defined twice")]
    DuplicateGroup(u16),
    /// More groups than the wire format carries.
    #[error("a job may have at most {max} groups, got {got}")]
    TooManyGroups {
        /// Cap.
        max: usize,
        /// Requested.
        got: usize,
    },
    /// More messages than the caps allow.
    #[error("a job may have at most {max} messages, got {got}")]
    TooManyMessages {
        /// Cap.
        max: u64,
        /// Requested.
        got: u64,
    },
    /// A message needs more packets than a 16-bit packet count holds.
    #[error("message {msg} of {len} bytes needs more than 65535 packets")]
    MessageTooLarge {
        /// Message index.
        msg: usize,
        /// Its size.
        len: usize,
    },
    /// A precise prefix longer than its message.
    #[error("message {msg}: precise prefix of {precise} bytes exceeds its {len} bytes")]
    PreciseTooLong {
        /// Message index.
        msg: usize,
        /// Prefix length.
        precise: usize,
        /// Message length.
        len: usize,
    },
    /// A tensor whose bytes are not a whole number of elements, or empty.
    #[error("tensor: {0}")]
    BadTensor(&'static str),
    /// The connection cannot take another job now.
    #[error("connection already has {0} open jobs (the cap)")]
    TooManyJobs(usize),
    /// The connection handle is unknown or closed.
    #[error("no such open connection")]
    NoConnection,
    /// More messages handed to a group than it announced.
    #[error("group {group} announced {announced} messages; message {msg} is one too many")]
    GroupFull {
        /// Group id.
        group: u16,
        /// Its announced count.
        announced: u32,
        /// Index of the message that overflowed it.
        msg: usize,
    },
    /// Messages pushed to a job this connection does not have open.
    #[error("job {0} is not a job in progress on this connection")]
    UnknownJob(u32),
    /// A tensor job cannot stream.
    #[error("a tensor job cannot announce messages for later")]
    TensorStreaming,
}
