//! The ATP host adapter: drives `approxnet_proto::Endpoint` unchanged.
//!
//! One endpoint per (host, ATP variant), bound to address
//! `10.x.y.z:(5000 + variant)`; one connection per (sender, receiver,
//! variant), reused by later jobs. The adapter maps `poll_timeout` to a host
//! timer event, each `Transmit` to a datagram on the host's NIC with its
//! switch queue, and the endpoint's events to job progress: a job is done
//! when the receiver has delivered `ceil(MSR * N)` whole messages (the same
//! rule as the native schemes); the sender's `JobComplete` (sent once the
//! receiver's SATISFIED came back) supplies packet, retransmission and
//! loss counts. A job whose messages are produced over time is opened as a
//! streaming job (N announced) and fed by [`HostAdapter::produce`].

use crate::engine::adapter::{Datagram, HostAdapter, HostIo, JobUpdate};
use crate::job::{Job, JobCounters};
use crate::scheme::Scheme;
use approxnet_proto::event::Role;
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::units::Rate;
use approxnet_proto::{
    wire, Config, ConnectionHandle, Endpoint, Event, JobSpec, Pushed, QueueRule, Variant,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

mod records;

use crate::int_map::IntMap;
use records::ClassQueues;
pub use records::{DeliveredTotals, EpochRecord};

const BASE_PORT: u16 = 5000;

/// Endpoint settings shared by every host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtpSetup {
    /// NIC line rate (ATP's Rmax).
    pub line_rate: Rate,
    /// Largest datagram, header included.
    pub mtu: usize,
    /// Switch queues.
    pub queues: u8,
    /// RTT assumed before the first sample.
    pub initial_rtt: Duration,
    /// Floor of the retransmission timer.
    pub min_rto: Duration,
    /// Record every rate-control epoch (for the TLR / rate / queue timeline).
    pub record_epochs: bool,
    /// React to ECN marks (the core's `Config::ecn_reaction`).
    pub ecn_reaction: bool,
    /// React to ECN marks on queue 0 only (`Config::ecn_reaction_queue0`).
    pub ecn_reaction_queue0: bool,
    /// Send more when the network has room (`Config::send_more`).
    pub send_more: bool,
    /// Production-aware rate control (`Config::production_aware_rate`).
    pub production_aware_rate: bool,
    /// How FixTLR / Full map the TLR to a queue (the core's `Config::queue_rule`).
    pub queue_rule: QueueRule,
    /// ACK every this many DATA packets.
    pub ack_every: u32,
    /// Bundle whole small messages up to this many body bytes (`None`: the
    /// core's default).
    pub bundle_bytes: Option<usize>,
    /// Seed of the endpoints' random choices.
    pub seed: u64,
}

struct RxJob {
    job: u32,
    class: u32,
    msgs: Vec<u64>,
    delivered: u32,
    bytes: u64,
    needed: u32,
    done: bool,
}

const VARIANTS: usize = Variant::ALL.len();

/// Runs ATP jobs inside the simulator.
pub struct AtpAdapter {
    setup: AtpSetup,
    /// Endpoint of (host, variant) at `host * VARIANTS + variant`.
    eps: Vec<Option<Endpoint>>,
    /// Bit `v` set when host has an endpoint for variant `v`.
    host_eps: Vec<u8>,
    conns: IntMap<(u32, u32, u8), ConnectionHandle>,
    /// (sender, receiver, variant, ATP job id) -> sim job
    jobs: IntMap<(u32, u32, u8, u32), RxJob>,
    /// Sim job -> its connection and ATP job id, while it may still take
    /// produced messages.
    streams: IntMap<u32, (ConnectionHandle, u8, u32)>,
    buf: Vec<u8>,
    /// The messages of a push (`produce`), kept for its allocation.
    push_buf: Vec<MessageSpec>,
    /// Per class, DATA packets sent per queue since the last
    /// [`HostAdapter::class_queue`] call, and the latest queue (when tracked).
    class_queues: Option<Vec<ClassQueues>>,
    /// Rate-control epochs, if recorded.
    pub epochs: Vec<EpochRecord>,
    /// Jobs the endpoint refused (`send_job` errors), with the reason.
    pub refused: Vec<(u32, String)>,
    /// Per host, extra datagrams (send more) waiting for an idle NIC, and
    /// their bytes.
    spare: Vec<Spare>,
    /// What the receivers reported at each job's FIN.
    pub delivered: DeliveredTotals,
}

