//! Runtime configuration: the core's [`approxnet_proto::Config`] plus what
//! only a real socket needs (protocol, buffers, marking, batching, caps).

use crate::sys::{SocketKind, SocketOptions};
use approxnet_proto::Config;
use std::time::Duration;
use thiserror::Error;

/// The longest [`RuntimeConfig::busy_poll`] accepted: a spin holds a whole
/// core, so anything longer belongs in `poll(2)`.
pub const MAX_BUSY_POLL: Duration = Duration::from_millis(10);

/// The default [`RuntimeConfig::busy_poll`]: off. On the 2-core veth bench
/// at load 6-8, 50 us cut the receiver's wake-ups per GB 4x but raised
/// CPU per GB by 11 % and lowered goodput (the sender's bursts are ~1 ms
/// apart, so most spins end empty); docs/performance.md, "Busy polling".
pub const DEFAULT_BUSY_POLL: Duration = Duration::ZERO;

/// The longest [`RuntimeConfig::rx_coalesce`] accepted.
pub const MAX_RX_COALESCE: Duration = Duration::from_millis(1);

/// The default [`RuntimeConfig::rx_coalesce`]: off. On the 2-core veth
/// bench 100 us cut ATP's CPU per GB by 10-15 % (the sending client no
/// longer pays to wake a sleeping receiver), and at the 1 Gbit/s HTB bench
/// goodput was the same either way on a quiet host; but any exchange of
/// more than a few datagrams followed by a wait for the peer naps the full
/// interval: serial 64 KiB jobs took 0.096 ms instead of 0.033 ms (p50),
/// a third of the jobs per second (docs/performance.md, "Receive
/// coalescing on a quiet host"). A bulk receiver may turn it on.
pub const DEFAULT_RX_COALESCE: Duration = Duration::ZERO;

/// Datagrams the reads since the last wait must have found for the next
/// wait to coalesce. A wake-up that reads a whole GSO / GRO batch (tens of
/// datagrams) starts napping; napping goes on while each nap finds at
/// least this many, and a quiet spell returns to waiting on the socket.
/// (Counting receive batches instead — nap only when more than one was
/// waiting — napped half as often on the veth bench and saved nothing:
/// docs/performance.md, "Receive coalescing".)
pub const RX_COALESCE_MIN_DATAGRAMS: u64 = 8;

/// After a nap that found fewer than [`RX_COALESCE_MIN_DATAGRAMS`], this
/// many waits that would nap wait on the socket instead: a flow slower
/// than the nap (one GRO batch every few hundred us at 1 Gbit/s) would
/// otherwise pay a second wake-up per batch.
pub const RX_COALESCE_BACKOFF: u32 = 8;

/// Why a [`RuntimeConfig`] was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeConfigError {
    /// A runtime field lies outside its range.
    #[error("runtime configuration `{field}` = {value} is out of range: {expected}")]
    OutOfRange {
        /// The field's name.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
}

/// How `Transmit::queue` / `Transmit::dscp` become IP marking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkingPolicy {
    /// Write the endpoint's DSCP into each datagram's IP TOS byte.
    pub dscp: bool,
    /// Set `SO_PRIORITY = 7 - queue` per datagram (queue 0, the most urgent,
    /// gets 7: Linux treats higher priority values as more urgent).
    pub priority: bool,
    /// Send ECT(0) and copy a received CE mark into the header's CE flag.
    pub ecn: bool,
}

impl Default for MarkingPolicy {
    fn default() -> Self {
        MarkingPolicy {
            dscp: true,
            priority: true,
            ecn: false,
        }
    }
}

/// The retransmission-timer floor the runtime uses instead of the core's
/// 1 ms default. A user-space endpoint on a shared host sees scheduling
/// delays of several milliseconds; with a 1-5 ms floor the sender declares
/// packets lost that the receiver did get (measured on 127.0.0.1: 24 % of
/// packets declared lost, none really lost, at 5 ms; 0.3 % at 20 ms; see
/// docs/runtime.md).
pub const REAL_MIN_RTO: approxnet_proto::Duration = approxnet_proto::Duration::from_millis(20);

