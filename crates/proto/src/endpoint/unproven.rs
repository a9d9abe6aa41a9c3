//! The pool of unproven connections (issue 11): connections a peer's JOB
//! opened that have had no DATA yet. A valid cookie proves an address only
//! while the secret is kept, so they are capped in count and in bytes
//! (`Limits::unproven_cap`, `Limits::unproven_bytes_cap`), the oldest
//! evicted first; a JOB carrying the id of a HELLO_ACK this endpoint sent
//! lately is vouched for and skips probation. Also here: evicting an
//! unproven connection when the table or the byte budget is full.

use super::{Endpoint, IdHasher};
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasherDefault;

/// Slots looked at per search for an evictable connection.
const EVICT_SCAN: usize = 64;

/// HELLO_ACK ids remembered to vouch for the JOB that follows (16 KiB).
const ISSUED_REMEMBERED: usize = 1024;

/// The endpoint's books on unproven connections, by slot of its table.
#[derive(Default)]
pub(super) struct UnprovenPool {
    /// Connections a peer's JOB opened that have had no DATA yet, oldest
    /// first (`(slot, generation)`; entries of connections since proven or
    /// gone are skipped lazily), their count and what they are charged:
    /// bounded by `Limits::max_unproven` / `max_unproven_bytes`.
    probation: VecDeque<(usize, u32)>,
    on_probation: Vec<bool>,
    /// The ids of the latest HELLO_ACKs sent (at most [`ISSUED_REMEMBERED`]),
    /// oldest first, and as a set: a JOB carrying one of them comes from
    /// whoever received that reply, not from a sender that computed a
    /// valid id for a spoofed address; its connection skips probation.
    issued: VecDeque<u64>,
    issued_set: HashSet<u64, BuildHasherDefault<IdHasher>>,
    count: usize,
    held: usize,
}

impl UnprovenPool {
    /// The endpoint's table grew by one slot.
    pub(super) fn add_slot(&mut self) {
        self.on_probation.push(false);
    }

    /// Unproven connections held.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// Bytes unproven connections are charged.
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// Whether connection `i` is on probation.
    pub(super) fn on_probation(&self, i: usize) -> bool {
        self.on_probation[i]
    }

    /// Remembers the id of a HELLO_ACK about to be sent.
    pub(super) fn issue(&mut self, id: u64) {
        if self.issued.len() >= ISSUED_REMEMBERED {
            if let Some(old) = self.issued.pop_front() {
                self.issued_set.remove(&old);
            }
        }
        if self.issued_set.insert(id) {
            self.issued.push_back(id);
        }
    }

    /// Whether `id` is one of the HELLO_ACK ids remembered; it vouches once.
    pub(super) fn vouched(&mut self, id: u64) -> bool {
        self.issued_set.remove(&id)
    }

    /// Connection `i`'s charge went from `old` to `new` bytes.
    pub(super) fn recharge(&mut self, i: usize, old: usize, new: usize) {
        if self.on_probation[i] {
            self.held = self.held - old + new;
        }
    }

    /// Connection `i`, charged `charged` bytes, leaves probation (proven
    /// or gone); nothing if it was not on probation.
    pub(super) fn end(&mut self, i: usize, charged: usize) {
        if std::mem::take(&mut self.on_probation[i]) {
            self.count -= 1;
            self.held -= charged;
        }
    }
}

impl Endpoint {
    /// Connections opened by a peer's JOB that have received no DATA yet,
    /// and the bytes they are charged (bounded by `Limits::unproven_cap`
    /// and `Limits::unproven_bytes_cap`, the latter up to one JOB's charge).
    pub fn unproven(&self) -> (usize, usize) {
        (self.unproven.count, self.unproven.held)
    }

    /// The table or the byte budget is full: evicts one unproven connection
    /// (no job of its own, no DATA received in the `min_rto` since it opened),
    /// looking at no more than [`EVICT_SCAN`] slots from a rotating cursor
    /// so that a flood pays a bounded cost per packet. Established
    /// connections that carried DATA are never evicted.
    pub(super) fn evict_one(&mut self) -> bool {
        let n = self.slots.len();
        if n == 0 {
            return false;
        }
        let grace = self.cfg.min_rto;
        for _ in 0..EVICT_SCAN.min(n) {
            let i = self.evict_cursor % n;
            self.evict_cursor = (i + 1) % n;
            let now = self.now;
            if let Some(c) = self.slots[i].conn.as_mut() {
                if c.unproven(now, grace) {
                    c.evict();
                    self.stats.evicted += 1;
                    self.touched(i);
                    if self.slots[i].conn.is_some() {
                        // control still to send (cannot happen after a
                        // shutdown without FIN_ACKs); forget it anyway
                        self.forget(i);
                    }
                    return true;
                }
            }
        }
        false
    }

    /// Evicts the oldest unproven connection other than `keep`, however
    /// young (the pool is full); false when there is none.
    pub(super) fn evict_oldest_unproven(&mut self, keep: Option<usize>) -> bool {
        let mut kept = None;
        let mut evicted = false;
        while let Some((i, generation)) = self.unproven.probation.pop_front() {
            if !self.unproven.on_probation[i] || self.slots[i].generation != generation {
                continue; // proven or gone since
            }
            if Some(i) == keep {
                kept = Some((i, generation));
                continue;
            }
            if let Some(c) = self.slots[i].conn.as_mut() {
                c.evict();
                self.stats.evicted += 1;
                self.touched(i);
                if self.slots[i].conn.is_some() {
                    self.forget(i);
                }
                evicted = true;
                break;
            }
        }
        if let Some(k) = kept {
            self.unproven.probation.push_front(k);
        }
        evicted
    }

    /// Puts connection `i`, just opened by a peer's JOB, on probation.
    pub(super) fn start_probation(&mut self, i: usize) {
        let pool = &mut self.unproven;
        pool.on_probation[i] = true;
        pool.count += 1;
        pool.probation.push_back((i, self.slots[i].generation));
        if pool.probation.len() > 2 * self.cfg.limits.unproven_cap() + 64 {
            // Mostly entries of connections proven since: drop them.
            let (flags, slots) = (&pool.on_probation, &self.slots);
            pool.probation
                .retain(|&(j, g)| flags[j] && slots[j].generation == g);
        }
    }
}
