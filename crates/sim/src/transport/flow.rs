//! A native flow: one sender, one receiver, the messages of one job.

use super::ack_path::AckPath;
use super::aeolus::AeolusSender;
use super::cc::{Dctcp, NewReno, PFabricCc};
use super::receiver::{DatagramReceiver, StreamReceiver};
use super::reliable::{ReliableSender, RtoConfig, TcpOptions};
use super::sack::blocks_allowed;
use super::udp::UdpSender;
use super::{Sender, SenderStats};
use crate::packet::Hdr;
use crate::scheme::Proto;
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::units::Rate;

/// Parameters of the native transports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportParams {
    /// Payload bytes per packet.
    pub mss: u32,
    /// Header bytes on the wire per packet (ACKs are header only).
    pub header_bytes: u32,
    /// Initial window of DCTCP and TCP in packets (default 2, ns-2's
    /// `Agent/TCP windowInit_`: seed 000 §7.1 ran ns-2; seed 001 §3.1's
    /// testbed used Linux's 10, which scenario files may set).
    pub init_cwnd_pkts: u32,
    /// Retransmission timer of DCTCP and TCP.
    pub rto: RtoConfig,
    /// pFabric's fixed retransmission timeout (pFabric: about 3 RTTs).
    pub pfabric_rto: Duration,
    /// pFabric's line-rate window, one bandwidth-delay product.
    pub pfabric_bdp_bytes: u64,
    /// Connection setup: the first job of a scheme on a (src, dst) host
    /// pair waits for a SYN / SYN-ACK round trip (header-only packets
    /// through the network) before its first data; later jobs on the pair
    /// reuse the connection. ATP pays its HELLO round trip the same way.
    /// UDP is connectionless and never waits.
    pub handshake: bool,
    /// With `handshake`: later jobs on a host pair reuse its connection
    /// (true, the default). False: every flow opens its own connection with
    /// its own SYN / SYN-ACK round trip, as ns-3's applications do when
    /// each opens a new socket (the incast rounds of docs/validation.md:
    /// the 32 SYN-ACKs' serialisation spreads the first windows).
    pub reuse_connections: bool,
    /// With `handshake`: the sender answers the SYN-ACK with a header-only
    /// ACK ahead of its first data (the third packet of TCP's handshake, as
    /// Linux and ns-3 send it). Default false (the model before; the
    /// incast bench of docs/validation.md sets it).
    pub handshake_ack: bool,
    /// Host line rate: UDP senders pace at it.
    pub line_rate: Rate,
    /// TCP options of DCTCP and TCP (timestamps, limited transmit, SACK,
    /// PRR).
    pub tcp: TcpOptions,
    /// TCP small queues: a DCTCP / TCP / pFabric flow hands its host's NIC
    /// a data packet only while fewer than `max(2 packets, tsq_bytes)` of
    /// its own wait there, and resumes as the NIC takes them (Linux
    /// `tcp_small_queue_check`, Dumazet 2012; default 128 KiB, the original
    /// `tcp_limit_output_bytes`: two 64 KiB TSO packets). 0 = no limit (an
    /// unbounded NIC queue, the model before issue 12).
    pub tsq_bytes: u64,
    /// Where receivers' ACKs of data travel (see [`AckPath`]; default
    /// through the network).
    pub ack_path: AckPath,
}

impl TransportParams {
    /// The per-flow NIC limit in packets (see [`TransportParams::tsq_bytes`]);
    /// `u32::MAX` when unlimited.
    pub fn tsq_pkts(&self) -> u32 {
        if self.tsq_bytes == 0 {
            return u32::MAX;
        }
        let wire = (self.mss + self.header_bytes) as u64;
        (self.tsq_bytes / wire).clamp(2, u32::MAX as u64 - 1) as u32
    }
}

impl Default for TransportParams {
    fn default() -> Self {
        TransportParams {
            mss: 1460,
            header_bytes: 40,
            init_cwnd_pkts: 2,
            rto: RtoConfig {
                min: Duration::from_millis(1),
                initial: Duration::from_millis(1),
                max: Duration::from_secs(1),
                fixed: false,
            },
            pfabric_rto: Duration::from_micros(45),
            pfabric_bdp_bytes: 36_000,
            handshake: true,
            reuse_connections: true,
            handshake_ack: false,
            line_rate: Rate::gbps(10.0),
            tcp: TcpOptions::default(),
            tsq_bytes: 128 * 1024,
            ack_path: AckPath::Network,
        }
    }
}

/// The receiving half of a flow.
#[derive(Clone, Debug)]
pub enum FlowRx {
    /// Reliable byte stream.
    Stream(StreamReceiver),
    /// UDP datagrams.
    Datagram(DatagramReceiver),
}

