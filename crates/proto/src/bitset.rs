//! Bit sets: a fixed-size one (per-packet and per-message bookkeeping) and
//! a sliding ring of sequence numbers (packets in flight).

use std::collections::VecDeque;

/// A fixed-size bit set. Its first 64 bits live inline (a one-packet
/// message's or a small group's set never allocates); the other words are
/// allocated at the first `insert` beyond them: a JOB announcing 2^20
/// messages costs nothing until its DATA arrives (a forged JOB that never
/// sends DATA allocates no bitmap; docs/limits.md).
#[derive(Clone, Debug, Default)]
pub(crate) struct BitSet {
    first: u64,
    /// Words 1.. (bits 64..), empty until one of them is set.
    rest: Vec<u64>,
    bits: usize,
}

impl BitSet {
    pub(crate) fn new(bits: usize) -> BitSet {
        BitSet {
            first: 0,
            rest: Vec::new(),
            bits,
        }
    }
    pub(crate) fn get(&self, i: usize) -> bool {
        let m = 1u64 << (i % 64);
        match i / 64 {
            _ if i >= self.bits => false,
            0 => self.first & m != 0,
            w => self.rest.get(w - 1).is_some_and(|x| x & m != 0),
        }
    }
    /// Calls `f` with every `i < n` for which `get(i)` is false, in
    /// ascending order: a word at a time, the set bits skipped without a
    /// look each (a job's FIN lists the messages it never received).
    pub(crate) fn for_each_clear(&self, n: usize, mut f: impl FnMut(usize)) {
        for w in 0..n.div_ceil(64) {
            let word = match w {
                0 => self.first,
                w => self.rest.get(w - 1).copied().unwrap_or(0),
            };
            // bits past the set's size read as clear (as `get` says)
            let inside = self.bits.saturating_sub(64 * w).min(64);
            let valid = if inside == 64 {
                u64::MAX
            } else {
                (1u64 << inside) - 1
            };
            let mut clear = !(word & valid);
            let here = (n - 64 * w).min(64);
            if here < 64 {
                clear &= (1u64 << here) - 1;
            }
            while clear != 0 {
                f(64 * w + clear.trailing_zeros() as usize);
                clear &= clear - 1;
            }
        }
    }

    /// Sets bit `i`; returns whether it was clear before (false for a bit
    /// outside the set).
    // A bit of the first word inline (every packet of a message of up to
    // 64, every message of a group of up to 64: ~15 instructions of call
    // per DATA packet received and per packet acknowledged; issue 19),
    // the rest out of line.
    #[inline(always)]
    pub(crate) fn insert(&mut self, i: usize) -> bool {
        if i < 64 && i < self.bits {
            let m = 1u64 << i;
            let was = self.first & m == 0;
            self.first |= m;
            return was;
        }
        self.insert_rest(i)
    }

    /// [`BitSet::insert`] past the first word: a word already there set
    /// inline, the first allocation of the words past 64 out of line.
    #[inline(never)]
    fn insert_rest(&mut self, i: usize) -> bool {
        let m = 1u64 << (i % 64);
        if i < self.bits {
            let w = match i / 64 {
                0 => Some(&mut self.first),
                w => self.rest.get_mut(w - 1),
            };
            if let Some(w) = w {
                let was = *w & m == 0;
                *w |= m;
                return was;
            }
        }
        self.insert_slow(i)
    }

    /// [`BitSet::insert`] of a bit outside the set or in a word not
    /// allocated yet.
    #[inline(never)]
    fn insert_slow(&mut self, i: usize) -> bool {
        if i >= self.bits {
            return false;
        }
        let m = 1u64 << (i % 64);
        let w = match i / 64 {
            0 => &mut self.first,
            w => {
                if self.rest.is_empty() {
                    self.rest = vec![0; self.bits.div_ceil(64) - 1];
                }
                &mut self.rest[w - 1]
            }
        };
        let was = *w & m == 0;
        *w |= m;
        was
    }
}

/// Word indices (`seq >> 6`) live in 26 bits: 2^32 is a multiple of 64, so
/// they wrap exactly when sequence numbers do.
const WORD_INDEX_MASK: u32 = u32::MAX >> 6;

