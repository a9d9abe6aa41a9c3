//! The simulator: the event loop and what each event does.
//!
//! One [`Simulator`] value holds the network, the packet pool, the event
//! list, the flows and jobs; [`Simulator::run`] pops events in
//! `(time, sequence)` order until the end time. Everything random draws
//! from seeded generators, so a run repeats bit for bit.

pub mod adapter;
mod arrivals;
mod control;
mod credits;
mod flows;
mod follow;
mod forward;
mod produce;
mod sample;
mod slots;
pub mod trace;
mod training;

use crate::event::{Ev, EventList, Packed};
use crate::fabric::Network;
use crate::job::Job;
use crate::packet::{PacketPool, PktId};
use crate::transport::credit::CreditPacer;
use crate::transport::flow::{Flow, TransportParams};
use adapter::{HostAdapter, HostIo};
use approxnet_proto::rng::Rng;
use approxnet_proto::time::{Duration, Instant};
pub use follow::{QueueFollow, QueueShift};
pub use sample::{QueueSample, SamplePorts};
pub use slots::FlowRecord;
pub use trace::{PacketTrace, TraceEvent};
pub use training::TrainingRun;

/// Networks with more egress ports than this prefetch two events ahead
/// ([`Simulator::prefetch_next`]), smaller ones only the next event due
/// at the same time.
const DEEP_PREFETCH_PORTS: usize = 2048;

/// Whole-run counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Link transmissions (packet-hops), data and ACKs.
    pub hops: u64,
    /// Packets dropped in switches.
    pub drops: u64,
    /// Packets discarded for bit errors.
    pub corrupted: u64,
    /// Data packets delivered to receiving hosts.
    pub delivered_data: u64,
    /// Packets that arrived for a finished or cancelled flow.
    pub stale: u64,
    /// ACKs handed to their sender without crossing the network
    /// (`[transport] ack_path = "instant"`; not in `hops`).
    pub instant_acks: u64,
}

/// Progress reporting on stderr for long runs.
#[derive(Debug)]
struct Progress {
    wall0: std::time::Instant,
    last: std::time::Instant,
}

/// A packet-level simulation.
pub struct Simulator {
    /// The network.
    pub net: Network,
    /// Live packets.
    pub pool: PacketPool,
    /// The event list.
    pub events: EventList,
    /// Native flows by slot (see `engine::slots`).
    pub flows: Vec<Flow>,
    /// Which slots are in use, and the records of freed flows.
    slots: slots::Slots,
    /// Jobs by index: those arrived so far (see `engine::arrivals`) and
    /// those added with [`Simulator::add_job`].
    pub jobs: Vec<Job>,
    /// Generated jobs still to arrive.
    pending: Option<Box<arrivals::Pending>>,
    /// Arrival of the next of them (ns; `u64::MAX`: none).
    next_arrival: u64,
    /// The latest time of an event that runs before that arrival.
    pop_limit: Instant,
    /// Queue of each job (native transports).
    pub job_queue: Vec<u8>,
    /// Messages of each job produced so far.
    pub job_produced: Vec<u32>,
    /// Native connections by (scheme, src, dst) (see `TransportParams::handshake`).
    conns: control::Conns,
    /// Aeolus credit pacer of each receiving host (grown on demand).
    pacers: Vec<CreditPacer>,
    /// Aeolus credits sent by receivers.
    pub credits_sent: u64,
    /// Distributed-training jobs.
    pub trainings: Vec<TrainingRun>,
    /// The training job that owns each job, if any.
    job_training: Vec<Option<u32>>,
    /// Datagrams not yet delivered or lost, per UDP transfer of a training
    /// job (see `engine::training`).
    training_udp_left: std::collections::HashMap<u32, u64>,
    /// Native transport parameters.
    pub tp: TransportParams,
    /// Counters.
    pub counters: Counters,
    /// Queue-length samples.
    pub samples: Vec<QueueSample>,
    /// Simulation stops at this time.
    pub end: Instant,
    rng: Rng,
    out_ids: Vec<crate::packet::PktId>,
    adapter: Option<Box<dyn HostAdapter>>,
    host_timer: Vec<Option<Instant>>,
    /// Bytes a host NIC may hold before the adapter stops pulling datagrams.
    nic_limit: u64,
    /// Hosts whose adapter stopped pulling datagrams for a full NIC.
    nic_blocked: Vec<bool>,
    /// How many entries of `nic_blocked` are set.
    blocked_hosts: usize,
    /// Owner host of each port that is a host NIC.
    nic_host: Vec<Option<u32>>,
    /// TCP small queues: data packets a reliable flow may have waiting in
    /// its NIC (`TransportParams::tsq_pkts`; `u32::MAX` = no limit).
    tsq_limit: u32,
    /// The [`HostIo`] lent to adapter calls (kept for its allocations).
    io_spare: HostIo,
    /// Classes that follow another class's queue.
    followers: follow::Followers,
    sample_every: Option<Duration>,
    sample_ports: Vec<u32>,
    progress: Option<Progress>,
    /// The packet trace, when `[output] trace_packets` asks for one.
    pub trace: Option<Box<PacketTrace>>,
    /// Some link has bit errors (set when [`Simulator::run`] starts), so
    /// a transmission must read its port's bit error rate.
    lossy: bool,
    /// `trace`, `blocked_hosts > 0` or `lossy` (`Simulator::set_hop_slow`,
    /// at the start of a run and at every change of `blocked_hosts`):
    /// a transmission's one test for its rare work.
    hop_slow: bool,
    /// (packet, switch, egress port): the route the prefetch of the next
    /// event already chose (packet `u32::MAX`: none).
    routed: (PktId, u32, u32),
    /// Where each port's queues lie, for prefetching.
    queue_lines: QueueLines,
}

