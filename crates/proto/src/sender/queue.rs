//! The scheduler queue: sendable messages ordered by (scheduler key, job
//! and message), with the first entry cached.
//!
//! Whether a DATA packet may leave (`SendSide::has_data`) is asked after
//! every call into a connection (the endpoint's ready queue, the pacing and
//! keepalive timers), several times per packet; a BTreeSet answers it by
//! walking to its leftmost leaf. The cached first entry answers it with one
//! load; only a change at the front walks the tree again.

use std::collections::BTreeSet;

/// One entry: (scheduler key, `order(job, message)`).
pub(super) type Entry = (u64, u64);

#[derive(Debug, Default)]
pub(super) struct SchedQueue {
    set: BTreeSet<Entry>,
    /// `set.first()`, kept in step by every method.
    first: Option<Entry>,
}

impl SchedQueue {
    pub(super) fn first(&self) -> Option<&Entry> {
        self.first.as_ref()
    }

    pub(super) fn len(&self) -> usize {
        self.set.len()
    }

    pub(super) fn insert(&mut self, e: Entry) {
        if self.first.is_none_or(|f| e < f) {
            self.first = Some(e);
        }
        self.set.insert(e);
    }

    pub(super) fn remove(&mut self, e: &Entry) {
        if self.set.remove(e) && self.first == Some(*e) {
            self.first = self.set.first().copied();
        }
    }

    pub(super) fn pop_first(&mut self) -> Option<Entry> {
        let e = self.set.pop_first();
        self.first = self.set.first().copied();
        e
    }

    pub(super) fn clear(&mut self) {
        self.set.clear();
        self.first = None;
    }

    /// Adds many entries at once: sorted and bulk-built, then merged.
    pub(super) fn append_sorted(&mut self, mut new: Vec<Entry>) {
        new.sort_unstable();
        let mut built: BTreeSet<Entry> = new.into_iter().collect();
        self.set.append(&mut built);
        self.first = self.set.first().copied();
    }

    /// Keeps the entries `keep` accepts, rebuilding the tree from its sorted
    /// survivors (a bulk build: cheaper than many removals).
    pub(super) fn rebuild_keeping(&mut self, keep: impl FnMut(&Entry) -> bool) {
        self.set = std::mem::take(&mut self.set)
            .into_iter()
            .filter(keep)
            .collect();
        self.first = self.set.first().copied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The cached first entry always equals the tree's, whatever the mix
    /// of inserts, removals, pops, bulk appends and rebuilds.
    #[test]
    fn cached_first_follows_every_change() {
        let mut q = SchedQueue::default();
        let mut rng = Rng::new(4);
        for step in 0..4000u64 {
            match rng.below(10) {
                0..=3 => q.insert((rng.below(50), step)),
                4..=5 => {
                    if let Some(&e) = q.set.iter().nth(rng.below(q.len() as u64 + 1) as usize) {
                        q.remove(&e);
                    } else {
                        q.remove(&(7, 7)); // absent: nothing changes
                    }
                }
                6 => {
                    let want = q.set.first().copied();
                    assert_eq!(q.pop_first(), want);
                }
                7 => q.append_sorted(
                    (0..rng.below(20))
                        .map(|i| (rng.below(50), 10_000 + step * 32 + i))
                        .collect(),
                ),
                8 => {
                    let cut = rng.below(50);
                    q.rebuild_keeping(|&(k, _)| k != cut);
                }
                _ => {
                    if rng.below(20) == 0 {
                        q.clear();
                    }
                }
            }
            assert_eq!(q.first().copied(), q.set.first().copied(), "step {step}");
        }
    }
}
