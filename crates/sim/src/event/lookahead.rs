//! Looking ahead in the event list without changing it: the events the
//! next pops return, for the simulator's prefetching (see
//! `engine::Simulator::run`).

use super::{EventList, Packed, EMPTY_SLOT, MASK, ONLY_FIRST, SLOTS};
use crate::event::Ev;

impl EventList {
    /// The event [`EventList::pop`] returns next if it is due at the same
    /// nanosecond as the last one popped (for prefetching).
    #[inline]
    pub fn peek_ready(&self) -> Option<Ev> {
        self.peek_ready_packed().map(Packed::ev)
    }

    /// [`EventList::peek_ready`], the event left packed.
    #[inline(always)]
    pub fn peek_ready_packed(&self) -> Option<Packed> {
        let slot = &self.slots[(self.now & MASK) as usize];
        (slot.head != EMPTY_SLOT).then_some(Packed(slot.first))
    }

    /// [`EventList::peek_ready_packed`] right after a pop, nothing pushed
    /// since: the popped slot's next event, known from the pop (the slot
    /// itself is read only when it has one; the peek read it after every
    /// event, ~5 instructions).
    #[inline(always)]
    pub fn peek_popped(&self) -> Option<Packed> {
        let ev = self
            .popped_more
            .then(|| Packed(self.slots[(self.now & MASK) as usize].first));
        debug_assert_eq!(ev, self.peek_ready_packed(), "a push since the pop");
        ev
    }

    /// The next `N` events [`EventList::pop`] returns, as far as the
    /// wheel holds them (never changes the list; for prefetching).
    #[inline]
    pub fn upcoming<const N: usize>(&self) -> [Option<Ev>; N] {
        self.upcoming_packed::<N>().map(|p| p.map(Packed::ev))
    }

    /// [`EventList::upcoming`], the events left packed.
    #[inline]
    pub fn upcoming_packed<const N: usize>(&self) -> [Option<Packed>; N] {
        let mut out = [None; N];
        if self.near == 0 {
            return out;
        }
        let start = (self.now & MASK) as usize;
        let mut s = if self.slots[start].head != EMPTY_SLOT {
            start
        } else {
            self.next_slot(start)
        };
        // the slot's `first`, then its chunks' events from the first
        // chunk's read position
        let mut k = 0;
        loop {
            let slot = self.slots[s];
            out[k] = Some(Packed(slot.first));
            k += 1;
            if k == N || k == self.near {
                return out;
            }
            if slot.head != ONLY_FIRST {
                let mut c = slot.head;
                let mut i = self.chunks[c as usize].read as usize;
                loop {
                    let chunk = &self.chunks[c as usize];
                    if i == chunk.written as usize {
                        if c == slot.tail {
                            break;
                        }
                        (c, i) = (chunk.next, 0);
                        continue;
                    }
                    out[k] = Some(Packed(chunk.ev[i]));
                    k += 1;
                    if k == N || k == self.near {
                        return out;
                    }
                    i += 1;
                }
            }
            // every slot holds a time of the window: going round from
            // `s` meets the later ones in time order
            s = self.next_slot((s + 1) & (SLOTS - 1));
        }
    }

    /// [`EventList::upcoming_packed`] for two events, without its loop:
    /// the loop's array, indexed by a counter, lives in memory, and the
    /// deep prefetch pipeline asks for these two every event (in the
    /// k = 12 ATP run, ~8 instructions an event more than this).
    #[inline(always)]
    pub fn upcoming_two(&self) -> (Option<Packed>, Option<Packed>) {
        if self.near == 0 {
            return (None, None);
        }
        let mut s = (self.now & MASK) as usize;
        if self.slots[s].head == EMPTY_SLOT {
            s = self.next_slot(s);
        }
        let slot = &self.slots[s];
        let next = Some(Packed(slot.first));
        if self.near == 1 {
            return (next, None);
        }
        let after = if slot.head != ONLY_FIRST {
            // a slot's first chunk always holds an unread event (`refill_first`
            // frees it when its last is read)
            let c = &self.chunks[slot.head as usize];
            c.ev[c.read as usize]
        } else {
            self.slots[self.next_slot((s + 1) & (SLOTS - 1))].first
        };
        (next, Some(Packed(after)))
    }
}