/// A set of u32 sequence numbers in a sliding window, one bit each: the
/// sender's packets in flight.
///
/// Words are aligned to absolute sequence numbers (bit `seq & 63` of word
/// `seq >> 6`), so the window slides and wraps around u32 without shifting
/// bits. The ring holds only the words from the window's start to its
/// newest member, so memory follows the window. It slides only in
/// [`SeqRing::push`]: positions handed out by [`SeqRing::first_in`] stay
/// valid until the next push.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeqRing {
    words: VecDeque<u64>,
    /// Word index (`seq >> 6`) of `words[0]`.
    first: u32,
}

impl SeqRing {
    /// Index into `words` of `seq`'s word; past the end (beyond
    /// `words.len()`) when the ring does not hold it.
    fn slot(&self, seq: u32) -> usize {
        ((seq >> 6).wrapping_sub(self.first) & WORD_INDEX_MASK) as usize
    }

    /// Adds `seq`, which must follow the previously pushed one, and forgets
    /// the words wholly before `oldest`, the window's start (members are
    /// never older than it, so those words are empty).
    #[inline]
    pub(crate) fn push(&mut self, seq: u32, oldest: u32) {
        let stale = self.slot(oldest).min(self.words.len());
        debug_assert!(self.words.range(..stale).all(|&w| w == 0));
        if stale > 0 {
            // (an empty `drain` still builds and drops its iterator: most
            // pushes retire no word)
            self.words.drain(..stale);
            self.first = self.first.wrapping_add(stale as u32) & WORD_INDEX_MASK;
        }
        if self.words.is_empty() {
            self.first = seq >> 6;
        }
        let i = self.slot(seq);
        if i == self.words.len() {
            self.words.push_back(0);
        }
        debug_assert!(i < self.words.len(), "pushes must be consecutive");
        if let Some(w) = self.words.get_mut(i) {
            *w |= 1 << (seq & 63);
        }
    }

    /// Removes `seq`; returns whether it was a member.
    pub(crate) fn remove(&mut self, seq: u32) -> bool {
        let i = self.slot(seq);
        self.words.get_mut(i).is_some_and(|w| {
            let m = 1u64 << (seq & 63);
            let was = *w & m != 0;
            *w &= !m;
            was
        })
    }

    /// The first member of the range of `len` numbers from `start`
    /// (`[start, start + len)` modulo 2^32, as ACK ranges are written) at
    /// ring position `from` or later; returns it with its position. Reads
    /// only the words between the clipped ends and skips empty ones, so
    /// resuming at `position + 1` after each member walks a range once
    /// whatever its length or reach outside the window.
    pub(crate) fn first_in(&self, start: u32, len: u32, from: u64) -> Option<(u32, u64)> {
        let origin = self.first << 6;
        let held = self.words.len() as u64 * 64;
        // Position p holds seq (origin + p) mod 2^32. The range starts at
        // position `lo` and, when it runs past position 2^32 - 1, goes on
        // from position 0: that wrapped part comes first in ring order.
        let lo = start.wrapping_sub(origin) as u64;
        let hi = lo + len as u64;
        let wrapped = 0..hi.saturating_sub(1 << 32);
        [wrapped, lo..hi].into_iter().find_map(|run| {
            let p = self.first_set(run.start.max(from), run.end.min(held))?;
            Some((origin.wrapping_add(p as u32), p))
        })
    }

    /// The first set position in `[lo, hi)`; `hi` at most the bits held.
    fn first_set(&self, lo: u64, hi: u64) -> Option<u64> {
        let mut p = lo;
        while p < hi {
            let w = self.words[(p >> 6) as usize] & (u64::MAX << (p & 63));
            if w != 0 {
                let q = (p & !63) + w.trailing_zeros() as u64;
                return (q < hi).then_some(q);
            }
            p = (p | 63) + 1;
        }
        None
    }

