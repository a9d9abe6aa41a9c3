//! What is left of a reliable sender once every byte is acknowledged.
//!
//! A finished [`super::reliable::ReliableSender`] sends nothing more: an
//! ACK is ignored, producing or more NIC room sends nothing (everything
//! up to the flow's end is sent and acknowledged), and its timer only
//! clears itself when it fires. What is still read is its counters, its
//! ECN capability and the pending timer, so the flow swaps the ~340-byte
//! sender (plus its SACK scoreboard) for this, and the allocator hands
//! the freed block to the next flow's sender: the senders' working set is
//! the flows in flight, not every flow of the run.

use super::{Outbox, Sender, SenderStats};
use crate::packet::Hdr;
use approxnet_proto::time::Instant;

/// A finished sender's counters, ECN flag and pending timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoneSender {
    /// Its counters, final.
    pub stats: SenderStats,
    /// The retransmission deadline still armed when it finished.
    pub deadline: Option<Instant>,
    /// Its packets carried ECN-capable transport.
    pub ect: bool,
}

impl Sender for DoneSender {
    fn start(&mut self, _now: Instant, _out: &mut Outbox<'_>) {}
    fn produce(&mut self, _now: Instant, _produced: u64, _out: &mut Outbox<'_>) {}
    fn on_ack(&mut self, _now: Instant, _hdr: &Hdr, _out: &mut Outbox<'_>) {}
    /// As a finished reliable sender: a due deadline clears itself.
    fn on_timer(&mut self, now: Instant, _out: &mut Outbox<'_>) {
        if matches!(self.deadline, Some(d) if d <= now) {
            self.deadline = None;
        }
    }
    fn timer(&self) -> Option<Instant> {
        self.deadline
    }
    fn finished(&self) -> bool {
        true
    }
    fn stats(&self) -> SenderStats {
        self.stats
    }
    fn ect(&self) -> bool {
        self.ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use crate::transport::cc::Dctcp;
    use crate::transport::reliable::{ReliableSender, RtoConfig, TcpOptions};
    use crate::transport::sack::SackBlocks;
    use crate::transport::Segment;
    use approxnet_proto::time::Duration;

    fn ack(n: u64, ts: u64, sack: SackBlocks) -> Hdr {
        Hdr {
            kind: Kind::Ack,
            seq: 0,
            len: 0,
            ack: n,
            ece: false,
            ts,
            sack,
        }
    }

    fn rto() -> RtoConfig {
        RtoConfig::for_tests()
    }

    /// Runs a sender through a lossy path (every 5th segment lost) until
    /// every byte is acknowledged: retransmissions, SACK recovery and
    /// timeouts leave their state behind, which is what must not matter.
    fn finished_sender(opts: TcpOptions) -> (ReliableSender<Dctcp>, Instant) {
        let total = 40_000;
        let mut s = ReliableSender::new(Dctcp::new(2), total, 1000, rto(), false)
            .with_options(opts)
            .with_produced(total);
        let mut out = Vec::new();
        let mut t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        let mut got: Vec<(u64, u64)> = Vec::new();
        let mut n = 0u64;
        for _ in 0..10_000 {
            if s.finished() {
                return (s, t);
            }
            t += Duration::from_micros(10);
            let segs: Vec<Segment> = std::mem::take(&mut out);
            for seg in segs {
                n += 1;
                if n.is_multiple_of(5) {
                    continue;
                }
                let (a, b) = (seg.hdr.seq, seg.hdr.seq + seg.hdr.len as u64);
                got.push((a, b));
                got.sort_unstable();
                let mut cum = 0;
                for &(x, y) in &got {
                    if x <= cum {
                        cum = cum.max(y);
                    }
                }
                let mut sack = SackBlocks::NONE;
                if a > cum {
                    sack.push(cum, a, b);
                }
                s.on_ack(
                    t,
                    &ack(cum, seg.hdr.ts, sack),
                    &mut Outbox::to_list(&mut out),
                );
            }
            if out.is_empty() {
                if let Some(d) = s.timer() {
                    t = t.max(d);
                    s.on_timer(t, &mut Outbox::to_list(&mut out));
                }
            }
        }
        panic!("the sender never finished");
    }

    /// Every call a finished sender can still get, answered alike by it
    /// and by what it retires to: segments, timer, counters, ECN flag.
    #[test]
    fn retired_sender_answers_as_the_finished_one() {
        for sack in [true, false] {
            let opts = TcpOptions {
                sack,
                ..TcpOptions::default()
            };
            let (mut s, t) = finished_sender(opts);
            assert!(
                s.stats().retx_pkts > 0,
                "the path lost nothing (sack {sack})"
            );
            let mut d = s.retired().expect("a finished reliable sender retires");
            let (mut o1, mut o2) = (Vec::new(), Vec::new());
            let mut blocks = SackBlocks::NONE;
            blocks.push(1000, 5000, 6000);
            let us = Duration::from_micros;
            for (i, at) in [t, t + us(1), t + us(200), t + us(50_000)]
                .into_iter()
                .enumerate()
            {
                let h = ack(1000 * i as u64, 7, blocks);
                s.on_ack(at, &h, &mut Outbox::to_list(&mut o1));
                d.on_ack(at, &h, &mut Outbox::to_list(&mut o2));
                s.set_tx_room(i as u32);
                d.set_tx_room(i as u32);
                s.produce(at, 40_000 + i as u64, &mut Outbox::to_list(&mut o1));
                d.produce(at, 40_000 + i as u64, &mut Outbox::to_list(&mut o2));
                s.on_timer(at, &mut Outbox::to_list(&mut o1));
                d.on_timer(at, &mut Outbox::to_list(&mut o2));
                assert_eq!(o1, o2);
                assert_eq!(s.timer(), d.timer());
                assert_eq!(s.stats(), d.stats());
                assert_eq!(s.ect(), d.ect());
                assert!(d.finished());
            }
            assert!(o1.is_empty());
        }
    }

    /// A deadline still armed is kept until it is due, then cleared, as
    /// the reliable sender's `on_timer` does once finished.
    #[test]
    fn a_pending_deadline_clears_when_due() {
        let t = Instant::from_nanos(5_000);
        let mut d = DoneSender {
            stats: SenderStats::default(),
            deadline: Some(t),
            ect: true,
        };
        let mut out = Vec::new();
        d.on_timer(Instant::from_nanos(4_999), &mut Outbox::to_list(&mut out));
        assert_eq!(d.timer(), Some(t));
        d.on_timer(t, &mut Outbox::to_list(&mut out));
        assert_eq!(d.timer(), None);
        assert!(out.is_empty());
    }

    #[test]
    fn an_unfinished_sender_does_not_retire() {
        let s = ReliableSender::new(Dctcp::new(2), 1000, 1000, rto(), false);
        assert!(s.retired().is_none());
    }
}
