//! The flow-level event loop: flows start, share links by weighted max-min
//! ([`Sharing`]), finish sending when their bytes are out, and arrive one
//! path latency later; jobs and staged jobs advance on arrivals.
//!
//! Time is `f64` nanoseconds. Events at the same instant are all handled
//! before the rates are re-solved once (10,000 flows starting together
//! cost one solve, not 10,000). Ties among events break on insertion
//! order, completions among themselves on the flow's slot: the same
//! scenario gives the same output, bit for bit.

use super::heap::IndexedHeap;
use super::maxmin::Sharing;
use super::net::FluidNet;
use super::staged::{Phase, StagedJob, StagedState};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Who a flow belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A flow of the `[fluid] flows_csv` trace.
    Trace,
    /// A message of job `i` of a `[[jobs]]` class.
    Job(u32),
    /// A transfer of staged job `i`.
    Staged(u32),
}

/// A flow and its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRec {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Size, bytes.
    pub bytes: f64,
    /// Start, ns.
    pub start_ns: f64,
    /// Owner.
    pub owner: Owner,
    /// Class (`[[jobs]]` index, or the staged job's index after them;
    /// `u32::MAX` for trace flows).
    pub class: u32,
    /// Weight.
    pub weight: f64,
    /// Strict priority level.
    pub priority: u8,
    /// Rate cap, bytes per ns.
    pub cap: f64,
    /// Links crossed.
    pub path: Vec<u32>,
    /// Path latency, ns.
    pub latency_ns: f64,
    /// Arrival of its last byte, ns.
    pub done_ns: Option<f64>,
}

/// A flow while it sends, by its solver slot: what the completion times
/// are computed from, kept apart from the records for the hot loop.
#[derive(Clone, Copy, Debug, Default)]
struct Sending {
    flow: u32,
    /// Bytes left at `t_last`.
    remaining: f64,
    t_last: f64,
    rate: f64,
    /// When its last byte leaves at `rate` (infinite while stopped). Its
    /// key in the completion heap is never later: a completion that moves
    /// later keeps its old key until it comes up (then it is moved), which
    /// spares a heap update for every slowed flow that gets faster again
    /// or is slowed again before its key is reached.
    at: f64,
}

impl FlowRec {
    /// Flow completion time, ns.
    pub fn fct_ns(&self) -> Option<f64> {
        self.done_ns.map(|d| d - self.start_ns)
    }
}