/// A native flow.
pub struct Flow {
    /// Its index.
    pub id: u32,
    /// Its job.
    pub job: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// ECMP hash.
    pub hash: u32,
    /// Switch queue.
    pub queue: u8,
    /// Transport.
    pub proto: Proto,
    /// Sender state.
    pub sender: Box<dyn Sender>,
    /// ECN-capable transport: the sender's [`Sender::ect`], constant over
    /// its life (its retired form keeps it), read once here rather than by
    /// a virtual call on every flush.
    pub ect: bool,
    /// Receiver state.
    pub rx: FlowRx,
    /// Cumulative end offset of each message.
    pub msg_ends: Vec<u64>,
    /// Index in the job of each of the flow's messages (SampleSend sends a
    /// subset); empty when the flow carries every message of its job.
    pub msg_index: Vec<u32>,
    /// Bytes of the flow the application has produced so far.
    pub produced: u64,
    /// The connection is set up: data may flow (see
    /// [`TransportParams::handshake`]).
    pub open: bool,
    /// When to resend the SYN if no SYN-ACK came (the flow that opens its
    /// host pair's connection only).
    pub syn_deadline: Option<Instant>,
    /// EarlySend: the receiver sends a stop signal once it has enough.
    pub early_stop: bool,
    /// When the receiver had the job's `needed` messages.
    pub enough_at: Option<Instant>,
    /// When EarlySend's stop signal reached the sender.
    pub stopped_at: Option<Instant>,
    /// Data packets the sender emitted after the receiver had enough
    /// (before the stop signal reached it).
    pub sent_after_enough: u64,
    /// Aeolus receiver: the flow wants credits.
    pub wants_credits: bool,
    /// Aeolus receiver: credit requests seen (data, probe, CREDIT_REQUEST).
    pub credit_requests: u64,
    /// Messages delivered to the receiving application.
    pub delivered_msgs: u32,
    /// When it started.
    pub start: Instant,
    /// When the receiver had every byte.
    pub done: Option<Instant>,
    /// Stopped early: EarlySend's stop signal reached the sender.
    pub cancelled: bool,
    /// Packets of this flow dropped in the network (data and ACKs).
    pub drops: u64,
    /// Earliest pending timer event, if one is scheduled.
    pub timer_armed: Option<Instant>,
    /// Data packets of this flow waiting in its host's NIC (not yet
    /// serialising): what TCP small queues bounds.
    pub nic_pkts: u32,
    /// The sender stopped for lack of NIC room; the NIC wakes it.
    pub tsq_throttled: bool,
}

