//! Endpoint configuration and per-peer resource caps.

use crate::policy::{QueueRule, SlackRate, Variant};
use crate::time::Duration;
use crate::units::{Rate, DEFAULT_MTU};
use crate::wire::HEADER_LEN;
use thiserror::Error;

/// When a lost packet is sent again (seed 000 §4.2 and seed 001 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetransmitPolicy {
    /// Retransmit only when the group can no longer meet its MSR without the
    /// message (always for MSR = 1). ATP's default.
    #[default]
    WhenNeeded,
    /// Seed 001 §3: losses detected fast (a gap behind later ACKs) are
    /// retransmitted; losses found only by the timer are given up while the
    /// group's bound allows.
    FastOnly,
}

/// What a receiver does with a packet whose approximate region is damaged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Integrity {
    /// Deliver it, flagged as damaged (seed 002's approximate mode).
    #[default]
    AcceptDamaged,
    /// Drop it, as a precise-only socket would.
    Strict,
}

/// How a message's bytes are cut into DATA packets (`Config::packet_split`).
/// Every mode uses at most [`Config::max_payload`] minus the approximate
/// trailer per packet; a message that fits one packet is one packet in
/// every mode. The receiver accepts any split (it reassembles by packet
/// index and never assumes a size).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketSplit {
    /// `ceil(len / max)` packets, all full but a shorter last one (the
    /// default, and the simulator's).
    #[default]
    Full,
    /// As many packets as `Full`, all `ceil(len / n)` bytes but a last
    /// one shorter by less than `n` bytes (46 of 1,395 and one of 1,366
    /// for 64 KiB at MTU 1500).
    Even,
    /// Every packet the same size: the largest size up to the maximum that
    /// divides the message length, if that needs at most 1.5 times
    /// `Full`'s packets (else as `Even`). Consecutive messages of one
    /// length then leave as packets of one size, so a host's UDP GSO send
    /// can span message boundaries (a 64 KiB message at MTU 1500: 64
    /// packets of 1,024 bytes instead of 46 of 1,420 and one of 216;
    /// docs/performance.md, "Issue 19: equal-sized packets").
    Tiled,
}

/// Caps that bound what one peer can make this endpoint hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once (per endpoint).
    pub max_connections: usize,
    /// Jobs open at once per connection, in each direction.
    pub max_jobs_per_connection: usize,
    /// Messages one job may announce (all groups together).
    pub max_messages_per_job: u32,
    /// Payload bytes a connection may hold in reassembly and reorder buffers.
    pub max_buffered_bytes: usize,
    /// Handshake answers queued but not yet sent.
    pub max_pending_replies: usize,
    /// Bytes all connections together may hold in reassembly and reorder
    /// buffers, delivery bitmaps and tensor buffers (the sum of what
    /// `max_buffered_bytes` charges per connection): what bounds a
    /// server's memory when many peers, real or not, open jobs at once.
    pub max_endpoint_bytes: usize,
    /// Connections a peer's JOB opened that have received no DATA yet
    /// (*unproven*: the cookie proves an address only while the secret is
    /// secret), at most half of `max_connections`. A JOB that would open
    /// one more first evicts the oldest, however young: a real client's
    /// DATA follows its JOB at once and proves it, a flood of forged JOBs
    /// only churns this pool.
    pub max_unproven: usize,
    /// Bytes unproven connections together may be charged, at most half of
    /// `max_endpoint_bytes`; past it the oldest other unproven ones are
    /// evicted.
    pub max_unproven_bytes: usize,
}

impl Limits {
    /// `max_unproven` as enforced: at most half the connection table.
    pub fn unproven_cap(&self) -> usize {
        self.max_unproven.min(self.max_connections / 2).max(1)
    }

    /// `max_unproven_bytes` as enforced: at most half the endpoint budget.
    pub fn unproven_bytes_cap(&self) -> usize {
        self.max_unproven_bytes.min(self.max_endpoint_bytes / 2)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 4096,
            max_jobs_per_connection: 64,
            max_messages_per_job: 1 << 20,
            max_buffered_bytes: 64 << 20,
            max_pending_replies: 1024,
            max_endpoint_bytes: 256 << 20,
            max_unproven: 256,
            max_unproven_bytes: 16 << 20,
        }
    }
}

