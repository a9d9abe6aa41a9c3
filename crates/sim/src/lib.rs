//! # approxnet-sim: packet-level datacenter simulator, and a flow-level mode
//!
//! Two modes share scenario files, topologies ([`topology`]), routes and
//! outputs; `mode = "flow"` in a scenario selects the flow-level (fluid)
//! mode ([`fluid`]: weighted max-min sharing, staged jobs, for
//! thousand-host studies), and [`run::run_scenario`] runs either. What
//! follows describes the packet level.
//!
//! A discrete-event simulator in the shape of htsim: an explicit event list
//! value ([`event::EventList`], ties broken by `(time, sequence)`), links
//! with rate, delay and bit error rate, switch ports with N queues,
//! per-queue and shared buffers (dynamic thresholds and a reserved minimum
//! per queue, [`fabric::buffer`]), ECN marking, strict-priority and DRR
//! schedulers, ECMP routing stored per destination prefix, and topology
//! presets (docs/simulator-switch.md). Baseline transports
//! (DCTCP, NewReno-like TCP, pFabric, Aeolus, UDP, and SampleSend /
//! EarlySend on top of them) are simulated natively in [`transport`]; ATP
//! from `approxnet-proto` is driven unchanged through a
//! [`engine::adapter::HostAdapter`]. Hosts push back as real ones do: TCP small
//! queues bound a flow's packets in its NIC (`[transport] tsq_kb`), the
//! window grows only while it is used (RFC 7661), and the baselines have
//! RFC 7323 timestamps and RFC 3042 limited transmit (docs/validation.md,
//! "hosts under contention"); UDP paces at the host line rate.
//!
//! Jobs may produce their messages over time ([`workload::gaps`], seed 000
//! §2.2 / §7.1): a `Produce` event hands each message to the job's
//! transport when the application produces it. One JCT for every scheme:
//! from the job's start (its first message's production) until the
//! receiver holds `ceil(MSR * N)` messages. Native connections pay a SYN /
//! SYN-ACK round trip on a host pair's first job (`[transport] handshake`;
//! on every flow with `reuse_connections = false`, and with the sender's
//! ACK of the SYN-ACK with `handshake_ack = true`, as ns-3's sockets),
//! as ATP pays its HELLO; EarlySend stops when the receiver's stop signal
//! has crossed the network back to the sender. ACKs cross the network
//! back like data; `[transport] ack_path = "instant"` hands them to the
//! sender at once instead, htsim_tcp's model (docs/validation.md, "The
//! ACK path").
//!
//! ## I/O contract
//! No wall clock, no global randomness: time is the proto crate's integer
//! nanosecond [`approxnet_proto::Instant`], randomness comes from seeded
//! [`approxnet_proto::rng::Rng`]s, so the same scenario and seed give the
//! same output bit for bit. The only I/O is in [`scenario`] (reading TOML)
//! and [`output`] (writing CSV), used by the `approxnet-sim` binary.

pub mod atp;
pub mod engine;
pub mod event;
pub mod fabric;
pub mod fluid;
pub(crate) mod int_map;
pub mod job;
pub mod output;
pub mod packet;
pub mod run;
pub mod scenario;
pub mod scheme;
pub mod topology;
pub mod transport;
pub mod workload;

pub use engine::Simulator;