/// How far pacing may fall behind and catch up in a burst on a real host
/// (the core's `pacing_burst`; its simulator default is 10 us). A user-space
/// sender's timer wake-ups come tens of microseconds to milliseconds late;
/// without this credit the time is lost for good.
pub const REAL_PACING_BURST: approxnet_proto::Duration = approxnet_proto::Duration::from_millis(1);

/// ACK coalescing on a real host (the core's `ack_every`; its default is 1).
/// The driver flushes held ACKs after every receive batch
/// (`Endpoint::flush_acks`), so this only caps how many packets one ACK
/// covers: a receiver acknowledges about once per batch, as kernel TCP does
/// once per GRO packet, instead of once per datagram (on the veth bench the
/// per-datagram ACKs cost ATP ~25 % of its goodput; docs/performance.md).
pub const REAL_ACK_EVERY: u32 = 16;

/// Everything needed to open a runtime endpoint.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// The protocol core's configuration (rates, timers, caps); the default
    /// is the core's, except `min_rto` = [`REAL_MIN_RTO`], `pacing_burst` =
    /// [`REAL_PACING_BURST`] and `transport_checksums` = true (the socket's
    /// checksum covers header and precise prefix; both ends must agree).
    /// `packet_split` stays the core's `Full`: `PacketSplit::Tiled` cuts
    /// ATP's CPU per GB by 11-19 % on an uncapped veth with 64 KiB
    /// messages but lost goodput at a 1 Gbit/s HTB bottleneck
    /// (docs/performance.md, "Issue 19: equal-sized packets").
    pub proto: Config,
    /// Seed of the core's random choices (cookie key, connection ids, first
    /// sequence numbers). `None` (the default): drawn from the operating
    /// system at `bind`, so no two endpoints share their secrets; `Some`
    /// for tests and reproducible runs only.
    pub seed: Option<u64>,
    /// Socket protocol, buffers, GSO / GRO. With [`SocketKind::UdpLite`] each
    /// datagram's checksum covers the 48-byte header plus its precise prefix
    /// and the kernel drops datagrams that cover less than the header; both
    /// ends must use the same kind.
    pub socket: SocketOptions,
    /// IP marking.
    pub marking: MarkingPolicy,
    /// Datagrams the send queue holds (its bytes: this times the MTU).
    pub send_queue: usize,
    /// Most datagrams coalesced into one UDP GSO send (1..=64, default 64).
    /// A qdisc drops a GSO super-datagram whole, so at a shallow bottleneck
    /// one drop costs this many packets (see docs/performance.md).
    pub gso_segments: usize,
    /// Receive slots per `recvmmsg` (each 64 KiB with GRO, else one MTU).
    pub recv_slots: usize,
    /// Datagrams handled per wake-up before timers and sends get a turn, so
    /// a flood cannot starve a running job (default 16 384: after a
    /// scheduling stall the ACK backlog is read before the loss timer fires;
    /// with 1024, 10 % of packets were declared lost on a busy host, 2 %
    /// with 16 384).
    pub recv_budget: usize,
    /// Application events held before the runtime stops reading the socket
    /// (back-pressure instead of unbounded memory).
    pub max_events: usize,
    /// Payload bytes (delivered messages, tensors) held by waiting events
    /// before the runtime stops reading the socket.
    pub max_event_bytes: usize,
    /// Epoch (rate-control) samples kept for [`crate::Endpoint::take_epochs`];
    /// older ones are dropped and counted.
    pub epoch_history: usize,
    /// How far the core's clock may run ahead of the OS clock to release
    /// paced packets early, as one batch (default 1 ms). Bounds the timing
    /// error of every timer: timers fire up to this much early and RTT
    /// samples grow by up to this much. 0 sends each paced packet at its
    /// own wake-up (measured: a third of the goodput at 1 Gbit/s).
    pub pacing_lookahead: Duration,
    /// How long after a timer falls due the driver may sleep on, so that
    /// paced packets leave in batches (the core catches up on them within
    /// `proto.pacing_burst`). Every timer fires up to this much late.
    pub pacing_batch: Duration,
    /// Blocking face only: before sleeping in `poll(2)`, keep polling the
    /// socket (non-blocking reads) for up to this long, or through the
    /// whole wait when the next timer is nearer. Data that arrives within
    /// it is handled without a sleep and wake-up (a context switch each),
    /// and a pacing timer within it fires on time instead of after the
    /// scheduler's wake-up delay. Costs up to this much CPU per idle wait.
    /// Default [`DEFAULT_BUSY_POLL`]; 0 turns it off; at most
    /// [`MAX_BUSY_POLL`]. The async face ignores it (tokio owns the wait).
    pub busy_poll: Duration,
    /// Blocking face only: receive coalescing. After reads that found at
    /// least [`RX_COALESCE_MIN_DATAGRAMS`] datagrams, the next wait
    /// sleeps this long (or until the next timer, if sooner) without
    /// watching the socket, so what arrives meanwhile is read in one batch
    /// (and acknowledged by one ACK flush) instead of waking the process
    /// at its first datagram. Delays reading, and so ACKs, by up to this
    /// much while data flows. 0 turns it off; at most [`MAX_RX_COALESCE`].
    pub rx_coalesce: Duration,
    /// For an endpoint that talks to one peer only (a client): its first
    /// `connect` also connects the OS socket to that peer, so the kernel
    /// keeps the route instead of looking it up for every send, and sends
    /// carry no address. The kernel then drops datagrams from any other
    /// address (including a multi-homed peer answering from another one),
    /// so a `connect` to a second peer is refused (`ConnectError::Io`,
    /// `InvalidInput`). Not applied when the endpoint already holds other
    /// connections. Default false.
    ///
    /// On an endpoint that accepts (a server with one client at a time)
    /// bound to an explicit port: the socket is connected to the first peer
    /// accepted while it holds no other connection, and the association is
    /// dissolved when its last connection is gone; meanwhile other peers'
    /// handshakes are dropped by the kernel (they time out).
    pub connect_socket: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            proto: Config {
                min_rto: REAL_MIN_RTO,
                pacing_burst: REAL_PACING_BURST,
                ack_every: REAL_ACK_EVERY,
                // UDP checksums everything; UDP-Lite covers header + precise
                // prefix: the core need not CRC the prefix again.
                transport_checksums: true,
                ..Config::default()
            },
            seed: None,
            socket: SocketOptions {
                min_recv_coverage: Some(approxnet_proto::wire::HEADER_LEN),
                ..SocketOptions::default()
            },
            marking: MarkingPolicy::default(),
            send_queue: 512,
            gso_segments: crate::sys::MAX_GSO_SEGMENTS,
            recv_slots: 32,
            recv_budget: 16_384,
            max_events: 1 << 16,
            max_event_bytes: 256 << 20,
            epoch_history: 1024,
            pacing_lookahead: Duration::from_millis(1),
            pacing_batch: Duration::ZERO,
            busy_poll: DEFAULT_BUSY_POLL,
            rx_coalesce: DEFAULT_RX_COALESCE,
            connect_socket: false,
        }
    }
}

