//! The event list: an explicit value, never a global.
//!
//! Events are ordered by `(time, sequence)`: two events at the same
//! nanosecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.
//!
//! The list is a radix heap (radix 16) over the integer nanosecond time
//! (events are never scheduled before the last one popped, which is what a
//! radix heap needs). Buckets keep insertion order and a redistribution preserves it,
//! so events of equal time come out first-in first-out: exactly the
//! `(time, sequence)` order of a binary heap with a sequence counter (a unit
//! test checks this against one), at a fraction of the cost.

use crate::packet::PktId;
use approxnet_proto::time::Instant;

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// An egress port finished serialising its current packet.
    TxDone {
        /// Port index.
        port: u32,
    },
    /// A packet reached the far end of a link.
    Arrive {
        /// Node it arrives at.
        node: u32,
        /// The packet.
        pkt: PktId,
    },
    /// A native flow's timer (RTO) may have expired.
    FlowTimer {
        /// Flow index.
        flow: u32,
    },
    /// A host's sans-IO endpoint asked to be woken.
    EndpointTimer {
        /// Host index.
        host: u32,
    },
    /// A job's messages become ready at its sender.
    JobStart {
        /// Job index.
        job: u32,
    },
    /// The application produces a job's next messages (those due by now).
    Produce {
        /// Job index.
        job: u32,
    },
    /// A receiving host's Aeolus credit pacer sends its next credit.
    Credit {
        /// Host index.
        host: u32,
    },
    /// Take a queue-length sample.
    Sample,
    /// A training job's compute phase ends.
    TrainingCompute {
        /// Training index.
        id: u32,
    },
    /// A follower class changes its switch queue (see `engine::follow`).
    QueueShift {
        /// Index of the follow rule.
        follow: u32,
        /// One queue up (true) or join the leader's queue (false).
        up: bool,
    },
}

/// Largest node id an [`Ev::Arrive`] can carry (28 bits; the scenario caps
/// networks at 2^20 hosts and 2^14 switches).
pub const MAX_NODE: u32 = (1 << 28) - 1;

impl Ev {
    /// The event in 64 bits: a 4-bit tag, a 32-bit and a 28-bit field, so
    /// that a list entry (time + event) is 16 bytes instead of 24 and a
    /// bucket moves a third less memory.
    #[inline]
    fn pack(self) -> u64 {
        let (tag, a, b): (u64, u32, u32) = match self {
            Ev::TxDone { port } => (0, port, 0),
            Ev::Arrive { node, pkt } => {
                assert!(node <= MAX_NODE, "node id {node} over {MAX_NODE}");
                (1, pkt, node)
            }
            Ev::FlowTimer { flow } => (2, flow, 0),
            Ev::EndpointTimer { host } => (3, host, 0),
            Ev::JobStart { job } => (4, job, 0),
            Ev::Produce { job } => (5, job, 0),
            Ev::Credit { host } => (6, host, 0),
            Ev::Sample => (7, 0, 0),
            Ev::TrainingCompute { id } => (8, id, 0),
            Ev::QueueShift { follow, up } => (9, follow, u32::from(up)),
        };
        tag | (a as u64) << 4 | (b as u64) << 36
    }

    /// The inverse of [`Ev::pack`].
    #[inline]
    fn unpack(x: u64) -> Ev {
        let a = (x >> 4) as u32;
        let b = (x >> 36) as u32;
        match x & 15 {
            0 => Ev::TxDone { port: a },
            1 => Ev::Arrive { node: b, pkt: a },
            2 => Ev::FlowTimer { flow: a },
            3 => Ev::EndpointTimer { host: a },
            4 => Ev::JobStart { job: a },
            5 => Ev::Produce { job: a },
            6 => Ev::Credit { host: a },
            7 => Ev::Sample,
            8 => Ev::TrainingCompute { id: a },
            _ => Ev::QueueShift {
                follow: a,
                up: b != 0,
            },
        }
    }
}

/// One pending event: 16 bytes.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    ev: u64,
}

/// Bits per radix digit of the event list: 16 values per level, 16 levels.
const DIGIT: u32 = 4;
const VALUES: usize = 1 << DIGIT;
const LEVELS: usize = 64 / DIGIT as usize;