/// Endpoint configuration. Every field has a documented default.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// ATP variant (policy combination); default [`Variant::Full`].
    pub variant: Variant,
    /// Highest sending rate `Rmax`: the NIC line rate (default 10 Gbps).
    pub line_rate: Rate,
    /// Slack rate-control parameters (gain `m`, start rate).
    pub rate: SlackRate,
    /// Largest datagram, header included (default 1472 bytes).
    pub mtu: usize,
    /// RTT assumed before the first sample; also the first epoch (default 100 us).
    pub initial_rtt: Duration,
    /// Floor of the retransmission timer (default 1 ms).
    pub min_rto: Duration,
    /// Later ACKs needed to call a gap lost (default 3).
    pub reorder_threshold: u32,
    /// Give up on a peer silent this long while work is outstanding (default 1 s).
    pub idle_timeout: Duration,
    /// How far pacing may fall behind and then catch up in a burst (default
    /// 10 us). Real hosts whose timers fire late need more (e.g. 1 ms).
    pub pacing_burst: Duration,
    /// React to ECN marks as DCTCP does (see `policy::SlackRate`). Default
    /// false: seed 000's ATP reacts to loss only, and in our simulations
    /// the DCTCP reaction made MSR = 1 jobs several times slower.
    pub ecn_reaction: bool,
    /// React to ECN marks, as `ecn_reaction` does, only on packets sent to
    /// queue 0 — the non-approximate queue, the one seed 000 §7.1 gives
    /// DCTCP marking (K = 65) while the approximate queues drop. Default
    /// false (the paper's loss-only ATP); a non-approximate (MSR = 1) job
    /// that reacts only to loss fills the shared switch buffer
    /// (docs/experiments/netapprox.md, "ATP at MSR 1").
    pub ecn_reaction_queue0: bool,
    /// Seed 000 §7.2: "NetApprox can send more data if doing so would not
    /// affect JCT (when the network has extra room)". Default false: a
    /// satisfied job sends nothing more. When true, a job that met its MSR
    /// still completes then (its report and JCT are unchanged) but keeps
    /// its produced, never-sent messages — and those produced later — as
    /// *extra* data: sent only when no other job of the connection has a
    /// packet ready, to the lowest-priority queue, never retransmitted,
    /// and kept out of the loss rate (they never cut the rate, back the
    /// RTO off or delay another job's FIN). Its FIN waits until they are
    /// resolved, so the receiver delivers them. `Transmit::extra` marks
    /// them for a host that can hold them back until its NIC is idle.
    pub send_more: bool,
    /// Raise [`crate::Event::Epoch`] at the end of every rate-control
    /// epoch with a job active (default true). A driver that reads none
    /// of them (the simulator unless it records epochs: ~355 k a simulated
    /// ms at k = 12) turns them off; nothing else depends on them.
    pub epoch_events: bool,
    /// Production-aware rate control (default true; our addition to seed
    /// 000 §4.2): once the sender has caught up with a streaming job's
    /// production — a message was handed over while the pacer had room and
    /// nothing else waited — and until that production is over, eq. 2-3
    /// target a loss of 0 instead of the TLR and a loss-free epoch adds
    /// one packet per RTT instead of eq. 2's step toward line rate. Such a
    /// job is limited by its production, not by the network: a lost
    /// message is not made up by sending faster, it costs the job a later
    /// message's production time (docs/experiments/netapprox.md,
    /// "Production-aware rate control").
    pub production_aware_rate: bool,
    /// Cap packets in flight at this gain times the delivery rate of the
    /// last epochs times the lowest RTT seen (at least 10 packets;
    /// `connection/window.rs`). Default `None`: no cap, seed 000's
    /// rate-only ATP. SAP sockets use 2 (BBR's cwnd gain): their
    /// approximate datagrams are never resent and an MSR-0 group never
    /// slows the rate, so without it a sender faster than its bottleneck
    /// loses them to the queue (docs/sap.md).
    pub window_gain: Option<f64>,
    /// ACK every this many DATA packets (default 1: every packet, as
    /// datacenter transports do). Larger values coalesce ACKs; a pending
    /// ACK never waits longer than `max_ack_delay`.
    pub ack_every: u32,
    /// Longest a coalesced ACK may wait (default 20 us).
    pub max_ack_delay: Duration,
    /// Whole one-packet messages that are next in scheduler order may share
    /// a DATA packet up to this many body bytes (`Flags::BUNDLE`; capped by
    /// the packet; 0 turns bundling off). Seed 000 gives no packetisation;
    /// without bundling every ~180-byte FBKV message costs its own header,
    /// ACK and pacing slot.
    pub bundle_bytes: usize,
    /// How messages are cut into DATA packets (default
    /// [`PacketSplit::Full`], the runtime's too). Seed 000 gives no
    /// packetisation.
    pub packet_split: PacketSplit,
    /// Switch priority queues `Q` (default 8, seed 000 §7.1).
    pub queues: u8,
    /// How ATP FixTLR / Full map the TLR to a queue (default
    /// [`QueueRule::MsrBounded`]: never below the MSR's own queue, our
    /// deviation, see `policy::MsrBoundedQueue`; `Eq1` is seed 000 §5.2 as
    /// written).
    pub queue_rule: QueueRule,
    /// Retransmission rule.
    pub retransmit: RetransmitPolicy,
    /// Receiver behaviour for damaged approximate regions.
    pub integrity: Integrity,
    /// The carrying transport checksums the header and precise prefix (real
    /// UDP, or UDP-Lite with coverage = header + prefix): DATA is sent with
    /// PREFIX_BY_TRANSPORT and its CRC32C covers the header only, and such
    /// DATA is accepted. Default false (the simulator and the harness flip
    /// bits after any transport checksum, so the core checks everything).
    pub transport_checksums: bool,
    /// Whether received payload bytes are kept and handed to the application
    /// (default true). A simulator that only counts may turn it off.
    pub keep_payloads: bool,
    /// Resource caps.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            variant: Variant::Full,
            line_rate: Rate::gbps(10.0),
            rate: SlackRate::default(),
            mtu: DEFAULT_MTU,
            initial_rtt: Duration::from_micros(100),
            min_rto: Duration::from_millis(1),
            reorder_threshold: 3,
            idle_timeout: Duration::from_secs(1),
            pacing_burst: Duration::from_micros(10),
            ecn_reaction: false,
            ecn_reaction_queue0: false,
            send_more: false,
            epoch_events: true,
            production_aware_rate: true,
            window_gain: None,
            ack_every: 1,
            max_ack_delay: Duration::from_micros(20),
            bundle_bytes: 512,
            packet_split: PacketSplit::Full,
            queues: 8,
            queue_rule: QueueRule::MsrBounded,
            retransmit: RetransmitPolicy::WhenNeeded,
            integrity: Integrity::AcceptDamaged,
            transport_checksums: false,
            keep_payloads: true,
            limits: Limits::default(),
        }
    }
}