/// A `[[jobs]]` job: messages from one host to another.
#[derive(Clone, Debug, PartialEq)]
pub struct FluidJob {
    /// Class index.
    pub class: u32,
    /// Sender.
    pub src: u32,
    /// Receiver.
    pub dst: u32,
    /// Start, ns.
    pub start_ns: f64,
    /// Messages.
    pub messages: u32,
    /// Messages that must arrive.
    pub needed: u32,
    /// Bytes of all messages.
    pub bytes: u64,
    /// Messages arrived.
    pub delivered: u32,
    /// Bytes arrived.
    pub delivered_bytes: u64,
    /// When the `needed`-th message arrived, ns.
    pub done_ns: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ev {
    Start(u32),
    Arrive(u32),
    ComputeDone(u32),
    StagedStart(u32),
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Timed(f64, u64, Ev);
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timed {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

/// Work counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FluidCounters {
    /// Events handled (starts, arrivals, compute ends, send completions).
    pub events: u64,
    /// Solves of the sharing problem.
    pub solves: u64,
    /// Flow rates computed over all solves.
    pub solved_flows: u64,
    /// Most flows sending at once.
    pub peak_active: usize,
    /// Progressive fillings (a solve repairs in one or more rounds).
    pub rounds: u64,
}

/// The flow-level simulator.
pub struct FluidSim {
    /// The network.
    pub net: FluidNet,
    sharing: Sharing,
    events: BinaryHeap<Timed>,
    seq: u64,
    sending: IndexedHeap,
    slots: Vec<Sending>,
    /// Every flow, in creation order.
    pub flows: Vec<FlowRec>,
    /// `[[jobs]]` jobs.
    pub jobs: Vec<FluidJob>,
    /// Staged jobs.
    pub staged: Vec<StagedJob>,
    /// Their progress.
    pub staged_state: Vec<StagedState>,
    /// Class of each staged job's flows.
    staged_class: Vec<u32>,
    now: f64,
    end: f64,
    /// Work counters.
    pub counters: FluidCounters,
}

impl FluidSim {
    /// An empty simulation that stops at `end_ns`.
    pub fn new(net: FluidNet, end_ns: f64) -> FluidSim {
        let sharing = Sharing::new(net.capacity.clone());
        FluidSim {
            net,
            sharing,
            events: BinaryHeap::new(),
            seq: 0,
            sending: IndexedHeap::default(),
            slots: Vec::new(),
            flows: Vec::new(),
            jobs: Vec::new(),
            staged: Vec::new(),
            staged_state: Vec::new(),
            staged_class: Vec::new(),
            now: 0.0,
            end: end_ns,
            counters: FluidCounters::default(),
        }
    }

    /// Re-solve every flow at every event (checking mode; same result).
    pub fn set_full_recompute(&mut self, full: bool) {
        self.sharing.full = full;
    }

    /// Simulated time reached, ns.
    pub fn now(&self) -> f64 {
        self.now
    }

    fn push(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.events.push(Timed(t, self.seq, ev));
    }

    /// Adds a flow starting at `start_ns` (`src != dst`, checked by the
    /// caller); returns its id.
    #[allow(clippy::too_many_arguments)]
    pub fn add_flow(
        &mut self,
        src: u32,
        dst: u32,
        bytes: f64,
        start_ns: f64,
        owner: Owner,
        class: u32,
        weight: f64,
        priority: u8,
        cap: f64,
    ) -> u32 {
        let path = self.net.path(src, dst);
        let id = self.flows.len() as u32;
        self.flows.push(FlowRec {
            src,
            dst,
            bytes,
            start_ns,
            owner,
            class,
            weight,
            priority,
            cap,
            path: path.links,
            latency_ns: path.latency_ns,
            done_ns: None,
        });
        self.push(start_ns, Ev::Start(id));
        id
    }

    /// Adds a `[[jobs]]` job whose message `i` of `sizes[i]` bytes starts
    /// at `start_ns + ready_ns[i]`.
    #[allow(clippy::too_many_arguments)]
    pub fn add_job(
        &mut self,
        class: u32,
        src: u32,
        dst: u32,
        start_ns: f64,
        sizes: &[u64],
        ready_ns: &[u64],
        needed: u32,
        weight: f64,
        priority: u8,
        cap: f64,
    ) {
        let j = self.jobs.len() as u32;
        self.jobs.push(FluidJob {
            class,
            src,
            dst,
            start_ns,
            messages: sizes.len() as u32,
            needed,
            bytes: sizes.iter().sum(),
            delivered: 0,
            delivered_bytes: 0,
            done_ns: None,
        });
        for (i, &b) in sizes.iter().enumerate() {
            let at = start_ns + ready_ns.get(i).copied().unwrap_or(0) as f64;
            self.add_flow(
                src,
                dst,
                b as f64,
                at,
                Owner::Job(j),
                class,
                weight,
                priority,
                cap,
            );
        }
    }

    /// Adds a staged job; its flows are of class `class`.
    pub fn add_staged(&mut self, job: StagedJob, class: u32) {
        let i = self.staged.len() as u32;
        self.push(job.start_ns, Ev::StagedStart(i));
        self.staged.push(job);
        self.staged_state.push(StagedState::default());
        self.staged_class.push(class);
    }

    /// Runs until no event is left or the end time is passed.
    pub fn run(&mut self) {
        loop {
            let te = self.events.peek().map(|e| e.0);
            let tc = self.next_completion();
            let t = match (te, tc) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            if t > self.end {
                break;
            }
            self.now = t;
            loop {
                let mut any = false;
                while let Some((k, slot)) = self.sending.peek() {
                    if k > t {
                        break;
                    }
                    let at = self.slots[slot as usize].at;
                    if at > k {
                        self.sending.set(slot, at);
                        continue;
                    }
                    self.sending.remove(slot);
                    self.sent(slot, t);
                    any = true;
                }
                while self.events.peek().is_some_and(|e| e.0 <= t) {
                    let Some(Timed(_, _, ev)) = self.events.pop() else {
                        break;
                    };
                    self.handle(ev, t);
                    any = true;
                }
                if !any {
                    break;
                }
            }
            self.resolve(t);
        }
    }

    fn handle(&mut self, ev: Ev, t: f64) {
        self.counters.events += 1;
        match ev {
            Ev::Start(f) => {
                let fr = &self.flows[f as usize];
                if fr.bytes <= 0.0 || fr.path.is_empty() {
                    // nothing to send, or a transfer within one host
                    let at = t + fr.latency_ns;
                    self.push(at, Ev::Arrive(f));
                    return;
                }
                let slot = self
                    .sharing
                    .add_path(&fr.path, fr.weight, fr.cap, fr.priority);
                if self.slots.len() <= slot as usize {
                    self.slots.resize(slot as usize + 1, Sending::default());
                }
                self.slots[slot as usize] = Sending {
                    flow: f,
                    remaining: fr.bytes,
                    t_last: t,
                    rate: 0.0,
                    at: f64::INFINITY,
                };
                self.counters.peak_active = self.counters.peak_active.max(self.sharing.active());
            }
            Ev::Arrive(f) => self.arrived(f, t),
            Ev::ComputeDone(j) => {
                let st = &mut self.staged_state[j as usize];
                st.compute_ns += t - st.phase_start;
                st.phase += 1;
                self.begin_phase(j, t);
            }
            Ev::StagedStart(j) => self.begin_phase(j, t),
        }
    }

    /// The earliest completion time, with the heap's top key made exact.
    fn next_completion(&mut self) -> Option<f64> {
        while let Some((k, slot)) = self.sending.peek() {
            let at = self.slots[slot as usize].at;
            if at <= k {
                return Some(k);
            }
            self.sending.set(slot, at);
        }
        None
    }

    /// A flow's last byte left its sender.
    fn sent(&mut self, slot: u32, t: f64) {
        self.counters.events += 1;
        let f = self.slots[slot as usize].flow;
        self.sharing.remove(slot);
        let at = t + self.flows[f as usize].latency_ns;
        self.push(at, Ev::Arrive(f));
    }

    /// Re-solves the rates and moves the changed flows' completion times.
    fn resolve(&mut self, t: f64) {
        let rounds = self.sharing.rounds;
        self.sharing.solve();
        if self.sharing.rounds == rounds {
            return;
        }
        self.counters.solves += 1;
        self.counters.rounds = self.sharing.rounds;
        self.counters.solved_flows = self.sharing.solved;
        // when most completion times move, rebuild the heap in linear time
        let bulk = self.sharing.changed.len() > self.sending.len() / 2;
        let mut stopped = Vec::new();
        for i in 0..self.sharing.changed.len() {
            let slot = self.sharing.changed[i];
            let new = self.sharing.rate(slot);
            let fr = &mut self.slots[slot as usize];
            if new == fr.rate {
                continue;
            }
            fr.remaining = (fr.remaining - fr.rate * (t - fr.t_last)).max(0.0);
            fr.t_last = t;
            fr.rate = new;
            if new > 0.0 {
                let at = t + fr.remaining / new;
                let was = fr.at;
                fr.at = at;
                if bulk {
                    self.sending.set_unordered(slot, at);
                } else if at < was || !self.sending.contains(slot) {
                    self.sending.set(slot, at);
                }
            } else {
                fr.at = f64::INFINITY;
                stopped.push(slot);
            }
        }
        if bulk {
            self.sending.heapify();
        }
        for slot in stopped {
            self.sending.remove(slot);
        }
    }

    fn arrived(&mut self, f: u32, t: f64) {
        let fr = &mut self.flows[f as usize];
        fr.done_ns = Some(t);
        let bytes = fr.bytes as u64;
        match fr.owner {
            Owner::Trace => {}
            Owner::Job(j) => {
                let job = &mut self.jobs[j as usize];
                job.delivered += 1;
                job.delivered_bytes += bytes;
                if job.done_ns.is_none() && job.delivered >= job.needed {
                    job.done_ns = Some(t);
                }
            }
            Owner::Staged(j) => {
                let st = &mut self.staged_state[j as usize];
                st.outstanding -= 1;
                if st.outstanding == 0 {
                    st.step += 1;
                    self.start_step(j, t);
                }
            }
        }
    }

    /// Starts the phase the job's state points at (rolling over to the next
    /// iteration, or finishing the job).
    fn begin_phase(&mut self, j: u32, t: f64) {
        loop {
            let job = &self.staged[j as usize];
            let st = &mut self.staged_state[j as usize];
            if st.phase == job.phases.len() {
                st.iteration_end.push(t);
                st.iteration += 1;
                st.phase = 0;
                if st.iteration >= job.iterations {
                    st.done = Some(t);
                    return;
                }
            }
            st.phase_start = t;
            match &job.phases[st.phase] {
                Phase::Compute { ns } => {
                    let at = t + ns;
                    self.push(at, Ev::ComputeDone(j));
                    return;
                }
                Phase::Comm(c) => {
                    st.steps = c.steps(job.hosts.len() as u32);
                    st.step = 0;
                    if st.steps.iter().any(|s| !s.is_empty()) {
                        self.start_step(j, t);
                        return;
                    }
                    st.phase += 1;
                }
            }
        }
    }

    /// Starts the state's current step of a communication phase, or ends
    /// the phase after its last step.
    fn start_step(&mut self, j: u32, t: f64) {
        loop {
            let st = &mut self.staged_state[j as usize];
            if st.step >= st.steps.len() {
                st.comm_ns += t - st.phase_start;
                st.phase += 1;
                self.begin_phase(j, t);
                return;
            }
            let step = std::mem::take(&mut st.steps[st.step]);
            if step.is_empty() {
                st.step += 1;
                continue;
            }
            st.outstanding = step.len();
            st.flows += step.len() as u64;
            let job = &self.staged[j as usize];
            let (w, p, cap) = (job.weight, job.priority, job.cap);
            let hosts: Vec<u32> = step
                .iter()
                .map(|&(a, b, _)| (job.hosts[a as usize], job.hosts[b as usize]))
                .flat_map(|(a, b)| [a, b])
                .collect();
            let class = self.staged_class[j as usize];
            for (k, &(_, _, bytes)) in step.iter().enumerate() {
                let (src, dst) = (hosts[2 * k], hosts[2 * k + 1]);
                self.add_flow(src, dst, bytes, t, Owner::Staged(j), class, w, p, cap);
            }
            return;
        }
    }
}
