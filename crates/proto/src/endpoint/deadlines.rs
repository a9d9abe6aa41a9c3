//! The endpoint's connection deadlines (`Slot::deadline`) in deadline
//! order: an indexed binary min-heap with one entry per slot that has a
//! deadline, moved in place when the deadline moves.
//!
//! It replaced a `BinaryHeap` with lazy deletion (a new entry per moved
//! deadline, stale ones skipped when they came to the top), which held
//! 3-4x the live deadlines (~490 entries for ~130 live, NetApprox k = 12):
//! each pacer or epoch wake-up sifted its re-keyed top through ~9 levels
//! (~217 instructions), and `poll_timeout` popped stale tops. Here the
//! heap holds the live deadlines only and its top is always current; the
//! order is the same: by (deadline, slot), a total order over the live
//! entries, so every caller sees the connections in the order it did.
//! (Four children a node, tried first: 0.3 % more instructions on the
//! k = 12 slices than two; the sift's compares of `u128` keys, not its
//! depth, are most of its cost.)

use crate::time::Instant;

/// No heap position: the slot has no deadline.
const NONE: u32 = u32::MAX;

/// Deadlines in (deadline, slot) order.
#[derive(Debug, Default)]
pub(super) struct Deadlines {
    /// Heap of keys `deadline_ns << 64 | slot`: a node's key is at most its
    /// children's (`2k + 1`, `2k + 2`).
    heap: Vec<u128>,
    /// Per slot, its position in `heap`, or [`NONE`].
    pos: Vec<u32>,
}

#[inline(always)]
fn key(t: Instant, slot: usize) -> u128 {
    (t.as_nanos() as u128) << 64 | slot as u128
}

#[inline(always)]
fn slot_of(k: u128) -> usize {
    k as u64 as usize
}

#[inline(always)]
fn at_of(k: u128) -> Instant {
    Instant::from_nanos((k >> 64) as u64)
}

impl Deadlines {
    /// The earliest deadline and its slot.
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<(Instant, usize)> {
        self.heap.first().map(|&k| (at_of(k), slot_of(k)))
    }

    /// Whether a deadline other than the earliest is due at `now` (the
    /// earliest's children hold the second earliest).
    #[inline(always)]
    pub(super) fn others_due(&self, now: Instant) -> bool {
        let end = self.heap.len().min(3);
        let bound = (now.as_nanos() as u128) << 64 | u64::MAX as u128;
        self.heap
            .get(1..end)
            .is_some_and(|c| c.iter().any(|&k| k <= bound))
    }

    /// Removes the earliest deadline.
    pub(super) fn pop(&mut self) -> Option<(Instant, usize)> {
        let top = *self.heap.first()?;
        self.remove_at(0);
        Some((at_of(top), slot_of(top)))
    }

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Every entry, in heap order (checks).
    pub(super) fn iter(&self) -> impl Iterator<Item = (Instant, usize)> + '_ {
        self.heap.iter().map(|&k| (at_of(k), slot_of(k)))
    }

    /// Slot `slot`'s deadline is now `at` (`None`: it has none).
    #[inline(always)]
    pub(super) fn set(&mut self, slot: usize, at: Option<Instant>) {
        if slot >= self.pos.len() {
            self.pos.resize(slot + 1, NONE);
        }
        let p = self.pos[slot];
        match (at, p) {
            (None, NONE) => {}
            (None, p) => self.remove_at(p as usize),
            (Some(t), NONE) => {
                let k = key(t, slot);
                self.heap.push(k);
                self.up(self.heap.len() - 1, k);
            }
            (Some(t), p) => {
                let (p, k) = (p as usize, key(t, slot));
                if k < self.heap[p] {
                    self.up(p, k);
                } else if 2 * p + 1 < self.heap.len() {
                    self.down(p, k);
                } else {
                    // a leaf (a lone connection's entry, mostly): no child
                    // to pass, and no call to `down` (~47 instructions per
                    // DATA packet on one connection)
                    self.heap[p] = k;
                }
            }
        }
    }

    /// Takes the entry at `p` out: the last entry fills its place.
    fn remove_at(&mut self, p: usize) {
        let gone = self.heap[p];
        self.pos[slot_of(gone)] = NONE;
        let last = self.heap.pop().expect("an entry at p");
        if p < self.heap.len() {
            if last < gone {
                self.up(p, last);
            } else {
                self.down(p, last);
            }
        }
    }

    /// Places `k` at `p` or above (its key is at most what was there).
    #[inline(always)]
    fn up(&mut self, mut p: usize, k: u128) {
        while p > 0 {
            let parent = (p - 1) / 2;
            let pk = self.heap[parent];
            if pk <= k {
                break;
            }
            self.heap[p] = pk;
            self.pos[slot_of(pk)] = p as u32;
            p = parent;
        }
        self.heap[p] = k;
        self.pos[slot_of(k)] = p as u32;
    }

    /// Places `k` at `p` or below (its key is at least what was there).
    fn down(&mut self, mut p: usize, k: u128) {
        let (heap, pos) = (&mut self.heap[..], &mut self.pos[..]);
        let n = heap.len();
        loop {
            let first = 2 * p + 1;
            let (c, ck) = if first + 1 < n {
                let (a, b) = (heap[first], heap[first + 1]);
                if b < a {
                    (first + 1, b)
                } else {
                    (first, a)
                }
            } else if first < n {
                (first, heap[first])
            } else {
                break;
            };
            if k <= ck {
                break;
            }
            heap[p] = ck;
            pos[slot_of(ck)] = p as u32;
            p = c;
        }
        heap[p] = k;
        pos[slot_of(k)] = p as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::BTreeSet;

    /// Random deadlines set, moved, cleared and popped over 40 slots (ties
    /// included): the earliest, `others_due` and every pop match an ordered
    /// set of (deadline, slot), and each slot's position is where its
    /// entry lies.
    #[test]
    fn matches_an_ordered_set() {
        let mut rng = Rng::new(19);
        let mut d = Deadlines::default();
        let mut model: BTreeSet<(Instant, usize)> = BTreeSet::new();
        let mut cur: Vec<Option<Instant>> = vec![None; 40];
        for step in 0..40_000 {
            let slot = rng.below(40) as usize;
            match rng.below(10) {
                0 => {
                    let got = d.pop();
                    let want = model.pop_first();
                    assert_eq!(got, want, "step {step}");
                    if let Some((_, s)) = want {
                        cur[s] = None;
                    }
                }
                1 => {
                    if let Some(t) = cur[slot].take() {
                        model.remove(&(t, slot));
                    }
                    d.set(slot, None);
                }
                _ => {
                    // few distinct times: equal deadlines of several slots
                    let t = Instant::from_nanos(rng.below(64) * 1_000 + step / 100);
                    if let Some(old) = cur[slot].replace(t) {
                        model.remove(&(old, slot));
                    }
                    model.insert((t, slot));
                    d.set(slot, Some(t));
                }
            }
            assert_eq!(d.peek(), model.first().copied(), "step {step}");
            assert_eq!(d.len(), model.len());
            let now = Instant::from_nanos(rng.below(70) * 1_000);
            let others = model.iter().skip(1).any(|&(t, _)| t <= now);
            assert_eq!(d.others_due(now), others, "step {step}");
            for (p, &k) in d.heap.iter().enumerate() {
                assert_eq!(d.pos[slot_of(k)], p as u32);
                if p > 0 {
                    assert!(d.heap[(p - 1) / 2] <= k);
                }
            }
        }
    }
}