/// Where every port's queues lie, for prefetching: a `u32` per port, the
/// queues' distance in cache lines from the lowest of them (28 bits) and
/// their count less one (4 bits), so that a prefetch can ask for a queue's
/// line without first reading its port (which is in flight itself). Four
/// bytes a port keep the table in the L2 cache on a k = 20 fat-tree
/// (12,000 ports: 47 KiB; an address and a count, 16 bytes, missed in
/// half the hops). Addresses only: never dereferenced, and a stale one
/// (the network changed after [`Simulator::run`] started) costs a useless
/// prefetch, nothing else; an empty table (queues spread over more than
/// 2^28 lines) prefetches no queue.
#[derive(Debug, Default)]
struct QueueLines {
    base: usize,
    ports: Vec<u32>,
}

impl QueueLines {
    fn of(net: &Network) -> QueueLines {
        let addr = |p: &crate::fabric::port::Port| p.queues.as_ptr() as usize;
        let Some(base) = net.ports.iter().map(addr).min() else {
            return QueueLines::default();
        };
        let ports: Option<Vec<u32>> = net
            .ports
            .iter()
            .map(|p| {
                let line = (addr(p) - base) / 64;
                let n = (p.queues.len().max(1) - 1).min(15);
                (line < 1 << 28).then_some((line as u32) << 4 | n as u32)
            })
            .collect();
        QueueLines {
            base,
            ports: ports.unwrap_or_default(),
        }
    }

    /// Hints the CPU to load queue `q` (clamped like an offer) of `port`:
    /// its first line, and its second (the ring) if `both`.
    #[inline]
    fn prefetch(&self, port: u32, q: u8, both: bool) {
        let Some(&x) = self.ports.get(port as usize) else {
            return;
        };
        let qi = (q as usize).min(x as usize & 15);
        let size = std::mem::size_of::<crate::fabric::queue::Queue>();
        let addr = (self.base + (x as usize >> 4) * 64 + qi * size) as *const u8;
        crate::packet::prefetch_addr(addr);
        if both {
            crate::packet::prefetch_addr(addr.wrapping_add(64));
        }
    }
}

