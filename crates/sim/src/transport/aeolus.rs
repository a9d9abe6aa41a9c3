//! Aeolus on ExpressPass, the sender (seed 000 §7.1: Aeolus "initially
//! sends BDP amount of packets at the line rate and then switches to a
//! credit-based rate control algorithm"; Hu et al., SIGCOMM 2020, over
//! ExpressPass, Cho et al., SIGCOMM 2017).
//!
//! * **Pre-credit phase.** Until the first credit arrives, and for at most
//!   one BDP of bytes, produced data goes out at once, marked
//!   *unscheduled*: switches drop such packets first (selective dropping,
//!   `QueueConfig::droppable_limit_bytes`), so they never hurt scheduled
//!   traffic. After the last unscheduled packet a *probe* follows (header
//!   only, never dropped selectively); when its echo returns, every
//!   unscheduled packet sent before it and still unacknowledged was
//!   dropped (same path, FIFO queues).
//! * **Credit phase.** The receiver paces credits (see [`super::credit`]);
//!   each credit lets one packet of at most one MSS out: a lost packet
//!   first (credit-driven retransmission), else new produced data. A credit
//!   that finds nothing to send is *wasted* ([`SenderStats::wasted_credits`]):
//!   the effect seed 000 §7.1 blames for Aeolus's poor FBKV result, where
//!   messages are produced slower than credits arrive.
//! * Once every planned byte was sent and none is known lost, the sender
//!   sends CREDIT_STOP; a later loss, or data produced after a stop, sends
//!   CREDIT_REQUEST.
//!
//! Simplifications against real Aeolus / ExpressPass: no credit feedback
//! control (ExpressPass adapts each receiver's credit rate to credit
//! losses in the network; ours is the receiver's link rate shared by its
//! active flows), credits are not rate-limited in switches and travel in
//! the flow's queue, and per-packet ACKs carry what they acknowledge; a
//! scheduled packet is declared lost when three packets sent after it were
//! acknowledged, or after a fixed timeout.

use super::{Outbox, Segment, Sender, SenderStats};
use crate::packet::{Hdr, Kind};
use approxnet_proto::time::{Duration, Instant};
use std::collections::VecDeque;

/// Where a sent segment stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    seq: u64,
    len: u32,
    /// Transmission number of its latest transmission.
    tx: u64,
    unscheduled: bool,
    state: State,
}

/// A scheduled packet is lost once this many later transmissions were acknowledged.
const REORDER: u64 = 3;

/// The Aeolus sender of one flow.
#[derive(Clone, Debug)]
pub struct AeolusSender {
    total: u64,
    avail: u64,
    mss: u32,
    /// Bytes the pre-credit phase may still send unscheduled.
    unscheduled_left: u64,
    /// A credit arrived: the pre-credit phase is over.
    credited: bool,
    probe_sent: bool,
    segs: Vec<Seg>,
    /// Every segment below this index is acknowledged.
    first_unacked: usize,
    /// Next new byte.
    next_new: u64,
    lost: VecDeque<usize>,
    tx: u64,
    credit_stopped: bool,
    rto: Duration,
    deadline: Option<Instant>,
    stats: SenderStats,
}

impl AeolusSender {
    /// A sender of `total` bytes (all produced; see
    /// [`AeolusSender::with_produced`]) whose first `bdp` bytes may go
    /// unscheduled; `rto` is the fixed loss timeout of scheduled packets.
    pub fn new(total: u64, mss: u32, bdp: u64, rto: Duration) -> Self {
        AeolusSender {
            total,
            avail: total,
            mss,
            unscheduled_left: bdp,
            credited: false,
            probe_sent: false,
            segs: Vec::new(),
            first_unacked: 0,
            next_new: 0,
            lost: VecDeque::new(),
            tx: 0,
            credit_stopped: false,
            rto,
            deadline: None,
            stats: SenderStats::default(),
        }
    }

    /// The same sender with only `bytes` produced so far.
    pub fn with_produced(mut self, bytes: u64) -> Self {
        self.avail = bytes.min(self.total);
        self
    }

    fn emit(&mut self, now: Instant, i: usize, unscheduled: bool, out: &mut Outbox<'_>) {
        self.tx += 1;
        let retx = self.segs[i].tx > 0;
        let s = &mut self.segs[i];
        s.tx = self.tx;
        s.unscheduled = unscheduled;
        s.state = State::InFlight;
        self.stats.sent_pkts += 1;
        if retx {
            self.stats.retx_pkts += 1;
        }
        out.push(Segment {
            hdr: Hdr {
                kind: Kind::Data,
                seq: s.seq,
                len: s.len,
                ack: 0,
                ece: false,
                ts: 0,
                ..Hdr::default()
            },
            rank: 0,
            retx,
            unscheduled,
        });
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
    }

