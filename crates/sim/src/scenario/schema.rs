//! The scenario file format (TOML). Unknown keys are refused by name.

use serde::Deserialize;

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// `packet` (default: the packet-level simulator) or `flow` (the
    /// flow-level, fluid mode: `crate::fluid`, docs/simulator-fluid.md).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// Scenario name, for the summary.
    #[serde(default)]
    pub name: String,
    /// Seed of every random choice.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time, milliseconds.
    pub duration_ms: f64,
    /// The network.
    pub topology: TopologyFile,
    /// Switch ports.
    #[serde(default)]
    pub switch: SwitchFile,
    /// Native transport parameters.
    #[serde(default)]
    pub transport: TransportFile,
    /// ATP parameters.
    #[serde(default)]
    pub atp: AtpFile,
    /// Job classes.
    #[serde(default)]
    pub jobs: Vec<JobFile>,
    /// Distributed-training jobs.
    #[serde(default)]
    pub training: Vec<TrainingFile>,
    /// Staged jobs (flow mode only): phases of compute then communication.
    #[serde(default)]
    pub staged: Vec<StagedFile>,
    /// Flow-mode settings.
    #[serde(default)]
    pub fluid: FluidFile,
    /// What to record.
    #[serde(default)]
    pub output: OutputFile,
}

fn one() -> u64 {
    1
}
fn default_mode() -> String {
    "packet".into()
}

/// `[topology]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// `dumbbell`, `leaf_spine`, `fat_tree`, `spine_leaf3`, `dragonfly`,
    /// `torus` or `random_regular`.
    pub kind: String,
    /// Host link rate, Gbps.
    pub host_gbps: f64,
    /// Switch-to-switch link rate, Gbps (default: host rate).
    pub core_gbps: Option<f64>,
    /// Propagation delay of every link, microseconds.
    #[serde(default = "default_delay")]
    pub link_delay_us: f64,
    /// Bit error rate of every link.
    #[serde(default)]
    pub ber: f64,
    /// `flow` (ECMP by flow hash) or `spray` (per packet).
    #[serde(default = "default_ecmp")]
    pub ecmp: String,
    /// Dumbbell senders.
    pub senders: Option<u32>,
    /// Dumbbell receivers.
    pub receivers: Option<u32>,
    /// Dumbbell bottleneck rate, Gbps (absent: one switch, no bottleneck link).
    pub bottleneck_gbps: Option<f64>,
    /// Leaf-spine spines.
    pub spines: Option<u32>,
    /// Leaf-spine leaves.
    pub leaves: Option<u32>,
    /// Leaf-spine hosts per leaf.
    pub hosts_per_leaf: Option<u32>,
    /// Leaf-spine oversubscription ratio (down : up).
    pub oversubscription: Option<f64>,
    /// Fat-tree arity.
    pub k: Option<u32>,
    /// Fat-tree hosts (default k^3 / 4).
    pub hosts: Option<u32>,
    /// `spine_leaf3`: top-of-rack switches (`spines`, `leaves` as above).
    pub tors: Option<u32>,
    /// `spine_leaf3`: hosts per top-of-rack switch.
    pub hosts_per_tor: Option<u32>,
    /// `spine_leaf3`: leaves each top-of-rack switch links to (default
    /// `hosts_per_tor`, capped at `leaves`).
    pub tor_uplinks: Option<u32>,
    /// `spine_leaf3`: spines each leaf links to (default `tor_uplinks`,
    /// capped at `spines`).
    pub leaf_uplinks: Option<u32>,
    /// `dragonfly`: groups.
    pub groups: Option<u32>,
    /// `dragonfly`: routers per group.
    pub routers_per_group: Option<u32>,
    /// `dragonfly`: global links per router.
    pub global_links: Option<u32>,
    /// `dragonfly`, `torus`, `random_regular`: hosts per switch.
    pub hosts_per_switch: Option<u32>,
    /// `torus`: size of each dimension, e.g. `[4, 4, 4]`.
    pub dims: Option<Vec<u32>>,
    /// `random_regular`: switches.
    pub switches: Option<u32>,
    /// `random_regular`: switch-to-switch links per switch.
    pub degree: Option<u32>,
    /// `random_regular`: seed of the draw (default: the scenario's seed).
    pub topology_seed: Option<u64>,
    /// `edges`: the edge-list file (`host NAME SWITCH [GBPS]` and
    /// `link A B [GBPS [DELAY_US]]` lines; relative to the current directory).
    pub file: Option<String>,
    /// Delay of a switch (flow mode), ns, paid once per switch on the path.
    #[serde(default)]
    pub switch_delay_ns: f64,
    /// Forward-error-correction delay per hop (flow mode), ns (seed 004
    /// §1 / Table 1: about 100 ns per switch).
    #[serde(default)]
    pub fec_delay_ns: f64,
}

