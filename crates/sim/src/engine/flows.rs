//! Jobs and native flows: starting them, feeding them packets and timers.

use super::adapter::JobUpdate;
use super::Simulator;
use crate::packet::{Hdr, Hop, Kind};
use crate::scheme::{Proto, Scheme, SenderApprox};
use crate::transport::ack_path::AckPath;
use crate::transport::flow::Flow;
use approxnet_proto::rng::Rng;
use approxnet_proto::time::Instant;

/// `with_outbox!(sim, fid, |s, out| call)`: runs `call` with `s` flow slot
/// `fid`'s sender and `out` an [`crate::transport::Outbox`] that writes its
/// segments straight into the packet pool as the flow's packets (ids to
/// `out_ids`, for [`Simulator::flush_flow`] to send); evaluates to the data
/// packets written. (A macro: the flow, the pool and the id list are
/// borrowed as disjoint fields of the simulator.)
macro_rules! with_outbox {
    ($sim:expr, $fid:expr, |$s:ident, $out:ident| $call:expr) => {{
        let hb = $sim.tp.header_bytes;
        let fid = $fid;
        let f = &mut $sim.flows[fid as usize];
        let tmpl = crate::packet::Hop {
            flow: fid,
            src: f.src,
            dst: f.dst,
            size: hb,
            hash: f.hash,
            queue: f.queue,
            ect: f.ect,
            droppable: false,
            rank: 0,
        };
        let mut $out = crate::transport::Outbox::to_pool(&mut $sim.pool, &mut $sim.out_ids, tmpl);
        let $s = &mut f.sender;
        $call;
        $out.data
    }};
}
pub(super) use with_outbox;

impl Simulator {
    /// A job starts: its first message is produced now. Messages due at
    /// once are handed over; a `Produce` event releases the rest as the
    /// application produces them (see `engine::produce`).
    pub(super) fn start_job(&mut self, now: Instant, j: u32) {
        let job = &self.jobs[j as usize];
        let ready = job.ready_by(0);
        self.job_produced[j as usize] = ready;
        match job.scheme {
            Scheme::Atp(_) => {
                let src = job.src;
                self.ready_io(src);
                let Some(mut a) = self.adapter.take() else {
                    return; // no adapter installed: the job never completes
                };
                let job = &self.jobs[j as usize];
                a.start_job(now, job, ready, &mut self.io_spare);
                self.jobs[j as usize].sent_msgs = self.jobs[j as usize].msgs.len() as u32;
                self.adapter = Some(a);
                self.apply_io(now, src);
            }
            Scheme::Native(proto, approx) => {
                let n = job.msgs.len();
                let sample = job.approximate && approx == SenderApprox::SampleSend;
                // SampleSend: a uniform sample of `needed` message indices,
                // chosen up front, kept in order; each enters the flow when
                // it is produced
                let index: Vec<u32> = if sample {
                    let mut rng = Rng::new(0x55_u64 << 56 ^ j as u64);
                    let mut idx: Vec<usize> = (0..n).collect();
                    let k = job.needed as usize;
                    for i in 0..k.min(n) {
                        let r = i + rng.below((n - i) as u64) as usize;
                        idx.swap(i, r);
                    }
                    let mut pick: Vec<u32> = idx[..k.min(n)].iter().map(|&i| i as u32).collect();
                    pick.sort_unstable();
                    pick
                } else {
                    Vec::new()
                };
                let picked: Vec<u64> = if sample {
                    index.iter().map(|&i| job.msgs[i as usize]).collect()
                } else {
                    Vec::new()
                };
                let id = self.next_flow_id();
                let (src, dst) = (job.src, job.dst);
                let early_stop = job.approximate && approx == SenderApprox::EarlySend;
                let q = self.queue_for_job(now, j);
                // the job's own list unless sampled (no copy)
                let msgs = if sample {
                    &picked[..]
                } else {
                    &self.jobs[j as usize].msgs[..]
                };
                let n_msgs = msgs.len() as u32;
                let mut f = Flow::new(id, j, src, dst, msgs, proto, q, &self.tp, now, 0);
                f.msg_index = index;
                f.produced = f.bytes_of_job_prefix(ready);
                f.early_stop = early_stop;
                let fid = self.place_flow(f);
                let job = &mut self.jobs[j as usize];
                job.sent_msgs = n_msgs;
                job.flow = Some(fid);
                self.connect_flow(now, fid);
            }
        }
        self.schedule_production(j, ready);
    }

    /// Sends the packets flow slot `fid`'s sender just wrote (see
    /// `with_outbox!`; `data_pkts` of them data) and re-arms its timer.
    pub(super) fn flush_flow(&mut self, now: Instant, fid: u32, data_pkts: u32) {
        // nothing written (a call that sent nothing: half the flushes of a
        // TSQ-throttled sender's ACKs): no sends' set-up
        if !self.out_ids.is_empty() {
            self.send_outbox(now, fid, data_pkts);
        }
        // the flow looked up once for both (the sends may have moved it)
        let limit = self.tsq_limit;
        let f = &mut self.flows[fid as usize];
        tsq_account(limit, f, data_pkts);
        if let Some(d) = timer_to_arm(f) {
            self.schedule_flow_timer(d, fid);
        }
    }