/// One host's extra datagrams waiting for an idle NIC, and their bytes.
type Spare = (std::collections::VecDeque<(Datagram, Vec<u8>)>, u64);

/// Extra (send more) bytes that may wait per host for an idle NIC.
const SPARE_BYTES: u64 = 64 << 10;

/// The simulated address of `host`'s endpoint for variant index `v`.
pub fn addr(host: u32, v: u8) -> SocketAddr {
    SocketAddr::new(
        IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | host)),
        BASE_PORT + v as u16,
    )
}

fn host_of(a: SocketAddr) -> Option<(u32, u8)> {
    match a.ip() {
        IpAddr::V4(ip) => Some((
            u32::from(ip) & 0x00ff_ffff,
            a.port().checked_sub(BASE_PORT)? as u8,
        )),
        IpAddr::V6(_) => None,
    }
}

impl AtpAdapter {
    /// An adapter for `hosts` hosts.
    pub fn new(setup: AtpSetup, hosts: usize) -> AtpAdapter {
        AtpAdapter {
            setup,
            eps: (0..hosts * VARIANTS).map(|_| None).collect(),
            host_eps: vec![0; hosts],
            conns: IntMap::default(),
            jobs: IntMap::default(),
            streams: IntMap::default(),
            buf: vec![0; 65_536],
            push_buf: Vec::new(),
            class_queues: None,
            epochs: Vec::new(),
            refused: Vec::new(),
            spare: (0..hosts).map(|_| Default::default()).collect(),
            delivered: DeliveredTotals::default(),
        }
    }

    fn config(&self, v: Variant) -> Config {
        let mut c = Config {
            variant: v,
            line_rate: self.setup.line_rate,
            mtu: self.setup.mtu,
            initial_rtt: self.setup.initial_rtt,
            min_rto: self.setup.min_rto,
            queues: self.setup.queues,
            keep_payloads: false,
            ack_every: self.setup.ack_every,
            ecn_reaction: self.setup.ecn_reaction,
            ecn_reaction_queue0: self.setup.ecn_reaction_queue0,
            send_more: self.setup.send_more,
            // `Event::Epoch` is read only to record it (`Books::on_event`)
            epoch_events: self.setup.record_epochs,
            production_aware_rate: self.setup.production_aware_rate,
            queue_rule: self.setup.queue_rule,
            ..Config::default()
        };
        if let Some(b) = self.setup.bundle_bytes {
            c.bundle_bytes = b;
        }
        c.limits.max_jobs_per_connection = 1 << 16;
        c
    }

    /// `host`'s endpoint of variant `v`, created on first use. Inlined
    /// (the sim asks for an endpoint on every call into ATP, ~1 M times
    /// per simulated ms at k = 12), the creation kept out of line.
    #[inline]
    fn endpoint(&mut self, host: u32, v: u8) -> &mut Endpoint {
        // `v` is the port offset of one of our own simulated addresses.
        assert!(
            (v as usize) < VARIANTS,
            "variant index of a simulated address"
        );
        let i = host as usize * VARIANTS + v as usize;
        if self.eps[i].is_none() {
            self.create_endpoint(host, v);
        }
        self.eps[i].as_mut().expect("created above")
    }

