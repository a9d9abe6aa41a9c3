//! The tracker of the peer's sequence numbers received, from which ACKs
//! are built: a cumulative point and the SACK ranges after it.

use crate::seq;
use crate::wire::{AckRepr, SeqRange, MAX_ACK_RANGES};
use std::collections::VecDeque;

/// Sequence ranges remembered for SACK.
const MAX_SEQ_RANGES: usize = 32;

/// The peer's transmission sequence numbers received, for ACKs: a
/// cumulative point and ranges after it, in serial order ([`crate::seq`]).
///
/// It starts once the peer's first sequence number is known (every JOB
/// header carries it; no DATA is accepted before its job's JOB), so the
/// cumulative point never claims a number it did not see, and DATA
/// arriving out of order from the start is tracked like any other.
#[derive(Debug, Default)]
pub(crate) struct SeqTracker {
    started: bool,
    /// Every number from the peer's first up to (before) this one arrived.
    /// It stops at the first that never does: a retransmission gets a new
    /// number, so such a hole is never filled.
    cumulative: u32,
    /// Numbers before this are forgotten (ignored when they arrive late).
    /// Equal to `cumulative` until a hole is forgotten; past it from then
    /// on, while the cumulative point stays at the hole for good.
    floor: u32,
    /// After `floor`, in order, disjoint and non-adjacent; the last ends
    /// at most [`MAX_SPAN`] after `floor`.
    ranges: VecDeque<SeqRange>,
}

/// The most numbers from a tracker's floor to the end of its newest range
/// (older ones are forgotten as newer arrive).
const MAX_SPAN: u32 = 1 << 30;
/// The furthest a number may lie past the newest range's end and still be
/// tracked. Half of [`MAX_SPAN`], so one jump ahead (a spoofed number)
/// leaves the floor at least this far behind the newest number before it:
/// it cannot make the tracker forget recent ranges or refuse the numbers
/// that follow them. With the span, it keeps all the tracker holds within
/// half the sequence space, where serial order is defined.
const MAX_JUMP: u32 = 1 << 29;

impl SeqTracker {
    /// Learns the peer's first sequence number; later calls change nothing.
    pub(crate) fn start(&mut self, first: u32) {
        if !self.started {
            self.started = true;
            self.cumulative = first;
            self.floor = first;
        }
    }

    /// Records that `seq` arrived.
    // In-order arrival, the common case, in O(1) and inline: the next
    // number at the cumulative point with no range after it. The rest out
    // of line (the whole function was a call of ~28 instructions per DATA
    // packet received).
    #[inline(always)]
    pub(crate) fn insert(&mut self, seq: u32) {
        if self.started
            && self.ranges.is_empty()
            && seq == self.cumulative
            && self.floor == self.cumulative
        {
            let next = seq.wrapping_add(1);
            self.cumulative = next;
            self.floor = next;
            return;
        }
        self.insert_slow(seq);
    }

    /// [`SeqTracker::insert`] past its in-order case.
    #[inline(never)]
    fn insert_slow(&mut self, seq: u32) {
        if !self.started {
            return;
        }
        // The next number after the newest range: it grows (nothing
        // follows it to merge).
        let next = seq.wrapping_add(1);
        if let Some(r) = self.ranges.back_mut().filter(|r| r.end == seq) {
            r.end = next;
            self.bound_span();
            return;
        }
        let Some(at) = self.position(seq) else {
            return;
        };
        let floor = self.floor;
        let i = self
            .ranges
            .partition_point(|r| r.end.wrapping_sub(floor) < at);
        match self.ranges.get_mut(i) {
            Some(r) if r.contains(seq) => return,
            Some(r) if r.end == seq => {
                r.end = next;
                if self.ranges.get(i + 1).is_some_and(|n| n.start == next) {
                    if let Some(n) = self.ranges.remove(i + 1) {
                        self.ranges[i].end = n.end;
                    }
                }
            }
            Some(r) if r.start == next => r.start = seq,
            _ => self.ranges.insert(
                i,
                SeqRange {
                    start: seq,
                    end: next,
                },
            ),
        }
        self.advance_cumulative();
        if self.ranges.len() > MAX_SEQ_RANGES {
            if let Some(old) = self.ranges.pop_front() {
                self.floor = old.end;
            }
        }
        self.bound_span();
    }

    /// How far `seq` lies past the floor, when it can be tracked: not
    /// before the floor (forgotten, or acknowledged long ago), and at most
    /// [`MAX_JUMP`] past the newest range.
    fn position(&self, seq: u32) -> Option<u32> {
        let newest = self
            .ranges
            .back()
            .map_or(0, |r| r.end.wrapping_sub(self.floor));
        let at = seq.wrapping_sub(self.floor);
        (at < newest + MAX_JUMP).then_some(at)
    }

    /// Moves the cumulative point over a first range that starts at it.
    fn advance_cumulative(&mut self) {
        if self.floor != self.cumulative {
            return;
        }
        if let Some(first) = self.ranges.front().filter(|r| r.start == self.floor) {
            self.cumulative = first.end;
            self.floor = first.end;
            self.ranges.pop_front();
        }
    }

