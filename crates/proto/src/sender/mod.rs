//! The sending half of a connection: jobs, groups, messages, packets in
//! flight, loss detection, selective retransmission and the scheduler queue.
//!
//! Rate, pacing and epochs live in `connection`; this module decides *what*
//! the next DATA packet is and keeps the books that eq. 1 needs.
//!
//! The folder, one concern a file: this file holds the types; `lifecycle` the job
//! lifecycle (completion, reports, teardown); `plan` validates and plans a
//! job; `stream` hands over messages of a streaming job as they are
//! produced and ends a job once the receiver holds `ceil(MSR * N)` of every
//! group; `transmit` is the scheduler queue, bundling and what leaves;
//! `acks` is everything an acknowledgement does; `loss` is loss detection,
//! its consequences and the tail loss probe.

mod acks;
mod lifecycle;
mod loss;
mod plan;
mod queue;
mod split;
mod stream;
mod transmit;

pub use stream::Pushed;

#[cfg(test)]
mod tests;

use crate::bitset::{BitSet, SeqRing};
use crate::job::Payload;
use crate::policy::{GroupProgress, Policies};
use crate::time::Instant;
use crate::wire::JobRepr;
use std::collections::{BTreeMap, VecDeque};

pub(crate) use crate::wire::body::{APPROX_CRC_LEN, BUNDLE_RECORD_LEN as BUNDLE_RECORD};

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
    /// N: the group's messages in all (announced, for a streaming job).
    pub(crate) messages: u32,
    /// Messages handed over so far (`messages` once production ended).
    pub(crate) produced: u32,
    /// Handed-over messages of which no packet has left yet: the ones that
    /// could take a lost message's place.
    pub(crate) fresh: u32,
    pub(crate) must: u32,
    pub(crate) delivered: u32,
    pub(crate) abandoned: u32,
    pub(crate) tlr0: f64,
    pub(crate) tlr: f64,
    pub(crate) queue: u8,
    /// The inputs `tlr` and `queue` were last derived from
    /// (`Connection::end_epoch`): the same inputs give the same values, so
    /// an epoch that moved none of them skips the derivation.
    pub(crate) derived_from: TlrInputs,
}

/// What eq. 1's TLR and the queue choice of a group read besides its MSR
/// and `tlr0` (fixed at planning) and the connection's policies (fixed at
/// creation): its counts and the number of queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TlrInputs {
    messages: u32,
    delivered: u32,
    abandoned: u32,
    must: u32,
    queues: u8,
}

impl SendGroup {
    /// eq. 1's TLR for the next epoch and the queue from it
    /// (`Connection::end_epoch`). Both are pure functions of
    /// [`TlrInputs`] (the policies take `&self` and hold no state):
    /// unchanged inputs, as in every epoch that resolved none of the
    /// group's messages, keep the values derived from them (issue 19).
    #[inline(always)]
    pub(crate) fn derive_tlr(&mut self, pol: &Policies, queues: u8) {
        let inputs = self.tlr_inputs(queues);
        if inputs != self.derived_from {
            self.tlr = pol.tlr.tlr(&self.progress());
            self.queue = pol
                .queue
                .queue(self.reliable(), self.tlr0, self.tlr, queues);
            self.derived_from = inputs;
        }
    }

    /// The inputs `tlr` and `queue` derive from now, with `queues` queues.
    pub(crate) fn tlr_inputs(&self, queues: u8) -> TlrInputs {
        TlrInputs {
            messages: self.messages,
            delivered: self.delivered,
            abandoned: self.abandoned,
            must: self.must,
            queues,
        }
    }
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
    /// Bytes a packet (all but the last; `split`).
    seg: u32,
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
    /// A message of group index `group`, not yet sent.
    fn new(
        group: u16,
        msg_id: u32,
        m: crate::job::MessageSpec,
        per_packet: usize,
        how: crate::config::PacketSplit,
        elem_range: Option<(u32, u32)>,
    ) -> SendMsg {
        let len = m.payload.len();
        let (pkt_count, seg) = split::split(len, per_packet, how);
        SendMsg {
            group,
            msg_id,
            precise_len: m.precise_len,
            payload: m.payload,
            pkt_count,
            seg: seg as u32,
            acked: BitSet::new(pkt_count as usize),
            acked_count: 0,
            next_new: 0,
            retx: VecDeque::new(),
            remaining: len.max(1) as u64,
            state: MsgState::Open,
            key: None,
            elem_range,
        }
    }

