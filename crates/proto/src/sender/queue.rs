//! The scheduler queue: sendable messages ordered by (scheduler key, job
//! and message), its smallest entry held apart.
//!
//! Whether a DATA packet may leave (`SendSide::has_data`) is asked after
//! every call into a connection (the endpoint's ready queue, the pacing and
//! keepalive timers), several times per packet: the head answers it with
//! one load. And the message being sent is usually the head: under MRDF
//! its key (remaining bytes) shrinks with every packet sent or
//! acknowledged, which kept it first but cost a BTreeSet remove plus
//! insert each time (~7 % of a 64 KiB-message sender's profile on veth);
//! [`SchedQueue::replace`] rewrites the head in place when it stays the
//! smallest.
//!
//! The rest is two sorted parts: `run`, the entries queued in bulk (a
//! job's messages, `append_sorted`), consumed from its front; and `set`,
//! entries queued one by one (resends, moved keys). A job of one-packet
//! messages takes each next message off the run's front (a pop from a
//! 2,000-entry BTreeSet cost ~250 instructions with its rebalancing).

use std::collections::{BTreeSet, VecDeque};

/// One entry: (scheduler key, `order(job, message)`).
pub(super) type Entry = (u64, u64);

#[derive(Debug, Default)]
pub(super) struct SchedQueue {
    /// The smallest entry; `None` only when the queue is empty.
    head: Option<Entry>,
    /// Entries queued in bulk, ascending, each larger than `head`.
    run: VecDeque<Entry>,
    /// Entries queued one at a time, each larger than `head`; none also
    /// in `run`.
    set: BTreeSet<Entry>,
}

impl SchedQueue {
    pub(super) fn first(&self) -> Option<&Entry> {
        self.head.as_ref()
    }

    pub(super) fn len(&self) -> usize {
        self.run.len() + self.set.len() + usize::from(self.head.is_some())
    }

    /// The smallest entry of `run` and `set`, taken off.
    // Nothing queued singly (a job's messages sent in order): the run's
    // front, inline; with the tree to compare, out of line (the whole
    // stayed a call of ~38 instructions per message sent).
    #[inline(always)]
    fn take_next(&mut self) -> Option<Entry> {
        if self.set.is_empty() {
            return self.run.pop_front();
        }
        self.take_next_merged()
    }

    /// [`SchedQueue::take_next`] with entries in `set`.
    #[inline(never)]
    fn take_next_merged(&mut self) -> Option<Entry> {
        match (self.run.front(), self.set.first()) {
            (Some(r), Some(s)) if s < r => self.set.pop_first(),
            (Some(_), _) => self.run.pop_front(),
            (None, _) => self.set.pop_first(),
        }
    }

    fn in_run(&self, e: &Entry) -> Option<usize> {
        if self.run.front().is_none_or(|f| e < f) {
            return None;
        }
        self.run.binary_search(e).ok()
    }

    pub(super) fn insert(&mut self, e: Entry) {
        match self.head {
            None => self.head = Some(e),
            Some(h) if e < h => {
                // the old head is below everything else: the run's front
                self.run.push_front(h);
                self.head = Some(e);
            }
            Some(h) if e == h => {}
            Some(_) => {
                if self.in_run(&e).is_none() {
                    self.set.insert(e);
                }
            }
        }
    }

    #[inline]
    pub(super) fn remove(&mut self, e: &Entry) {
        if self.head == Some(*e) {
            self.head = self.take_next();
        } else if !self.set.remove(e) {
            if let Some(i) = self.in_run(e) {
                self.run.remove(i);
            }
        }
    }

    /// Moves entry `old` to `new`, as `remove(old)` then `insert(new)`:
    /// the head rewritten in place when it stays the smallest.
    pub(super) fn replace(&mut self, old: &Entry, new: Entry) {
        let stays_first = self.head == Some(*old)
            && self.run.front().is_none_or(|f| new < *f)
            && self.set.first().is_none_or(|f| new < *f);
        if stays_first {
            self.head = Some(new);
        } else {
            self.remove(old);
            self.insert(new);
        }
    }

