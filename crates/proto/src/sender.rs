//! The sending half of a connection: jobs, groups, messages, packets in
//! flight, loss detection, selective retransmission and the scheduler queue.
//!
//! Rate, pacing and epochs live in `connection`; this module decides *what*
//! the next DATA packet is and keeps the books that eq. 1 needs.

use crate::bitset::{BitSet, SeqRing};
use crate::config::{Config, RetransmitPolicy};
use crate::event::{GroupReport, JobReport};
use crate::job::{JobError, JobSpec, Payload};
use crate::policy::{GroupProgress, Policies, SchedKey};
use crate::seq;
use crate::tensor::{chunk_range, chunks_needed, elems_per_chunk};
use crate::time::Instant;
use crate::wire::{GroupDesc, JobRepr, SeqRange, TensorDesc, MAX_GROUPS};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Trailer of a DATA packet with an approximate region: CRC32C of that region.
pub(crate) const APPROX_CRC_LEN: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MsgState {
    Open,
    Delivered,
    Abandoned,
}

#[derive(Debug)]
pub(crate) struct SendGroup {
    pub(crate) id: u16,
    pub(crate) msr: f64,
    pub(crate) messages: u32,
    pub(crate) must: u32,
    pub(crate) delivered: u32,
    pub(crate) abandoned: u32,
    pub(crate) tlr0: f64,
    pub(crate) tlr: f64,
    pub(crate) queue: u8,
}

impl SendGroup {
    pub(crate) fn reliable(&self) -> bool {
        self.must == self.messages
    }
    fn slack_left(&self) -> bool {
        self.abandoned < self.messages - self.must
    }
    /// Messages neither delivered nor abandoned yet.
    pub(crate) fn unresolved(&self) -> u32 {
        self.messages
            .saturating_sub(self.delivered + self.abandoned)
    }
    pub(crate) fn progress(&self) -> GroupProgress {
        GroupProgress {
            msr: self.msr,
            messages: self.messages,
            delivered: self.delivered,
            lost: self.abandoned,
        }
    }
}

#[derive(Debug)]
struct SendMsg {
    group: u16, // index into groups
    msg_id: u32,
    payload: Payload,
    precise_len: usize,
    pkt_count: u16,
    acked: BitSet,
    acked_count: u16,
    next_new: u16,
    retx: VecDeque<u16>,
    remaining: u64,
    state: MsgState,
    key: Option<u64>,
    elem_range: Option<(u32, u32)>,
}

impl SendMsg {
    /// Whether this message may share a DATA packet with others: one
    /// packet, no tensor range, and no approximate region with a checksum
    /// of its own (a bundle is covered whole by the header's CRC).
    fn bundleable(&self) -> bool {
        self.state == MsgState::Open
            && self.pkt_count == 1
            && self.elem_range.is_none()
            && match self.payload {
                Payload::Synthetic(_) => true,
                Payload::Bytes(ref b) => self.precise_len >= b.len(),
            }
    }
}

#[derive(Debug)]
pub(crate) struct SendJob {
    pub(crate) id: u32,
    pub(crate) groups: Vec<SendGroup>,
    msgs: Vec<SendMsg>,
    pub(crate) repr: JobRepr,
    pub(crate) started: Instant,
    pub(crate) job_acked: bool,
    pub(crate) control_sent: Option<Instant>,
    pub(crate) done: bool,
    pub(crate) fin_acked: bool,
    unresolved: u32,
    packets: u64,
    retx: u64,
    lost: u64,
    lost_by_timer: u64,
    spurious: u64,
    probes: u64,
    bytes: u64,
    per_packet: usize,
}

/// A DATA packet chosen for transmission.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextPacket {
    pub(crate) job: u32,
    pub(crate) group_id: u16,
    pub(crate) group_idx: u16,
    pub(crate) msg: u32,
    pub(crate) msg_id: u32,
    pub(crate) pkt: u16,
    pub(crate) pkt_count: u16,
    pub(crate) retx: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    InFlight,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Flight {
    job: u32,
    msg: u32,
    pkt: u16,
    /// More whole messages rode in this packet (`SendSide::bundles`).
    bundled: bool,
    pub(crate) sent: Instant,
    fate: Fate,
}

/// Outcome counters of one epoch.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EpochCount {
    pub(crate) acked: u64,
    pub(crate) lost: u64,
    /// Acknowledged packets that carried a congestion mark (ECN echo).
    pub(crate) marked: u64,
}