    /// Whether a packet of this message waits to leave (a resend or a
    /// first send): what gives it a scheduler key (`SendSide::sched_key`).
    #[inline(always)]
    fn sendable(&self) -> bool {
        self.state == MsgState::Open && (!self.retx.is_empty() || self.next_new < self.pkt_count)
    }

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
    /// The most packets any of `msgs` has (lets the give-up rule skip its
    /// scan when no message can have more left than the lost one's).
    max_pkts: u16,
    pub(crate) repr: JobRepr,
    pub(crate) started: Instant,
    /// When a DATA packet or the JOB of this job last left: a receiver
    /// forgets a job that sees neither for its idle timeout
    /// (`RecvSide::expire`), even while other jobs' DATA flows.
    pub(crate) last_tx: Instant,
    /// The receiver said it holds `ceil(MSR * N)` of every group (an ACK
    /// with SATISFIED).
    pub(crate) peer_satisfied: bool,
    /// Bytes of produced messages never transmitted (the job was satisfied
    /// before they left).
    unsent_bytes: u64,
    pub(crate) job_acked: bool,
    /// The application ended the stream (`SendSide::end_stream`): the
    /// job's N shrank to what was produced, and it may finish only once
    /// the receiver acknowledged the JOB carrying the new counts.
    pub(crate) ended: bool,
    pub(crate) control_sent: Option<Instant>,
    pub(crate) done: bool,
    /// Satisfied and sending what is left as extra data (`Config::send_more`).
    pub(crate) extra: bool,
    /// The FIN waits for the extra data to be resolved, at most until
    /// `extra_until`.
    pub(crate) fin_deferred: bool,
    /// When what is left of the extra data is given up (send more).
    extra_until: Instant,
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
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NextPacket {
    pub(crate) job: u32,
    /// The job's slot in `SendSide::jobs` when the packet was chosen:
    /// `write_body` and `on_sent` (same call, no job added or removed in
    /// between) index it instead of searching the jobs by id again.
    pub(crate) ji: u32,
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
    /// The switch queue it was sent to (ECN marks count by queue).
    queue: u8,
    /// Extra data of a satisfied job: kept out of the loss rate.
    extra: bool,
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
    sched: queue::SchedQueue,
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
    /// The sender has caught up with a streaming job's production — a
    /// message was handed over while the pacer had room and nothing else
    /// waited — and production is not over (`Config::production_aware_rate`).
    pub(crate) production_limited: bool,
    pub(crate) in_flight: u64,
    /// Extra data (send more) in flight: at most [`EXTRA_WINDOW`].
    extra_in_flight: u32,
    /// Sequence numbers still in flight (a bit each, spanning the flight
    /// list), for ACK ranges: a range long and repeated in every ACK costs
    /// a word read per 64 sequence numbers and touches only the packets it
    /// newly covers.
    unacked: SeqRing,
    /// Packets recently declared lost, by sequence number, so that an
    /// acknowledgement arriving afterwards is recognised as a spurious
    /// loss (bounded by [`MAX_RECENT_LOST`]; the oldest are forgotten).
    recent_lost: BTreeMap<u32, LostRecord>,
    /// ACK ranges known to hold no entry of `recent_lost` (see
    /// `late_acks`); cleared whenever a loss is recorded.
    late_clean: Vec<crate::wire::SeqRange>,
    /// Where in `late_clean` the next range is likely noted.
    late_hint: usize,
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

/// Extra-data (send more) packets one connection keeps in flight: they are
/// clocked by their acknowledgements, so a connection never pushes more
/// than this into a network that may have no room (each one lost leaves a
/// hole in the receiver's sequence space that later ACKs must describe).
const EXTRA_WINDOW: u32 = 2;

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
    /// The switch queue it was sent to.
    pub(crate) queue: u8,
}

/// Most messages in one bundle.
const MAX_BUNDLE: usize = 64;

/// How many declared losses are remembered for spurious-loss detection.
const MAX_RECENT_LOST: usize = 4096;

/// Every this many transmissions, declared losses older than half the
/// sequence space are forgotten, before their numbers come round again.
const AGE_CHECK_EVERY: u32 = 1 << 16;

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

    fn job_index(&self, id: u32) -> Option<usize> {
        self.jobs.iter().position(|j| j.id == id)
    }

    fn flight_mut(&mut self, seq: u32) -> Option<&mut Flight> {
        let off = seq.wrapping_sub(self.base_seq) as usize;
        if off >= self.flights.len() {
            return None;
        }
        self.flights.get_mut(off)
    }
}