impl Simulator {
    /// A simulator over `net` that stops at `end`.
    ///
    /// # Panics
    /// If a node id exceeds the event's 28-bit node field
    /// ([`crate::event::MAX_NODE`]); a scenario file cannot reach that
    /// (its topology limits, `scenario/topology.rs`, are far below it).
    pub fn new(net: Network, tp: TransportParams, end: Instant, seed: u64) -> Simulator {
        // every `Ev::Arrive` names a port's peer: checked here once, not
        // per packet-hop when the event is packed (see `Ev::pack`)
        assert!(
            net.ports.iter().all(|p| p.peer <= crate::event::MAX_NODE),
            "a node id over {}",
            crate::event::MAX_NODE
        );
        let hosts = net.host_count();
        Simulator {
            net,
            pool: PacketPool::new(),
            events: EventList::new(),
            flows: Vec::new(),
            slots: slots::Slots::default(),
            jobs: Vec::new(),
            pending: None,
            next_arrival: u64::MAX,
            pop_limit: Instant::FAR_FUTURE,
            job_queue: Vec::new(),
            job_produced: Vec::new(),
            conns: control::Conns::default(),
            pacers: Vec::new(),
            credits_sent: 0,
            trainings: Vec::new(),
            job_training: Vec::new(),
            training_udp_left: std::collections::HashMap::new(),
            tp,
            counters: Counters::default(),
            samples: Vec::new(),
            end,
            rng: Rng::new(seed ^ 0x51u64.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            out_ids: Vec::new(),
            adapter: None,
            host_timer: vec![None; hosts],
            nic_limit: u64::MAX,
            nic_blocked: vec![false; hosts],
            blocked_hosts: 0,
            nic_host: Vec::new(),
            tsq_limit: tp.tsq_pkts(),
            io_spare: HostIo::default(),
            followers: follow::Followers::default(),
            sample_every: None,
            sample_ports: Vec::new(),
            progress: None,
            trace: None,
            lossy: true,
            hop_slow: true,
            routed: (u32::MAX, 0, 0),
            queue_lines: QueueLines::default(),
        }
    }

    /// Installs the adapter that runs endpoint (ATP) jobs; `nic_limit` is
    /// the NIC backlog (bytes) above which the adapter stops pulling
    /// datagrams from a host's endpoints until the NIC drains to half.
    pub fn set_adapter(&mut self, a: Box<dyn HostAdapter>, nic_limit: u64) {
        self.adapter = Some(a);
        self.nic_limit = nic_limit;
        self.nic_host = vec![None; self.net.ports.len()];
        for h in 0..self.net.host_count() as u32 {
            let nic = self.net.nic(h);
            self.nic_host[nic as usize] = Some(h);
        }
    }

    /// Readies the [`HostIo`] lent to adapter calls (`io_spare`) for a
    /// call on `host`: emptied, with the room left on its NIC. It stays in
    /// place (an adapter call gets `&mut self.io_spare`): taking it out
    /// and putting it back moved ~110 bytes twice a call and cost ~2 % of
    /// the k = 12 ATP run's instructions.
    pub(crate) fn ready_io(&mut self, host: u32) {
        let backlog = self.net.ports[self.net.nic(host) as usize].backlog_bytes();
        let io = &mut self.io_spare;
        io.clear();
        io.room = self.nic_limit.saturating_sub(backlog);
        io.nic_idle = backlog == 0;
    }

    /// The installed endpoint adapter, if any.
    pub fn adapter(&self) -> Option<&dyn HostAdapter> {
        self.adapter.as_deref()
    }

    /// Samples the backlog of `ports` every `every`.
    pub fn sample_queues(&mut self, which: SamplePorts, every: Duration) {
        self.sample_ports = sample::select_ports(&self.net, which);
        if !self.sample_ports.is_empty() && every.as_nanos() > 0 {
            self.sample_every = Some(every);
            self.events.schedule(Instant::ZERO, Ev::Sample);
        }
    }

    /// Prints progress to stderr every couple of wall seconds.
    pub fn show_progress(&mut self) {
        let now = std::time::Instant::now();
        self.progress = Some(Progress {
            wall0: now,
            last: now,
        });
    }

    /// Makes room for `jobs` more jobs and `flows` more native flows, so
    /// that the lists never grow by copying (10^5-10^6 jobs on a large
    /// fat-tree: each doubling copied the whole list through the caches).
    pub fn reserve_jobs(&mut self, jobs: usize, flows: usize) {
        self.jobs.reserve(jobs);
        self.job_queue.reserve(jobs);
        self.job_produced.reserve(jobs);
        self.flows.reserve(flows);
    }

    /// Adds a job that starts at its arrival time; returns its index.
    pub fn add_job(&mut self, job: Job, queue: u8) -> u32 {
        let id = self.next_job_index();
        let start = job.start;
        self.jobs.push(Job { id, ..job });
        self.job_queue.push(queue);
        self.job_produced.push(0);
        self.events.schedule(start, Ev::JobStart { job: id });
        id
    }

    /// Runs until the end time or until no event is left.
    pub fn run(&mut self) {
        self.lossy = self.net.ports.iter().any(|p| p.ber > 0.0);
        self.set_hop_slow();
        // the pipeline costs ~100 instructions an event: worth it only where
        // the ports outgrow the caches (k = 8: 768 ports, +8 % instructions
        // for nothing; k = 12: 2,592)
        let deep = self.net.ports.len() > DEEP_PREFETCH_PORTS;
        if deep {
            self.queue_lines = QueueLines::of(&self.net);
        }
        // read once: nothing in the loop takes or gives the reporter
        let progress = self.progress.is_some();
        while let Some((now, ev)) = self.next_event() {
            if deep {
                self.prefetch_next();
            } else {
                self.prefetch_same_time();
            }
            self.dispatch(now, ev);
            if progress && self.events.executed() & ((1 << 20) - 1) == 0 {
                self.report_progress(now);
            }
        }
    }

    /// Starts loading what the next event reads first if it is due at the
    /// same nanosecond: its packet, or the port that finished sending.
    #[inline]
    fn prefetch_same_time(&self) {
        // called right after the pop (`next_event`): nothing pushed since
        let Some(ev) = self.events.peek_popped() else {
            return;
        };
        match ev.tag() {
            Packed::ARRIVE => self.pool.prefetch(ev.a(), false),
            Packed::TX_DONE => {
                if let Some(p) = self.net.ports.get(ev.a() as usize) {
                    crate::packet::prefetch(p);
                }
            }
            _ => {}
        }
    }

    /// Starts loading what the next two events read first, as a two-stage
    /// pipeline: the packet of the event after next (both its lines when
    /// it arrives at a host, which reads its transport header), so that it
    /// is in the cache when its turn comes; for the next event, whose
    /// packet was asked for one event ago, what its packet leads to: the
    /// egress port a switch will choose (ECMP by flow hash only: spraying
    /// draws from the generator, which a prefetch must not touch) or the
    /// flow a host delivers it to.
    #[inline]
    fn prefetch_next(&mut self) {
        use crate::packet::prefetch;
        let (next, after) = self.events.upcoming_two();
        if let Some(e) = after.filter(|e| e.tag() == Packed::ARRIVE) {
            let (node, pkt) = (e.b(), e.a());
            let host = !self.net.is_switch(node) && (node as usize) < self.net.nodes.len();
            self.pool.prefetch(pkt, host);
        }
        let Some(next) = next else {
            return;
        };
        match next.tag() {
            Packed::ARRIVE => {
                let (node, pkt) = (next.b(), next.a());
                if self.net.is_switch(node) {
                    if let Some(port) = self.route_of(node, pkt) {
                        prefetch(&self.net.ports[port as usize]);
                        // the queue's line too, from its address kept aside:
                        // reading it from the port would wait for the port
                        let q = self.pool.get(pkt).queue;
                        self.queue_lines.prefetch(port, q, false);
                        // `arrive` takes the choice instead of routing again
                        self.routed = (pkt, node, port);
                    }
                } else {
                    // a host (or no node): the flow it delivers to
                    let flow = self.pool.try_get(pkt).map(|p| p.flow);
                    if let Some(f) = flow.and_then(|f| self.flows.get(f as usize)) {
                        crate::packet::prefetch_lines(f);
                    }
                }
            }
            Packed::TX_DONE => {
                let port = next.a();
                if let Some(p) = self.net.ports.get(port as usize) {
                    crate::packet::prefetch_lines(p);
                    // a dequeue reads both lines of its queue: guess the
                    // first (strict priority's most urgent)
                    self.queue_lines.prefetch(port, 0, true);
                }
            }
            _ => {}
        }
    }

    /// Runs an event: the two kinds of every hop decoded straight from
    /// the packed event, the rest unpacked out of line.
    #[inline(always)]
    fn dispatch(&mut self, now: Instant, ev: Packed) {
        match ev.tag() {
            Packed::TX_DONE => self.tx_done(now, ev.a()),
            Packed::ARRIVE => self.arrive(now, ev.b(), ev.a()),
            _ => self.dispatch_other(now, ev.ev()),
        }
    }

    /// Every kind but the two [`Simulator::dispatch`] decodes itself
    /// (which stay with one call site each, so that they inline).
    #[inline(never)]
    fn dispatch_other(&mut self, now: Instant, ev: Ev) {
        match ev {
            Ev::TxDone { .. } | Ev::Arrive { .. } => unreachable!("decoded in dispatch"),
            Ev::FlowTimer { flow, gen } => self.flow_timer(now, flow, gen),
            Ev::EndpointTimer { host } => self.endpoint_timer(now, host),
            Ev::JobStart { job } => self.start_job(now, job),
            Ev::Produce { job } => self.produce(now, job),
            Ev::Credit { host } => self.credit_tick(now, host),
            Ev::Sample => self.take_sample(now),
            Ev::TrainingCompute { id } => self.training_compute(now, id),
            Ev::QueueShift { follow, up } => self.queue_shift(now, follow, up),
        }
    }

    fn report_progress(&mut self, now: Instant) {
        let Some(p) = self.progress.as_mut() else {
            return;
        };
        let wall = std::time::Instant::now();
        if wall.duration_since(p.last).as_secs_f64() < 2.0 {
            return;
        }
        p.last = wall;
        let frac = now.as_nanos() as f64 / self.end.as_nanos().max(1) as f64;
        let done = self.jobs.iter().filter(|j| j.done.is_some()).count();
        eprintln!(
            "[approxnet-sim] {:>6.2}% simulated {} of {}, {} events, {} hops, {}/{} jobs done, {:.1} s wall",
            frac * 100.0,
            Duration::from_nanos(now.as_nanos()),
            Duration::from_nanos(self.end.as_nanos()),
            self.events.executed(),
            self.counters.hops,
            done,
            self.jobs.len(),
            wall.duration_since(p.wall0).as_secs_f64()
        );
    }

    fn endpoint_timer(&mut self, now: Instant, host: u32) {
        if self.host_timer[host as usize] == Some(now) {
            self.host_timer[host as usize] = None;
        }
        self.ready_io(host);
        let Some(mut a) = self.adapter.take() else {
            return;
        };
        a.on_timer(now, host, &mut self.io_spare);
        self.adapter = Some(a);
        self.apply_io(now, host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::link::LinkSpec;
    use crate::fabric::port::PortConfig;
    use crate::fabric::routing::Ecmp;
    use crate::fabric::NetworkBuilder;
    use approxnet_proto::units::Rate;

    fn two_hosts() -> Network {
        let mut b = NetworkBuilder::new(PortConfig::default(), PortConfig::default());
        let (x, y) = (b.add_host(), b.add_host());
        let link = LinkSpec::new(Rate::gbps(10.0), Duration::from_micros(1));
        b.connect(x, y, link);
        b.build(Ecmp::FlowHash)
    }

    /// A port whose peer an `Ev::Arrive` could not carry is refused when
    /// the simulator is built (the event packing no longer checks each
    /// hop in release builds).
    #[test]
    #[should_panic(expected = "a node id over")]
    fn a_peer_beyond_the_event_field_is_refused_at_build() {
        let mut net = two_hosts();
        net.ports[0].peer = crate::event::MAX_NODE + 1;
        let _ = Simulator::new(net, TransportParams::default(), Instant::from_nanos(1), 1);
    }

    #[test]
    fn peers_within_the_event_field_build() {
        let mut net = two_hosts();
        net.ports[0].peer = crate::event::MAX_NODE;
        let _ = Simulator::new(net, TransportParams::default(), Instant::from_nanos(1), 1);
    }
}
