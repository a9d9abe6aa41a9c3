//! Receivers: a cumulative-ACK receiver for the reliable transports (one
//! ACK per data packet, ECN echoed per packet, as the ns-3 anchor's
//! `DelAckCount = 1`; the timestamp echoed by RFC 7323's rules; SACK
//! blocks by RFC 2018's rules) and a counting receiver for UDP.

use super::sack::{SackBlocks, MAX_BLOCKS};
use crate::packet::{Hdr, Kind};
use std::collections::BTreeMap;

/// Reassembles a byte stream and acknowledges it cumulatively.
#[derive(Clone, Debug, Default)]
pub struct StreamReceiver {
    total: u64,
    next: u64,
    /// Out-of-order data: disjoint, non-touching `start -> end` ranges.
    ooo: BTreeMap<u64, u64>,
    /// SACK blocks an ACK may carry (0 = SACK off).
    sack_blocks: usize,
    /// A byte of each out-of-order range reported lately, most recent
    /// first (RFC 2018 section 4's order of blocks).
    recent: Vec<u64>,
    /// RFC 7323 TS.Recent: the TSval to echo.
    ts_recent: u64,
    /// Data packets received (duplicates included).
    pub rx_pkts: u64,
    /// Data packets that carried nothing new.
    pub dup_pkts: u64,
}

impl StreamReceiver {
    /// Expects `total` bytes.
    pub fn new(total: u64) -> Self {
        StreamReceiver {
            total,
            ..Default::default()
        }
    }

    /// The same receiver with SACK: each ACK carries up to `blocks` blocks
    /// (at most [`MAX_BLOCKS`]; 0 = none).
    pub fn with_sack(mut self, blocks: usize) -> Self {
        self.sack_blocks = blocks.min(MAX_BLOCKS);
        self
    }

    /// The out-of-order range holding byte `x`, if any.
    fn range_of(&self, x: u64) -> Option<(u64, u64)> {
        self.ooo
            .range(..=x)
            .next_back()
            .filter(|r| *r.1 > x)
            .map(|(&s, &e)| (s, e))
    }

    /// Stores out-of-order `[seq, end)`, merged with the ranges it
    /// overlaps or touches.
    fn insert_ooo(&mut self, seq: u64, end: u64) {
        let (mut s, mut e) = (seq, end);
        if let Some((&ps, &pe)) = self.ooo.range(..=s).next_back() {
            if pe >= s {
                s = ps;
                e = e.max(pe);
            }
        }
        let inside: Vec<(u64, u64)> = self.ooo.range(s..=e).map(|(&a, &b)| (a, b)).collect();
        for (a, b) in inside {
            self.ooo.remove(&a);
            e = e.max(b);
        }
        self.ooo.insert(s, e);
    }

    /// RFC 2018 section 4: the block holding the segment that triggered
    /// the ACK first (unless it advanced the cumulative ACK), then the
    /// most recently reported others, each range once.
    #[inline(never)]
    fn sack_option(&mut self, trigger: Option<u64>) -> SackBlocks {
        let mut blocks = SackBlocks::NONE;
        if self.sack_blocks == 0 || self.ooo.is_empty() {
            self.recent.clear();
            return blocks;
        }
        // (a byte of the range, the range), most recent first
        let mut kept = [(0u64, (0u64, 0u64)); MAX_BLOCKS];
        let mut n = 0;
        for x in trigger.into_iter().chain(self.recent.iter().copied()) {
            if let Some(r) = self.range_of(x) {
                if n < MAX_BLOCKS && kept[..n].iter().all(|k| k.1 != r) {
                    kept[n] = (x, r);
                    n += 1;
                }
            }
        }
        self.recent.clear();
        self.recent.extend(kept[..n].iter().map(|k| k.0));
        for &(_, (s, e)) in kept[..n].iter().take(self.sack_blocks) {
            blocks.push(self.next, s, e);
        }
        blocks
    }

    /// Every byte arrived.
    pub fn complete(&self) -> bool {
        self.next >= self.total
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.next
    }

