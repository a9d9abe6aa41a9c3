//! UDP at line rate: each message goes to the NIC as soon as the application
//! produces it; the NIC serialises at line rate. No feedback, no
//! retransmission.

use super::{Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::Instant;

/// Sends each message once, in datagrams that never span two messages.
#[derive(Clone, Debug)]
pub struct UdpSender {
    sizes: Vec<u64>,
    mss: u32,
    /// Messages sent so far.
    next_msg: usize,
    /// First byte of message `next_msg`.
    seq: u64,
    /// Bytes the application produced so far.
    produced: u64,
    stats: SenderStats,
}

impl UdpSender {
    /// A sender of messages `sizes` in datagrams of at most `mss` bytes,
    /// all produced already (see [`UdpSender::with_produced`]).
    pub fn new(sizes: &[u64], mss: u32) -> Self {
        UdpSender {
            sizes: sizes.to_vec(),
            mss,
            next_msg: 0,
            seq: 0,
            produced: sizes.iter().sum(),
            stats: SenderStats::default(),
        }
    }

    /// The same sender with only `bytes` produced so far.
    pub fn with_produced(mut self, bytes: u64) -> Self {
        self.produced = bytes;
        self
    }

    /// Sends every whole message produced and not yet sent.
    fn send_produced(&mut self, out: &mut Outbox) {
        while let Some(&size) = self.sizes.get(self.next_msg) {
            let end = self.seq + size;
            if end > self.produced {
                break;
            }
            while self.seq < end {
                let len = (end - self.seq).min(self.mss as u64) as u32;
                out.push(Segment {
                    hdr: Hdr {
                        kind: Kind::Data,
                        seq: self.seq,
                        len,
                        ack: 0,
                        ece: false,
                        ts: 0,
                    },
                    rank: 0,
                    retx: false,
                    unscheduled: false,
                });
                self.stats.sent_pkts += 1;
                self.seq += len as u64;
            }
            self.next_msg += 1;
        }
    }
}

impl Sender for UdpSender {
    fn start(&mut self, _now: Instant, out: &mut Outbox) {
        self.send_produced(out);
    }
    fn produce(&mut self, _now: Instant, produced: u64, out: &mut Outbox) {
        self.produced = self.produced.max(produced);
        self.send_produced(out);
    }
    fn on_ack(&mut self, _now: Instant, _hdr: &Hdr, _out: &mut Outbox) {}
    fn on_timer(&mut self, _now: Instant, _out: &mut Outbox) {}
    fn timer(&self) -> Option<Instant> {
        None
    }
    fn finished(&self) -> bool {
        self.next_msg == self.sizes.len()
    }
    fn stats(&self) -> SenderStats {
        self.stats
    }
    fn ect(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_each_message_when_produced() {
        let mut s = UdpSender::new(&[100, 3000, 50], 1460).with_produced(0);
        let mut out = Vec::new();
        s.start(Instant::ZERO, &mut out);
        assert!(out.is_empty());
        s.produce(Instant::ZERO, 100, &mut out);
        assert_eq!(out.len(), 1);
        // half of the second message: nothing more
        s.produce(Instant::ZERO, 1600, &mut out);
        assert_eq!(out.len(), 1);
        s.produce(Instant::ZERO, 3150, &mut out);
        assert_eq!(out.len(), 5);
        let bytes: u64 = out.iter().map(|s| s.hdr.len as u64).sum();
        assert_eq!(bytes, 3150);
        assert!(s.finished());
    }
}