/// The bucket of an event at `time` when the list stands at `last`
/// (`time > last`): the highest hex digit in which they differ (the level)
/// and `time`'s value of that digit.
#[inline]
fn bucket_of(time: u64, last: u64) -> (usize, usize) {
    // `& (LEVELS - 1)` only tells the compiler the range (time != last)
    let level = ((63 - (time ^ last).leading_zeros()) / DIGIT) as usize & (LEVELS - 1);
    let value = (time >> (level as u32 * DIGIT)) as usize & (VALUES - 1);
    (level, value)
}

/// A radix-heap event list with deterministic (FIFO) tie breaking.
///
/// Radix 16: an event waits in bucket (level, value) where level is the
/// highest hex digit in which its time differs from `last` and value is
/// its digit there. Every bucket of a lower level, and every lower value
/// of the same level, holds only earlier events, so the earliest events
/// are in the first non-empty bucket; emptying it moves each of its events
/// down at least one level. An event is therefore moved at most once per
/// hex digit of its distance from now (3 for the 1-4 us of a hop), where a
/// binary radix heap moved it up to once per bit.
#[derive(Debug)]
pub struct EventList {
    /// Events due exactly at `last`, in scheduling order, from `head` on.
    ready: Vec<Entry>,
    /// First entry of `ready` not yet popped.
    head: usize,
    /// `buckets[level * 16 + value]`, each in scheduling order.
    buckets: Box<[Vec<Entry>; LEVELS * VALUES]>,
    /// Bit `value` of `masks[level]` set when that bucket is non-empty.
    masks: [u16; LEVELS],
    /// Bit `level` set when `masks[level]` is non-zero.
    levels: u16,
    last: u64,
    now: u64,
    len: usize,
    executed: u64,
}