impl Flow {
    /// A flow of `msgs` over `proto`, of which the first `produced` bytes
    /// are produced already (the rest come with [`Sender::produce`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        job: u32,
        src: u32,
        dst: u32,
        msgs: &[u64],
        proto: Proto,
        queue: u8,
        tp: &TransportParams,
        now: Instant,
        produced: u64,
    ) -> Flow {
        let mut ends = Vec::with_capacity(msgs.len());
        let mut acc = 0;
        for &m in msgs {
            acc += m;
            ends.push(acc);
        }
        let bytes = acc;
        let mss = tp.mss;
        let sender: Box<dyn Sender> = match proto {
            Proto::Dctcp => Box::new(
                ReliableSender::new(Dctcp::new(tp.init_cwnd_pkts), bytes, mss, tp.rto, false)
                    .with_options(tp.tcp)
                    .with_produced(produced),
            ),
            Proto::Tcp => Box::new(
                ReliableSender::new(
                    NewReno {
                        init_pkts: tp.init_cwnd_pkts,
                    },
                    bytes,
                    mss,
                    tp.rto,
                    false,
                )
                .with_options(tp.tcp)
                .with_produced(produced),
            ),
            Proto::PFabric => Box::new(
                ReliableSender::new(
                    PFabricCc::new(tp.pfabric_bdp_bytes as f64),
                    bytes,
                    mss,
                    RtoConfig {
                        min: tp.pfabric_rto,
                        initial: tp.pfabric_rto,
                        max: tp.pfabric_rto,
                        fixed: true,
                    },
                    true,
                )
                .with_produced(produced),
            ),
            Proto::Udp => Box::new(
                UdpSender::new(msgs, mss, tp.header_bytes, tp.line_rate).with_produced(produced),
            ),
            // Aeolus: the pre-credit phase sends at most one BDP (the
            // topology's unloaded BDP, as pFabric's window); its loss
            // timeout is pFabric's fixed ~3 base RTTs
            Proto::Aeolus => Box::new(
                AeolusSender::new(bytes, mss, tp.pfabric_bdp_bytes, tp.pfabric_rto)
                    .with_produced(produced),
            ),
        };
        let rx = match proto {
            Proto::Udp => FlowRx::Datagram(DatagramReceiver::new(ends.clone())),
            Proto::Dctcp | Proto::Tcp if tp.tcp.sack => FlowRx::Stream(
                StreamReceiver::new(bytes).with_sack(blocks_allowed(tp.tcp.timestamps)),
            ),
            _ => FlowRx::Stream(StreamReceiver::new(bytes)),
        };
        Flow {
            id,
            job,
            src,
            dst,
            bytes,
            hash: flow_hash(id, src, dst),
            queue,
            proto,
            ect: sender.ect(),
            sender,
            rx,
            msg_ends: ends,
            msg_index: Vec::new(),
            produced: produced.min(bytes),
            open: true,
            syn_deadline: None,
            early_stop: false,
            enough_at: None,
            stopped_at: None,
            sent_after_enough: 0,
            wants_credits: false,
            credit_requests: 0,
            delivered_msgs: 0,
            start: now,
            done: None,
            cancelled: false,
            drops: 0,
            timer_armed: None,
            nic_pkts: 0,
            tsq_throttled: false,
        }
    }

    /// The receiver takes a data packet; returns the ACK to send, if any.
    pub fn on_data(&mut self, now: Instant, hdr: &Hdr, ce: bool) -> Option<Hdr> {
        let ack = match &mut self.rx {
            FlowRx::Stream(r) => {
                let mut a = r.on_data(hdr.seq, hdr.len, ce, hdr.ts);
                // which packet this ACK answers (Aeolus's per-packet loss
                // detection; the window-based senders read only `ack`)
                a.seq = hdr.seq;
                a.len = hdr.len;
                let got = r.delivered();
                while (self.delivered_msgs as usize) < self.msg_ends.len()
                    && self.msg_ends[self.delivered_msgs as usize] <= got
                {
                    self.delivered_msgs += 1;
                }
                Some(a)
            }
            FlowRx::Datagram(r) => {
                r.on_data(hdr.seq, hdr.len);
                self.delivered_msgs = r.messages;
                None
            }
        };
        if self.done.is_none() && self.delivered_msgs as usize == self.msg_ends.len() {
            self.done = Some(now);
        }
        ack
    }

    /// Flow bytes produced once the job's first `job_msgs` messages are
    /// (only the flow's own messages among them count).
    pub fn bytes_of_job_prefix(&self, job_msgs: u32) -> u64 {
        let k = if self.msg_index.is_empty() {
            (job_msgs as usize).min(self.msg_ends.len())
        } else {
            self.msg_index.partition_point(|&i| i < job_msgs)
        };
        if k == 0 {
            0
        } else {
            self.msg_ends[k - 1]
        }
    }

    /// The receiver has every byte of the flow.
    pub fn rx_complete(&self) -> bool {
        match &self.rx {
            FlowRx::Stream(r) => r.complete(),
            FlowRx::Datagram(r) => r.complete(),
        }
    }

    /// Bytes the receiver has.
    pub fn received_bytes(&self) -> u64 {
        match &self.rx {
            FlowRx::Stream(r) => r.delivered(),
            FlowRx::Datagram(r) => r.bytes,
        }
    }

    /// Sender counters.
    pub fn stats(&self) -> SenderStats {
        self.sender.stats()
    }
}

/// A flow's 5-tuple hash stand-in: deterministic, well mixed.
pub fn flow_hash(id: u32, src: u32, dst: u32) -> u32 {
    let mut z = (id as u64) << 40 ^ (src as u64) << 20 ^ dst as u64;
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    (z ^ (z >> 33)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Outbox;

    /// `Flow::ect`, read by the flush path instead of the sender, is the
    /// sender's answer for every transport, and stays it after the sender
    /// retires (DCTCP is the one ECN-capable transport).
    #[test]
    fn the_cached_ecn_flag_is_the_senders() {
        let tp = TransportParams::default();
        for proto in [
            Proto::Dctcp,
            Proto::Tcp,
            Proto::PFabric,
            Proto::Udp,
            Proto::Aeolus,
        ] {
            // two segments: the initial window sends them all
            let mut f = Flow::new(7, 0, 1, 2, &[2000], proto, 0, &tp, Instant::ZERO, 2000);
            assert_eq!(f.ect, f.sender.ect(), "{proto:?}");
            assert_eq!(f.ect, proto == Proto::Dctcp, "{proto:?}");
            // every byte acknowledged: a reliable sender retires
            let mut out = Vec::new();
            f.sender
                .start(Instant::ZERO, &mut Outbox::to_list(&mut out));
            let ack = Hdr {
                kind: crate::packet::Kind::Ack,
                ack: 2000,
                ..Hdr::default()
            };
            f.sender.on_ack(
                Instant::from_nanos(1000),
                &ack,
                &mut Outbox::to_list(&mut out),
            );
            let reliable = matches!(proto, Proto::Dctcp | Proto::Tcp | Proto::PFabric);
            match f.sender.retired() {
                Some(d) => assert_eq!(f.ect, d.ect, "{proto:?} retired"),
                None => assert!(!reliable, "{proto:?} did not retire"),
            }
        }
    }
}
