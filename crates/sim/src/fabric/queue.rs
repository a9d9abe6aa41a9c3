//! One switch queue: holds packets, counts bytes, decides drop and ECN mark.
//!
//! A queue never chooses *which* queue runs next (that is the scheduler's
//! job) and never delays (that is the pipe's job).

use crate::packet::PktId;
use std::collections::VecDeque;

/// When a queue marks ECN congestion-experienced on arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EcnThreshold {
    /// Mark when the queue already holds at least this many packets
    /// (DCTCP's K, instantaneous queue, as RED with MinTh = MaxTh = K).
    Packets(u32),
    /// Mark when the queue already holds at least this many bytes.
    Bytes(u64),
}

/// How packets leave a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Discipline {
    /// First in, first out; tail drop.
    #[default]
    Fifo,
    /// pFabric: send the most urgent (lowest rank) flow's earliest packet,
    /// on overflow drop the least urgent packet.
    PFabric,
}

/// Static configuration of one queue (`repr(C)`: the discipline, read by
/// every dequeue, first; see [`Queue`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct QueueConfig {
    /// FIFO or pFabric.
    pub discipline: Discipline,
    /// Buffer this queue may hold, bytes.
    pub limit_bytes: u64,
    /// ECN marking threshold, if the queue marks.
    pub ecn: Option<EcnThreshold>,
    /// Selective dropping (Aeolus): a packet marked droppable is admitted
    /// only while the queue holds less than this many bytes; others may
    /// fill it up to `limit_bytes`. `u64::MAX` = no selective dropping.
    pub droppable_limit_bytes: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            limit_bytes: u64::MAX,
            ecn: None,
            discipline: Discipline::Fifo,
            droppable_limit_bytes: u64::MAX,
        }
    }
}

/// What a queue is told about a packet offered to it (built from the
/// packet's first cache line; the ring keeps only its [`Held`] part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The packet.
    pub id: PktId,
    /// Its size on the wire.
    pub size: u32,
    /// pFabric rank.
    pub rank: u64,
    /// Its flow (pFabric sends a flow's packets in order).
    pub flow: u32,
    /// Dropped first (Aeolus's unscheduled packets).
    pub droppable: bool,
    /// Index of the port's queue that holds it.
    pub queue: u8,
}

/// What a queue's ring holds of a waiting packet: its id and its size
/// (8 bytes; dequeue and DRR need the size without reading the packet).
/// pFabric's rank and flow wait in a side ring that FIFO queues lack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// The packet.
    pub id: PktId,
    /// Its size on the wire.
    pub size: u32,
}

impl From<&Entry> for Held {
    #[inline]
    fn from(e: &Entry) -> Held {
        Held {
            id: e.id,
            size: e.size,
        }
    }
}

/// pFabric's view of a waiting packet, kept beside the ring at the same
/// index: (rank, flow).
type Urgency = VecDeque<(u64, u32)>;

/// pFabric's side of [`Queue::push`], out of the FIFO path.
#[inline(never)]
fn push_urgency(u: &mut Urgency, e: &Entry) {
    u.push_back((e.rank, e.flow));
}

/// Counters of one queue (`repr(C)`: the two that every accepted packet
/// updates first, see [`Queue`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct QueueStats {
    /// Packets accepted.
    pub enqueued: u64,
    /// Largest backlog seen, bytes.
    pub max_bytes: u64,
    /// Packets dropped (tail drop or pFabric eviction).
    pub dropped: u64,
    /// Packets marked CE.
    pub marked: u64,
}

/// Outcome of offering a packet to a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Stored; `mark` says whether to set CE.
    Queued {
        /// Set CE on the packet.
        mark: bool,
    },
    /// Stored after evicting this (less urgent) packet, which is dropped.
    Evicted(PktId),
    /// Not stored: the arriving packet is dropped.
    Dropped,
}

/// A single queue of an egress port.
///
/// `repr(C)`, cache-line aligned: a packet passing through an empty queue
/// of an idle port (the common case off the bottlenecks) reads and writes
/// only the first line (byte count, configuration, the accepted-packet
/// counters); the ring and the drop / mark counters are in the second,
/// touched when packets wait.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct Queue {
    bytes: u64,
    /// Its configuration.
    pub cfg: QueueConfig,
    /// Counters.
    pub stats: QueueStats,
    items: VecDeque<Held>,
    /// Accepted packets later evicted by pFabric (never sent).
    evicted: u64,
    /// pFabric queues: rank and flow of each waiting packet, index for
    /// index with `items` (boxed, `None` for FIFO queues: eight bytes of
    /// the queue, no memory per packet).
    urgency: Option<Box<Urgency>>,
}