fn default_delay() -> f64 {
    1.0
}
fn default_ecmp() -> String {
    "flow".into()
}

/// `[switch]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchFile {
    /// Shared buffer per switch, KB (1 KB = 1000 bytes).
    pub buffer_kb: Option<f64>,
    /// Queues per port.
    pub queues: Option<u32>,
    /// `strict` or `drr`.
    pub scheduler: Option<String>,
    /// DRR weights, one per queue.
    pub weights: Option<Vec<f64>>,
    /// `shared` (dynamic thresholds), `complete` (first come, first
    /// served), `netapprox` or `pfabric` (static per-queue limits).
    pub buffer_preset: Option<String>,
    /// Dynamic threshold: a queue may grow while its share of the shared
    /// pool is below this factor times the free pool (default 8 with
    /// `shared`, off otherwise).
    pub dt_alpha: Option<f64>,
    /// Buffer reserved for every queue outside the shared pool, KB
    /// (default one MTU with `shared`, 0 otherwise).
    pub queue_reserved_kb: Option<f64>,
    /// Explicit per-queue limits, KB.
    pub queue_buffer_kb: Option<Vec<f64>>,
    /// ECN threshold in packets.
    pub ecn_k_pkts: Option<u32>,
    /// ECN threshold in KB.
    pub ecn_k_kb: Option<f64>,
    /// Queues that mark ECN (default: all, or queue 0 with `netapprox`).
    pub ecn_queues: Option<Vec<u32>>,
    /// `auto`, `fifo` or `pfabric`.
    pub discipline: Option<String>,
    /// pFabric per-queue buffer, KB (default: 2 x BDP).
    pub pfabric_queue_kb: Option<f64>,
    /// Aeolus selective dropping: a queue holding this many KB drops
    /// arriving unscheduled (first-RTT) packets, while scheduled ones may
    /// use the whole buffer (default 8 MTU when an Aeolus scheme runs).
    pub aeolus_drop_kb: Option<f64>,
}

