//! Flow slots reused once nothing names the flow any more.
//!
//! A native flow lives in `Simulator::flows` at a slot index, which its
//! packets and its timer events carry. Once its sender is retired (every
//! byte acknowledged, see `transport::done`) a flow acts only when one of
//! its packets arrives (a late duplicate is still answered with an ACK,
//! which travels) or a timer event of it fires (which then only clears
//! the finished sender's deadline: nothing anyone sees).
//!
//! * Packets: each slot counts the packets in the network that name it;
//!   a slot is not freed while its count is above zero, so a packet never
//!   reaches a freed slot (debug builds check it).
//! * Timers: each slot has a generation, bumped when it is freed, which
//!   its timer events carry; an event of an older generation belongs to
//!   a flow that is gone and is skipped, exactly what its firing on the
//!   retired flow would have amounted to. (Waiting for the timers instead
//!   would hold every slot until its flow's retransmission deadline, a
//!   millisecond or more after the flow ended.)
//!
//! A retired flow with no packet in the network so moves its outcome to a
//! [`FlowRecord`] (and its job's counters), and its slot goes to the next
//! flow.
//!
//! Reuse is on where only the records are read after the run
//! ([`Simulator::reuse_flow_slots`], the `approxnet-sim` binary and the
//! Python layer); off by default, so that a caller may inspect every
//! [`Flow`] after the run. A flow's index (`Flow::id`, its ECMP hash and
//! its row in `flows.csv`) is its creation rank either way.

use super::Simulator;
use crate::event::Ev;
use crate::transport::flow::Flow;
use crate::transport::SenderStats;
use approxnet_proto::time::Instant;

/// A flow's outcome: what `flows.csv` and the job records read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRecord {
    /// Its index (creation rank).
    pub id: u32,
    /// Its job.
    pub job: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// When it started.
    pub start: Instant,
    /// When the receiver had every byte.
    pub done: Option<Instant>,
    /// Bytes the receiver has.
    pub received_bytes: u64,
    /// Sender counters.
    pub stats: SenderStats,
    /// Packets dropped in the network.
    pub drops: u64,
    /// Stopped early (EarlySend).
    pub cancelled: bool,
    /// Data packets sent after the receiver had enough.
    pub sent_after_enough: u64,
}

impl FlowRecord {
    /// The outcome of `f` as it stands.
    pub fn of(f: &Flow) -> FlowRecord {
        FlowRecord {
            id: f.id,
            job: f.job,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: f.start,
            done: f.done,
            received_bytes: f.received_bytes(),
            stats: f.stats(),
            drops: f.drops,
            cancelled: f.cancelled,
            sent_after_enough: f.sent_after_enough,
        }
    }
}

/// One slot's state.
#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    /// Packets in the network naming it.
    refs: u32,
    /// Its generation (28 bits, see [`crate::event::MAX_NODE`]).
    gen: u32,
    /// Its flow's sender is retired.
    retired: bool,
    /// Vacant (its flow recorded, the slot not yet reused).
    vacant: bool,
}

/// The slots' bookkeeping.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// Reuse on.
    reuse: bool,
    /// Keep a record of every freed flow (for `flows.csv`).
    keep_records: bool,
    /// Per slot: its state (one 12-byte entry: a packet's arrival and a
    /// send read it).
    state: Vec<SlotState>,
    /// Vacant slots, the latest freed last.
    free: Vec<u32>,
    /// Flows created so far.
    created: u32,
    /// Outcomes of the flows whose slots were freed, by flow index
    /// (`None`: still in a slot).
    records: Vec<Option<FlowRecord>>,
    /// Slots freed later than their sender retired, for packets still in
    /// the network then.
    deferred: u64,
    /// Timer events skipped because their flow's slot was freed, and of
    /// them those whose slot held another flow by then.
    stale_timers: (u64, u64),
}

impl Simulator {
    /// Reuses the slots of finished flows (see `engine::slots`), keeping
    /// a [`FlowRecord`] of each if `records` (what `flows.csv` reads; the
    /// jobs' records are kept either way) and freeing the message lists
    /// of their jobs; call before [`Simulator::run`]. Off while packets
    /// are traced (a trace names flows by slot).
    pub fn reuse_flow_slots(&mut self, records: bool) {
        self.slots.reuse = self.trace.is_none();
        self.slots.keep_records = records;
    }

    /// Slots freed later than their flow's sender retired (packets of it
    /// were still in the network).
    pub fn deferred_frees(&self) -> u64 {
        self.slots.deferred
    }

    /// Timer events skipped as stale, and of them those whose slot held
    /// another flow when they fired.
    pub fn stale_timers(&self) -> (u64, u64) {
        self.slots.stale_timers
    }

    /// Puts `f` (whose `id` is [`Simulator::next_flow_id`]) in a slot;
    /// returns the slot.
    pub(super) fn place_flow(&mut self, f: Flow) -> u32 {
        let s = &mut self.slots;
        debug_assert_eq!(f.id, s.created);
        s.created += 1;
        if s.reuse && s.keep_records {
            s.records.push(None);
        }
        if let Some(slot) = s.free.pop() {
            let st = &mut s.state[slot as usize];
            st.vacant = false;
            st.retired = false;
            self.flows[slot as usize] = f;
            return slot;
        }
        s.state.push(SlotState::default());
        self.flows.push(f);
        (self.flows.len() - 1) as u32
    }

