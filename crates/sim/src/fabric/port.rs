//! An egress port: a set of queues, a scheduler and a serialiser.
//!
//! The port decides admission (per-queue limit plus the switch's shared
//! buffer), ECN marking and which packet goes next; the pipe behind it
//! (propagation delay) is applied by the simulator when serialisation ends.

use super::queue::{Admit, Entry, Held, Queue, QueueConfig};
use super::sched::Scheduler;
use approxnet_proto::time::Duration;
use approxnet_proto::units::Rate;

/// Queue layout and scheduler of a port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// One entry per queue, queue 0 first.
    pub queues: Vec<QueueConfig>,
    /// Which queue sends next.
    pub scheduler: Scheduler,
}

impl Default for PortConfig {
    /// One unlimited FIFO queue (a host NIC).
    fn default() -> Self {
        PortConfig {
            queues: vec![QueueConfig::default()],
            scheduler: Scheduler::Strict,
        }
    }
}

/// One direction of a link, at its sending node.
///
/// `repr(C)`, cache-line aligned, fields ordered by use: a packet that
/// finds the port idle and passes straight to the wire (most hops off the
/// bottlenecks) reads only the first line — owner, peer, queues, wire
/// state, serialisation rate and pipe delay — and writes nothing (packets
/// sent are counted from the queues' counters, [`Port::tx_pkts`]; a
/// counter here cost a second-line miss per hop); a busy port's offer and dequeue also
/// read the second line (backlog, wake-up, scheduler). At k >= 16 a port is rarely still in the
/// caches when its next packet comes, so each line read is a miss.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Port {
    /// Node that owns the port.
    pub node: u32,
    /// Node at the other end.
    pub peer: u32,
    /// Whether admission also draws on the node's shared buffer.
    pub shared: bool,
    /// The owner is a host (the port is its NIC): what every hop's TSQ
    /// test asks, read with the port in hand instead of from the
    /// network's switch bitmap (set by `NetworkBuilder::connect`).
    pub host: bool,
    /// The scheduler is strict priority (kept in the first line for
    /// [`Port::can_pass_through`]; `sched` lies in the second).
    strict: bool,
    /// The queues (a boxed slice: two words, so the first line holds them).
    pub queues: Box<[Queue]>,
    /// Bit `i` set when queue `i` holds packets (strict priority picks the
    /// lowest without reading every queue).
    nonempty: u64,
    /// The wire is busy until this time (ns): the last packet started
    /// serialising ends then.
    pub busy_until: u64,
    /// Picoseconds per byte at this rate (integer serialisation time).
    ps_per_byte: u64,
    /// Propagation delay of the pipe behind the port.
    pub delay: Duration,
    /// Bytes queued over all queues.
    backlog: u64,
    /// Time of the live `TxDone` wake-up event, if one is scheduled.
    pub wakeup_at: Option<u64>,
    /// The scheduler.
    sched: Scheduler,
    /// Bit error rate of the link.
    pub ber: f64,
    /// Line rate.
    pub rate: Rate,
}

impl Port {
    /// A port from `node` to `peer`.
    pub fn new(
        node: u32,
        peer: u32,
        rate: Rate,
        delay: Duration,
        ber: f64,
        cfg: &PortConfig,
    ) -> Port {
        let ps_per_byte = (8e12 / rate.as_bps()).round().max(1.0) as u64;
        Port {
            node,
            peer,
            rate,
            delay,
            ber,
            queues: cfg.queues.iter().map(|c| Queue::new(*c)).collect(),
            sched: cfg.scheduler.clone(),
            busy_until: 0,
            wakeup_at: None,
            shared: false,
            host: false,
            strict: matches!(cfg.scheduler, Scheduler::Strict),
            ps_per_byte,
            nonempty: 0,
            backlog: 0,
        }
    }