    /// Cuts the next new segment (at most one MSS of produced data).
    fn new_segment(&mut self) -> Option<usize> {
        if self.next_new >= self.avail {
            return None;
        }
        let len = (self.avail - self.next_new).min(self.mss as u64) as u32;
        self.segs.push(Seg {
            seq: self.next_new,
            len,
            tx: 0,
            unscheduled: false,
            state: State::InFlight,
        });
        self.next_new += len as u64;
        Some(self.segs.len() - 1)
    }

    fn control(&self, kind: Kind, seq: u64, out: &mut Outbox<'_>) {
        out.push(Segment {
            hdr: Hdr {
                kind,
                seq,
                ..Hdr::default()
            },
            rank: 0,
            retx: false,
            unscheduled: false,
        });
    }

    /// The pre-credit phase ends: probe behind the unscheduled packets.
    fn end_precredit(&mut self, out: &mut Outbox<'_>) {
        if !self.probe_sent && self.segs.iter().any(|s| s.unscheduled) {
            self.probe_sent = true;
            self.control(Kind::Probe, self.tx, out);
        }
    }

    fn declare_lost(&mut self, i: usize, out: &mut Outbox<'_>) {
        self.segs[i].state = State::Lost;
        self.lost.push_back(i);
        if self.credit_stopped {
            self.credit_stopped = false;
            self.control(Kind::CreditRequest, 0, out);
        }
    }

    fn advance_unacked(&mut self) {
        while self
            .segs
            .get(self.first_unacked)
            .is_some_and(|s| s.state == State::Acked)
        {
            self.first_unacked += 1;
        }
    }

    fn on_credit(&mut self, now: Instant, out: &mut Outbox<'_>) {
        self.stats.credits += 1;
        if !self.credited {
            self.credited = true;
            self.end_precredit(out);
        }
        while let Some(i) = self.lost.pop_front() {
            if self.segs[i].state == State::Lost {
                self.emit(now, i, false, out);
                return;
            }
        }
        if let Some(i) = self.new_segment() {
            self.emit(now, i, false, out);
            return;
        }
        self.stats.wasted_credits += 1;
        if self.next_new >= self.total && !self.credit_stopped {
            self.credit_stopped = true;
            self.control(Kind::CreditStop, 0, out);
        }
    }

    fn on_data_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>) {
        let cum = hdr.ack;
        let mut acked_tx = 0;
        if let Ok(i) = self.segs.binary_search_by_key(&hdr.seq, |s| s.seq) {
            if self.segs[i].state != State::Acked {
                acked_tx = self.segs[i].tx;
            }
            self.segs[i].state = State::Acked;
        }
        for s in &mut self.segs[self.first_unacked..] {
            if s.seq + s.len as u64 > cum {
                break;
            }
            s.state = State::Acked;
        }
        self.advance_unacked();
        // scheduled packets sent REORDER transmissions before an acked one
        for i in self.first_unacked..self.segs.len() {
            let s = self.segs[i];
            if s.state == State::InFlight && !s.unscheduled && s.tx + REORDER <= acked_tx {
                self.declare_lost(i, out);
            }
        }
        self.deadline = self.has_in_flight().then(|| now + self.rto);
    }

    fn on_probe_ack(&mut self, probe_tx: u64, out: &mut Outbox<'_>) {
        for i in self.first_unacked..self.segs.len() {
            let s = self.segs[i];
            if s.state == State::InFlight && s.unscheduled && s.tx <= probe_tx {
                self.declare_lost(i, out);
            }
        }
    }

    fn has_in_flight(&self) -> bool {
        self.segs[self.first_unacked..]
            .iter()
            .any(|s| s.state == State::InFlight)
    }

    /// Sends produced data unscheduled while the pre-credit phase lasts.
    fn send_precredit(&mut self, now: Instant, out: &mut Outbox<'_>) {
        if self.credited {
            return;
        }
        let mut sent = false;
        while self.unscheduled_left > 0 {
            let Some(i) = self.new_segment() else { break };
            let len = self.segs[i].len as u64;
            self.unscheduled_left = self.unscheduled_left.saturating_sub(len);
            self.emit(now, i, true, out);
            sent = true;
        }
        if sent && self.unscheduled_left == 0 {
            self.end_precredit(out);
        }
    }
}

impl Sender for AeolusSender {
    fn start(&mut self, now: Instant, out: &mut Outbox<'_>) {
        self.send_precredit(now, out);
    }

    fn produce(&mut self, now: Instant, produced: u64, out: &mut Outbox<'_>) {
        self.avail = self.avail.max(produced.min(self.total));
        self.send_precredit(now, out);
        if self.credit_stopped && self.next_new < self.avail {
            self.credit_stopped = false;
            self.control(Kind::CreditRequest, 0, out);
        }
    }