    #[cold]
    #[inline(never)]
    fn create_endpoint(&mut self, host: u32, v: u8) {
        let variant = Variant::from_index(v).expect("variant index of a simulated address");
        let cfg = self.config(variant);
        let seed =
            self.setup.seed ^ ((host as u64) << 8 | v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let ep = Endpoint::new(cfg, seed).expect("ATP config validated by the scenario");
        self.eps[host as usize * VARIANTS + v as usize] = Some(ep);
        self.host_eps[host as usize] |= 1 << v;
    }

    /// Drains transmits and events of one endpoint, then re-arms the host
    /// timer. Called ~1.2 M times a simulated ms at k = 12, so the fields
    /// it needs are borrowed apart (no scratch buffer taken and put back)
    /// and an empty spare list costs one inlined test.
    fn drive(&mut self, now: Instant, host: u32, v: u8, io: &mut HostIo) {
        self.release_spare(host, io);
        self.endpoint(host, v);
        let mtu = self.setup.mtu as u64;
        let AtpAdapter {
            eps,
            buf,
            spare,
            delivered,
            class_queues,
            jobs,
            streams,
            conns,
            epochs,
            ..
        } = self;
        let ep = eps[host as usize * VARIANTS + v as usize]
            .as_mut()
            .expect("created above");
        loop {
            if io.room < mtu + 28 {
                io.blocked = true;
                break;
            }
            let Some(t) = ep.poll_transmit(now, buf) else {
                break;
            };
            io.room = io.room.saturating_sub(t.len as u64 + 28);
            let Some((dst, dv)) = host_of(t.dst) else {
                continue;
            };
            let d = Datagram {
                src: host,
                dst,
                len: 0,
                queue: t.queue,
                conn: host.wrapping_mul(65_599) ^ dst ^ (v as u32) << 24,
                src_port: BASE_PORT + v as u16,
                dst_port: BASE_PORT + dv as u16,
            };
            if t.extra {
                // send more: only into an idle NIC, one at a time
                let (q, bytes) = &mut spare[host as usize];
                if *bytes + t.len as u64 <= SPARE_BYTES {
                    *bytes += t.len as u64;
                    q.push_back((d, buf[..t.len].to_vec()));
                } else {
                    delivered.extra_dropped += 1;
                }
                io.room += t.len as u64 + 28;
                continue;
            }
            io.send(d, &buf[..t.len]);
            if let Some(cq) = class_queues.as_mut() {
                let p = wire::Packet::new_unchecked(&buf[..t.len]);
                if t.len >= wire::HEADER_LEN && p.packet_type() == wire::PacketType::Data {
                    if let Some(r) = jobs.get(&(host, dst, v, p.job_id())) {
                        let c = r.class as usize;
                        if cq.len() <= c {
                            cq.resize(c + 1, ClassQueues::default());
                        }
                        cq[c].sent(t.queue);
                    }
                }
            }
        }
        // each event handled as it is polled (not gathered in a list
        // first): handling reads the endpoint (a peer's address) but never
        // changes it, and touches nothing the spare list's release reads
        let mut books = Books {
            setup: &self.setup,
            jobs,
            streams,
            conns,
            delivered,
            epochs,
        };
        while let Some((h, e)) = ep.poll_event() {
            let peer = ep.peer(h).and_then(host_of);
            books.on_event(now, host, v, h, peer, e, io);
        }
        self.release_spare(host, io);
        self.arm(host, io);
    }

    /// Hands one waiting extra datagram (send more) to the NIC if it was
    /// idle and nothing else is leaving in this call.
    #[inline(always)]
    fn release_spare(&mut self, host: u32, io: &mut HostIo) {
        // without send more no list ever fills: one test of a flag read
        // from the setup (twice a `drive`, ~3 M times a simulated ms)
        if self.setup.send_more
            && io.nic_idle
            && io.out.is_empty()
            && !self.spare[host as usize].0.is_empty()
        {
            self.release_one_spare(host, io);
        }
    }

    #[cold]
    #[inline(never)]
    fn release_one_spare(&mut self, host: u32, io: &mut HostIo) {
        let (q, bytes) = &mut self.spare[host as usize];
        if let Some((d, b)) = q.pop_front() {
            *bytes -= b.len() as u64;
            io.room = io.room.saturating_sub(b.len() as u64 + 28);
            io.send(d, &b);
            self.delivered.extra_sent += 1;
        }
    }

    fn arm(&mut self, host: u32, io: &mut HostIo) {
        let base = host as usize * VARIANTS;
        // the earliest deadline of the host's endpoints (the set bits of
        // its mask, most often one)
        let mut t: Option<Instant> = None;
        let mut mask = self.host_eps[host as usize];
        while mask != 0 {
            let v = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if let Some(d) = self.eps[base + v].as_mut().and_then(|e| e.poll_timeout()) {
                t = Some(t.map_or(d, |m| m.min(d)));
            }
        }
        if let Some(t) = t {
            io.timers.push((host, t));
        }
    }
}

/// What an endpoint's events update, borrowed apart from the endpoints.
struct Books<'a> {
    setup: &'a AtpSetup,
    jobs: &'a mut IntMap<(u32, u32, u8, u32), RxJob>,
    streams: &'a mut IntMap<u32, (ConnectionHandle, u8, u32)>,
    conns: &'a mut IntMap<(u32, u32, u8), ConnectionHandle>,
    delivered: &'a mut DeliveredTotals,
    epochs: &'a mut Vec<EpochRecord>,
}