/// `[transport]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportFile {
    /// Payload bytes per packet.
    pub mss: Option<u32>,
    /// Header bytes per packet on the wire.
    pub header_bytes: Option<u32>,
    /// Initial window (packets) of DCTCP / TCP (default 2, ns-2's
    /// `windowInit_`; seed 000 §7.1 ran ns-2).
    pub init_cwnd_pkts: Option<u32>,
    /// Connection setup (default true): the first job of a scheme on a
    /// (sender, receiver) host pair waits for a SYN / SYN-ACK round trip of
    /// header-only packets through the network before its first data;
    /// later jobs on the pair reuse the connection, as ATP reuses its
    /// connection after one HELLO / HELLO_ACK round trip. A lost SYN or
    /// SYN-ACK is resent after the initial RTO. UDP never waits.
    pub handshake: Option<bool>,
    /// With `handshake` (default true): later jobs on a host pair reuse
    /// its connection; false: every flow handshakes on its own, as ns-3's
    /// per-round sockets do.
    pub reuse_connections: Option<bool>,
    /// With `handshake` (default false): the sender answers the SYN-ACK
    /// with a header-only ACK ahead of its first data, as Linux and ns-3.
    pub handshake_ack: Option<bool>,
    /// Minimum RTO, microseconds.
    pub min_rto_us: Option<f64>,
    /// Initial RTO, microseconds.
    pub initial_rto_us: Option<f64>,
    /// pFabric fixed RTO, microseconds (default: 3 x base RTT).
    pub pfabric_rto_us: Option<f64>,
    /// TCP small queues: KB (1 KB = 1000 bytes) of its own data packets a
    /// DCTCP / TCP / pFabric flow may have waiting in its host's NIC
    /// (at least 2 packets; default 131.072 = 128 KiB, Linux's original
    /// `tcp_limit_output_bytes`); 0 = unbounded.
    pub tsq_kb: Option<f64>,
    /// RFC 7323 timestamps on DCTCP / TCP: RTT samples from every ACK
    /// (default true, as Linux and ns-3).
    pub timestamps: Option<bool>,
    /// RFC 3042 limited transmit on DCTCP / TCP (default true, as Linux
    /// and ns-3).
    pub limited_transmit: Option<bool>,
    /// SACK on DCTCP / TCP (default true, as Linux and ns-3): ACKs carry
    /// RFC 2018 blocks (3 beside timestamps, 4 without; each lengthens
    /// the ACK by its option bytes) and the sender recovers by RFC 6675.
    pub sack: Option<bool>,
    /// With SACK, proportional rate reduction in fast recovery (RFC 6937;
    /// default true, ns-3 3.44's `TcpPrrRecovery`); false: RFC 6675's
    /// window of `ssthresh` at once (ns-3 `TcpClassicRecovery`).
    pub prr: Option<bool>,
    /// Where the ACKs of DCTCP / TCP / pFabric / Aeolus data travel:
    /// `network` (default: back through NICs, queues and links like any
    /// packet) or `instant` (handed to the sender in the data packet's
    /// arrival event, crossing nothing: htsim_tcp's model, see
    /// `transport::ack_path`). Refused with ATP schemes, whose ACKs are
    /// the core's own datagrams.
    pub ack_path: Option<String>,
}

/// `[atp]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtpFile {
    /// Largest datagram ATP emits, header included, bytes (default 1472).
    pub mtu: Option<u32>,
    /// Retransmission timer floor, microseconds (default 1000).
    pub min_rto_us: Option<f64>,
    /// RTT assumed before the first sample, microseconds (default: the
    /// topology's unloaded RTT).
    pub initial_rtt_us: Option<f64>,
    /// Host NIC backlog (KB) above which a host's endpoints are not polled
    /// for more datagrams until it drains to half (default 64; a real host's
    /// socket would block). 0 = unlimited.
    pub nic_buffer_kb: Option<f64>,
    /// ACK every this many DATA packets (default 1; the core's
    /// `Config::ack_every`, 1 ..= 64).
    pub ack_every: Option<u32>,
    /// Body bytes up to which whole small messages share a DATA packet
    /// (the core's `Config::bundle_bytes`; 0 = one message per packet;
    /// default: the core's).
    pub bundle_bytes: Option<u32>,
    /// Record every rate-control epoch to epochs.csv.
    #[serde(default)]
    pub record_epochs: bool,
    /// React to ECN marks as DCTCP does (the core's `Config::ecn_reaction`;
    /// default false: seed 000's loss-only ATP).
    #[serde(default)]
    pub ecn_reaction: bool,
    /// React to ECN marks on queue 0 only, the non-approximate queue that
    /// seed 000 §7.1 marks at K = 65 (the core's `Config::ecn_reaction_queue0`;
    /// default false).
    #[serde(default)]
    pub ecn_reaction_queue0: bool,
    /// Seed 000 §7.2's "send more when the network has room" (the core's
    /// `Config::send_more`; default false): a satisfied job's remaining
    /// messages go as extra data to the lowest queue, and the host hands
    /// them to its NIC only when the NIC is idle (one at a time; at most
    /// 64 KB of them wait per host, the rest are dropped there).
    #[serde(default)]
    pub send_more: bool,
    /// Production-aware rate control (the core's
    /// `Config::production_aware_rate`; default true): an epoch in which
    /// the sender waited for a streaming job's production targets no loss.
    pub production_aware_rate: Option<bool>,
    /// How ATP FixTLR / Full map the TLR to a queue: `msr-bounded` (the
    /// default: never below the MSR's queue) or `eq1` (seed 000 §5.2 as
    /// written); the core's `Config::queue_rule`.
    pub queue_rule: Option<String>,
}