#[derive(Default, Debug)]
pub(crate) struct SendSide {
    pub(crate) jobs: Vec<SendJob>,
    next_job_id: u32,
    sched: BTreeSet<(u64, u64)>,
    flights: VecDeque<Flight>,
    /// The connection's first DATA sequence number (random; announced in
    /// every JOB header, so the receiver knows where its cumulative point
    /// starts).
    first_seq: u32,
    base_seq: u32,
    next_seq: u32,
    largest_acked: Option<u32>,
    loss_scan: u32,
    cum_done: u32,
    pub(crate) epoch: EpochCount,
    pub(crate) in_flight: u64,
    /// Sequence numbers still in flight (a bit each, spanning the flight
    /// list), for ACK ranges: a range long and repeated in every ACK costs
    /// a word read per 64 sequence numbers and touches only the packets it
    /// newly covers.
    unacked: SeqRing,
    /// Packets recently declared lost, by sequence number, so that an
    /// acknowledgement arriving afterwards is recognised as a spurious
    /// loss (bounded by [`MAX_RECENT_LOST`]; the oldest are forgotten).
    recent_lost: BTreeMap<u32, LostRecord>,
    /// The connection's epoch number now (losses are tagged with it).
    pub(crate) epoch_id: u64,
    /// Epochs (before the current one) in which a loss was declared that
    /// has since proved spurious; the connection drains this to undo rate
    /// cuts those epochs caused. Bounded by [`MAX_RECENT_LOST`].
    pub(crate) spurious_epochs: Vec<u64>,
    /// The epoch of the latest timer-declared loss that proved spurious:
    /// evidence that the RTO is shorter than this path's delays.
    pub(crate) spurious_timer_epoch: Option<u64>,
    /// Bundles in flight or remembered as lost: sequence number -> the
    /// messages (indices into the job's list) that rode along with the
    /// flight's own message.
    bundles: BTreeMap<u32, Vec<u32>>,
    /// The extra messages of the packet `next_packet` just chose.
    pending_bundle: Vec<u32>,
    /// The fast-detection reordering threshold in force: starts at the
    /// configured one and doubles (up to [`MAX_REORDER`]) whenever a packet
    /// declared lost by it turns out to have arrived — packets that changed
    /// priority queue overtake each other in a strict-priority switch.
    reorder: u32,
    /// The tail loss probe in flight: its sequence number and send time.
    probe: Option<(u32, Instant)>,
    /// The next DATA packet to leave is a tail loss probe.
    probe_pending: bool,
    /// This tail has had its probe (reset when other data leaves).
    probe_spent: bool,
    /// Send time of the probe, once it was acknowledged.
    probe_answer: Option<Instant>,
}

/// The adaptive reordering threshold's ceiling (packets).
const MAX_REORDER: u32 = 256;

/// A declared loss, remembered for spurious-loss detection.
#[derive(Clone, Copy, Debug)]
struct LostRecord {
    flight: Flight,
    /// Declared by fast detection (else by the timer).
    fast: bool,
    /// The epoch it was declared in.
    epoch: u64,
}

/// The first acknowledgement of one transmission.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acked {
    /// When it was sent (an RTT sample).
    pub(crate) sent: Instant,
    /// It had been declared lost.
    pub(crate) spurious: bool,
}

/// Bytes before each message in a bundle: message id (32) and length (16).
pub(crate) const BUNDLE_RECORD: usize = 6;
/// Most messages in one bundle.
const MAX_BUNDLE: usize = 64;

/// How many declared losses are remembered for spurious-loss detection.
const MAX_RECENT_LOST: usize = 4096;

/// Every this many transmissions, declared losses older than half the
/// sequence space are forgotten, before their numbers come round again.
const AGE_CHECK_EVERY: u32 = 1 << 16;

fn order(job: u32, msg: u32) -> u64 {
    ((job as u64) << 32) | msg as u64
}

impl SendSide {
    /// A sending side whose first DATA packet gets sequence number `first`.
    pub(crate) fn new(first: u32) -> SendSide {
        SendSide {
            first_seq: first,
            base_seq: first,
            next_seq: first,
            loss_scan: first,
            cum_done: first,
            ..SendSide::default()
        }
    }

    /// The sequence number of the connection's first DATA packet.
    pub(crate) fn first_seq(&self) -> u32 {
        self.first_seq
    }