impl Books<'_> {
    /// Job progress from endpoint `(host, v)`'s event `e` on connection
    /// `h`, whose peer is `peer`.
    #[allow(clippy::too_many_arguments)]
    fn on_event(
        &mut self,
        now: Instant,
        host: u32,
        v: u8,
        h: ConnectionHandle,
        peer: Option<(u32, u8)>,
        e: Event,
        io: &mut HostIo,
    ) {
        match e {
            Event::MessageDelivered { job, msg, .. } => {
                let Some((src, _)) = peer else { return };
                if let Some(r) = self.jobs.get_mut(&(src, host, v, job)) {
                    r.delivered += 1;
                    r.bytes += r.msgs.get(msg as usize).copied().unwrap_or(0);
                    io.updates.push(JobUpdate::Delivered {
                        job: r.job,
                        msgs: r.delivered,
                        bytes: r.bytes,
                    });
                    if !r.done && r.delivered >= r.needed {
                        r.done = true;
                        io.updates.push(JobUpdate::Finished {
                            job: r.job,
                            ok: true,
                            counters: JobCounters::default(),
                        });
                    }
                }
            }
            Event::JobComplete {
                job,
                role: Role::Sender,
                outcome,
            } => {
                let Some((dst, _)) = peer else { return };
                if let Some(r) = self.jobs.remove(&(host, dst, v, job)) {
                    if !self.setup.send_more {
                        self.streams.remove(&r.job);
                    }
                    let (ok, counters) = match outcome {
                        Ok(rep) => (
                            rep.guarantee_held(),
                            JobCounters {
                                sent_pkts: rep.packets,
                                retx_pkts: rep.retransmissions,
                                lost_pkts: rep.lost_packets,
                                timeouts: 0,
                            },
                        ),
                        Err(_) => (false, JobCounters::default()),
                    };
                    // the receiver-side count decides completion time; the
                    // sender's report only adds counters (or a failure)
                    io.updates.push(JobUpdate::Finished {
                        job: r.job,
                        ok: ok && r.done,
                        counters,
                    });
                }
            }
            Event::JobComplete {
                role: Role::Receiver,
                outcome: Ok(rep),
                ..
            } => {
                let t = &mut self.delivered;
                t.jobs += 1;
                for g in &rep.groups {
                    t.must += u64::from(g.must_deliver);
                    t.delivered += u64::from(g.delivered);
                }
            }
            Event::Epoch(s) if self.setup.record_epochs => {
                if let Some((dst, _)) = peer {
                    self.epochs.push(EpochRecord {
                        t_ns: now.as_nanos(),
                        host,
                        peer: dst,
                        variant: Variant::from_index(v).unwrap_or_default(),
                        tlr: s.tlr,
                        rho: s.rho,
                        rate_bps: s.rate.as_bps(),
                        queue: s.queue,
                    });
                }
            }
            Event::ConnectionLost { .. } => {
                if let Some((dst, _)) = peer {
                    if self.conns.get(&(host, dst, v)) == Some(&h) {
                        self.conns.remove(&(host, dst, v));
                    }
                }
            }
            _ => {}
        }
    }
}