    /// Takes a data segment `[seq, seq + len)` sent at TSval `ts` (0 =
    /// no timestamp); returns the ACK to send.
    ///
    /// The ACK echoes TS.Recent, updated only by a segment at or below the
    /// cumulative point (RFC 7323 section 4.3): an out-of-order segment's
    /// duplicate ACK echoes the last in-order one, and the ACK for a
    /// retransmission that fills a hole echoes the retransmission, so the
    /// sender's RTT samples are never too short and exist during recovery.
    #[inline]
    pub fn on_data(&mut self, seq: u64, len: u32, ce: bool, ts: u64) -> Hdr {
        // the next bytes in order, nothing held out of order, a TSval not
        // older than TS.Recent (nearly every packet): `on_data_any`'s
        // answer without its questions (it would update TS.Recent, move
        // the cumulative point to `end` and find nothing to merge; the
        // SACK history is empty already: the call that emptied the
        // out-of-order map cleared it)
        if seq == self.next && len > 0 && ts >= self.ts_recent && self.ooo.is_empty() {
            debug_assert!(self.recent.is_empty(), "SACK history without held data");
            self.rx_pkts += 1;
            self.ts_recent = ts;
            self.next = seq + len as u64;
            return Hdr {
                kind: Kind::Ack,
                ack: self.next,
                ece: ce,
                ts,
                ..Hdr::default()
            };
        }
        self.on_data_any(seq, len, ce, ts)
    }

    /// [`StreamReceiver::on_data`] of any segment (out of order, a
    /// duplicate, filling a hole, an older TSval).
    #[inline(never)]
    fn on_data_any(&mut self, seq: u64, len: u32, ce: bool, ts: u64) -> Hdr {
        self.rx_pkts += 1;
        let end = seq + len as u64;
        if seq <= self.next && ts >= self.ts_recent {
            self.ts_recent = ts;
        }
        let mut trigger = None;
        if end <= self.next {
            self.dup_pkts += 1;
        } else if seq <= self.next {
            self.next = end;
            // (in order with nothing held out of order: the common case)
            while let Some((&s, &e)) = self.ooo.first_key_value() {
                if s > self.next {
                    break;
                }
                self.ooo.remove(&s);
                self.next = self.next.max(e);
            }
        } else {
            self.insert_ooo(seq, end);
            trigger = Some(seq);
        }
        Hdr {
            kind: Kind::Ack,
            seq: 0,
            len: 0,
            ack: self.next,
            ece: ce,
            ts: self.ts_recent,
            // nothing held out of order (the common case): no blocks
            sack: if self.ooo.is_empty() {
                self.recent.clear();
                SackBlocks::NONE
            } else {
                self.sack_option(trigger)
            },
        }
    }
}

/// Counts datagrams of a UDP flow, message by message (no ACKs, no
/// retransmission); a message counts once every one of its bytes arrived.
#[derive(Clone, Debug, Default)]
pub struct DatagramReceiver {
    ends: Vec<u64>,
    got: Vec<u64>,
    /// Whole messages received.
    pub messages: u32,
    /// Bytes received.
    pub bytes: u64,
    /// Packets received.
    pub rx_pkts: u64,
}

impl DatagramReceiver {
    /// Expects messages ending at the cumulative offsets `ends`.
    pub fn new(ends: Vec<u64>) -> Self {
        DatagramReceiver {
            got: vec![0; ends.len()],
            ends,
            ..Default::default()
        }
    }

    /// Takes the datagram carrying bytes `[seq, seq + len)`.
    pub fn on_data(&mut self, seq: u64, len: u32) {
        self.rx_pkts += 1;
        self.bytes += len as u64;
        let i = self.ends.partition_point(|&e| e <= seq);
        if i >= self.ends.len() {
            return;
        }
        let size = self.ends[i] - if i == 0 { 0 } else { self.ends[i - 1] };
        self.got[i] += len as u64;
        if self.got[i] == size {
            self.messages += 1;
        }
    }