impl RuntimeConfig {
    /// The core's seed: the configured one, else 64 bits from the OS.
    pub fn core_seed(&self) -> std::io::Result<u64> {
        match self.seed {
            Some(s) => Ok(s),
            None => crate::sys::random::os_u64(),
        }
    }

    /// Checks the runtime's own fields (the core checks `proto` itself).
    pub fn validate(&self) -> Result<(), RuntimeConfigError> {
        if self.busy_poll > MAX_BUSY_POLL {
            return Err(RuntimeConfigError::OutOfRange {
                field: "busy_poll",
                value: format!("{:?}", self.busy_poll),
                expected: "at most 10 ms (0 turns busy polling off)",
            });
        }
        if self.rx_coalesce > MAX_RX_COALESCE {
            return Err(RuntimeConfigError::OutOfRange {
                field: "rx_coalesce",
                value: format!("{:?}", self.rx_coalesce),
                expected: "at most 1 ms (0 turns receive coalescing off)",
            });
        }
        use crate::sys::socket::{MAX_SOCKET_BUFFER, MIN_SOCKET_BUFFER};
        for (field, bytes) in [
            ("socket.recv_buffer", self.socket.recv_buffer),
            ("socket.send_buffer", self.socket.send_buffer),
        ] {
            if !(MIN_SOCKET_BUFFER..=MAX_SOCKET_BUFFER).contains(&bytes) {
                return Err(RuntimeConfigError::OutOfRange {
                    field,
                    value: format!("{bytes} bytes"),
                    expected: "64 KiB ..= 1 GiB",
                });
            }
        }
        Ok(())
    }

