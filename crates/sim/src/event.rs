//! The event list: an explicit value, never a global.
//!
//! Events are ordered by `(time, sequence)`: two events at the same
//! nanosecond run in the order they were scheduled, so a run is a pure
//! function of its inputs and seed.

use crate::packet::PktId;
use approxnet_proto::time::Instant;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// Take a queue-length sample.
    Sample,
}

#[derive(Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // reversed: BinaryHeap is a max-heap, we want the earliest first
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A binary-heap event list with deterministic tie breaking.
#[derive(Debug, Default)]
pub struct EventList {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    now: u64,
    executed: u64,
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
        let time = at.as_nanos().max(self.now);
        self.heap.push(Entry {
            time,
            seq: self.next_seq,
            ev,
        });
        self.next_seq += 1;
    }

    /// Removes and returns the earliest event, advancing the clock.
    pub fn pop(&mut self) -> Option<(Instant, Ev)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.executed += 1;
        Some((Instant::from_nanos(e.time), e.ev))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Instant::from_nanos(e.time))
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
        self.heap.len()
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
