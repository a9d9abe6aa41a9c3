//! # approxnet-sim: packet-level datacenter simulator
//!
//! A discrete-event simulator in the shape of htsim: an explicit event list
//! value ([`event::EventList`], ties broken by `(time, sequence)`), links
//! with rate, delay and bit error rate, switch ports with N queues,
//! per-queue and shared buffers, ECN marking, strict-priority and DRR
//! schedulers, ECMP routing, and topology presets. Baseline transports
//! (DCTCP, NewReno-like TCP, pFabric, UDP, and SampleSend / EarlySend on top
//! of them) are simulated natively in [`transport`]; ATP from
//! `approxnet-proto` is driven unchanged through a [`sim::adapter::HostAdapter`].
//!
//! ## I/O contract
//! No wall clock, no global randomness: time is the proto crate's integer
//! nanosecond [`approxnet_proto::Instant`], randomness comes from seeded
//! [`approxnet_proto::rng::Rng`]s, so the same scenario and seed give the
//! same output bit for bit. The only I/O is in [`scenario`] (reading TOML)
//! and [`output`] (writing CSV), used by the `approxnet-sim` binary.

pub mod atp;
pub mod event;
pub mod job;
pub mod net;
pub mod output;
pub mod packet;
pub mod scenario;
pub mod scheme;
pub mod sim;
pub mod topology;
pub mod transport;
pub mod workload;

pub use sim::Simulator;