    /// Serialisation time of `bytes` (rounded up to a nanosecond).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Duration {
        let ps = bytes as u64 * self.ps_per_byte;
        // `(ps + 999) / 1000` is `ps.div_ceil(1000)` wherever the sum does
        // not overflow (every packet at any rate above ~1.9 kbit/s): one
        // multiply by the reciprocal, not div_ceil's second one for the
        // remainder test (~8 instructions a hop)
        Duration::from_nanos(match ps.checked_add(999) {
            Some(up) => up / 1000,
            None => ps.div_ceil(1000),
        })
    }

    /// Offers a packet to queue `q` (clamped to the last queue).
    #[inline]
    pub fn admit(&mut self, q: u8, e: Entry, shared_room: u64) -> Admit {
        let qi = (q as usize).min(self.queues.len() - 1);
        let queue = &mut self.queues[qi];
        let before = queue.bytes();
        let a = queue.admit(e, shared_room);
        self.backlog = self.backlog + queue.bytes() - before;
        if !queue.is_empty() {
            self.nonempty |= 1 << qi;
        }
        a
    }

    /// Takes the next packet to serialise (the caller checks the wire is
    /// free), with the index of the queue it left.
    ///
    /// Always inlined (into `Network::start_next`, itself inlined into the
    /// hop path): as a call its `Option<(usize, Held)>` went through the
    /// stack, ~20 instructions a dequeue (the k = 8 permutation -1.7 %).
    #[inline(always)]
    pub fn start_next(&mut self) -> Option<(usize, Held)> {
        let q = match self.sched {
            Scheduler::Strict => {
                if self.nonempty == 0 {
                    return None;
                }
                self.nonempty.trailing_zeros() as usize
            }
            Scheduler::Drr(_) => self.sched.pick(&self.queues)?,
        };
        let queue = &mut self.queues[q];
        let e = queue.pop()?;
        if queue.is_empty() {
            self.nonempty &= !(1 << q);
        }
        self.backlog -= e.size as u64;
        Some((q, e))
    }

    /// [`Port::admit`] and [`Port::start_next`] at once for a packet
    /// that finds the port idle and every queue empty (strict priority
    /// only: DRR keeps per-queue state on each pick). The packet goes
    /// straight to the wire; queues' rings are not touched.
    #[inline]
    pub fn pass_through(&mut self, q: u8, e: &Entry, shared_room: u64) -> Admit {
        debug_assert!(self.nonempty == 0 && matches!(self.sched, Scheduler::Strict));
        let qi = (q as usize).min(self.queues.len() - 1);
        self.queues[qi].pass_through(e, shared_room)
    }

    /// Nothing queued and a strict-priority scheduler: a packet offered
    /// now may take [`Port::pass_through`].
    pub fn can_pass_through(&self) -> bool {
        self.nonempty == 0 && self.strict
    }

    /// Packets sent (taken for serialisation), over all queues.
    pub fn tx_pkts(&self) -> u64 {
        self.queues.iter().map(Queue::sent).sum()
    }

    /// Whether any queue holds a packet.
    pub fn has_queued(&self) -> bool {
        self.nonempty != 0
    }

    /// Bytes queued over all queues (not counting the one in service).
    pub fn backlog_bytes(&self) -> u64 {
        self.backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// `tx_pkts` counts what left for the wire: passed through or dequeued,
    /// never what is still queued, refused, or evicted by pFabric.
    #[test]
    fn tx_pkts_counts_packets_sent_only() {
        use super::super::queue::Discipline;
        let q = QueueConfig {
            discipline: Discipline::PFabric,
            limit_bytes: 3000,
            ..QueueConfig::default()
        };
        let cfg = PortConfig {
            queues: vec![q],
            scheduler: Scheduler::Strict,
        };
        let mut p = Port::new(0, 1, Rate::gbps(10.0), Duration::from_micros(1), 0.0, &cfg);
        let e = |id, rank| Entry {
            id,
            size: 1000,
            rank,
            flow: id,
            droppable: false,
            queue: 0,
        };
        let mut sent = 0;
        assert_eq!(
            p.pass_through(0, &e(0, 5), u64::MAX),
            Admit::Queued { mark: false }
        );
        sent += 1;
        for id in 1..4 {
            assert_eq!(
                p.admit(0, e(id, 10 + id as u64), u64::MAX),
                Admit::Queued { mark: false }
            );
        }
        // full: a more urgent packet evicts the least urgent (id 3)
        assert_eq!(p.admit(0, e(4, 1), u64::MAX), Admit::Evicted(3));
        // a less urgent one is refused
        assert_eq!(p.admit(0, e(5, 99), u64::MAX), Admit::Dropped);
        assert_eq!(p.tx_pkts(), sent);
        while p.start_next().is_some() {
            sent += 1;
            assert_eq!(p.tx_pkts(), sent);
        }
        assert_eq!(sent, 4);
    }

    /// `tx_time` rounds up to a nanosecond exactly as `div_ceil` does, at
    /// every rate and size, the products at and around the overflow of
    /// its shortcut included (at 1 and 1,000 bit/s the largest sizes'
    /// products reach it).
    #[test]
    fn tx_time_is_the_rounded_up_product() {
        let cfg = PortConfig::default();
        let rates = [
            1.0, 1_000.0, 1_865.0, 1e6, 1e9, 10e9, 25e9, 40e9, 100e9, 400e9, 3e12, 8e12,
        ];
        for bps in rates {
            let p = Port::new(0, 1, Rate::bps(bps), Duration::ZERO, 0.0, &cfg);
            let mut sizes: Vec<u32> =
                vec![0, 1, 2, 63, 64, 999, 1000, 1001, 1499, 1500, 1538, 9000];
            sizes.extend([u32::MAX, u32::MAX - 1, 1 << 31, 12_345_678]);
            // the sizes whose product lies at the shortcut's overflow
            let edge = (u64::MAX - 999) / p.ps_per_byte;
            for d in 0..3 {
                if let Ok(s) = u32::try_from(edge + d) {
                    sizes.push(s);
                }
                if let Some(s) = edge.checked_sub(d).and_then(|e| u32::try_from(e).ok()) {
                    sizes.push(s);
                }
            }
            for s in sizes {
                // (a product past u64 overflows in `tx_time` as before)
                let Some(ps) = (s as u64).checked_mul(p.ps_per_byte) else {
                    continue;
                };
                assert_eq!(
                    p.tx_time(s).as_nanos(),
                    ps.div_ceil(1000),
                    "{bps} bit/s, {s} bytes"
                );
            }
        }
        // the shortcut's overflow itself: 3 bytes make u64::MAX ps
        let mut p = Port::new(0, 1, Rate::bps(1.0), Duration::ZERO, 0.0, &cfg);
        p.ps_per_byte = u64::MAX / 3;
        assert_eq!(p.tx_time(3).as_nanos(), u64::MAX.div_ceil(1000));
        assert_eq!(p.tx_time(2).as_nanos(), (u64::MAX / 3 * 2).div_ceil(1000));
    }

    /// Passing a packet through an idle port reads one cache line of it.
    #[test]
    fn pass_through_fields_share_the_first_cache_line() {
        assert_eq!(std::mem::align_of::<Port>(), 64);
        assert!(offset_of!(Port, queues) + size_of::<Box<[Queue]>>() <= 64);
        assert!(offset_of!(Port, busy_until) + 8 <= 64);
        assert!(offset_of!(Port, delay) + size_of::<Duration>() <= 64);
        assert!(offset_of!(Port, ps_per_byte) + 8 <= 64);
        assert!(offset_of!(Port, peer) + 4 <= 64);
        assert!(offset_of!(Port, host) < 64);
        assert_eq!(size_of::<Port>(), 128);
    }
}