    /// Index of the next flow created.
    pub(super) fn next_flow_id(&self) -> u32 {
        self.slots.created
    }

    /// A packet naming slot `fid` enters the network.
    #[inline]
    pub(super) fn slot_packet_sent(&mut self, fid: u32) {
        if let Some(r) = self
            .slots
            .state
            .get_mut(fid as usize)
            .map(|st| &mut st.refs)
        {
            *r += 1;
        }
    }

    /// A packet naming slot `fid` reached its host: it leaves the
    /// network before it is handled (which may free the slot after).
    #[inline]
    pub(super) fn slot_packet_left(&mut self, fid: u32) {
        if let Some(r) = self
            .slots
            .state
            .get_mut(fid as usize)
            .map(|st| &mut st.refs)
        {
            debug_assert!(*r > 0, "slot {fid}: a packet arrived that was not counted");
            *r -= 1;
        }
    }

    /// A packet naming slot `fid` left the network without reaching its
    /// flow (dropped, corrupted, delivered to the wrong host).
    #[inline]
    pub(super) fn slot_packet_gone(&mut self, fid: u32) {
        if let Some(r) = self
            .slots
            .state
            .get_mut(fid as usize)
            .map(|st| &mut st.refs)
        {
            debug_assert!(*r > 0, "slot {fid}: a packet gone that was not counted");
            *r -= 1;
            if *r == 0 {
                self.free_if_done(fid);
            }
        }
    }

    /// Schedules a timer event of slot `fid` at `at`.
    pub(super) fn schedule_flow_timer(&mut self, at: Instant, fid: u32) {
        let gen = self.slots.state[fid as usize].gen;
        self.events.schedule(at, Ev::FlowTimer { flow: fid, gen });
    }

    /// Whether a timer event of slot `fid` of generation `gen` belongs to
    /// the flow in the slot (if not, its flow is gone: skip it).
    pub(super) fn slot_timer_live(&mut self, fid: u32, gen: u32) -> bool {
        let s = &mut self.slots;
        let st = s.state[fid as usize];
        if st.gen == gen {
            debug_assert!(!st.vacant);
            return true;
        }
        s.stale_timers.0 += 1;
        s.stale_timers.1 += u64::from(!st.vacant);
        false
    }

    /// The sender of slot `fid` retired (see `Simulator::retire_sender`).
    pub(super) fn slot_retired(&mut self, fid: u32) {
        let st = &mut self.slots.state[fid as usize];
        st.retired = true;
        if st.refs == 0 {
            self.free_if_done(fid);
        } else {
            self.slots.deferred += 1;
        }
    }

    /// Debug check: nothing acts on a vacant slot.
    #[inline]
    pub(super) fn check_slot_live(&self, fid: u32) {
        debug_assert!(
            self.slots
                .state
                .get(fid as usize)
                .is_none_or(|st| !st.vacant),
            "a packet or timer reached vacant slot {fid}"
        );
    }

    /// Frees slot `fid` if reuse is on, its sender is retired and nothing
    /// names it: its outcome goes to its record and its job.
    #[inline]
    pub(super) fn free_if_done(&mut self, fid: u32) {
        let s = &self.slots;
        let i = fid as usize;
        let st = s.state[i];
        if s.reuse && st.retired && !st.vacant && st.refs == 0 {
            self.free_slot(fid);
        }
    }

    #[inline(never)]
    fn free_slot(&mut self, fid: u32) {
        let i = fid as usize;
        let r = FlowRecord::of(&self.flows[i]);
        let job = &mut self.jobs[r.job as usize];
        set_job_counters(job, &r);
        job.flow = None;
        // nothing reads the list again (its flow had every message, and
        // jobs.csv reads the count and sum)
        job.msgs = Vec::new();
        let s = &mut self.slots;
        if s.keep_records {
            s.records[r.id as usize] = Some(r);
        }
        let st = &mut s.state[i];
        st.vacant = true;
        st.gen = (st.gen + 1) & crate::event::MAX_NODE;
        s.free.push(fid);
    }

    /// Every flow's outcome, by flow index (panics if slots were reused
    /// without keeping records).
    pub fn flow_records(&self) -> Vec<FlowRecord> {
        assert!(
            !self.slots.reuse || self.slots.keep_records,
            "flow slots reused without records"
        );
        let mut out: Vec<Option<FlowRecord>> = if self.slots.reuse {
            self.slots.records.clone()
        } else {
            vec![None; self.flows.len()]
        };
        for (slot, f) in self.flows.iter().enumerate() {
            if self.slots.state.get(slot).is_none_or(|st| !st.vacant) {
                out[f.id as usize] = Some(FlowRecord::of(f));
            }
        }
        out.into_iter()
            .map(|r| r.expect("every flow in a slot or recorded"))
            .collect()
    }

    /// Copies native flow counters into their jobs (call after
    /// [`Simulator::run`]; jobs whose flows were freed have theirs).
    pub fn finalize(&mut self) {
        for j in &mut self.jobs {
            if let Some(fid) = j.flow {
                set_job_counters(j, &FlowRecord::of(&self.flows[fid as usize]));
            }
        }
    }
}

/// A job's transport counters from its flow's outcome.
fn set_job_counters(j: &mut crate::job::Job, r: &FlowRecord) {
    j.counters.sent_pkts = r.stats.sent_pkts;
    j.counters.retx_pkts = r.stats.retx_pkts;
    j.counters.timeouts = r.stats.timeouts;
    j.counters.lost_pkts = r.drops;
}
