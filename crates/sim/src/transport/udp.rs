//! UDP at line rate: datagrams leave as soon as the application has
//! produced them, paced at the host's line rate, as an application
//! writing to a socket is held back once its send buffer is full. No
//! feedback, no retransmission.
//!
//! (Handing every produced datagram to the NIC at once would count as
//! "sent" packets that are still queued in the host at the end of the run:
//! 137 k for a 200 MB message in 100 ms at 10 Gbps, where the wire carries
//! 83 k.)

use super::{Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::Instant;
use approxnet_proto::units::Rate;

/// Sends each message once, in datagrams that never span two messages.
#[derive(Clone, Debug)]
pub struct UdpSender {
    sizes: Vec<u64>,
    mss: u32,
    /// Messages sent so far.
    next_msg: usize,
    /// Next byte to send.
    seq: u64,
    /// First byte of message `next_msg`.
    msg_start: u64,
    /// Bytes the application produced so far.
    produced: u64,
    /// Header bytes added to each datagram on the wire.
    header_bytes: u32,
    /// Pacing rate (the host's line rate).
    rate: Rate,
    /// Earliest time of the next datagram.
    next_at: Instant,
    stats: SenderStats,
}

impl UdpSender {
    /// A sender of messages `sizes` in datagrams of at most `mss` bytes
    /// (plus `header_bytes` on the wire) paced at `rate`, all produced
    /// already (see [`UdpSender::with_produced`]).
    pub fn new(sizes: &[u64], mss: u32, header_bytes: u32, rate: Rate) -> Self {
        UdpSender {
            sizes: sizes.to_vec(),
            mss,
            next_msg: 0,
            seq: 0,
            msg_start: 0,
            produced: sizes.iter().sum(),
            header_bytes,
            rate,
            next_at: Instant::ZERO,
            stats: SenderStats::default(),
        }
    }

    /// The same sender with only `bytes` produced so far.
    pub fn with_produced(mut self, bytes: u64) -> Self {
        self.produced = bytes;
        self
    }

    /// End of the message being sent (a message is sent once it is
    /// wholly produced), if it may be sent now.
    fn ready_end(&self) -> Option<u64> {
        let end = self.seq_end()?;
        (end <= self.produced).then_some(end)
    }

    fn seq_end(&self) -> Option<u64> {
        let size = *self.sizes.get(self.next_msg)?;
        // `seq` is inside message `next_msg`: its end is the sum so far
        Some(self.msg_start + size)
    }

    /// Sends the datagrams that are produced and due by `now`.
    fn send_due(&mut self, now: Instant, out: &mut Outbox<'_>) {
        while self.next_at <= now {
            let Some(end) = self.ready_end() else {
                return;
            };
            let len = (end - self.seq).min(self.mss as u64) as u32;
            out.push(Segment {
                hdr: Hdr {
                    kind: Kind::Data,
                    seq: self.seq,
                    len,
                    ack: 0,
                    ece: false,
                    ts: 0,
                    ..Hdr::default()
                },
                rank: 0,
                retx: false,
                unscheduled: false,
            });
            self.stats.sent_pkts += 1;
            self.seq += len as u64;
            if self.seq == end {
                self.next_msg += 1;
                self.msg_start = end;
            }
            let wire = self.rate.time_for((len + self.header_bytes) as usize);
            self.next_at = self.next_at.max(now) + wire;
        }
    }
}

impl Sender for UdpSender {
    fn start(&mut self, now: Instant, out: &mut Outbox<'_>) {
        self.send_due(now, out);
    }
    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox<'_>) {
        self.produced = self.produced.max(produced);
        self.send_due(now, out);
    }
    fn on_ack(&mut self, _now: Instant, _hdr: &Hdr, _out: &mut Outbox<'_>) {}
    fn on_timer(&mut self, now: Instant, out: &mut Outbox<'_>) {
        self.send_due(now, out);
    }
    fn timer(&self) -> Option<Instant> {
        self.ready_end().map(|_| self.next_at)
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

    const MTU_TIME_NS: u64 = 1200; // 1460 + 40 bytes at 10 Gbps

    fn sender(sizes: &[u64]) -> UdpSender {
        UdpSender::new(sizes, 1460, 40, Rate::gbps(10.0))
    }

    /// Calls the sender at every timer it asks for until `until`.
    fn drive(s: &mut UdpSender, until: u64, out: &mut Outbox<'_>) {
        while let Some(t) = s.timer() {
            if t.as_nanos() > until {
                break;
            }
            s.on_timer(t, out);
        }
    }

    #[test]
    fn sends_each_message_when_produced() {
        let mut s = sender(&[100, 3000, 50]).with_produced(0);
        let mut out = Vec::new();
        s.start(Instant::ZERO, &mut Outbox::to_list(&mut out));
        assert!(out.is_empty() && s.timer().is_none());
        s.produce(Instant::ZERO, 100, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 1);
        // half of the second message: nothing more
        s.produce(
            Instant::from_nanos(10_000),
            1600,
            &mut Outbox::to_list(&mut out),
        );
        drive(&mut s, 20_000, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 1);
        s.produce(
            Instant::from_nanos(20_000),
            3150,
            &mut Outbox::to_list(&mut out),
        );
        drive(&mut s, 40_000, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 5);
        let bytes: u64 = out.iter().map(|s| s.hdr.len as u64).sum();
        assert_eq!(bytes, 3150);
        assert!(s.finished());
    }

    #[test]
    fn never_sends_faster_than_the_line() {
        // 100 full datagrams ready at once leave one serialisation time apart
        let mut s = sender(&[146_000]);
        let mut out = Vec::new();
        s.start(Instant::ZERO, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 1);
        assert_eq!(s.timer(), Some(Instant::from_nanos(MTU_TIME_NS)));
        drive(&mut s, 50 * MTU_TIME_NS, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 51);
        assert_eq!(s.stats().sent_pkts, 51);
        drive(&mut s, u64::MAX, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 100);
        assert!(s.finished() && s.timer().is_none());
    }
}
