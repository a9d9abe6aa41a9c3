//! The event list: an explicit value, never a global.
//!
//! Events are ordered by `(time, sequence)`: two events at the same
//! nanosecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.
//!
//! The list is a timing wheel of one-nanosecond slots over the next
//! [`WHEEL_NS`] nanoseconds, where nearly every event of a packet network
//! lands (a hop, a serialisation end); the events further ahead (timers,
//! job starts) wait in a FIFO while they are scheduled in time order and in
//! a binary heap keyed by `(time, sequence)` otherwise.
//! A slot holds its next event inline and the later ones in a FIFO list
//! of chunks of seven events (one cache line each), so events of equal
//! time come out in scheduling order; a far event is moved into its slot as soon as the wheel's window
//! reaches it — before any event of that time can be scheduled into the
//! wheel directly, since the window only moves forward — and the heap gives
//! them up in `(time, sequence)` order: the order is exactly that of one
//! binary heap with a sequence counter (a unit test checks this against
//! one). Scheduling and popping a near event cost a few instructions each,
//! where the radix heap used before moved every event once per hex digit
//! of its distance (~3 times for a hop).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use approxnet_proto::time::Instant;

mod kinds;
mod lookahead;
pub use kinds::{Ev, Packed, MAX_NODE};

/// Slots of the wheel (log2): events up to this many nanoseconds ahead
/// go into the wheel, later ones into the far heap.
const WHEEL_BITS: u32 = 14;
/// Nanoseconds the wheel covers ahead of the current time.
pub const WHEEL_NS: u64 = 1 << WHEEL_BITS;
const SLOTS: usize = 1 << WHEEL_BITS;
const MASK: u64 = WHEEL_NS - 1;
/// 64-bit words of the wheel's occupancy bitmap.
const WORDS: usize = SLOTS / 64;
const NIL: u32 = u32::MAX;

/// Events a [`Chunk`] holds.
const PER_CHUNK: usize = 7;

/// A run of up to [`PER_CHUNK`] packed events of one slot after its first,
/// in scheduling order, the slot's next chunk and the chunk's read and
/// write positions: one cache line. A slot's later events lie side by
/// side, so popping them reads one line per seven events, where a linked
/// node per event cost a dependent load (and at k >= 16 a cache miss) per
/// event.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Chunk {
    ev: [u64; PER_CHUNK],
    next: u32,
    /// Next event to move to the slot's `first` (meaningful in the
    /// slot's first chunk).
    read: u8,
    /// Events written (meaningful in the slot's last chunk; the others
    /// are full).
    written: u8,
}

/// [`Slot::head`] of an empty slot.
const EMPTY_SLOT: u32 = u32::MAX;
/// [`Slot::head`] of a slot that holds only its `first` event.
const ONLY_FIRST: u32 = u32::MAX - 1;

/// A wheel slot: its next event inline, then its chunks. In a sparse run
/// (the ns-3 dumbbell: 95 % of slots ever used held one event) a slot's
/// one event is written and read here, in the line the slot test reads
/// anyway, with no chunk taken from or returned to the free list; a
/// crowded slot moves its chunks' events into `first` one pop at a time,
/// so `first` is always the slot's next event.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Slot {
    /// The slot's next event (meaningless when the slot is empty).
    first: u64,
    /// [`EMPTY_SLOT`], [`ONLY_FIRST`], or the first chunk of the events
    /// after `first` (always the slot's bit in [`EventList::bits`] too:
    /// a push tests the bit, a pop the slot, whichever line is in the
    /// cache).
    head: u32,
    /// The last chunk (meaningful when `head` is a chunk).
    tail: u32,
}

const EMPTY: Slot = Slot {
    first: 0,
    head: EMPTY_SLOT,
    tail: NIL,
};

