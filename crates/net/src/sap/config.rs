//! SAP socket settings and the send mode.

use crate::config::RuntimeConfig;
use approxnet_proto::config::Integrity;

/// How the next datagram is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Acknowledged, retransmitted, delivered in order, checksummed whole.
    Precise,
    /// Sent once; only the header and the datagram's precise prefix are
    /// checksummed by the kernel.
    Approximate,
}

/// Settings of a SAP socket.
#[derive(Clone, Debug)]
pub struct SapConfig {
    /// The runtime underneath; UDP-Lite, payloads kept.
    pub runtime: RuntimeConfig,
    /// Whether approximate datagrams whose approximate bytes arrived
    /// damaged are delivered (flagged) or dropped (the receiver's choice,
    /// seed 002 §3.1).
    pub accept_damaged: bool,
    /// Datagrams that may wait in the socket to leave; `send` blocks
    /// (driving I/O) while more wait. Pacing and the in-flight cap decide
    /// when they leave, so a sender faster than its path waits here
    /// instead of queueing without bound (default 256).
    pub max_waiting: usize,
}

impl Default for SapConfig {
    fn default() -> SapConfig {
        let mut runtime = RuntimeConfig::udplite();
        runtime.proto.keep_payloads = true;
        // The core's CRC32C covers the header and the precise prefix too,
        // not only the kernel's 16-bit Internet checksum: on a link with a
        // high bit error rate two flips of the same bit in different 16-bit
        // words cancel in that sum, and at BER 1e-4 about one 1 KB precise
        // datagram in 200 arrived damaged (docs/sap.md, "Precise means
        // checked by CRC32C").
        runtime.proto.transport_checksums = false;
        // Approximate datagrams are never resent and their group (MSR 0)
        // never slows the rate: the in-flight cap keeps a sender faster
        // than its bottleneck from overflowing it (docs/sap.md,
        // "Congestion control for approximate datagrams").
        runtime.proto.window_gain = Some(2.0);
        // A window-capped sender slows down when its ACKs come late:
        // SAP sockets read (and acknowledge) at once, no receive coalescing.
        runtime.rx_coalesce = std::time::Duration::ZERO;
        SapConfig {
            runtime,
            accept_damaged: true,
            max_waiting: 256,
        }
    }
}

impl SapConfig {
    /// The runtime configuration this socket binds with.
    pub(crate) fn runtime(&self) -> RuntimeConfig {
        let mut r = self.runtime.clone();
        r.proto.integrity = if self.accept_damaged {
            Integrity::AcceptDamaged
        } else {
            Integrity::Strict
        };
        r.proto.keep_payloads = true;
        r
    }

    /// Messages each open-ended stream announces per group: half the
    /// receiver's per-job cap (both ends use the same limits). A stream
    /// that fills a group rolls over to a new one.
    pub(crate) fn stream_capacity(&self) -> u32 {
        (self.runtime.proto.limits.max_messages_per_job / 2).max(1)
    }
}