    /// Moves the floor up until the newest range ends within [`MAX_SPAN`]
    /// of it, forgetting what falls behind.
    fn bound_span(&mut self) {
        let Some(newest) = self.ranges.back() else {
            return;
        };
        let excess = newest.end.wrapping_sub(self.floor).saturating_sub(MAX_SPAN);
        if excess == 0 {
            return;
        }
        self.floor = self.floor.wrapping_add(excess);
        let floor = self.floor;
        while let Some(r) = self.ranges.front_mut() {
            if !seq::before(floor, r.end) {
                self.ranges.pop_front(); // ends at or before the floor
                continue;
            }
            if seq::before(r.start, floor) {
                r.start = floor;
            }
            break;
        }
    }

    /// The ACK body to send now, with the receive counters; `None` until
    /// the peer's first sequence number is known.
    #[cfg(test)]
    pub(crate) fn ack(&self, ce: u32, recv: u32) -> Option<AckRepr> {
        let mut a = AckRepr::default();
        self.ack_into(ce, recv, &mut a).then_some(a)
    }

    /// Whether the peer's first sequence number is known ([`SeqTracker::ack`]
    /// gives an ACK).
    #[inline]
    pub(crate) fn is_started(&self) -> bool {
        self.started
    }

    /// [`SeqTracker::ack`] written into `out` (any earlier contents are
    /// replaced): the connection builds an ACK in its queue's slot.
    /// `false`, leaving `out` as it was, before the tracker started.
    #[inline]
    pub(crate) fn ack_into(&self, ce: u32, recv: u32, out: &mut AckRepr) -> bool {
        if !self.started {
            return false;
        }
        out.reset(self.cumulative, ce, recv);
        for r in self.ranges.iter().rev().take(MAX_ACK_RANGES) {
            out.push_range(*r);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(first: u32) -> SeqTracker {
        let mut t = SeqTracker::default();
        t.start(first);
        t
    }

    /// Mostly in-order arrival with losses, duplicates and reordering,
    /// across the u32 wrap: after every insert the tracker's cumulative
    /// point and ranges equal those of a plain set of what arrived (the
    /// in-order fast paths included).
    #[test]
    fn seq_tracker_matches_a_set_of_arrivals() {
        let first = u32::MAX - 500;
        let mut t = started(first);
        let mut got = std::collections::BTreeSet::new(); // offsets from first
        let mut rng = crate::rng::Rng::new(9);
        let mut late = Vec::new();
        for i in 0..3000u32 {
            let off = match rng.below(20) {
                0 => continue, // lost for good
                1 => {
                    late.push(i);
                    continue;
                } // arrives a little later
                2 if i > 0 => i - 1, // duplicate
                3 if !late.is_empty() => late.swap_remove(0),
                _ => i,
            };
            t.insert(first.wrapping_add(off));
            got.insert(off);
            // The model: cumulative at the first missing offset, then the
            // runs after it, newest first.
            let mut cum = 0;
            while got.contains(&cum) {
                cum += 1;
            }
            let mut runs: Vec<(u32, u32)> = Vec::new();
            for &o in got.range(cum..) {
                match runs.last_mut() {
                    Some(r) if r.1 == o => r.1 = o + 1,
                    _ => runs.push((o, o + 1)),
                }
            }
            if runs.len() > MAX_SEQ_RANGES {
                break; // the tracker starts forgetting: not this test's case
            }
            let a = t.ack(0, 0).unwrap();
            assert_eq!(a.cumulative, first.wrapping_add(cum), "after {off}");
            let want: Vec<SeqRange> = runs
                .iter()
                .rev()
                .take(MAX_ACK_RANGES)
                .map(|&(s, e)| SeqRange {
                    start: first.wrapping_add(s),
                    end: first.wrapping_add(e),
                })
                .collect();
            assert_eq!(a.ranges(), &want[..], "after {off}");
        }
    }

    #[test]
    fn seq_tracker_ranges() {
        let mut t = started(0);
        for s in [0, 1, 2, 5, 6, 9, 4] {
            t.insert(s);
        }
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, 3);
        assert_eq!(
            a.ranges(),
            &[
                SeqRange { start: 9, end: 10 },
                SeqRange { start: 4, end: 7 }
            ]
        );
        t.insert(3);
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, 7);
        assert!(a.acks(9) && !a.acks(8));
    }