/// One `[[jobs]]` class.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    /// Name in the output.
    pub name: Option<String>,
    /// `all_to_all`, `incast`, `pairs` or `bulk`.
    #[serde(default = "default_pattern")]
    pub pattern: String,
    /// Incast / bulk target host.
    pub target: Option<u32>,
    /// Bulk start jitter, microseconds.
    #[serde(default)]
    pub jitter_us: f64,
    /// Explicit `[src, dst]` pairs (`pairs`: a Poisson stream of jobs per
    /// pair at `load`, or one job per pair at `start_ms` with `load` = 0).
    pub pairs: Option<Vec<[u32; 2]>>,
    /// Sending hosts (default all).
    pub senders: Option<Vec<u32>>,
    /// Size distribution name.
    pub sizes: String,
    /// Messages per job.
    #[serde(default = "one_u32")]
    pub messages: u32,
    /// Gap between consecutive messages of a job, i.e. how the application
    /// produces them over time: `none` (default: all ready at the job's
    /// start), `fbkv` (the FBKV generalized-Pareto inter-arrival model,
    /// mean ~19 us), `exp:<mean_us>` or `fixed:<us>`. The job's start is
    /// its first message's production; JCT counts from there. Production
    /// time does not change the offered load (`load` is defined by bytes).
    #[serde(default = "default_gaps")]
    pub gaps: String,
    /// Offered load, fraction of a host link. `all_to_all` and `incast`:
    /// 0 = the class creates no jobs (switched off); `bulk`: must be 0;
    /// `pairs`: 0 = one job per pair at `start_ms`.
    pub load: f64,
    /// Minimal sampling rate.
    #[serde(default = "one_f64")]
    pub msr: f64,
    /// Transport scheme.
    pub scheme: String,
    /// Tolerates approximation (default: MSR < 1).
    pub approximate: Option<bool>,
    /// First arrival, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// Last arrival, ms (default: the run's duration).
    pub stop_ms: Option<f64>,
    /// Cap on jobs in this class (0 = none).
    #[serde(default)]
    pub max_jobs: u32,
    /// Switch queue for native transports.
    #[serde(default)]
    pub queue: u8,
    /// Name of a class whose switch queue this (native) class follows,
    /// starting in it (seed 000 section 7.1.2 background; see `engine::follow`).
    pub follow: Option<String>,
    /// Times (ms) at which it joins the followed class's current queue.
    #[serde(default)]
    pub follow_at_ms: Vec<f64>,
    /// Times (ms) at which it moves one queue up (higher priority).
    #[serde(default)]
    pub follow_up_at_ms: Vec<f64>,
    /// Flow mode: weight of each flow of the class in weighted max-min
    /// sharing (default 1; Saba's WFQ weights map here).
    pub weight: Option<f64>,
    /// Flow mode: strict priority level, 0 = highest (default 0).
    pub priority: Option<u8>,
    /// Flow mode: rate cap of each flow, Gbps (default none).
    pub rate_cap_gbps: Option<f64>,
}

fn default_gaps() -> String {
    "none".into()
}
fn default_pattern() -> String {
    "all_to_all".into()
}
fn one_u32() -> u32 {
    1
}
fn one_f64() -> f64 {
    1.0
}

/// `[output]`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputFile {
    /// Queue sampling period, microseconds (0 = off).
    pub queue_sample_us: Option<f64>,
    /// `host_facing`, `all_switch` or `none`.
    pub queue_ports: Option<String>,
    /// Write flows.csv (default true).
    pub flows: Option<bool>,
    /// Record the first N packet events (tx, drop, recv) in trace.csv
    /// (packet mode; default 0: off).
    pub trace_packets: Option<u64>,
}