    /// Takes the head off (the next entry becomes the head).
    #[inline(always)]
    pub(super) fn pop_head(&mut self) {
        self.head = self.take_next();
    }

    pub(super) fn pop_first(&mut self) -> Option<Entry> {
        let e = self.head.take();
        self.head = self.take_next();
        e
    }

    pub(super) fn clear(&mut self) {
        self.run.clear();
        self.set.clear();
        self.head = None;
    }

    /// Adds many entries at once: sorted into the run (merged with what
    /// it holds: linear).
    pub(super) fn append_sorted(&mut self, mut new: Vec<Entry>) {
        new.sort_unstable();
        new.dedup();
        if let Some(h) = self.head.take() {
            self.run.push_front(h);
        }
        let old = std::mem::take(&mut self.run);
        let mut merged = VecDeque::with_capacity(old.len() + new.len());
        let (mut a, mut b) = (old.into_iter().peekable(), new.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x == y => {
                    b.next();
                    a.next()
                }
                (Some(x), Some(y)) if x < y => a.next(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        self.run = merged;
        // one queued singly and again in bulk stays once (in the run)
        let run = &self.run;
        self.set.retain(|e| run.binary_search(e).is_err());
        self.head = self.take_next();
    }

    /// Keeps the entries `keep` accepts.
    pub(super) fn rebuild_keeping(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        let head = self.head.take().filter(|h| keep(h));
        self.run.retain(|e| keep(e));
        self.set = std::mem::take(&mut self.set)
            .into_iter()
            .filter(|e| keep(e))
            .collect();
        self.head = head.or_else(|| self.take_next());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The queue holds exactly what a plain BTreeSet given the same
    /// operations holds, whatever the mix of inserts, removals, replaces
    /// (of the head and of other entries), pops (`pop_first`,
    /// `pop_head`), bulk appends and rebuilds.
    #[test]
    fn matches_a_plain_ordered_set() {
        let mut q = SchedQueue::default();
        let mut model = BTreeSet::new();
        let mut rng = Rng::new(4);
        for step in 0..6000u64 {
            match rng.below(12) {
                0..=3 => {
                    let e = (rng.below(50), step);
                    q.insert(e);
                    model.insert(e);
                }
                4..=5 => {
                    let pick = model.iter().nth(rng.below(model.len() as u64 + 1) as usize);
                    let e = pick.copied().unwrap_or((7, 7)); // absent: nothing changes
                    q.remove(&e);
                    model.remove(&e);
                }
                6 => {
                    if rng.below(2) == 0 {
                        assert_eq!(q.pop_first(), model.pop_first());
                    } else {
                        q.pop_head(); // the head dropped without a copy
                        model.pop_first();
                    }
                }
                7 => {
                    let mut new: Vec<Entry> = (0..rng.below(20))
                        .map(|i| (rng.below(50), 10_000 + step * 32 + i))
                        .collect();
                    // now and then one already queued (kept once)
                    let pick = model.iter().nth(rng.below(model.len() as u64 + 1) as usize);
                    new.extend(pick.copied());
                    model.extend(new.iter().copied());
                    q.append_sorted(new);
                }
                8 => {
                    let cut = rng.below(50);
                    q.rebuild_keeping(|&(k, _)| k != cut);
                    model.retain(|&(k, _)| k != cut);
                }
                9..=10 => {
                    // mostly the head, as MRDF does; sometimes another entry
                    let pick = if rng.below(4) == 0 {
                        model.iter().nth(rng.below(model.len() as u64 + 1) as usize)
                    } else {
                        model.first()
                    };
                    if let Some(&old) = pick {
                        let new = (old.0.saturating_sub(rng.below(8)), old.1);
                        q.replace(&old, new);
                        model.remove(&old);
                        model.insert(new);
                    }
                }
                _ => {
                    if rng.below(20) == 0 {
                        q.clear();
                        model.clear();
                    }
                }
            }
            assert_eq!(q.first(), model.first(), "step {step}");
            assert_eq!(q.len(), model.len(), "step {step}");
        }
        let mut rest = Vec::new();
        while let Some(e) = q.pop_first() {
            rest.push(e);
        }
        assert_eq!(rest, model.into_iter().collect::<Vec<_>>());
    }
}