    /// Forgets every member.
    pub(crate) fn clear(&mut self) {
        self.words.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::BTreeSet;

    /// `for_each_clear` lists exactly the `i < n` that `get` says are
    /// clear, in order: sets of any size and density, `n` below, at and
    /// past the set's size, the allocated words untouched or not.
    #[test]
    fn for_each_clear_lists_what_get_says_is_clear() {
        let mut rng = Rng::new(11);
        for bits in [0, 1, 63, 64, 65, 127, 128, 129, 300, 1000] {
            for density in [0, 1, 2, 4] {
                let mut b = BitSet::new(bits);
                for i in 0..bits {
                    if density > 0 && rng.below(density) != 0 {
                        b.insert(i);
                    }
                }
                for n in [0, 1, bits / 2, bits, bits + 1, bits + 70] {
                    let want: Vec<usize> = (0..n).filter(|&i| !b.get(i)).collect();
                    let mut got = Vec::new();
                    b.for_each_clear(n, |i| got.push(i));
                    assert_eq!(got, want, "bits {bits}, density {density}, n {n}");
                }
            }
        }
    }

    /// `insert` (inline word, allocated words, the first insert past the
    /// inline word, bits outside the set) against a vector of flags: the
    /// same answers, the same members.
    #[test]
    fn insert_matches_a_vector_of_flags() {
        let mut rng = Rng::new(19);
        for bits in [0, 1, 63, 64, 65, 128, 200, 1000] {
            let mut b = BitSet::new(bits);
            let mut model = vec![false; bits];
            for _ in 0..3 * bits + 10 {
                let i = rng.below(bits as u64 + 70) as usize;
                let was = i < bits && !model[i];
                assert_eq!(b.insert(i), was, "bits {bits}, insert {i}");
                if i < bits {
                    model[i] = true;
                }
            }
            for i in 0..bits + 70 {
                assert_eq!(
                    b.get(i),
                    model.get(i) == Some(&true),
                    "bits {bits}, get {i}"
                );
            }
        }
    }

    /// Every member of `[start, start + len)` (wrapping) in ring order, as
    /// `first_in` walks it.
    fn walk(r: &SeqRing, start: u32, len: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some((s, at)) = r.first_in(start, len, from) {
            out.push(s);
            from = at + 1;
        }
        out
    }

    /// Bits inline (0..64) and in the allocated words behave alike; bits
    /// outside the set are never members and allocate nothing.
    #[test]
    fn bit_set_inline_and_allocated_words() {
        let mut b = BitSet::new(200);
        assert!(b.insert(3) && !b.insert(3));
        assert!(b.rest.is_empty(), "bits under 64 allocate nothing");
        assert!(b.insert(130) && b.get(130) && b.get(3));
        assert!(!b.get(4) && !b.get(129) && !b.get(199));
        assert!(b.insert(199) && b.get(199));
        assert!(!b.insert(200) && !b.get(200) && !b.get(100_000));
        let mut small = BitSet::new(5);
        assert!(!small.insert(5) && !small.get(5) && !small.get(63));
        assert!(small.insert(4) && small.get(4));
        let big = BitSet::new(1 << 20);
        assert!(!big.get(1 << 19));
        assert!(big.rest.is_empty(), "nothing allocated before an insert");
    }

    /// A window sliding across the u32 wrap agrees with an ordered set on
    /// membership and on every range query, however far it reaches.
    #[test]
    fn seq_ring_matches_ordered_set_across_wrap() {
        let mut rng = Rng::new(11);
        let mut ring = SeqRing::default();
        let mut model = BTreeSet::new();
        let mut next = u32::MAX - 700;
        let mut oldest = next;
        for _ in 0..3000 {
            ring.push(next, oldest);
            model.insert(next);
            next = next.wrapping_add(1);
            // Memory follows the window.
            assert!(ring.words.len() <= next.wrapping_sub(oldest) as usize / 64 + 2);
            if rng.chance(0.6) {
                let s = oldest.wrapping_add(rng.below(next.wrapping_sub(oldest) as u64) as u32);
                assert_eq!(ring.remove(s), model.remove(&s));
            }
            // The window starts at the oldest member, as the flight list does.
            while !model.contains(&oldest) && oldest != next {
                oldest = oldest.wrapping_add(1);
            }
            let points = [0, u32::MAX, oldest, next, rng.next_u64() as u32];
            let pick = |rng: &mut Rng| {
                let p = points[rng.below(points.len() as u64) as usize];
                p.wrapping_add(rng.below(200) as u32).wrapping_sub(100)
            };
            // Ranges of any length up to 2^31 - 1, wrapping or not.
            let start = pick(&mut rng);
            let len = match rng.below(3) {
                0 => pick(&mut rng).wrapping_sub(start) % (1 << 31),
                1 => rng.below(1 << 31) as u32,
                _ => rng.below(300) as u32,
            };
            let mut want: Vec<u32> = model
                .iter()
                .copied()
                .filter(|&s| (s.wrapping_sub(start) as u64) < len as u64)
                .collect();
            // Ring order: the members before the wrap come first.
            want.sort_by_key(|s| s.wrapping_sub(oldest));
            assert_eq!(walk(&ring, start, len), want, "range {start} + {len}");
        }
    }
}
