//! # Flow-level (fluid) mode
//!
//! For thousand-host allocation studies (seed 003 §8, seed 004 §5) where
//! the packet-level mode is too slow. Flows are fluid: each gets a rate
//! from weighted max-min sharing ([`maxmin`]: progressive filling, per-flow
//! weights and caps, strict priority levels), recomputed at every arrival
//! and departure by a local repair of what the change touches; a
//! flow's completion time is the time its bytes take at those rates plus
//! its path's latency (links' propagation, switch delay, per-hop FEC
//! delay: [`net::Latency`]). Staged jobs ([`staged`]) alternate compute
//! and communication phases (collectives) and report their completion
//! time.
//!
//! Same scenario files (`mode = "flow"`), topologies
//! ([`crate::topology`]) and routes ([`crate::fabric::routing`]) as the
//! packet mode; what is exact and what is approximated is in
//! docs/simulator-fluid.md.

pub mod engine;
pub mod heap;
pub mod maxmin;
pub mod net;
pub mod output;
pub mod staged;

pub use engine::{FluidSim, Owner};
pub use maxmin::{Demand, Sharing};
pub use net::{FluidNet, Latency};
pub use staged::{Collective, Phase, StagedJob};