/// A configuration value outside its allowed range.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The named field is outside its range (message says which range).
    #[error("config field `{field}` = {value}: {allowed}")]
    OutOfRange {
        /// Field name.
        field: &'static str,
        /// Offending value, printed.
        value: String,
        /// Allowed values.
        allowed: &'static str,
    },
}

fn bad(field: &'static str, value: impl ToString, allowed: &'static str) -> ConfigError {
    ConfigError::OutOfRange {
        field,
        value: value.to_string(),
        allowed,
    }
}

impl Config {
    /// Payload bytes a DATA packet can carry.
    pub fn max_payload(&self) -> usize {
        self.mtu - HEADER_LEN
    }

    /// Whether an ECN mark on a packet sent to `queue` moves the rate.
    pub fn reacts_to_marks(&self, queue: u8) -> bool {
        self.ecn_reaction || (self.ecn_reaction_queue0 && queue == 0)
    }

    /// Checks every field; nothing is clamped silently.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let r = self.line_rate.as_bps();
        if !(r.is_finite() && r > 0.0) {
            return Err(bad("line_rate", r, "a positive, finite rate"));
        }
        let m = self.rate.gain;
        if !(m > 0.0 && m <= 1.0) {
            return Err(bad("rate.gain", m, "0 < m <= 1"));
        }
        let s = self.rate.start_fraction;
        if !(s > 0.0 && s <= 1.0) {
            return Err(bad("rate.start_fraction", s, "0 < fraction <= 1"));
        }
        if self.mtu < HEADER_LEN + 16 || self.mtu > 65_507 {
            return Err(bad("mtu", self.mtu, "64 ..= 65507 bytes"));
        }
        if self.initial_rtt.as_nanos() == 0 {
            return Err(bad("initial_rtt", self.initial_rtt, "a positive duration"));
        }
        if self.min_rto.as_nanos() == 0 {
            return Err(bad("min_rto", self.min_rto, "a positive duration"));
        }
        if self.reorder_threshold == 0 {
            return Err(bad("reorder_threshold", 0, "at least 1"));
        }
        if self.idle_timeout < self.min_rto {
            return Err(bad("idle_timeout", self.idle_timeout, "at least min_rto"));
        }
        if let Some(g) = self.window_gain {
            if !(g.is_finite() && g >= 1.0) {
                return Err(bad("window_gain", g, "a finite gain of at least 1"));
            }
        }
        if self.ack_every == 0 || self.ack_every > 64 {
            return Err(bad("ack_every", self.ack_every, "1 ..= 64"));
        }
        if self.queues == 0 || self.queues > 8 {
            return Err(bad("queues", self.queues, "1 ..= 8"));
        }
        let l = &self.limits;
        if l.max_connections == 0
            || l.max_jobs_per_connection == 0
            || l.max_messages_per_job == 0
            || l.max_endpoint_bytes == 0
        {
            return Err(bad("limits", "0", "every cap at least 1"));
        }
        if l.max_unproven == 0 {
            return Err(bad("limits.max_unproven", 0, "at least 1"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_gain_below_one_or_not_finite_is_refused_by_name() {
        for g in [0.5, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let c = Config {
                window_gain: Some(g),
                ..Config::default()
            };
            match c.validate() {
                Err(ConfigError::OutOfRange { field, .. }) => assert_eq!(field, "window_gain"),
                other => panic!("gain {g}: {other:?}"),
            }
        }
        for g in [None, Some(1.0), Some(2.0)] {
            let c = Config {
                window_gain: g,
                ..Config::default()
            };
            assert!(c.validate().is_ok(), "{g:?}");
        }
    }
}
