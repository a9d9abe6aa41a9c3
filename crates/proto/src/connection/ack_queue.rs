//! The ACKs a connection has queued to send, built in place and emitted by
//! reference. Each sits behind a `Control::Ack` marker in the control
//! queue, which keeps the order among control packets; the 128-byte value
//! (echo header and ACK body) is never moved through the control queue, a
//! pending slot and a `match` (~80 instructions per ACK that way).

use crate::wire::{AckRepr, HeaderRepr};

/// One ACK waiting to leave: the header it echoes and its body.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QueuedAck {
    pub(super) h: HeaderRepr,
    pub(super) ack: AckRepr,
}

/// A ring of [`QueuedAck`]s, oldest first, and past them the pending
/// slot: the header of the last DATA packet not yet acknowledged, written
/// there as it arrives and queued as it stands when the ACK is flushed
/// (no copy through an `Option` and into the ring). It holds as many as
/// were queued and not yet sent, as the control queue it stands beside did.
#[derive(Debug, Default)]
pub(super) struct AckQueue {
    /// Never full once used: `slots[(head + len) % slots.len()]` is the
    /// pending slot.
    slots: Vec<QueuedAck>,
    head: usize,
    len: usize,
}

impl AckQueue {
    /// The pending slot (its contents are what was last written there, or
    /// unspecified): it becomes the newest queued ACK on [`AckQueue::commit`].
    #[inline]
    pub(super) fn pending(&mut self) -> &mut QueuedAck {
        if self.slots.is_empty() {
            self.grow();
        }
        let mut i = self.head + self.len;
        if i >= self.slots.len() {
            i -= self.slots.len();
        }
        &mut self.slots[i]
    }

    /// Queues the pending slot as the newest ACK; the next slot becomes
    /// the pending one.
    #[inline]
    pub(super) fn commit(&mut self) {
        if self.slots.is_empty() {
            self.grow();
        }
        self.len += 1;
        if self.len == self.slots.len() {
            self.grow();
        }
    }

    /// Makes room for one more, keeping the order (oldest at index 0).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.slots.rotate_left(self.head);
        self.head = 0;
        let more = self.slots.len().max(1);
        self.slots
            .resize(self.slots.len() + more, QueuedAck::default());
    }

    /// The oldest ACK queued.
    #[inline]
    pub(super) fn front(&self) -> Option<&QueuedAck> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    /// Drops the oldest ACK queued.
    #[inline]
    pub(super) fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        self.head += 1;
        if self.head == self.slots.len() {
            self.head = 0;
        }
    }

    /// Drops every ACK queued; the pending slot keeps what it holds.
    pub(super) fn clear(&mut self) {
        if !self.slots.is_empty() {
            self.head = (self.head + self.len) % self.slots.len();
        }
        self.len = 0;
    }

    /// ACKs queued.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Pushes and pops in any interleaving (growth across the wrap
    /// included) give the order a `VecDeque` gives, and the pending slot
    /// keeps its contents across pops, growth and `clear`.
    #[test]
    fn the_ring_keeps_the_order_of_a_deque() {
        let mut q = AckQueue::default();
        let mut model = VecDeque::new();
        let mut rng = crate::rng::Rng::new(5);
        for n in 0..5000u32 {
            match rng.below(7) {
                0..=3 => {
                    q.pending().h.seq = n;
                    if rng.below(2) == 0 {
                        q.commit();
                        model.push_back(n);
                    } else {
                        q.pop_front();
                        model.pop_front();
                        assert_eq!(q.pending().h.seq, n, "pending kept");
                    }
                }
                4 => {
                    q.pending().h.seq = n;
                    q.clear();
                    model.clear();
                    assert_eq!(q.pending().h.seq, n, "pending kept");
                }
                _ => {
                    assert_eq!(q.front().map(|a| a.h.seq), model.front().copied());
                    q.pop_front();
                    model.pop_front();
                }
            }
            assert_eq!(q.len(), model.len());
        }
        while let Some(&m) = model.front() {
            assert_eq!(q.front().map(|a| a.h.seq), Some(m));
            q.pop_front();
            model.pop_front();
        }
        assert!(q.front().is_none());
        q.pop_front();
        assert_eq!(q.len(), 0);
        q.pending().h.seq = 7;
        q.commit();
        assert_eq!(q.front().map(|a| a.h.seq), Some(7));
    }
}
