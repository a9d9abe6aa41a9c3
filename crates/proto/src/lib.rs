//! # approxnet-proto: the sans-IO core of approxnet
//!
//! The approximate transport (ATP, seed 000), bounded-loss tensor transfer
//! (seed 001) and precise/approximate payload regions (seed 002), written
//! once as state machines with no sockets, no clock and no global randomness.
//!
//! ## I/O contract
//! An [`Endpoint`] is driven by exactly three kinds of input, each taking the
//! current time `now` from the driver:
//! * [`Endpoint::handle_datagram`] — bytes that arrived from a peer;
//! * [`Endpoint::handle_timeout`] — the time returned by
//!   [`Endpoint::poll_timeout`] has come;
//! * application calls: [`Endpoint::connect`], [`Endpoint::send_job`], [`Endpoint::close`].
//!
//! After any input the driver drains the outputs:
//! [`Endpoint::poll_transmit`] until `None` (each [`Transmit`] is a datagram
//! with its destination and switch queue / DSCP), [`Endpoint::poll_event`]
//! until `None`, then arms one timer at [`Endpoint::poll_timeout`].
//! Time passed in never goes backwards.
//!
//! ### Batched calls
//! A driver that reads and writes datagrams in batches (`recvmmsg`,
//! `sendmmsg`, GSO) may use, in place of the calls above one datagram at
//! a time:
//! * [`Endpoint::handle_datagrams`] — a batch of received datagrams, each
//!   with its sender;
//! * [`Endpoint::poll_transmits`] — up to `buf.len() / stride` datagrams
//!   written `stride` bytes apart into one buffer, their [`Transmit`]s
//!   appended to a vector; called again while it fills the buffer.
//!
//! Each is exactly the single calls in a row at the same `now`: the same
//! datagrams byte for byte, the same events in the same order, the same
//! counters and next timeout (tested in `tests/batch.rs`). What they save
//! is the per-call work: a connection's timers and its place in the send
//! queue are derived once per run of its datagrams (a burst of ACKs or of
//! DATA received, a burst of paced DATA sent) instead of once per
//! datagram. The single calls stay (the simulator hands datagrams over
//! one at a time); the two kinds may be mixed freely.
//!
//! The same endpoint runs unchanged in the simulator (virtual time) and in
//! the real runtime (UDP / UDP-Lite sockets).

pub mod cdf;
pub mod config;
pub mod endpoint;
pub mod event;
pub mod harness;
pub mod job;
mod job_error;
pub mod policy;
pub mod rng;
pub mod stats;
pub mod tensor;
pub mod time;
pub mod units;
pub mod wire;

mod bitset;
mod connection;
mod receiver;
mod sender;
mod seq;
mod timer;

pub use config::{Config, Limits, PacketSplit};
pub use endpoint::{BurstError, ConnectionHandle, Endpoint, SendHold, Transmit};
pub use event::{Event, JobOutcome, JobReport};
pub use job::{GroupSpec, JobError, JobSpec, Msr};
pub use policy::{QueueRule, Variant};
pub use sender::Pushed;
pub use time::{Duration, Instant};
pub use units::Rate;