    /// Every message arrived.
    pub fn complete(&self) -> bool {
        self.messages as usize == self.ends.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembles_out_of_order() {
        let mut r = StreamReceiver::new(300);
        assert_eq!(r.on_data(100, 100, false, 0).ack, 0);
        assert_eq!(r.on_data(200, 100, true, 0).ack, 0);
        let a = r.on_data(0, 100, false, 0);
        assert_eq!(a.ack, 300);
        assert!(r.complete());
        assert_eq!(r.on_data(0, 100, false, 0).ack, 300);
        assert_eq!(r.dup_pkts, 1);
    }

    /// RFC 7323 section 4.3: duplicate ACKs for out-of-order data echo the
    /// last in-order segment's TSval; the ACK for the hole's retransmission
    /// echoes the retransmission.
    #[test]
    fn echoes_timestamps_by_rfc_7323_rules() {
        let mut r = StreamReceiver::new(400);
        assert_eq!(r.on_data(0, 100, false, 10).ts, 10);
        // [100, 200) lost; later segments arrive out of order
        assert_eq!(r.on_data(200, 100, false, 30).ts, 10);
        assert_eq!(r.on_data(300, 100, false, 40).ts, 10);
        // the retransmission of the hole, sent at 90
        let a = r.on_data(100, 100, false, 90);
        assert_eq!((a.ack, a.ts), (400, 90));
    }

    fn blocks(h: &Hdr) -> Vec<(u64, u64)> {
        h.sack.iter(h.ack).collect()
    }

    /// RFC 2018 section 4: the triggering segment's block first, then the
    /// most recent others; never more than the option holds.
    #[test]
    fn sack_blocks_follow_rfc_2018_order_and_size() {
        for (ts, max) in [(true, 3), (false, 4)] {
            let mut r =
                StreamReceiver::new(100_000).with_sack(super::super::sack::blocks_allowed(ts));
            assert!(r.on_data(0, 100, false, 0).sack.is_empty());
            // holes at 100, 300, 500, 700, 900: five separate ranges
            let mut last = Hdr::default();
            for k in 0..5u64 {
                last = r.on_data(200 + 200 * k, 100, false, 0);
                assert_eq!(blocks(&last)[0], (200 + 200 * k, 300 + 200 * k));
                assert!(last.sack.len() <= max);
            }
            assert_eq!(last.sack.len(), max);
            let want: Vec<(u64, u64)> = (0..max as u64)
                .map(|k| (1000 - 200 * k, 1100 - 200 * k))
                .collect();
            assert_eq!(blocks(&last), want);
            // extending an older range moves it first; ranges merge
            let a = r.on_data(300, 100, false, 0);
            assert_eq!(blocks(&a)[0], (200, 500));
            assert_eq!(blocks(&a)[1], (1000, 1100));
            // filling the first hole: cumulative ACK moves, no block below it
            let a = r.on_data(100, 100, false, 0);
            assert_eq!(a.ack, 500);
            assert!(blocks(&a).iter().all(|b| b.0 > 500));
            assert_eq!(blocks(&a)[0], (1000, 1100));
            // a duplicate below the cumulative ACK still reports the blocks
            let a = r.on_data(0, 100, false, 0);
            assert_eq!(blocks(&a)[0], (1000, 1100));
        }
    }

    /// `on_data`'s in-order path answers as the general one: receivers
    /// fed the same random segments (in order, duplicates, zero-length,
    /// holes and their fills, older and newer TSvals; SACK off and 1-3
    /// blocks), one only through `on_data_any`, give the same ACK and end
    /// in the same state after every segment.
    #[test]
    fn the_in_order_path_matches_the_general_one() {
        use approxnet_proto::rng::Rng;
        for seed in 0..24u64 {
            let mut rng = Rng::new(seed);
            let mut a = StreamReceiver::new(1 << 40).with_sack((seed % 4) as usize);
            let mut b = a.clone();
            let (mut ts, mut fast, mut slow) = (1u64, 0, 0);
            for _ in 0..3000 {
                let next = a.next;
                let seq = match rng.below(10) {
                    0 => next.saturating_sub(100 * rng.below(5)),
                    1 => next + 100 * (1 + rng.below(4)),
                    _ => next,
                };
                let len = match rng.below(8) {
                    0 => (50 * rng.below(2)) as u32,
                    _ => 100,
                };
                ts = match rng.below(5) {
                    0 => ts.saturating_sub(rng.below(50)),
                    _ => ts + rng.below(20),
                };
                let ce = rng.below(2) == 1;
                let in_order = seq == next && len > 0 && ts >= a.ts_recent && a.ooo.is_empty();
                if in_order {
                    fast += 1;
                } else {
                    slow += 1;
                }
                assert_eq!(a.on_data(seq, len, ce, ts), b.on_data_any(seq, len, ce, ts));
                assert_eq!(format!("{a:?}"), format!("{b:?}"));
            }
            assert!(fast > 300 && slow > 300, "{fast} in order, {slow} not");
        }
    }

    #[test]
    fn no_sack_blocks_when_off() {
        let mut r = StreamReceiver::new(1000);
        r.on_data(0, 100, false, 0);
        assert!(r.on_data(300, 100, false, 0).sack.is_empty());
    }
}