    /// Puts the packets in `out_ids` (`data` of them data) on the NIC of
    /// flow slot `fid`'s host, in the order written. The packets were all
    /// taken from the pool before the first is sent (before: one by one,
    /// each then sent); nothing is freed in between either way (a host NIC
    /// drops nothing: its queue is unlimited), so the pool's peak is the
    /// same. A NIC start in here may resume a throttled sender, whose own
    /// flush finds the list taken (empty) and puts back its own.
    #[inline(always)]
    fn send_outbox(&mut self, now: Instant, fid: u32, data: u32) {
        let f = &mut self.flows[fid as usize];
        debug_assert_eq!(
            f.ect,
            f.sender.ect(),
            "a sender's ECN capability is constant"
        );
        if f.enough_at.is_some() {
            f.sent_after_enough += data as u64;
        }
        let port = self.net.nic(f.src);
        let mut ids = std::mem::take(&mut self.out_ids);
        for &id in &ids {
            self.send_native(now, port, fid, id);
        }
        ids.clear();
        self.out_ids = ids;
    }

    /// Host NIC `nic` started serialising data packet `pkt` of a reliable
    /// flow: one more packet of room, and a throttled sender sends again
    /// (Linux frees TSQ room on TX completion; our NIC's queue ends where
    /// serialisation starts).
    ///
    /// Inlined into the NIC's start (once a data packet): only a throttled
    /// sender's resumption is a call.
    #[inline(always)]
    pub(super) fn tsq_nic_took(&mut self, now: Instant, fid: u32) {
        let limit = self.tsq_limit;
        let Some(f) = self.flows.get_mut(fid as usize) else {
            return;
        };
        if !uses_tsq(f.proto) || f.nic_pkts == 0 {
            return;
        }
        f.nic_pkts -= 1;
        f.sender.set_tx_room(limit - f.nic_pkts);
        if !f.tsq_throttled || f.cancelled || !f.open {
            return;
        }
        self.tsq_resume(now, fid);
    }

    /// A TSQ-throttled sender of flow slot `fid` got NIC room: it sends.
    #[inline(never)]
    fn tsq_resume(&mut self, now: Instant, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.tsq_throttled = false;
        let produced = f.produced;
        let data = with_outbox!(self, fid, |s, out| s.produce(now, produced, &mut out));
        self.flush_flow(now, fid, data);
    }

    /// A timer event of flow slot `fid` (generation `gen`) fires.
    pub(super) fn flow_timer(&mut self, now: Instant, fid: u32, gen: u32) {
        if self.slot_timer_live(fid, gen) {
            self.on_flow_timer(now, fid);
        }
    }

    fn on_flow_timer(&mut self, now: Instant, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if f.timer_armed == Some(now) {
            f.timer_armed = None;
        }
        if f.cancelled {
            return;
        }
        if !f.open {
            self.syn_timer(now, fid);
            return;
        }
        let data = with_outbox!(self, fid, |s, out| s.on_timer(now, &mut out));
        self.flush_flow(now, fid, data);
    }

    /// A packet of native flow slot `fid` arrived at its destination
    /// host (it has left the network: see `engine::slots`).
    pub(super) fn flow_packet(&mut self, now: Instant, fid: u32, hdr: &Hdr, ce: bool) {
        self.check_slot_live(fid);
        self.slot_packet_left(fid);
        self.on_flow_packet(now, fid, hdr, ce);
        self.free_if_done(fid);
    }

