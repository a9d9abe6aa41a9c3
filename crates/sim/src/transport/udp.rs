//! UDP at line rate: every datagram of the message goes to the NIC at once;
//! the NIC serialises them at line rate. No feedback, no retransmission.

use super::{Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::Instant;

/// Sends each message once, in datagrams that never span two messages.
#[derive(Clone, Debug)]
pub struct UdpSender {
    sizes: Vec<u64>,
    mss: u32,
    sent: bool,
    stats: SenderStats,
}

impl UdpSender {
    /// A sender of messages `sizes` in datagrams of at most `mss` bytes.
    pub fn new(sizes: &[u64], mss: u32) -> Self {
        UdpSender {
            sizes: sizes.to_vec(),
            mss,
            sent: false,
            stats: SenderStats::default(),
        }
    }
}

impl Sender for UdpSender {
    fn start(&mut self, _now: Instant, out: &mut Outbox) {
        let mut seq = 0;
        let mut end = 0;
        for &size in &self.sizes {
            end += size;
            while seq < end {
                let len = (end - seq).min(self.mss as u64) as u32;
                out.push(Segment {
                    hdr: Hdr {
                        kind: Kind::Data,
                        seq,
                        len,
                        ack: 0,
                        ece: false,
                    },
                    rank: 0,
                    retx: false,
                });
                self.stats.sent_pkts += 1;
                seq += len as u64;
            }
        }
        self.sent = true;
    }
    fn on_ack(&mut self, _now: Instant, _hdr: &Hdr, _out: &mut Outbox) {}
    fn on_timer(&mut self, _now: Instant, _out: &mut Outbox) {}
    fn timer(&self) -> Option<Instant> {
        None
    }
    fn finished(&self) -> bool {
        self.sent
    }
    fn stats(&self) -> SenderStats {
        self.stats
    }
    fn ect(&self) -> bool {
        false
    }
}