    /// Validates and plans a job; returns its id.
    pub(crate) fn add_job(
        &mut self,
        now: Instant,
        spec: JobSpec,
        cfg: &Config,
        pol: &Policies,
    ) -> Result<u32, JobError> {
        if self.jobs.iter().filter(|j| !j.done).count() >= cfg.limits.max_jobs_per_connection {
            return Err(JobError::TooManyJobs(cfg.limits.max_jobs_per_connection));
        }
        let per_packet = cfg.max_payload() - APPROX_CRC_LEN;
        let (groups_spec, mut messages, tensor) = (spec.groups, spec.messages, spec.tensor);
        let mut tensor_desc = None;
        let mut tensor_need = None;
        if let Some(t) = &tensor {
            t.validate()?;
            let per = elems_per_chunk(t.dtype, per_packet);
            let total = t.elems() as u32;
            let chunks = total.div_ceil(per);
            if chunks > cfg.limits.max_messages_per_job {
                return Err(JobError::TooManyMessages {
                    max: cfg.limits.max_messages_per_job as u64,
                    got: chunks as u64,
                });
            }
            let s = t.dtype.size();
            messages = (0..chunks)
                .map(|i| {
                    let (a, b) = chunk_range(total, per, i);
                    crate::job::MessageSpec {
                        group: 0,
                        payload: Payload::Bytes(t.data[a as usize * s..b as usize * s].to_vec()),
                        precise_len: 0,
                    }
                })
                .collect();
            tensor_desc = Some(TensorDesc {
                dtype: t.dtype,
                total_elems: total,
                elems_per_chunk: per,
            });
            tensor_need = Some(chunks_needed(total, per, t.deliver_fraction));
        }
        if messages.is_empty() {
            return Err(JobError::Empty);
        }
        if groups_spec.len() > MAX_GROUPS {
            return Err(JobError::TooManyGroups {
                max: MAX_GROUPS,
                got: groups_spec.len(),
            });
        }
        if messages.len() as u64 > cfg.limits.max_messages_per_job as u64 {
            return Err(JobError::TooManyMessages {
                max: cfg.limits.max_messages_per_job as u64,
                got: messages.len() as u64,
            });
        }
        for (i, g) in groups_spec.iter().enumerate() {
            if groups_spec[..i].iter().any(|o| o.id == g.id) {
                return Err(JobError::DuplicateGroup(g.id));
            }
        }
        let mut counts = vec![0u32; groups_spec.len()];
        let mut gidx = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            let gi =
                groups_spec
                    .iter()
                    .position(|g| g.id == m.group)
                    .ok_or(JobError::UnknownGroup {
                        msg: i,
                        group: m.group,
                    })?;
            let len = m.payload.len();
            if m.precise_len > len {
                return Err(JobError::PreciseTooLong {
                    msg: i,
                    precise: m.precise_len,
                    len,
                });
            }
            if len.div_ceil(per_packet).max(1) > u16::MAX as usize {
                return Err(JobError::MessageTooLarge { msg: i, len });
            }
            gidx.push(gi as u16);
            counts[gi] += 1;
        }
        let id = self.next_job_id;
        self.next_job_id = self.next_job_id.wrapping_add(1);
        let mut groups = Vec::new();
        let mut descs = Vec::new();
        // Groups without messages are not announced; keep indices dense.
        let mut remap = vec![u16::MAX; groups_spec.len()];
        for (i, g) in groups_spec.iter().enumerate() {
            if counts[i] == 0 {
                continue;
            }
            let must = tensor_need.unwrap_or_else(|| g.msr.must_deliver(counts[i]));
            remap[i] = groups.len() as u16;
            let prog = GroupProgress {
                msr: g.msr.get(),
                messages: counts[i],
                delivered: 0,
                lost: 0,
            };
            let tlr0 = pol.tlr.tlr(&prog);
            let reliable = must == counts[i];
            groups.push(SendGroup {
                id: g.id,
                msr: g.msr.get(),
                messages: counts[i],
                must,
                delivered: 0,
                abandoned: 0,
                tlr0,
                tlr: tlr0,
                queue: pol.queue.queue(reliable, tlr0, tlr0, cfg.queues),
            });
            descs.push(GroupDesc {
                id: g.id,
                messages: counts[i],
                must_deliver: must,
            });
        }
        let mut per_group_next = vec![0u32; groups.len()];
        let mut msgs = Vec::with_capacity(messages.len());
        let mut bytes = 0u64;
        for (i, m) in messages.into_iter().enumerate() {
            let g = remap[gidx[i] as usize];
            let msg_id = per_group_next[g as usize];
            per_group_next[g as usize] += 1;
            let len = m.payload.len();
            bytes += len as u64;
            let pkt_count = len.div_ceil(per_packet).max(1) as u16;
            let elem_range =
                tensor_desc.map(|t| chunk_range(t.total_elems, t.elems_per_chunk, i as u32));
            msgs.push(SendMsg {
                group: g,
                msg_id,
                precise_len: m.precise_len,
                payload: m.payload,
                pkt_count,
                acked: BitSet::new(pkt_count as usize),
                acked_count: 0,
                next_new: 0,
                retx: VecDeque::new(),
                remaining: len.max(1) as u64,
                state: MsgState::Open,
                key: None,
                elem_range,
            });
        }
        let unresolved = msgs.len() as u32;
        let mut job = SendJob {
            id,
            groups,
            msgs,
            repr: JobRepr {
                tensor: tensor_desc,
                groups: descs,
            },
            started: now,
            job_acked: false,
            control_sent: None,
            done: false,
            fin_acked: false,
            unresolved,
            packets: 0,
            retx: 0,
            lost: 0,
            lost_by_timer: 0,
            spurious: 0,
            probes: 0,
            bytes,
            per_packet,
        };
        // Messages of groups that must deliver nothing are still sent once
        // (best effort); they can all be abandoned.
        for mi in 0..job.msgs.len() {
            Self::reschedule(&mut self.sched, &mut job, mi, pol);
        }
        self.jobs.push(job);
        Ok(id)
    }

    fn reschedule(sched: &mut BTreeSet<(u64, u64)>, job: &mut SendJob, mi: usize, pol: &Policies) {
        let m = &mut job.msgs[mi];
        if let Some(k) = m.key.take() {
            sched.remove(&(k, order(job.id, mi as u32)));
        }
        let sendable =
            m.state == MsgState::Open && (!m.retx.is_empty() || m.next_new < m.pkt_count);
        if sendable {
            let k = pol.scheduler.key(&SchedKey {
                remaining_bytes: m.remaining,
                has_new: m.next_new < m.pkt_count,
            });
            m.key = Some(k);
            sched.insert((k, order(job.id, mi as u32)));
        }
    }

    fn job_index(&self, id: u32) -> Option<usize> {
        self.jobs.iter().position(|j| j.id == id)
    }

    /// Whether the packet `next_packet` just chose is a bundle.
    pub(crate) fn bundling(&self) -> bool {
        !self.pending_bundle.is_empty()
    }

    /// Whether a DATA packet is waiting to be sent.
    pub(crate) fn has_data(&self) -> bool {
        !self.sched.is_empty()
    }

    /// Picks the next DATA packet (scheduler order), or `None`. Whole
    /// one-packet messages that come next in scheduler order, of the same
    /// job and group, ride along while the body stays within
    /// `bundle_bytes` and the packet (`pending_bundle`; `write_body` and
    /// `on_sent` consume it).
    pub(crate) fn next_packet(
        &mut self,
        pol: &Policies,
        bundle_bytes: usize,
    ) -> Option<NextPacket> {
        self.pending_bundle.clear();
        let np = loop {
            let &(_, ord) = self.sched.iter().next()?;
            let (job_id, mi) = ((ord >> 32) as u32, ord as u32 as usize);
            let ji = self.job_index(job_id)?;
            let job = &mut self.jobs[ji];
            let Some((pkt, retx)) = Self::take_packet(&mut job.msgs[mi]) else {
                Self::reschedule(&mut self.sched, job, mi, pol);
                continue;
            };
            let m = &job.msgs[mi];
            let np = NextPacket {
                job: job.id,
                group_id: job.groups[m.group as usize].id,
                group_idx: m.group,
                msg: mi as u32,
                msg_id: m.msg_id,
                pkt,
                pkt_count: m.pkt_count,
                retx,
            };
            Self::reschedule(&mut self.sched, job, mi, pol);
            break np;
        };
        if bundle_bytes > 0 {
            self.fill_bundle(&np, bundle_bytes, pol);
        }
        Some(np)
    }

    /// The packet to send next of message `m`: a queued retransmission not
    /// acknowledged meanwhile, else its next new packet; `None` when only
    /// acknowledged packets were queued (late ACKs of spurious losses).
    fn take_packet(m: &mut SendMsg) -> Option<(u16, bool)> {
        loop {
            match m.retx.pop_front() {
                Some(p) if m.acked.get(p as usize) => continue,
                Some(p) => return Some((p, true)),
                None if m.next_new < m.pkt_count => {
                    m.next_new += 1;
                    return Some((m.next_new - 1, false));
                }
                None => return None,
            }
        }
    }

    /// Adds to `pending_bundle` the messages that may ride with `np`.
    fn fill_bundle(&mut self, np: &NextPacket, bundle_bytes: usize, pol: &Policies) {
        let Some(ji) = self.job_index(np.job) else {
            return;
        };
        let job = &mut self.jobs[ji];
        let first = &job.msgs[np.msg as usize];
        if !first.bundleable() {
            return;
        }
        let mut room = job
            .per_packet
            .min(bundle_bytes)
            .saturating_sub(2 * BUNDLE_RECORD + first.payload.len());
        while self.pending_bundle.len() + 1 < MAX_BUNDLE {
            let Some(&(_, ord)) = self.sched.iter().next() else {
                break;
            };
            let (job_id, mi) = ((ord >> 32) as u32, ord as u32 as usize);
            if job_id != np.job {
                break; // only messages of the same job share a packet
            }
            let m = &job.msgs[mi];
            if m.group != np.group_idx || !m.bundleable() || m.payload.len() > room {
                break;
            }
            let Some(_) = Self::take_packet(&mut job.msgs[mi]) else {
                Self::reschedule(&mut self.sched, job, mi, pol);
                continue;
            };
            room = room.saturating_sub(BUNDLE_RECORD + job.msgs[mi].payload.len());
            Self::reschedule(&mut self.sched, job, mi, pol);
            self.pending_bundle.push(mi as u32);
        }
    }

    /// Writes the body of packet `np` into `out`; returns (body length,
    /// precise length, approximate trailer present, element range).
    pub(crate) fn write_body(
        &self,
        np: &NextPacket,
        out: &mut [u8],
    ) -> (usize, usize, bool, Option<(u32, u32)>) {
        let Some(ji) = self.job_index(np.job) else {
            return (0, 0, false, None);
        };
        let job = &self.jobs[ji];
        if !self.pending_bundle.is_empty() {
            let mut at = 0;
            for &mi in std::iter::once(&np.msg).chain(&self.pending_bundle) {
                let m = &job.msgs[mi as usize];
                let n = m.payload.len();
                out[at..at + 4].copy_from_slice(&m.msg_id.to_be_bytes());
                out[at + 4..at + 6].copy_from_slice(&(n as u16).to_be_bytes());
                at += BUNDLE_RECORD;
                match &m.payload {
                    Payload::Bytes(v) => out[at..at + n].copy_from_slice(v),
                    Payload::Synthetic(_) => out[at..at + n].fill(0),
                }
                at += n;
            }
            // The whole body is precise: the header's CRC covers it.
            return (at, at, false, None);
        }
        let m = &job.msgs[np.msg as usize];
        let per = job.per_packet;
        let len = m.payload.len();
        let a = (np.pkt as usize * per).min(len);
        let b = (a + per).min(len);
        let n = b - a;
        match &m.payload {
            Payload::Bytes(v) => out[..n].copy_from_slice(&v[a..b]),
            Payload::Synthetic(_) => out[..n].fill(0),
        }
        let precise = m.precise_len.clamp(a, b) - a;
        let mut body = n;
        // Synthetic bytes carry no information worth a checksum trailer.
        let approx = precise < n && matches!(m.payload, Payload::Bytes(_));
        if approx {
            let c = crate::wire::crc::crc32c(&out[precise..n]);
            out[n..n + APPROX_CRC_LEN].copy_from_slice(&c.to_be_bytes());
            body += APPROX_CRC_LEN;
        }
        (body, precise, approx, m.elem_range)
    }

    /// Records that packet `np` left with sequence number `seq`.
    pub(crate) fn on_sent(&mut self, now: Instant, np: &NextPacket) -> u32 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        if self.flights.is_empty() {
            self.base_seq = seq;
        }
        let bundled = !self.pending_bundle.is_empty();
        if bundled {
            self.bundles
                .insert(seq, std::mem::take(&mut self.pending_bundle));
        }
        self.flights.push_back(Flight {
            job: np.job,
            msg: np.msg,
            pkt: np.pkt,
            bundled,
            sent: now,
            fate: Fate::InFlight,
        });
        if self.probe_pending {
            self.probe_pending = false;
            self.probe = Some((seq, now));
            if let Some(ji) = self.job_index(np.job) {
                self.jobs[ji].probes += 1;
            }
        } else {
            self.probe_spent = false;
        }
        self.in_flight += 1;
        self.unacked.push(seq, self.base_seq);
        if seq.is_multiple_of(AGE_CHECK_EVERY) {
            self.forget_ancient_losses();
        }
        if let Some(ji) = self.job_index(np.job) {
            let j = &mut self.jobs[ji];
            j.packets += 1;
            if np.retx {
                j.retx += 1;
            }
        }
        seq
    }

    fn flight_mut(&mut self, seq: u32) -> Option<&mut Flight> {
        let off = seq.wrapping_sub(self.base_seq) as usize;
        if off >= self.flights.len() {
            return None;
        }
        self.flights.get_mut(off)
    }

    /// Marks `seq` acknowledged; returns its send time for an RTT sample
    /// when this is the first acknowledgement of that transmission. Every
    /// transmission has its own sequence number, so the sample is
    /// unambiguous even for retransmitted data and for packets already
    /// declared lost (those late acknowledgements are what lets the RTO
    /// grow to the path's real delay).
    pub(crate) fn on_acked(&mut self, seq: u32, pol: &Policies) -> Option<Acked> {
        if let Some((s, sent)) = self.probe {
            if s == seq {
                self.probe = None;
                self.probe_answer = Some(sent);
            }
        }
        let Some(f) = self.flight_mut(seq).map(|f| *f) else {
            // Popped already: acknowledged before, or declared lost.
            let rec = self.recent_lost.remove(&seq)?;
            self.spurious_loss(&rec.flight, Some(rec), pol);
            self.bundle_arrived(seq, &rec.flight, pol);
            return Some(Acked {
                sent: rec.flight.sent,
                spurious: true,
            });
        };
        match f.fate {
            Fate::Acked => return None,
            Fate::Lost => {
                let rec = self.recent_lost.remove(&seq);
                self.spurious_loss(&f, rec, pol);
            }
            Fate::InFlight => {
                self.unacked.remove(seq);
                self.in_flight -= 1;
                self.epoch.acked += 1;
            }
        }
        if let Some(x) = self.flight_mut(seq) {
            x.fate = Fate::Acked;
        }
        self.largest_acked = Some(self.largest_acked.map_or(seq, |l| seq::later(l, seq)));
        self.packet_arrived(f.job, f.msg, f.pkt, pol);
        self.bundle_arrived(seq, &f, pol);
        self.pop_resolved();
        Some(Acked {
            sent: f.sent,
            spurious: f.fate == Fate::Lost,
        })
    }

    /// An acknowledgement for a packet declared lost: the network delivered
    /// it. The loss is undone where the rate control counted it (the rate
    /// control must see the path's real loss, not the sender's impatience):
    /// in the running epoch's counts, or, for an earlier epoch, reported to
    /// the connection through `spurious_epochs`. The packet is credited to
    /// its message. `rec` is `None` when the record was already forgotten.
    fn spurious_loss(&mut self, f: &Flight, rec: Option<LostRecord>, pol: &Policies) {
        if let Some(rec) = rec {
            if rec.fast {
                self.reorder = (self.reorder.max(1) * 2).min(MAX_REORDER);
            } else {
                self.spurious_timer_epoch = Some(self.epoch_id);
            }
            if rec.epoch == self.epoch_id {
                if self.epoch.lost > 0 {
                    self.epoch.lost -= 1;
                    self.epoch.acked += 1;
                }
            } else if self.spurious_epochs.len() < MAX_RECENT_LOST {
                self.spurious_epochs.push(rec.epoch);
            }
        }
        if let Some(ji) = self.job_index(f.job) {
            self.jobs[ji].spurious += 1;
        }
        self.packet_arrived(f.job, f.msg, f.pkt, pol);
    }

    /// Marks acknowledged every in-flight packet in range `r` (wrapping,
    /// as the wire allows); costs one word read per 64 sequence numbers of
    /// the range that overlap the flight list, plus the packets newly
    /// acknowledged.
    pub(crate) fn on_acked_range(&mut self, r: SeqRange, pol: &Policies) {
        if !r.is_well_formed() {
            return;
        }
        self.late_acks(r, pol);
        // Acknowledging pushes nothing, so ring positions hold throughout.
        let mut from = 0;
        while let Some((s, at)) = self.unacked.first_in(r.start, r.len(), from) {
            self.on_acked(s, pol);
            from = at + 1;
        }
    }

    /// Processes an ACK's cumulative point (amortised over the connection).
    pub(crate) fn on_cumulative(&mut self, cum: u32, pol: &Policies) {
        // Only move forward, and never past what was sent.
        if !seq::before(self.cum_done, cum)
            || cum.wrapping_sub(self.base_seq) as usize > self.flights.len()
        {
            return;
        }
        let popped_some = seq::before(self.cum_done, self.base_seq);
        let mut s = if popped_some {
            self.base_seq
        } else {
            self.cum_done
        };
        while s != cum {
            self.on_acked(s, pol);
            s = s.wrapping_add(1);
        }
        if popped_some {
            let r = SeqRange {
                start: self.cum_done,
                end: cum,
            };
            self.late_acks(r, pol);
        }
        self.cum_done = cum;
    }

    /// Spurious losses among packets already popped from the flight list
    /// whose sequence numbers fall in range `r`.
    fn late_acks(&mut self, r: SeqRange, pol: &Policies) {
        if self.recent_lost.is_empty() {
            return;
        }
        for run in r.runs() {
            let (mut from, last) = (*run.start(), *run.end());
            // `on_acked` removes the record; resuming past each one makes
            // progress even if it did not.
            while let Some(&s) = self.recent_lost.range(from..=last).next().map(|(s, _)| s) {
                self.on_acked(s, pol);
                if s == last {
                    break;
                }
                from = s + 1;
            }
        }
    }

    /// The oldest remembered loss: the lowest number at or above
    /// `next_seq` (sent before the numbers wrapped), else the lowest.
    fn oldest_lost(&self) -> Option<u32> {
        self.recent_lost
            .range(self.next_seq..)
            .next()
            .or_else(|| self.recent_lost.first_key_value())
            .map(|(&s, _)| s)
    }

    /// Forgets the oldest remembered loss (and its bundle, once its
    /// flight is gone).
    fn forget_oldest_loss(&mut self) {
        if let Some(old) = self.oldest_lost() {
            self.recent_lost.remove(&old);
            if self.flight_mut(old).is_none() {
                self.bundles.remove(&old);
            }
        }
    }

    /// Forgets losses declared half the sequence space ago or more: their
    /// numbers would soon name new transmissions.
    fn forget_ancient_losses(&mut self) {
        while let Some(old) = self.oldest_lost() {
            if seq::offset(old, self.next_seq).is_some() {
                break;
            }
            self.forget_oldest_loss();
        }
    }

    /// The messages that rode along in packet `seq` arrived with it.
    fn bundle_arrived(&mut self, seq: u32, f: &Flight, pol: &Policies) {
        if !f.bundled {
            return;
        }
        if let Some(extra) = self.bundles.remove(&seq) {
            for mi in extra {
                self.packet_arrived(f.job, mi, 0, pol);
            }
        }
    }

    fn packet_arrived(&mut self, job: u32, mi: u32, pkt: u16, pol: &Policies) {
        let Some(ji) = self.job_index(job) else {
            return;
        };
        let j = &mut self.jobs[ji];
        let per = j.per_packet as u64;
        let m = &mut j.msgs[mi as usize];
        if !m.acked.insert(pkt as usize) {
            return;
        }
        m.acked_count += 1;
        let len = m.payload.len() as u64;
        let a = (pkt as u64 * per).min(len);
        let b = (a + per).min(len);
        m.remaining = m.remaining.saturating_sub((b - a).max(1));
        if m.acked_count == m.pkt_count && m.state == MsgState::Open {
            m.state = MsgState::Delivered;
            m.retx.clear();
            j.groups[m.group as usize].delivered += 1;
            j.unresolved -= 1;
        }
        Self::reschedule(&mut self.sched, j, mi as usize, pol);
    }

    fn pop_resolved(&mut self) {
        while let Some(f) = self.flights.front() {
            if f.fate == Fate::InFlight {
                break;
            }
            self.flights.pop_front();
            self.base_seq = self.base_seq.wrapping_add(1);
        }
    }

    /// Declares lost every in-flight packet `reorder` or more behind the
    /// largest acknowledged one (fast detection).
    pub(crate) fn detect_fast(&mut self, reorder: u32, cfg: &Config, pol: &Policies) {
        let reorder = reorder.max(self.reorder);
        let Some(largest) = self.largest_acked else {
            return;
        };
        if seq::before(self.loss_scan, self.base_seq) {
            self.loss_scan = self.base_seq;
        }
        while seq::offset(self.loss_scan, largest).is_some_and(|behind| behind >= reorder) {
            let s = self.loss_scan;
            self.loss_scan = self.loss_scan.wrapping_add(1);
            if self.flight_mut(s).is_some_and(|f| f.fate == Fate::InFlight) {
                self.declare_lost(s, true, cfg, pol);
            }
        }
        self.pop_resolved();
    }

    /// Send time of the oldest packet still in flight.
    pub(crate) fn oldest_in_flight(&self) -> Option<Instant> {
        self.flights
            .iter()
            .find(|f| f.fate == Fate::InFlight)
            .map(|f| f.sent)
    }

    /// Whether a tail loss probe may be sent now: nothing new or queued to
    /// send, packets in flight, and no probe yet in this tail.
    pub(crate) fn can_probe(&self) -> bool {
        self.in_flight > 0
            && !self.probe_spent
            && !self.probe_pending
            && self.probe.is_none()
            && !self.has_data()
    }

    /// Queues a tail loss probe (after RFC 8985's TLP): the newest packet
    /// in flight that still matters (its message open, itself not
    /// acknowledged) is sent again under a new sequence number. An
    /// acknowledgement of the probe then reveals, in one round trip, which
    /// earlier packets did not arrive. Returns whether a probe was queued.
    pub(crate) fn queue_probe(&mut self, pol: &Policies) -> bool {
        self.probe_spent = true;
        let Some(f) = self.flights.iter().rev().find(|f| {
            f.fate == Fate::InFlight
                && self.job_index(f.job).is_some_and(|ji| {
                    let m = &self.jobs[ji].msgs[f.msg as usize];
                    m.state == MsgState::Open && !m.acked.get(f.pkt as usize)
                })
        }) else {
            return false;
        };
        let (job, mi, pkt) = (f.job, f.msg as usize, f.pkt);
        let Some(ji) = self.job_index(job) else {
            return false;
        };
        let j = &mut self.jobs[ji];
        let m = &mut j.msgs[mi];
        if !m.retx.contains(&pkt) {
            m.retx.push_front(pkt);
        }
        Self::reschedule(&mut self.sched, j, mi, pol);
        self.probe_pending = true;
        true
    }

    /// The send time of the tail probe if it was acknowledged since the
    /// last call.
    pub(crate) fn take_probe_answer(&mut self) -> Option<Instant> {
        self.probe_answer.take()
    }

    /// Declares lost every in-flight packet sent at or before `deadline`
    /// (timer); returns how many.
    pub(crate) fn detect_timeout(
        &mut self,
        deadline: Instant,
        cfg: &Config,
        pol: &Policies,
    ) -> u32 {
        let mut n = 0;
        let mut s = self.base_seq;
        for i in 0..self.flights.len() {
            let f = self.flights[i];
            if f.sent > deadline {
                break;
            }
            if f.fate == Fate::InFlight {
                self.declare_lost(s, false, cfg, pol);
                n += 1;
            }
            s = s.wrapping_add(1);
        }
        self.pop_resolved();
        n
    }

    fn declare_lost(&mut self, seq: u32, fast: bool, cfg: &Config, pol: &Policies) {
        let Some(f) = self.flight_mut(seq) else {
            return;
        };
        f.fate = Fate::Lost;
        let f = *f;
        if self.probe.is_some_and(|(s, _)| s == seq) {
            self.probe = None; // the loss timer takes over
        }
        if self.recent_lost.len() >= MAX_RECENT_LOST {
            self.forget_oldest_loss();
        }
        self.recent_lost.insert(
            seq,
            LostRecord {
                flight: f,
                fast,
                epoch: self.epoch_id,
            },
        );
        self.unacked.remove(seq);
        self.in_flight -= 1;
        self.epoch.lost += 1;
        let Some(ji) = self.job_index(f.job) else {
            return;
        };
        let j = &mut self.jobs[ji];
        j.lost += 1;
        if !fast {
            j.lost_by_timer += 1;
        }
        self.lose_message(ji, f.msg, f.pkt, fast, cfg, pol);
        if f.bundled {
            if let Some(extra) = self.bundles.remove(&seq) {
                for &mi in &extra {
                    self.lose_message(ji, mi, 0, fast, cfg, pol);
                }
                // Kept while the loss is remembered: a late ACK credits them.
                self.bundles.insert(seq, extra);
            }
        }
    }

    /// Packet `pkt` of message `mi` (job index `ji`) was declared lost:
    /// abandon the message while its group has slack, else queue the
    /// packet for retransmission (seed 000 §4.3's selective rule).
    fn lose_message(
        &mut self,
        ji: usize,
        mi: u32,
        pkt: u16,
        fast: bool,
        cfg: &Config,
        pol: &Policies,
    ) {
        let j = &mut self.jobs[ji];
        let m = &mut j.msgs[mi as usize];
        if m.state != MsgState::Open || m.acked.get(pkt as usize) {
            return;
        }
        let g = &mut j.groups[m.group as usize];
        let retransmit = !g.slack_left() || (cfg.retransmit == RetransmitPolicy::FastOnly && fast);
        if retransmit {
            if !m.retx.contains(&pkt) {
                m.retx.push_back(pkt);
            }
        } else {
            m.state = MsgState::Abandoned;
            m.retx.clear();
            g.abandoned += 1;
            j.unresolved -= 1;
        }
        Self::reschedule(&mut self.sched, j, mi as usize, pol);
    }

    /// Jobs that just resolved every message: marks them done and returns
    /// their reports.
    pub(crate) fn take_finished(&mut self, now: Instant) -> Vec<JobReport> {
        let mut out = Vec::new();
        for j in self
            .jobs
            .iter_mut()
            .filter(|j| !j.done && j.unresolved == 0)
        {
            j.done = true;
            j.control_sent = None;
            out.push(j.report(now));
        }
        out
    }

    /// Forgets jobs that are done and whose FIN was acknowledged.
    pub(crate) fn reap(&mut self) {
        let flights = &self.flights;
        self.jobs
            .retain(|j| !(j.done && j.fin_acked && !flights.iter().any(|f| f.job == j.id)));
    }

    /// Job by id.
    pub(crate) fn job_mut(&mut self, id: u32) -> Option<&mut SendJob> {
        self.jobs.iter_mut().find(|j| j.id == id)
    }

    /// Whether a job is still sending (not every message resolved).
    pub(crate) fn has_open_jobs(&self) -> bool {
        self.jobs.iter().any(|j| !j.done)
    }

    /// Whether anything is outstanding (data or unacknowledged control).
    pub(crate) fn busy(&self) -> bool {
        self.in_flight > 0 || self.jobs.iter().any(|j| !j.fin_acked)
    }

    /// Fails every open job (peer gone); returns their ids.
    pub(crate) fn fail_all(&mut self) -> Vec<u32> {
        let ids = self.jobs.iter().filter(|j| !j.done).map(|j| j.id).collect();
        self.jobs.clear();
        self.sched.clear();
        self.flights.clear();
        self.unacked.clear();
        self.recent_lost.clear();
        self.spurious_epochs.clear();
        self.bundles.clear();
        self.pending_bundle.clear();
        self.in_flight = 0;
        ids
    }
}