/// A timing wheel over the next [`WHEEL_NS`] nanoseconds and a binary heap
/// beyond, with deterministic (FIFO) tie breaking.
///
/// Invariant between calls: the wheel holds exactly the pending events
/// due before `now + WHEEL_NS` (slot `t mod WHEEL_NS`, one time per slot),
/// the far heap the others.
#[derive(Debug)]
pub struct EventList {
    slots: Box<[Slot; SLOTS]>,
    /// Chunks of wheel events; freed ones are chained from `free` through
    /// `next`.
    chunks: Vec<Chunk>,
    free: u32,
    /// Bit `s` set when slot `s` holds events (2 KiB, in the list itself:
    /// boxed, every push, pop and scan loaded its address first).
    bits: [u64; WORDS],
    /// Bit `w` set when `bits[w]` is non-zero.
    summary: [u64; WORDS / 64],
    /// Events in the wheel.
    near: usize,
    /// Events due at or after `now + WHEEL_NS`, as `(time, sequence,
    /// event)`: those scheduled in time order (job starts, most timers) in
    /// `far_run`, a FIFO, the others in `far`, a heap; both give them up
    /// in `(time, sequence)` order and [`EventList::migrate`] merges them.
    far: BinaryHeap<Reverse<(u64, u64, u64)>>,
    far_run: VecDeque<(u64, u64, u64)>,
    /// Sequence number of the next far event (ties among far events).
    far_seq: u64,
    /// Earliest time among the far events (`u64::MAX` when there are
    /// none; set through [`EventList::set_far_min`]).
    far_min: u64,
    /// `far_min - (WHEEL_NS - 1)` (saturating): the clock time from which
    /// the earliest far event lies in the window. `advance` compares the
    /// clock with it, one compare an event where `t + WHEEL_NS - 1`
    /// (saturating) cost three.
    far_due: u64,
    now: u64,
    executed: u64,
    /// Whether the slot of the last pop still holds events (at its
    /// nanosecond: [`EventList::peek_popped`]).
    popped_more: bool,
}

impl Default for EventList {
    fn default() -> Self {
        EventList {
            slots: vec![EMPTY; SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS slots"),
            chunks: Vec::new(),
            free: NIL,
            bits: [0; WORDS],
            summary: [0; WORDS / 64],
            near: 0,
            far: BinaryHeap::new(),
            far_run: VecDeque::new(),
            far_seq: 0,
            far_min: u64::MAX,
            far_due: u64::MAX - (WHEEL_NS - 1),
            now: 0,
            executed: 0,
            popped_more: false,
        }
    }
}

impl EventList {
    /// An empty list at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `ev` at `at`. Scheduling in the past is a bug; it is
    /// clamped to now in release builds and asserted in debug builds.
    ///
    /// Inlined into every caller: the event's tag is then a constant there
    /// and its packing a shift or two (out of line, the call and the
    /// packing's `match` cost ~25 instructions an event).
    #[inline(always)]
    pub fn schedule(&mut self, at: Instant, ev: Ev) {
        debug_assert!(at.as_nanos() >= self.now, "event scheduled in the past");
        let time = at.as_nanos().max(self.now);
        if time - self.now < WHEEL_NS {
            self.push_near(time, ev.pack());
        } else {
            self.push_far(time, ev.pack());
        }
    }

    /// [`EventList::schedule`] of an event the caller knows is not in the
    /// past (`at >= now`): no clamp (a debug build asserts it).
    #[inline(always)]
    pub fn schedule_ahead(&mut self, at: Instant, ev: Ev) {
        debug_assert!(at.as_nanos() >= self.now, "event scheduled in the past");
        let time = at.as_nanos();
        if time.wrapping_sub(self.now) < WHEEL_NS {
            self.push_near(time, ev.pack());
        } else {
            self.push_far(time, ev.pack());
        }
    }

    /// Files a packed event due at or after `now + WHEEL_NS`.
    #[inline(never)]
    fn push_far(&mut self, time: u64, ev: u64) {
        let e = (time, self.far_seq, ev);
        self.far_seq += 1;
        if self.far_run.back().is_none_or(|b| b.0 <= time) {
            self.far_run.push_back(e);
        } else {
            self.far.push(Reverse(e));
        }
        self.set_far_min(self.far_min.min(time));
    }

    /// Appends a packed event to the slot of `time` (within the window).
    ///
    /// Whether the slot is empty comes from the bitmap (2 KiB, in the L1
    /// cache), so an empty slot's line is written, never read: the store
    /// waits in the store buffer while its line is fetched. The slot's own
    /// `head` read first, as before, missed the L1 cache nearly every hop
    /// of the ns-3 dumbbell (256 KiB of slots, each line used about once
    /// a millisecond of simulated time): ~22 % of `enqueue`'s samples sat
    /// on that one compare.
    #[inline(always)]
    fn push_near(&mut self, time: u64, ev: u64) {
        let s = (time & MASK) as usize;
        self.near += 1;
        let word = self.bits[s / 64];
        if word >> (s % 64) & 1 == 0 {
            let slot = &mut self.slots[s];
            slot.first = ev;
            slot.head = ONLY_FIRST;
            self.bits[s / 64] = word | 1 << (s % 64);
            self.summary[s / 4096] |= 1 << (s / 64 % 64);
        } else {
            self.push_behind(s, ev);
        }
    }