    /// The same arrivals shifted to straddle the u32 wrap (and arriving out
    /// of order from the very first) give the same ACKs, shifted.
    #[test]
    fn seq_tracker_across_wrap() {
        for first in [0, u32::MAX - 4, u32::MAX - 2, u32::MAX, 1 << 31] {
            let mut t = started(first);
            let at = |d: u32| first.wrapping_add(d);
            for d in [2, 1, 5, 6, 9, 4] {
                t.insert(at(d));
            }
            assert_eq!(
                t.ack(0, 0).unwrap().cumulative,
                first,
                "nothing before the first"
            );
            t.insert(at(0));
            let a = t.ack(0, 0).unwrap();
            assert_eq!(a.cumulative, at(3));
            let want = [
                SeqRange {
                    start: at(9),
                    end: at(10),
                },
                SeqRange {
                    start: at(4),
                    end: at(7),
                },
            ];
            assert_eq!(a.ranges(), &want);
            // Duplicates and late arrivals change nothing.
            t.insert(at(1));
            t.insert(at(5));
            t.insert(first.wrapping_sub(1));
            assert_eq!(t.ack(0, 0).unwrap(), a);
            t.insert(at(3));
            assert_eq!(t.ack(0, 0).unwrap().cumulative, at(7));
        }
    }

    #[test]
    fn seq_tracker_waits_for_the_first_number() {
        let mut t = SeqTracker::default();
        t.insert(5);
        assert!(t.ack(0, 0).is_none());
        t.start(5);
        t.start(100); // only the first start counts
        t.insert(5);
        assert_eq!(t.ack(0, 0).unwrap().cumulative, 6);
    }

    /// After a hole the cumulative point stays put for good, while the
    /// ranges keep following the newest numbers: long after the hole (more
    /// than the whole sequence space), and across the wrap, new numbers
    /// are still tracked and acknowledged.
    #[test]
    fn seq_tracker_follows_numbers_far_past_a_hole() {
        let first = 1000;
        let mut t = started(first);
        t.insert(first);
        // `first + 1` is lost; then the sequence space goes by in big
        // steps, one arrival each.
        let mut s = first + 2;
        for _ in 0..80 {
            t.insert(s);
            let a = t.ack(0, 0).unwrap();
            assert_eq!(a.cumulative, first + 1, "the hole holds the point");
            assert!(a.ranges()[0].contains(s), "newest {s} acknowledged");
            assert!(a.ranges().iter().all(SeqRange::is_well_formed));
            s = s.wrapping_add(1 << 27);
        }
        // Up to just before the wrap, then contiguous through it: one
        // range, well formed.
        let start = u32::MAX - 10;
        while start.wrapping_sub(s) > 1 << 27 {
            t.insert(s);
            s = s.wrapping_add(1 << 27);
        }
        for d in 0..30 {
            t.insert(start.wrapping_add(d));
        }
        let a = t.ack(0, 0).unwrap();
        let newest = a.ranges()[0];
        assert!((0..30).all(|d| newest.contains(start.wrapping_add(d))));
        assert!(a.ranges().iter().all(SeqRange::is_well_formed));
        assert!(t.ranges.len() <= MAX_SEQ_RANGES);
    }

    /// A number far ahead (a spoofed packet) is tracked, but cannot make
    /// the tracker forget the ranges it holds or refuse the numbers that
    /// follow them; one further still is ignored.
    #[test]
    fn seq_tracker_survives_a_far_jump() {
        let first = u32::MAX - 100;
        let at = |d: u32| first.wrapping_add(d);
        let mut t = started(first);
        for d in [0, 1, 2, 4, 5] {
            t.insert(at(d));
        }
        let far = at(6).wrapping_add(MAX_JUMP - 1);
        t.insert(far);
        let too_far = far.wrapping_add(1 + MAX_JUMP);
        t.insert(too_far);
        for d in [3, 6, 7] {
            t.insert(at(d));
        }
        let a = t.ack(0, 0).unwrap();
        assert_eq!(a.cumulative, at(8));
        assert_eq!(
            a.ranges(),
            &[SeqRange {
                start: far,
                end: far.wrapping_add(1)
            }]
        );
    }

    /// An ACK built into a reused slot (one that held an ACK with more
    /// ranges) is the ACK built afresh, on the wire byte for byte.
    #[test]
    fn an_ack_built_in_a_used_slot_is_a_fresh_one() {
        let mut t = started(100);
        let mut slot = AckRepr::default();
        assert!(!SeqTracker::default().ack_into(1, 2, &mut slot));
        // a slot that held eight ranges, reused for an ACK with none
        let mut holes = started(0);
        for i in 0..20 {
            holes.insert(2 * i + 1);
        }
        assert!(holes.ack_into(0, 0, &mut slot));
        assert_eq!(slot.ranges().len(), MAX_ACK_RANGES);
        let mut none = started(0);
        none.insert(0);
        assert!(none.ack_into(5, 6, &mut slot));
        assert_eq!(slot, AckRepr::new(1, 5, 6));
        let mut rng = crate::rng::Rng::new(3);
        for i in 0..400u32 {
            if rng.below(4) != 0 {
                t.insert(100 + i);
            }
            let fresh = t.ack(i, 2 * i).unwrap();
            assert!(t.ack_into(i, 2 * i, &mut slot));
            assert_eq!(slot, fresh);
            let (mut a, mut b) = ([0u8; 96], [0u8; 96]);
            slot.emit(&mut a[..slot.buffer_len()]);
            fresh.emit(&mut b[..fresh.buffer_len()]);
            assert_eq!(slot.buffer_len(), fresh.buffer_len());
            assert_eq!(a, b);
        }
    }
}
