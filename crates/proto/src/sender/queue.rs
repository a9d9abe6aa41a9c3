//! The scheduler queue: sendable messages ordered by (scheduler key, job
//! and message), its smallest entry held outside the tree.
//!
//! Whether a DATA packet may leave (`SendSide::has_data`) is asked after
//! every call into a connection (the endpoint's ready queue, the pacing and
//! keepalive timers), several times per packet: the head answers it with
//! one load. And the message being sent is usually the head: under MRDF
//! its key (remaining bytes) shrinks with every packet sent or
//! acknowledged, which kept it first but cost a BTreeSet remove plus
//! insert each time (~7 % of a 64 KiB-message sender's profile on veth);
//! [`SchedQueue::replace`] now rewrites the head in place when it stays
//! the smallest.

use std::collections::BTreeSet;

/// One entry: (scheduler key, `order(job, message)`).
pub(super) type Entry = (u64, u64);

#[derive(Debug, Default)]
pub(super) struct SchedQueue {
    /// The smallest entry; `None` only when the queue is empty.
    head: Option<Entry>,
    /// Every other entry, each larger than `head`.
    set: BTreeSet<Entry>,
}

impl SchedQueue {
    pub(super) fn first(&self) -> Option<&Entry> {
        self.head.as_ref()
    }

    pub(super) fn len(&self) -> usize {
        self.set.len() + usize::from(self.head.is_some())
    }

    pub(super) fn insert(&mut self, e: Entry) {
        match self.head {
            None => self.head = Some(e),
            Some(h) if e < h => {
                self.set.insert(h);
                self.head = Some(e);
            }
            Some(h) if e == h => {}
            Some(_) => {
                self.set.insert(e);
            }
        }
    }

    pub(super) fn remove(&mut self, e: &Entry) {
        if self.head == Some(*e) {
            self.head = self.set.pop_first();
        } else {
            self.set.remove(e);
        }
    }

    /// Moves entry `old` to `new`, as `remove(old)` then `insert(new)`:
    /// the head rewritten in place when it stays the smallest.
    pub(super) fn replace(&mut self, old: &Entry, new: Entry) {
        if self.head == Some(*old) && self.set.first().is_none_or(|f| new < *f) {
            self.head = Some(new);
        } else {
            self.remove(old);
            self.insert(new);
        }
    }

    pub(super) fn pop_first(&mut self) -> Option<Entry> {
        let e = self.head.take();
        self.head = self.set.pop_first();
        e
    }

    pub(super) fn clear(&mut self) {
        self.set.clear();
        self.head = None;
    }

    /// Adds many entries at once: sorted and bulk-built, then merged.
    pub(super) fn append_sorted(&mut self, mut new: Vec<Entry>) {
        new.sort_unstable();
        let mut built: BTreeSet<Entry> = new.into_iter().collect();
        if let Some(h) = self.head.take() {
            built.insert(h);
        }
        self.set.append(&mut built);
        self.head = self.set.pop_first();
    }

    /// Keeps the entries `keep` accepts, rebuilding the tree from its sorted
    /// survivors (a bulk build: cheaper than many removals).
    pub(super) fn rebuild_keeping(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        let head = self.head.take().filter(|h| keep(h));
        let mut set: BTreeSet<Entry> = std::mem::take(&mut self.set)
            .into_iter()
            .filter(keep)
            .collect();
        self.head = head.or_else(|| set.pop_first());
        self.set = set;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The queue holds exactly what a plain BTreeSet given the same
    /// operations holds, whatever the mix of inserts, removals, replaces
    /// (of the head and of other entries), pops, bulk appends and rebuilds.
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
                6 => assert_eq!(q.pop_first(), model.pop_first()),
                7 => {
                    let new: Vec<Entry> = (0..rng.below(20))
                        .map(|i| (rng.below(50), 10_000 + step * 32 + i))
                        .collect();
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