impl HostAdapter for AtpAdapter {
    fn produce(&mut self, now: Instant, job: &Job, from: u32, to: u32, io: &mut HostIo) {
        let Some(&(h, v, id)) = self.streams.get(&job.id) else {
            return; // refused at the start, or already complete
        };
        // one list filled again per push, not one allocated and freed
        let mut msgs = std::mem::take(&mut self.push_buf);
        msgs.extend(
            job.msgs[from as usize..to as usize]
                .iter()
                .map(|&n| MessageSpec {
                    group: 0,
                    payload: Payload::Synthetic(n as usize),
                    precise_len: 0,
                }),
        );
        let r = self
            .endpoint(job.src, v)
            .push_messages_from(now, h, id, &mut msgs);
        self.push_buf = msgs;
        match r {
            Ok(Pushed::Queued(_)) => {}
            Ok(Pushed::JobComplete) => {
                self.streams.remove(&job.id);
            }
            Err(e) => {
                self.streams.remove(&job.id);
                self.refused.push((job.id, e.to_string()));
            }
        }
        if to as usize >= job.msgs.len() {
            self.streams.remove(&job.id);
        }
        self.drive(now, job.src, v, io);
    }

    fn start_job(&mut self, now: Instant, job: &Job, ready: u32, io: &mut HostIo) {
        let Scheme::Atp(variant) = job.scheme else {
            return;
        };
        let v = variant.index();
        let (src, dst) = (job.src, job.dst);
        let key = (src, dst, v);
        let h = match self.conns.get(&key) {
            Some(&h) => h,
            None => {
                let peer = addr(dst, v);
                match self.endpoint(src, v).connect(now, peer) {
                    Ok(h) => {
                        self.conns.insert(key, h);
                        h
                    }
                    Err(e) => {
                        self.refused.push((job.id, e.to_string()));
                        return;
                    }
                }
            }
        };
        let msr = if job.approximate { job.msr } else { 1.0 };
        // synthetic payloads: sizes only, never materialised; N announced up
        // front when the rest is produced later (seed 000 §3.3.2)
        let ready = (ready as usize).min(job.msgs.len());
        let sizes: Vec<usize> = job.msgs[..ready].iter().map(|&m| m as usize).collect();
        let streaming = ready < job.msgs.len();
        let spec = JobSpec::uniform(msr, &sizes).and_then(|s| {
            if streaming {
                s.announce(0, job.msgs.len() as u32)
            } else {
                Ok(s)
            }
        });
        let spec = match spec {
            Ok(s) => s,
            Err(e) => {
                self.refused.push((job.id, e.to_string()));
                return;
            }
        };
        match self.endpoint(src, v).send_job(now, h, spec) {
            Ok(id) => {
                if streaming {
                    self.streams.insert(job.id, (h, v, id));
                }
                self.jobs.insert(
                    (src, dst, v, id),
                    RxJob {
                        job: job.id,
                        class: job.class,
                        msgs: job.msgs.clone(),
                        delivered: 0,
                        bytes: 0,
                        needed: job.needed,
                        done: false,
                    },
                );
            }
            Err(e) => self.refused.push((job.id, e.to_string())),
        }
        self.drive(now, src, v, io);
    }

    fn on_datagram(
        &mut self,
        now: Instant,
        host: u32,
        port: u16,
        from: (u32, u16),
        bytes: &[u8],
        io: &mut HostIo,
    ) {
        let Some(v) = port.checked_sub(BASE_PORT).map(|p| p as u8) else {
            return;
        };
        let from_addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | from.0)), from.1);
        self.endpoint(host, v)
            .handle_datagram(now, from_addr, bytes);
        self.drive(now, host, v, io);
    }

    fn on_timer(&mut self, now: Instant, host: u32, io: &mut HostIo) {
        let mut mask = self.host_eps[host as usize];
        while mask != 0 {
            // the set bits in increasing order, as the variants were walked
            let v = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            let ep = self.endpoint(host, v);
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
            self.drive(now, host, v, io);
        }
    }

    fn track_class_queues(&mut self) {
        self.class_queues.get_or_insert_with(Vec::new);
    }

    fn class_queue(&mut self, class: u32) -> Option<u8> {
        self.class_queues
            .as_mut()
            .and_then(|q| q.get_mut(class as usize))
            .and_then(ClassQueues::take)
    }

    fn write_outputs(&self, dir: &std::path::Path) -> std::io::Result<()> {
        records::write_outputs(dir, self.setup.send_more, &self.delivered, &self.epochs)
    }
}