impl SendJob {
    fn report(&self, now: Instant) -> JobReport {
        JobReport {
            job: self.id,
            groups: self
                .groups
                .iter()
                .map(|g| GroupReport {
                    id: g.id,
                    messages: g.messages,
                    must_deliver: g.must,
                    delivered: g.delivered,
                    abandoned: g.abandoned,
                })
                .collect(),
            jct: now - self.started,
            packets: self.packets,
            retransmissions: self.retx,
            lost_packets: self.lost,
            lost_by_timer: self.lost_by_timer,
            spurious_losses: self.spurious,
            tail_probes: self.probes,
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobSpec;
    use crate::rng::Rng;

    /// ACKs whose ranges stay long and repeat in every ACK (the cumulative
    /// point stuck behind the first packet), straddle the u32 wrap of
    /// sequence numbers and reach outside the flight list acknowledge
    /// every packet in flight exactly once, just those they cover.
    #[test]
    fn repeated_ack_ranges_across_wrap_resolve_each_packet_once() {
        const PACKETS: u32 = 3000;
        let cfg = Config::default();
        let pol = cfg.variant.policies(cfg.rate);
        let first = u32::MAX - 1000;
        let mut send = SendSide::new(first);
        let job = JobSpec::uniform(1.0, &vec![100; PACKETS as usize]).unwrap();
        send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
        for _ in 0..PACKETS {
            let np = send.next_packet(&pol, 0).expect("a packet to send");
            send.on_sent(Instant::ZERO, &np);
        }
        let sent: Vec<u32> = (0..PACKETS).map(|i| first.wrapping_add(i)).collect();
        let mut covered = BTreeSet::<u32>::new();
        let mut ack = |send: &mut SendSide, ranges: &[SeqRange]| {
            for &r in ranges {
                send.on_acked_range(r, &pol);
                if r.is_well_formed() {
                    covered.extend(sent.iter().filter(|&&s| r.contains(s)));
                }
            }
            let n = covered.len() as u64;
            assert_eq!(send.epoch.acked, n, "each covered packet acknowledged once");
            assert_eq!(send.in_flight, PACKETS as u64 - n);
            assert_eq!(send.jobs[0].groups[0].delivered as u64, n);
        };
        let mut rng = Rng::new(3);
        let last = first.wrapping_add(PACKETS - 1);
        let mut newest = first;
        while newest != last {
            let left = last.wrapping_sub(newest);
            newest = newest.wrapping_add((1 + rng.below(50) as u32).min(left));
            // Everything after the first packet up to the newest (one
            // range, wrapping once the newest passes u32::MAX), plus a
            // range anywhere: before, inside, after or around the window,
            // or not well formed at all.
            let mut ranges = vec![SeqRange {
                start: first.wrapping_add(1),
                end: newest.wrapping_add(1),
            }];
            let points = [0, u32::MAX, first, newest, last, rng.next_u64() as u32];
            let mut pick = || {
                let p = points[rng.below(points.len() as u64) as usize];
                p.wrapping_add(rng.below(64) as u32).wrapping_sub(32)
            };
            ranges.push(SeqRange {
                start: pick(),
                end: pick(),
            });
            ack(&mut send, &ranges);
        }
        // What no range says: the stuck first packet.
        send.on_acked(first, &pol);
        assert_eq!(send.epoch.acked, PACKETS as u64);
        assert_eq!(send.in_flight, 0);
        assert!(send.flights.is_empty());
        assert_eq!(send.base_seq, send.next_seq);
    }

    /// Declared losses are remembered by sequence number and forgotten
    /// oldest first across the wrap; a late cumulative ACK across the wrap
    /// recognises them as spurious.
    #[test]
    fn lost_packets_across_wrap_are_forgotten_oldest_first() {
        let cfg = Config::default();
        let pol = cfg.variant.policies(cfg.rate);
        let first = u32::MAX - 5;
        let mut send = SendSide::new(first);
        let job = JobSpec::uniform(1.0, &[100; 12]).unwrap();
        send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
        let later = Instant::from_nanos(1000);
        for i in 0..12 {
            let np = send.next_packet(&pol, 0).expect("a packet to send");
            send.on_sent(if i < 10 { Instant::ZERO } else { later }, &np);
        }
        assert_eq!(send.detect_timeout(Instant::ZERO, &cfg, &pol), 10);
        assert_eq!(send.oldest_lost(), Some(first));
        send.forget_oldest_loss();
        assert_eq!(send.oldest_lost(), Some(first.wrapping_add(1)));
        // The cumulative point moves across the wrap, past one packet
        // still in flight: every remembered loss before it proves spurious.
        send.on_cumulative(first.wrapping_add(11), &pol);
        assert_eq!(send.jobs[0].spurious, 9);
        assert_eq!(send.oldest_lost(), None);
        assert_eq!(send.in_flight, 1);
    }
}