    fn on_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>) {
        match hdr.kind {
            Kind::Credit => self.on_credit(now, out),
            Kind::Ack => self.on_data_ack(now, hdr, out),
            Kind::ProbeAck => self.on_probe_ack(hdr.seq, out),
            _ => {}
        }
    }

    fn on_timer(&mut self, now: Instant, out: &mut Outbox<'_>) {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        self.deadline = None;
        if !self.has_in_flight() {
            return;
        }
        self.stats.timeouts += 1;
        let was_stopped = self.credit_stopped;
        for i in self.first_unacked..self.segs.len() {
            if self.segs[i].state == State::InFlight {
                self.declare_lost(i, out);
            }
        }
        // the receiver may never have heard of the flow (every unscheduled
        // packet and the probe lost), or have stopped crediting it
        if !was_stopped {
            self.control(Kind::CreditRequest, 0, out);
        }
    }

    fn timer(&self) -> Option<Instant> {
        self.deadline
    }

    fn finished(&self) -> bool {
        self.next_new >= self.total && self.first_unacked == self.segs.len()
    }

    fn stats(&self) -> SenderStats {
        self.stats
    }

    fn ect(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(kind: Kind, seq: u64, ack: u64) -> Hdr {
        Hdr {
            kind,
            seq,
            len: 0,
            ack,
            ece: false,
            ts: 0,
            ..Hdr::default()
        }
    }

    #[test]
    fn first_bdp_unscheduled_then_one_packet_per_credit() {
        let mut s = AeolusSender::new(10_000, 1000, 3000, Duration::from_micros(50));
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        let data: Vec<_> = out.iter().filter(|x| x.hdr.kind == Kind::Data).collect();
        assert_eq!(data.len(), 3);
        assert!(data.iter().all(|x| x.unscheduled));
        assert_eq!(out.last().unwrap().hdr.kind, Kind::Probe);
        out.clear();
        for k in 0..7 {
            s.on_ack(t, &hdr(Kind::Credit, 0, 0), &mut Outbox::to_list(&mut out));
            assert_eq!(out.len(), 1, "credit {k}");
            assert!(!out[0].unscheduled);
            out.clear();
        }
        // everything sent: the next credit is wasted and stops the credits
        s.on_ack(t, &hdr(Kind::Credit, 0, 0), &mut Outbox::to_list(&mut out));
        assert_eq!(s.stats().wasted_credits, 1);
        assert_eq!(out[0].hdr.kind, Kind::CreditStop);
    }

    #[test]
    fn a_dropped_unscheduled_packet_is_resent_on_a_credit() {
        let mut s = AeolusSender::new(3000, 1000, 3000, Duration::from_micros(50));
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        let probe = out.last().unwrap().hdr.seq;
        out.clear();
        // segment 1000.. was dropped; 0 and 2000 arrived
        s.on_ack(t, &hdr(Kind::Ack, 0, 1000), &mut Outbox::to_list(&mut out));
        s.on_ack(
            t,
            &hdr(Kind::Ack, 2000, 1000),
            &mut Outbox::to_list(&mut out),
        );
        s.on_ack(
            t,
            &hdr(Kind::ProbeAck, probe, 0),
            &mut Outbox::to_list(&mut out),
        );
        s.on_ack(t, &hdr(Kind::Credit, 0, 0), &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].hdr.seq, 1000);
        assert!(out[0].retx && !out[0].unscheduled);
        s.on_ack(
            t,
            &hdr(Kind::Ack, 1000, 3000),
            &mut Outbox::to_list(&mut out),
        );
        assert!(s.finished());
    }

    #[test]
    fn credits_without_produced_data_are_wasted() {
        let mut s =
            AeolusSender::new(5000, 1000, 1000, Duration::from_micros(50)).with_produced(500);
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        for _ in 0..4 {
            s.on_ack(t, &hdr(Kind::Credit, 0, 0), &mut Outbox::to_list(&mut out));
        }
        assert_eq!(s.stats().wasted_credits, 4);
        out.clear();
        s.produce(t, 1500, &mut Outbox::to_list(&mut out));
        // past the pre-credit phase: produced data waits for a credit
        assert!(out.iter().all(|x| x.hdr.kind != Kind::Data));
        s.on_ack(t, &hdr(Kind::Credit, 0, 0), &mut Outbox::to_list(&mut out));
        let d: Vec<_> = out.iter().filter(|x| x.hdr.kind == Kind::Data).collect();
        assert_eq!((d.len(), d[0].hdr.seq, d[0].hdr.len), (1, 500, 1000));
    }
}