/// One `[[training]]` job (seed 001: compute + communication phases with
/// an iteration barrier).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingFile {
    /// Name in the output.
    pub name: Option<String>,
    /// `ps` (parameter server) or `ring` (ring all-reduce).
    pub collective: String,
    /// Worker hosts.
    pub workers: Vec<u32>,
    /// Parameter-server host (`ps` only).
    pub server: Option<u32>,
    /// Iterations.
    #[serde(default = "ten")]
    pub iterations: u32,
    /// Compute time per iteration, microseconds.
    pub compute_us: f64,
    /// Gradient bytes per worker, KB.
    pub gradient_kb: f64,
    /// Messages each transfer is split into (MSR granularity).
    #[serde(default = "one_u32")]
    pub messages: u32,
    /// Fraction of each transfer that must arrive (1 - loss bound).
    #[serde(default = "one_f64")]
    pub msr: f64,
    /// Transport scheme of the transfers.
    pub scheme: String,
    /// Transfers may stop at the MSR (default: MSR < 1).
    pub approximate: Option<bool>,
    /// First compute phase starts, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// Switch queue for native transports.
    #[serde(default)]
    pub queue: u8,
}

fn ten() -> u32 {
    10
}

/// `[fluid]`: flow-mode settings.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FluidFile {
    /// A CSV of explicit flows, `src,dst,bytes,start_ns` with optional
    /// `weight,priority` columns, header line first (trace replay; the
    /// SimGrid cross-check uses it). Relative paths are from the working
    /// directory.
    pub flows_csv: Option<String>,
    /// Recompute every flow's rate at every event instead of only the
    /// flows a change touches (for checking; same results, slower).
    #[serde(default)]
    pub full_recompute: bool,
    /// Write each flow's links to flows.csv (`path`, egress port ids) and
    /// the ports to links.csv.
    #[serde(default)]
    pub record_paths: bool,
}

/// One `[[staged]]` job (flow mode): on its hosts, `phases` run in order,
/// each after the previous one ended everywhere (a barrier), the whole
/// list `iterations` times; the output is the job's completion time.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagedFile {
    /// Name in the output.
    pub name: Option<String>,
    /// Hosts of the job (rank i = hosts[i]).
    pub hosts: Vec<u32>,
    /// Times the phase list runs.
    #[serde(default = "one_u32")]
    pub iterations: u32,
    /// Start, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// Host speed for `compute_gflop` phases, Gflop/s (seed 004 §5.1.1:
    /// 500 per host).
    pub host_gflops: Option<f64>,
    /// Weight of the job's flows (default 1).
    pub weight: Option<f64>,
    /// Strict priority of the job's flows, 0 = highest (default 0).
    pub priority: Option<u8>,
    /// Rate cap of each of its flows, Gbps (default none).
    pub rate_cap_gbps: Option<f64>,
    /// The phases.
    pub phases: Vec<PhaseFile>,
}

/// One phase of a staged job: exactly one of `compute_us`,
/// `compute_gflop` or `comm`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseFile {
    /// Compute for this long, microseconds.
    pub compute_us: Option<f64>,
    /// Compute this many Gflop per host at the job's `host_gflops`.
    pub compute_gflop: Option<f64>,
    /// Communicate: `all_to_all`, `all_to_all_pairwise`,
    /// `allreduce_ring`, `allreduce_rd` (recursive doubling), `halo`,
    /// `transpose`, `panel_bcast`, `scatter` or `flows`.
    pub comm: Option<String>,
    /// Bytes, KB (1 KB = 1000 B): `all_to_all*` and `scatter` per
    /// destination, the reduced vector for `allreduce_*`, per neighbour
    /// for `halo`, per rank for `transpose`, per message for
    /// `panel_bcast`, per pair for `flows`.
    pub kb: Option<f64>,
    /// `halo`: the rank grid, e.g. `[4, 4]` (periodic), product = hosts;
    /// `transpose`, `panel_bcast`: `[side, side]`.
    pub grid: Option<Vec<u32>>,
    /// `allreduce_rd`: ranks per group (a power of two dividing the rank
    /// count; default all of them) — recursive doubling within each run
    /// of `group` consecutive ranks.
    pub group: Option<u32>,
    /// `scatter`: the sending rank; `panel_bcast`: the broadcasting
    /// column and row (default 0).
    pub root: Option<u32>,
    /// `flows`: `[src rank, dst rank]` pairs.
    pub pairs: Option<Vec<[u32; 2]>>,
}