impl Default for EventList {
    fn default() -> Self {
        EventList {
            ready: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            masks: [0; LEVELS],
            levels: 0,
            last: 0,
            now: 0,
            len: 0,
            executed: 0,
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
    pub fn schedule(&mut self, at: Instant, ev: Ev) {
        debug_assert!(at.as_nanos() >= self.now, "event scheduled in the past");
        let time = at.as_nanos().max(self.last);
        self.len += 1;
        let e = Entry {
            time,
            ev: ev.pack(),
        };
        if time == self.last {
            self.ready.push(e);
        } else {
            self.file(e);
        }
    }

    /// Puts `e` (later than `last`) into its bucket.
    #[inline]
    fn file(&mut self, e: Entry) {
        let (level, value) = bucket_of(e.time, self.last);
        self.buckets[level * VALUES + value].push(e);
        self.masks[level] |= 1 << value;
        self.levels |= 1 << level;
    }

    /// Makes `ready` non-empty if any event is pending.
    #[inline]
    fn refill(&mut self) -> bool {
        self.head < self.ready.len() || self.refill_from_buckets()
    }

    /// [`EventList::refill`] when `ready` is empty: moves the earliest
    /// bucket's earliest events there and files the rest one level down.
    #[inline(never)]
    fn refill_from_buckets(&mut self) -> bool {
        if self.levels == 0 {
            return false;
        }
        let level = self.levels.trailing_zeros() as usize;
        let value = self.masks[level].trailing_zeros() as usize;
        self.masks[level] &= !(1 << value);
        if self.masks[level] == 0 {
            self.levels &= !(1 << level);
        }
        let i = level * VALUES + value;
        self.ready.clear();
        self.head = 0;
        if level == 0 {
            // one time only (every digit equal): the bucket is the ready list
            std::mem::swap(&mut self.ready, &mut self.buckets[i]);
            self.last = self.ready[0].time;
            return true;
        }
        let mut bucket = std::mem::take(&mut self.buckets[i]);
        let min = bucket.iter().map(|e| e.time).min().expect("non-empty");
        self.last = min;
        for &e in &bucket {
            if e.time == min {
                self.ready.push(e);
            } else {
                // lands on a lower level, never back in bucket `i`
                self.file(e);
            }
        }
        // give the emptied bucket its allocation back
        bucket.clear();
        self.buckets[i] = bucket;
        true
    }

    /// Removes and returns the earliest event, advancing the clock.
    pub fn pop(&mut self) -> Option<(Instant, Ev)> {
        if !self.refill() {
            return None;
        }
        Some(self.take_ready())
    }

    /// Pops the front of a non-empty `ready`.
    #[inline]
    fn take_ready(&mut self) -> (Instant, Ev) {
        let e = self.ready[self.head];
        self.head += 1;
        self.len -= 1;
        self.now = e.time;
        self.executed += 1;
        (Instant::from_nanos(e.time), Ev::unpack(e.ev))
    }

    /// Removes and returns the earliest event if it is due no later than `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, Ev)> {
        if !self.refill() || self.last > limit.as_nanos() {
            return None;
        }
        Some(self.take_ready())
    }

    /// The event [`EventList::pop`] returns next if it is due at the same
    /// nanosecond as the last one popped (never refills; for prefetching).
    pub fn peek_ready(&self) -> Option<Ev> {
        self.ready.get(self.head).map(|e| Ev::unpack(e.ev))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Instant> {
        if self.refill() {
            Some(Instant::from_nanos(self.last))
        } else {
            None
        }
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
        self.len
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approxnet_proto::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn events_pack_into_sixteen_byte_entries_and_back() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        let all = [
            Ev::TxDone { port: u32::MAX },
            Ev::Arrive {
                node: MAX_NODE,
                pkt: u32::MAX,
            },
            Ev::Arrive { node: 7, pkt: 0 },
            Ev::FlowTimer { flow: 3 },
            Ev::EndpointTimer { host: 1 << 31 },
            Ev::JobStart { job: 12 },
            Ev::Produce { job: u32::MAX - 1 },
            Ev::Credit { host: 5 },
            Ev::Sample,
            Ev::TrainingCompute { id: 9 },
            Ev::QueueShift {
                follow: u32::MAX,
                up: true,
            },
            Ev::QueueShift {
                follow: 0,
                up: false,
            },
        ];
        for ev in all {
            assert_eq!(Ev::unpack(ev.pack()), ev);
        }
    }

    #[test]
    fn ties_break_by_schedule_order() {
        let mut el = EventList::new();
        let t = Instant::from_nanos(5);
        el.schedule(t, Ev::FlowTimer { flow: 1 });
        el.schedule(Instant::from_nanos(3), Ev::Sample);
        el.schedule(t, Ev::FlowTimer { flow: 2 });
        el.schedule(t, Ev::FlowTimer { flow: 3 });
        let order: Vec<Ev> = std::iter::from_fn(|| el.pop().map(|x| x.1)).collect();
        assert_eq!(
            order,
            vec![
                Ev::Sample,
                Ev::FlowTimer { flow: 1 },
                Ev::FlowTimer { flow: 2 },
                Ev::FlowTimer { flow: 3 }
            ]
        );
        assert_eq!(el.now(), t);
        assert_eq!(el.executed(), 4);
    }

    /// The radix heap pops exactly in (time, sequence) order, like a binary
    /// heap with a sequence counter, under interleaved pushes and pops.
    #[test]
    fn same_order_as_a_binary_heap_with_sequence_numbers() {
        let mut rng = Rng::new(9);
        let mut el = EventList::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..20_000u32 {
            let pushes = rng.below(3);
            for _ in 0..pushes {
                // many exact ties, some far-future events
                let dt = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(8),
                    2 => rng.below(10_000),
                    _ => rng.below(1 << 40),
                };
                let t = now + dt;
                el.schedule(Instant::from_nanos(t), Ev::FlowTimer { flow: round });
                reference.push(Reverse((t, seq, round)));
                seq += 1;
            }
            if rng.below(2) == 0 {
                let a = el.pop();
                let b = reference.pop();
                match (a, b) {
                    (Some((t, Ev::FlowTimer { flow })), Some(Reverse((rt, _, rf)))) => {
                        assert_eq!((t.as_nanos(), flow), (rt, rf));
                        now = rt;
                    }
                    (None, None) => {}
                    other => panic!("{other:?}"),
                }
            }
        }
        while let Some(Reverse((rt, _, rf))) = reference.pop() {
            let (t, ev) = el.pop().unwrap();
            assert_eq!((t.as_nanos(), ev), (rt, Ev::FlowTimer { flow: rf }));
        }
        assert!(el.pop().is_none());
        assert!(el.is_empty());
    }
}