    fn on_flow_packet(&mut self, now: Instant, fid: u32, hdr: &Hdr, ce: bool) {
        let Some(f) = self.flows.get_mut(fid as usize) else {
            return;
        };
        if f.cancelled {
            self.counters.stale += 1;
            return;
        }
        match hdr.kind {
            Kind::Data => {
                self.counters.delivered_data += 1;
                let ack = f.on_data(now, hdr, ce);
                let (delivered, bytes, j) = (f.delivered_msgs, f.received_bytes(), f.job);
                let (src, dst, hash, queue) = (f.src, f.dst, f.hash, f.queue);
                // read here with the flow in hand, not looked up again after
                // the ACK's send (nothing there changes them)
                let (aeolus, n_msgs) = (f.proto == Proto::Aeolus, f.msg_ends.len() as u32);
                let mut stop = f.early_stop && f.enough_at.is_some() && delivered < n_msgs;
                let job = &mut self.jobs[j as usize];
                job.delivered = delivered;
                job.delivered_bytes = bytes;
                let mut finished = false;
                if job.done.is_none() && delivered >= job.needed.min(job.sent_msgs) {
                    job.done = Some(now);
                    finished = true;
                    let f = &mut self.flows[fid as usize];
                    f.enough_at = Some(now);
                    stop = f.early_stop && delivered < n_msgs;
                }
                // `ack_path = "instant"`: handed to the sender below, once
                // the receiver is done with the data (see `AckPath::Instant`)
                let mut instant = None;
                if let Some(a) = ack {
                    if self.tp.ack_path == AckPath::Instant {
                        instant = Some(a);
                    } else {
                        let h = Hop {
                            flow: fid,
                            src: dst,
                            dst: src,
                            // SACK blocks lengthen the header (RFC 2018)
                            size: self.tp.header_bytes + a.sack.option_bytes(),
                            hash,
                            queue,
                            ..Hop::default()
                        };
                        // inlined (as a call, its frame cost ~16
                        // instructions an ACK)
                        let port = self.net.nic(dst);
                        self.send_native_on(now, port, h, &a);
                    }
                }
                if stop {
                    // EarlySend: the receiver has enough; the stop signal
                    // travels back through the network (again for every
                    // data packet that still arrives, so a lost one is
                    // replaced)
                    self.send_control(now, fid, Kind::Stop, 0);
                }
                if aeolus {
                    self.aeolus_receiver(now, fid, Kind::Data);
                }
                if finished {
                    self.job_finished(now, j);
                }
                self.training_datagram_resolved(now, fid);
                if let Some(a) = instant {
                    self.instant_ack(now, fid, &a);
                }
            }
            Kind::Probe | Kind::CreditStop | Kind::CreditRequest => {
                self.aeolus_receiver(now, fid, hdr.kind);
                if hdr.kind == Kind::Probe {
                    self.send_control(now, fid, Kind::ProbeAck, hdr.seq);
                }
            }
            Kind::Ack | Kind::Credit | Kind::ProbeAck => self.sender_ack(now, fid, hdr),
            Kind::Syn | Kind::SynAck | Kind::Stop => self.control_packet(now, fid, hdr),
            Kind::Datagram => {}
        }
    }

    /// The sender of flow slot `fid` takes ACK (or credit) `hdr`.
    #[inline(always)]
    fn sender_ack(&mut self, now: Instant, fid: u32, hdr: &Hdr) {
        let f = &mut self.flows[fid as usize];
        // only an ACK of the flow's last byte can finish its sender (the
        // size read now, with the flow in hand)
        let last = hdr.ack >= f.bytes;
        let data = with_outbox!(self, fid, |s, out| s.on_ack(now, hdr, &mut out));
        self.flush_flow(now, fid, data);
        if last {
            self.retire_sender(fid);
        }
    }

    /// `ack_path = "instant"`: the receiver's ACK `a` reaches the sender
    /// of flow slot `fid` now, crossing no NIC, queue or link (htsim's
    /// TCP model, see [`AckPath`]). It is what the ACK packet would have
    /// carried on arrival; a flow cancelled meanwhile counts it stale,
    /// as it would the packet.
    fn instant_ack(&mut self, now: Instant, fid: u32, a: &Hdr) {
        self.counters.instant_acks += 1;
        if self.flows[fid as usize].cancelled {
            self.counters.stale += 1;
            return;
        }
        self.sender_ack(now, fid, a);
    }

    /// Frees a finished sender's state (see `transport::done`), keeping
    /// what is still read of it; the freed block goes to the next flow.
    fn retire_sender(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        if let Some(d) = f.sender.retired() {
            f.sender = Box::new(d);
            self.slot_retired(fid);
        }
    }

    pub(super) fn job_update(&mut self, now: Instant, u: JobUpdate) {
        match u {
            JobUpdate::Delivered { job, msgs, bytes } => {
                if let Some(j) = self.jobs.get_mut(job as usize) {
                    j.delivered = msgs;
                    j.delivered_bytes = bytes;
                }
            }
            JobUpdate::Finished { job, ok, counters } => {
                let mut finished = false;
                if let Some(j) = self.jobs.get_mut(job as usize) {
                    j.counters = counters;
                    if ok && j.done.is_none() {
                        j.done = Some(now);
                        finished = true;
                    }
                }
                if finished {
                    self.job_finished(now, job);
                }
            }
        }
    }
}

/// TCP small queues (see `TransportParams::tsq_bytes`, `limit` its packets,
/// `u32::MAX` = off): counts the `sent` data packets flow `f` just put on
/// its NIC and tells its sender how many more the NIC takes.
#[inline(always)]
fn tsq_account(limit: u32, f: &mut Flow, sent: u32) {
    if limit == u32::MAX || !uses_tsq(f.proto) {
        return;
    }
    f.nic_pkts += sent;
    let room = limit.saturating_sub(f.nic_pkts);
    f.sender.set_tx_room(room);
    f.tsq_throttled = room == 0;
}

/// The deadline to schedule a timer event for after flow `f`'s sender was
/// called (marked armed here), if its timer is due before any armed one.
#[inline(always)]
fn timer_to_arm(f: &mut Flow) -> Option<Instant> {
    if f.cancelled {
        return None;
    }
    let d = f.sender.timer()?;
    if matches!(f.timer_armed, Some(a) if a <= d) {
        return None;
    }
    f.timer_armed = Some(d);
    Some(d)
}

/// Transports whose senders take NIC back-pressure (the window-based ones).
fn uses_tsq(p: Proto) -> bool {
    matches!(p, Proto::Dctcp | Proto::Tcp | Proto::PFabric)
}