    /// The socket options an endpoint opens its socket with: `socket`,
    /// except that the IP TOS byte of each datagram is asked for only when
    /// ECN marking is on (its only use; the control message costs every
    /// received batch).
    pub(crate) fn socket_options(&self) -> SocketOptions {
        let mut o = self.socket.clone();
        o.recv_tos &= self.marking.ecn;
        o
    }

    /// The default configuration over UDP-Lite (seed 002's partial coverage).
    pub fn udplite() -> RuntimeConfig {
        let mut c = RuntimeConfig::default();
        c.socket.kind = SocketKind::UdpLite;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_poll_over_the_cap_is_refused_by_name() {
        let mut c = RuntimeConfig::default();
        assert_eq!(c.validate(), Ok(()));
        c.busy_poll = MAX_BUSY_POLL;
        assert_eq!(c.validate(), Ok(()));
        c.busy_poll = MAX_BUSY_POLL + Duration::from_nanos(1);
        match c.validate() {
            Err(RuntimeConfigError::OutOfRange { field, .. }) => assert_eq!(field, "busy_poll"),
            other => panic!("expected busy_poll refused, got {other:?}"),
        }
        c.busy_poll = Duration::ZERO;
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn rx_coalesce_over_the_cap_is_refused_by_name() {
        let mut c = RuntimeConfig {
            rx_coalesce: MAX_RX_COALESCE,
            ..RuntimeConfig::default()
        };
        assert_eq!(c.validate(), Ok(()));
        c.rx_coalesce = MAX_RX_COALESCE + Duration::from_nanos(1);
        match c.validate() {
            Err(RuntimeConfigError::OutOfRange { field, .. }) => assert_eq!(field, "rx_coalesce"),
            other => panic!("expected rx_coalesce refused, got {other:?}"),
        }
    }

    #[test]
    fn the_tos_byte_is_asked_for_only_with_ecn() {
        let mut c = RuntimeConfig::default();
        assert!(c.socket.recv_tos);
        assert!(!c.socket_options().recv_tos, "ECN off by default");
        c.marking.ecn = true;
        assert!(c.socket_options().recv_tos);
        c.socket.recv_tos = false;
        assert!(!c.socket_options().recv_tos, "never turned on");
    }

    #[test]
    fn socket_buffers_outside_64k_to_1g_are_refused_by_name() {
        for (recv, send, bad) in [
            (0, 4 << 20, "socket.recv_buffer"),
            ((64 << 10) - 1, 4 << 20, "socket.recv_buffer"),
            (4 << 20, (1 << 30) + 1, "socket.send_buffer"),
            (usize::MAX, 4 << 20, "socket.recv_buffer"),
        ] {
            let mut c = RuntimeConfig::default();
            c.socket.recv_buffer = recv;
            c.socket.send_buffer = send;
            match c.validate() {
                Err(RuntimeConfigError::OutOfRange { field, .. }) => assert_eq!(field, bad),
                other => panic!("{recv}/{send}: expected {bad} refused, got {other:?}"),
            }
        }
        let mut c = RuntimeConfig::default();
        c.socket.recv_buffer = 64 << 10;
        c.socket.send_buffer = 1 << 30;
        assert_eq!(c.validate(), Ok(()));
    }
}