    /// Appends a packed event to slot `s`, which holds events: into its
    /// last chunk, or a new one.
    #[inline(always)]
    fn push_behind(&mut self, s: usize, ev: u64) {
        if self.slots[s].head != ONLY_FIRST {
            let last = &mut self.chunks[self.slots[s].tail as usize];
            if (last.written as usize) < PER_CHUNK {
                last.ev[last.written as usize] = ev;
                last.written += 1;
                return;
            }
        }
        let c = self.new_chunk();
        let chunk = &mut self.chunks[c as usize];
        chunk.ev[0] = ev;
        chunk.next = NIL;
        chunk.read = 0;
        chunk.written = 1;
        let slot = &mut self.slots[s];
        if slot.head == ONLY_FIRST {
            slot.head = c;
        } else {
            self.chunks[slot.tail as usize].next = c;
        }
        slot.tail = c;
    }

    /// An empty chunk (a freed one if any).
    #[inline(always)]
    fn new_chunk(&mut self) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.chunks[i as usize].next;
            i
        } else {
            self.grow()
        }
    }

    /// A new chunk (no freed one left); returns its index.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> u32 {
        self.chunks.push(Chunk {
            ev: [0; PER_CHUNK],
            next: NIL,
            read: 0,
            written: 0,
        });
        (self.chunks.len() - 1) as u32
    }

    /// Removes the first event of slot `s` (non-empty) and returns it packed.
    #[inline(always)]
    fn pop_slot(&mut self, s: usize) -> u64 {
        self.near -= 1;
        let slot = &mut self.slots[s];
        let ev = slot.first;
        let more = slot.head != ONLY_FIRST;
        self.popped_more = more;
        if !more {
            // the slot's last event
            self.slots[s].head = EMPTY_SLOT;
            self.bits[s / 64] &= !(1 << (s % 64));
            if self.bits[s / 64] == 0 {
                self.summary[s / 4096] &= !(1 << (s / 64 % 64));
            }
        } else {
            self.refill_first(s);
        }
        ev
    }

    /// Moves the next event of slot `s`'s chunks into its `first`,
    /// freeing the chunk it empties.
    #[inline(always)]
    fn refill_first(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        let c = slot.head;
        let chunk = &mut self.chunks[c as usize];
        slot.first = chunk.ev[chunk.read as usize];
        chunk.read += 1;
        // a chunk before the last is full: emptied at `PER_CHUNK`
        if chunk.read == chunk.written {
            slot.head = if c == slot.tail {
                ONLY_FIRST
            } else {
                chunk.next
            };
            chunk.next = self.free;
            self.free = c;
        }
    }

    /// The first non-empty slot at or after slot `from`, going round the
    /// wheel (the wheel must hold an event): `from`'s own word, then the
    /// others through the summary, all inlined (the walk out of line cost
    /// the sparse dumbbell ~10 instructions a pop in the call; inlined it
    /// moves the k = 8 permutation and the k = 12 ATP slice by +0.1 %).
    #[inline(always)]
    fn next_slot(&self, from: usize) -> usize {
        let w = from / 64;
        let b = self.bits[w] & (!0u64 << (from % 64));
        if b != 0 {
            return w * 64 + b.trailing_zeros() as usize;
        }
        self.next_slot_after_word(w)
    }

    /// The first non-empty slot in the words after word `w`, going round
    /// the wheel; back at `w`, its bits below where the search began are
    /// times a full turn ahead (the wheel must hold an event).
    #[inline(always)]
    fn next_slot_after_word(&self, w: usize) -> usize {
        let mut sw = w / 64;
        // the summary's words after `w` (none when `w` is its last bit)
        let mut m = self.summary[sw] & (!1u64 << (w % 64));
        loop {
            if m != 0 {
                let word = sw * 64 + m.trailing_zeros() as usize;
                return word * 64 + self.bits[word].trailing_zeros() as usize;
            }
            sw = (sw + 1) % (WORDS / 64);
            m = self.summary[sw];
        }
    }

    /// Time of the earliest pending event, without changing the list.
    #[inline]
    fn next_time(&self) -> Option<u64> {
        if self.near > 0 {
            let s = self.next_slot((self.now & MASK) as usize) as u64;
            Some(self.now + (s.wrapping_sub(self.now) & MASK))
        } else if self.has_far() {
            Some(self.far_min)
        } else {
            None
        }
    }

    /// Moves the clock to `t` (no event pending before it) and brings the
    /// far events the window now reaches into the wheel.
    #[inline]
    fn advance(&mut self, t: u64) {
        self.now = t;
        // `far_min` is `u64::MAX` when no far event is left (`migrate`, the
        // only taker, sets it so): no separate test of the two queues.
        // `far_due <= t` is `far_min <= t + WHEEL_NS - 1` (saturating): both
        // hold for `far_min < WHEEL_NS`, and where the sum saturates
        debug_assert_eq!(
            self.far_due <= t,
            self.far_min <= t.saturating_add(WHEEL_NS - 1)
        );
        if self.far_due <= t {
            self.migrate();
        }
    }

    /// Sets `far_min` and the time it is due in the window (`far_due`).
    #[inline]
    fn set_far_min(&mut self, t: u64) {
        self.far_min = t;
        self.far_due = t.saturating_sub(WHEEL_NS - 1);
    }

    #[inline(never)]
    fn migrate(&mut self) {
        // the wheel's last time (the clock's range ends at u64::MAX)
        let last = self.now.saturating_add(WHEEL_NS - 1);
        loop {
            // the earlier of the two fronts by (time, sequence)
            let (e, from_run) = match (self.far_run.front(), self.far.peek()) {
                (Some(&a), Some(&Reverse(b))) => (a.min(b), a < b),
                (Some(&a), None) => (a, true),
                (None, Some(&Reverse(b))) => (b, false),
                (None, None) => {
                    self.set_far_min(u64::MAX);
                    return;
                }
            };
            if e.0 > last {
                self.set_far_min(e.0);
                return;
            }
            if from_run {
                self.far_run.pop_front();
            } else {
                self.far.pop();
            }
            self.push_near(e.0, e.2);
        }
    }

    /// Whether any far event is pending.
    #[inline]
    fn has_far(&self) -> bool {
        !self.far_run.is_empty() || !self.far.is_empty()
    }

    /// Removes and returns the earliest event, advancing the clock.
    pub fn pop(&mut self) -> Option<(Instant, Ev)> {
        self.pop_until(Instant::from_nanos(u64::MAX))
    }

    /// Removes and returns the earliest event if it is due no later than `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, Ev)> {
        self.pop_packed_until(limit).map(|(t, p)| (t, p.ev()))
    }

    /// [`EventList::pop_until`], the event left packed.
    #[inline(always)]
    pub fn pop_packed_until(&mut self, limit: Instant) -> Option<(Instant, Packed)> {
        let mut s = (self.now & MASK) as usize;
        if self.slots[s].head == EMPTY_SLOT {
            if self.near > 0 {
                // the wheel's next slot; `advance` fills only slots of later
                // times (far events are due at or after the old window's end)
                s = self.next_slot(s);
                let t = self.now + ((s as u64).wrapping_sub(self.now) & MASK);
                if t > limit.as_nanos() {
                    return None;
                }
                self.advance(t);
            } else {
                s = self.advance_to_far(limit)?;
            }
        } else if self.now > limit.as_nanos() {
            return None;
        }
        let ev = self.pop_slot(s);
        self.executed += 1;
        Some((Instant::from_nanos(self.now), Packed(ev)))
    }

    /// With the wheel empty: moves the clock to the earliest far event if
    /// it is due no later than `limit` and returns its slot.
    #[cold]
    #[inline(never)]
    fn advance_to_far(&mut self, limit: Instant) -> Option<usize> {
        if !self.has_far() || self.far_min > limit.as_nanos() {
            return None;
        }
        self.advance(self.far_min);
        Some((self.now & MASK) as usize)
    }

    /// Moves the clock to `at` for an event kept outside the list (a job
    /// arriving, see `engine::arrivals`), which counts as executed. No
    /// event may be pending before `at`.
    #[inline]
    pub fn run_outside(&mut self, at: Instant) {
        let t = at.as_nanos();
        debug_assert!(t >= self.now, "an outside event in the past");
        debug_assert!(
            self.next_time().is_none_or(|n| n >= t),
            "an outside event after a pending one"
        );
        self.advance(t.max(self.now));
        self.executed += 1;
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Instant> {
        self.next_time().map(Instant::from_nanos)
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.now)
    }

    /// Events executed so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.near + self.far.len() + self.far_run.len()
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
#[cfg(test)]
mod tests;
