//! The endpoint's ready queue: connections that may have a datagram to
//! send, in round-robin order, each at most once (`Slot::in_ready`).
//!
//! A ring over a power-of-two buffer. `VecDeque::push_back` kept its grow
//! path in the same function, which stayed a call (~17 instructions, two
//! pushes per DATA packet: the pacer's wake-up and the ACK's arrival);
//! here the push is a store and a mask, and growing is a separate cold
//! function. A connection is queued at most once, so the ring holds at
//! most one entry per slot and grows only with the slot table.

/// FIFO of slot indices.
#[derive(Debug, Default)]
pub(super) struct ReadyQueue {
    /// Power-of-two length (or empty); entries at `head..head + len`, wrapping.
    buf: Vec<usize>,
    head: usize,
    len: usize,
}

impl ReadyQueue {
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    pub(super) fn push_back(&mut self, i: usize) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        let at = (self.head + self.len) & mask;
        self.buf[at] = i;
        self.len += 1;
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let i = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(i)
    }

    /// Doubles the buffer (at least 8), the entries unwrapped to its start.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (2 * self.buf.len()).max(8);
        let mut buf = Vec::with_capacity(cap);
        let mask = self.buf.len().wrapping_sub(1);
        buf.extend((0..self.len).map(|k| self.buf[(self.head + k) & mask]));
        buf.resize(cap, 0);
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::VecDeque;

    /// The same answers as a `VecDeque` under any mix of pushes and pops,
    /// across growth with the entries wrapped.
    #[test]
    fn matches_a_vecdeque() {
        let mut q = ReadyQueue::default();
        let mut model = VecDeque::new();
        let mut rng = Rng::new(7);
        for step in 0..20_000usize {
            // pushes a little more often than pops: the queue grows
            // through several sizes while wrapping
            if rng.below(9) < 5 {
                q.push_back(step);
                model.push_back(step);
            } else {
                assert_eq!(q.pop_front(), model.pop_front(), "step {step}");
            }
            assert_eq!(q.is_empty(), model.is_empty(), "step {step}");
            assert_eq!(q.len, model.len());
        }
        while let Some(x) = model.pop_front() {
            assert_eq!(q.pop_front(), Some(x));
        }
        assert_eq!(q.pop_front(), None);
    }
}
