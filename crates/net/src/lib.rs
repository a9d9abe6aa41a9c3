//! # approxnet-net: the real runtime of approxnet
//!
//! Moves approxnet datagrams between real processes over Linux UDP and
//! UDP-Lite sockets, driving the sans-IO [`approxnet_proto::Endpoint`].
//!
//! * [`sys`]: the syscall layer — sockets, UDP-Lite checksum coverage,
//!   per-packet DSCP / priority marking, `sendmmsg` / `recvmmsg`, UDP GSO / GRO.
//! * [`Endpoint`]: the blocking application face (connect, send a job, wait
//!   for it, receive events, close); [`AsyncEndpoint`]: the same over tokio.
//! * the `approxnet-perf` binary: an iperf-like load generator over both.
//!
//! ## I/O contract
//! The driver loop is thin: after any input it drains the core's
//! `poll_transmit` into a bounded send queue (one `sendmmsg`, GSO where the
//! kernel allows), drains `poll_event` into a bounded event queue, and waits
//! for the socket or the core's `poll_timeout`. The core's clock is the OS
//! monotonic clock, never going backwards; it may run ahead of the OS clock
//! by at most `RuntimeConfig::pacing_lookahead` to release paced packets as
//! one batch. Sockets are non-blocking; every queue is bounded. Bytes from
//! the wire go to the core, which counts and drops anything malformed;
//! nothing here panics on them.

mod async_face;
mod blocking;
mod clock;
pub mod config;
mod deliver;
mod driver;
pub mod error;
mod events;
pub mod perf;
pub mod sap;
pub mod stats;
pub mod sys;

pub use async_face::AsyncEndpoint;
pub use blocking::Endpoint;
pub use config::{MarkingPolicy, RuntimeConfig};
pub use driver::EpochSample;
pub use error::{BindError, ConnectError, JobWaitError, SendJobError};
pub use stats::{RuntimeStats, SleepCauses, SleepTally};