impl Queue {
    /// An empty queue.
    pub fn new(cfg: QueueConfig) -> Self {
        Queue {
            cfg,
            urgency: (cfg.discipline == Discipline::PFabric).then(Box::default),
            ..Default::default()
        }
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Packets that left the queue for the wire (passed through or
    /// dequeued): every accepted packet is sent, still queued or evicted,
    /// so this needs no counter on the per-hop path.
    pub fn sent(&self) -> u64 {
        self.stats.enqueued - self.items.len() as u64 - self.evicted
    }

    /// Nothing queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Size of the packet that [`Queue::pop`] would return.
    pub fn head_size(&self) -> Option<u32> {
        match self.cfg.discipline {
            Discipline::Fifo => self.items.front().map(|e| e.size),
            Discipline::PFabric => self.pfabric_next().map(|i| self.items[i].size),
        }
    }

    /// Offers `e`; `shared_room` is what the switch's shared buffer still has.
    #[inline]
    pub fn admit(&mut self, e: Entry, shared_room: u64) -> Admit {
        let size = e.size as u64;
        if e.droppable && self.bytes >= self.cfg.droppable_limit_bytes {
            self.stats.dropped += 1;
            return Admit::Dropped;
        }
        let fits = self.bytes + size <= self.cfg.limit_bytes && size <= shared_room;
        if !fits {
            if self.cfg.discipline == Discipline::PFabric && !self.items.is_empty() {
                return self.pfabric_evict(e);
            }
            self.stats.dropped += 1;
            return Admit::Dropped;
        }
        let mark = self.marks();
        self.push(e);
        if mark {
            self.stats.marked += 1;
        }
        Admit::Queued { mark }
    }

    /// Whether a packet arriving now is marked CE.
    fn marks(&self) -> bool {
        match self.cfg.ecn {
            Some(EcnThreshold::Packets(k)) => self.items.len() as u64 >= k as u64,
            Some(EcnThreshold::Bytes(b)) => self.bytes >= b,
            None => false,
        }
    }

    /// [`Queue::marks`] for an empty queue: reads the configuration only,
    /// not the ring (which lies in the queue's second cache line).
    fn marks_empty(&self) -> bool {
        match self.cfg.ecn {
            Some(EcnThreshold::Packets(k)) => k == 0,
            Some(EcnThreshold::Bytes(b)) => b == 0,
            None => false,
        }
    }

    /// [`Queue::admit`] immediately followed by [`Queue::pop`] on an empty
    /// queue (its port is idle): the same checks, mark and counters, but
    /// the packet never enters the ring, whose memory stays untouched.
    #[inline]
    pub fn pass_through(&mut self, e: &Entry, shared_room: u64) -> Admit {
        debug_assert!(self.items.is_empty() && self.bytes == 0);
        let size = e.size as u64;
        let refused = e.droppable && self.cfg.droppable_limit_bytes == 0;
        // an empty queue has nothing to evict: pFabric drops like FIFO
        if refused || size > self.cfg.limit_bytes || size > shared_room {
            self.stats.dropped += 1;
            return Admit::Dropped;
        }
        let mark = self.marks_empty();
        self.stats.enqueued += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(size);
        if mark {
            self.stats.marked += 1;
        }
        Admit::Queued { mark }
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        self.bytes += e.size as u64;
        self.items.push_back(Held::from(&e));
        if let Some(u) = &mut self.urgency {
            push_urgency(u, &e);
        }
        self.stats.enqueued += 1;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
    }

    /// Removes the next packet to send.
    #[inline]
    pub fn pop(&mut self) -> Option<Held> {
        let e = match self.cfg.discipline {
            Discipline::Fifo => self.items.pop_front()?,
            Discipline::PFabric => self.pfabric_pop()?,
        };
        self.bytes -= e.size as u64;
        Some(e)
    }

    /// pFabric's dequeue, out of the FIFO path (every dequeue inlines it).
    #[inline(never)]
    fn pfabric_pop(&mut self) -> Option<Held> {
        let i = self.pfabric_next()?;
        self.urgency.as_mut()?.remove(i);
        self.items.remove(i)
    }

    /// pFabric dequeue: the earliest packet of the flow that owns the most
    /// urgent packet (pFabric section 4.2: avoids reordering within a flow).
    fn pfabric_next(&self) -> Option<usize> {
        let u = self.urgency.as_ref()?;
        let (_, &(_, best)) = u.iter().enumerate().min_by_key(|(i, x)| (x.0, *i))?;
        u.iter().position(|x| x.1 == best)
    }

    /// pFabric drop: the least urgent packet among the queue and `e` goes.
    fn pfabric_evict(&mut self, e: Entry) -> Admit {
        let u = self.urgency.as_mut().expect("a pFabric queue");
        let (worst_i, worst_u) = u
            .iter()
            .enumerate()
            .max_by_key(|(i, x)| (x.0, usize::MAX - *i))
            .map(|(i, x)| (i, *x))
            .expect("non-empty");
        if worst_u.0 <= e.rank {
            self.stats.dropped += 1;
            return Admit::Dropped;
        }
        u.remove(worst_i);
        let worst = self.items.remove(worst_i).expect("rings of equal length");
        self.bytes -= worst.size as u64;
        self.stats.dropped += 1;
        if self.bytes + e.size as u64 > self.cfg.limit_bytes {
            // still no room (a larger packet): put the victim back, drop `e`
            self.items.insert(worst_i, worst);
            u.insert(worst_i, worst_u);
            self.bytes += worst.size as u64;
            return Admit::Dropped;
        }
        self.push(e);
        self.evicted += 1;
        Admit::Evicted(worst.id)
    }

    /// Ids of queued packets, in queue order.
    pub fn ids(&self) -> impl Iterator<Item = PktId> + '_ {
        self.items.iter().map(|e| e.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: u32, size: u32, rank: u64, flow: u32) -> Entry {
        Entry {
            id,
            size,
            rank,
            flow,
            droppable: false,
            queue: 0,
        }
    }

    #[test]
    fn tail_drop_and_ecn_at_k_packets() {
        let mut q = Queue::new(QueueConfig {
            limit_bytes: 3000,
            ecn: Some(EcnThreshold::Packets(1)),
            discipline: Discipline::Fifo,
            ..QueueConfig::default()
        });
        assert_eq!(
            q.admit(e(0, 1500, 0, 0), u64::MAX),
            Admit::Queued { mark: false }
        );
        assert_eq!(
            q.admit(e(1, 1500, 0, 0), u64::MAX),
            Admit::Queued { mark: true }
        );
        assert_eq!(q.admit(e(2, 1500, 0, 0), u64::MAX), Admit::Dropped);
        assert_eq!(q.pop().unwrap().id, 0);
        assert_eq!(q.bytes(), 1500);
        assert_eq!(q.stats.dropped, 1);
        assert_eq!(q.stats.marked, 1);
    }

    #[test]
    fn droppable_packets_are_dropped_first() {
        let mut q = Queue::new(QueueConfig {
            limit_bytes: 6000,
            droppable_limit_bytes: 1500,
            ..QueueConfig::default()
        });
        let d = |id| Entry {
            droppable: true,
            ..e(id, 1500, 0, 0)
        };
        assert_eq!(q.admit(d(0), u64::MAX), Admit::Queued { mark: false });
        // one packet queued: droppable ones go, the others still fit
        assert_eq!(q.admit(d(1), u64::MAX), Admit::Dropped);
        assert_eq!(
            q.admit(e(2, 1500, 0, 0), u64::MAX),
            Admit::Queued { mark: false }
        );
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn a_pass_through_touches_one_cache_line() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Queue>(), 64);
        let stats = offset_of!(Queue, stats);
        assert!(stats + offset_of!(QueueStats, max_bytes) + size_of::<u64>() <= 64);
        assert!(stats + offset_of!(QueueStats, enqueued) + size_of::<u64>() <= 64);
        assert!(offset_of!(Queue, cfg) + size_of::<QueueConfig>() <= 64);
        assert_eq!(size_of::<Queue>(), 128);
    }

    /// Passing a packet through an empty queue leaves it exactly as
    /// admitting and popping it would, for every refusal and mark.
    #[test]
    fn pass_through_equals_admit_then_pop() {
        let cfgs = [
            QueueConfig::default(),
            QueueConfig {
                limit_bytes: 1000,
                ..QueueConfig::default()
            },
            QueueConfig {
                ecn: Some(EcnThreshold::Packets(0)),
                ..QueueConfig::default()
            },
            QueueConfig {
                ecn: Some(EcnThreshold::Bytes(1)),
                ..QueueConfig::default()
            },
            QueueConfig {
                droppable_limit_bytes: 0,
                discipline: Discipline::PFabric,
                limit_bytes: 1000,
                ..QueueConfig::default()
            },
        ];
        for cfg in cfgs {
            for (droppable, room) in [(false, u64::MAX), (true, u64::MAX), (false, 1200)] {
                let x = Entry {
                    droppable,
                    ..e(1, 1500, 5, 2)
                };
                let mut a = Queue::new(cfg);
                a.stats.max_bytes = 700;
                let mut b = a.clone();
                let via_ring = a.admit(x, room);
                if via_ring != Admit::Dropped {
                    assert_eq!(a.pop(), Some(Held::from(&x)));
                }
                assert_eq!(b.pass_through(&x, room), via_ring);
                assert_eq!((a.stats, a.bytes, a.len()), (b.stats, b.bytes, b.len()));
            }
        }
    }

    /// The 8-byte ring with pFabric's side ring behaves as a queue of whole
    /// entries does (pFabric section 4.2's dequeue and drop, written out
    /// plainly here), over random arrivals, sizes, ranks and departures.
    #[test]
    fn pfabric_side_ring_matches_a_queue_of_whole_entries() {
        let mut rng = approxnet_proto::rng::Rng::new(7);
        let limit = 6000u64;
        let mut q = Queue::new(QueueConfig {
            limit_bytes: limit,
            discipline: Discipline::PFabric,
            ..QueueConfig::default()
        });
        let mut model: Vec<Entry> = Vec::new();
        let bytes = |m: &[Entry]| m.iter().map(|x| x.size as u64).sum::<u64>();
        for id in 0..5000u32 {
            if rng.below(3) == 0 {
                let want = model
                    .iter()
                    .enumerate()
                    .min_by_key(|(i, x)| (x.rank, *i))
                    .map(|(_, best)| best.flow)
                    .and_then(|f| model.iter().position(|x| x.flow == f))
                    .map(|i| model.remove(i));
                assert_eq!(q.pop(), want.as_ref().map(Held::from));
                continue;
            }
            let x = e(
                id,
                500 + 500 * rng.below(3) as u32,
                rng.below(20),
                rng.below(4) as u32,
            );
            let want = if bytes(&model) + x.size as u64 <= limit {
                model.push(x);
                Admit::Queued { mark: false }
            } else if model.is_empty() {
                Admit::Dropped
            } else {
                let (wi, w) = model
                    .iter()
                    .enumerate()
                    .max_by_key(|(i, y)| (y.rank, usize::MAX - *i))
                    .map(|(i, y)| (i, *y))
                    .unwrap();
                if w.rank <= x.rank || bytes(&model) - w.size as u64 + x.size as u64 > limit {
                    Admit::Dropped
                } else {
                    model.remove(wi);
                    model.push(x);
                    Admit::Evicted(w.id)
                }
            };
            assert_eq!(q.admit(x, u64::MAX), want, "packet {id}");
            assert_eq!(q.bytes(), bytes(&model));
            assert!(q.ids().eq(model.iter().map(|y| y.id)));
        }
    }

    #[test]
    fn shared_buffer_limits_admission() {
        let mut q = Queue::new(QueueConfig::default());
        assert_eq!(q.admit(e(0, 1500, 0, 0), 1000), Admit::Dropped);
    }

    #[test]
    fn pfabric_serves_most_urgent_flow_and_drops_least_urgent() {
        let mut q = Queue::new(QueueConfig {
            limit_bytes: 3000,
            ecn: None,
            discipline: Discipline::PFabric,
            ..QueueConfig::default()
        });
        q.admit(e(0, 1500, 50, 7), u64::MAX);
        q.admit(e(1, 1500, 10, 8), u64::MAX);
        // full: arriving rank 20 evicts rank 50
        assert_eq!(q.admit(e(2, 1500, 20, 9), u64::MAX), Admit::Evicted(0));
        // arriving rank 99 is the least urgent: dropped
        assert_eq!(q.admit(e(3, 1500, 99, 9), u64::MAX), Admit::Dropped);
        assert_eq!(q.pop().unwrap().id, 1);
        assert_eq!(q.pop().unwrap().id, 2);
        assert!(q.pop().is_none());
    }
}
