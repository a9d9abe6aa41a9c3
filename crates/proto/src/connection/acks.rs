//! Acknowledgements: ACKs generated for received DATA (coalesced, flushed
//! by batch, CE mark or delay), and the processing of the peer's ACKs.

use super::{Connection, Control};
use crate::config::Config;
use crate::event::{Event, EventSink, Role};
use crate::receiver::DataVerdict;
use crate::stats::{DropReason, EndpointStats};
use crate::time::{Duration, Instant};
use crate::timer::Timer;
use crate::wire::header::PacketTypeField;
use crate::wire::{AckRepr, Flags, HeaderRepr, PacketType};

impl Connection {
    pub(super) fn on_data(
        &mut self,
        now: Instant,
        h: &HeaderRepr,
        body: &[u8],
        cfg: &Config,
        stats: &mut EndpointStats,
        events: &mut impl EventSink,
    ) {
        if !self.recv.epoch_ok(h.epoch) {
            stats.drop(DropReason::StaleEpoch);
            return;
        }
        match self.recv.on_data(now, h, body, cfg, events) {
            DataVerdict::Drop(r) => {
                stats.drop(r);
                return;
            }
            DataVerdict::Ack | DataVerdict::Late => {}
        }
        let ce = h.flags.has(Flags::CE);
        self.recv.recv_count = self.recv.recv_count.wrapping_add(1);
        if ce {
            self.recv.ce_count = self.recv.ce_count.wrapping_add(1);
        }
        self.recv.seqs.insert(h.seq);
        // The sender stops a job once told it is satisfied: the ACK that
        // first says so leaves at once.
        let (satisfied, newly) = self.recv.satisfied(h.job_id, events);
        // The echo is written where the ACK will be queued (`AckQueue`).
        let echo = &mut self.acks.pending().h;
        *echo = *h;
        echo.ty = PacketTypeField(PacketType::Ack);
        echo.flags = Flags(if ce { Flags::ECE } else { 0 });
        echo.elem_start = 0;
        echo.elem_end = 0;
        self.pending_ack = true;
        self.pending_satisfied = satisfied;
        self.unacked += 1;
        // A full batch (or, when ECN is acted upon, a CE mark, or a job
        // just satisfied) is echoed at once; otherwise the ACK waits a little.
        if (ce && (cfg.ecn_reaction || cfg.ecn_reaction_queue0))
            || newly
            || self.unacked >= cfg.ack_every
        {
            self.flush_ack();
        } else if self.timers.get(Timer::AckDelay).is_none() {
            self.timers.set(Timer::AckDelay, now + cfg.max_ack_delay);
        }
    }

    /// Whether a coalesced ACK is waiting (see `Endpoint::flush_acks`).
    pub(crate) fn holds_ack(&self) -> bool {
        self.pending_ack
    }

    pub(crate) fn flush_ack(&mut self) {
        if std::mem::take(&mut self.pending_ack) && self.recv.seqs.is_started() {
            // Built in the pending slot, behind its echo (see `AckQueue`).
            let q = self.acks.pending();
            let built =
                self.recv
                    .seqs
                    .ack_into(self.recv.ce_count, self.recv.recv_count, &mut q.ack);
            debug_assert!(built);
            q.ack.satisfied = self.pending_satisfied;
            self.acks.commit();
            self.control.push_back(Control::Ack);
        }
        self.unacked = 0;
        self.timers.stop(Timer::AckDelay);
    }

    pub(super) fn on_ack(&mut self, now: Instant, h: &HeaderRepr, a: &AckRepr, cfg: &Config) {
        if h.flags.has(Flags::JOB_KNOWN) {
            if let Some(j) = self.send.job_mut(h.job_id) {
                // An ended stream's re-announce is confirmed only by an ACK
                // of its shrunk counts: a late ACK of an earlier JOB (or
                // keepalive) would let FIN overtake the re-announce and the
                // receiver would fail the job (GuaranteeMissed).
                if !j.ended || a.cumulative == j.announced() {
                    j.job_acked = true;
                    if !j.done {
                        j.control_sent = None;
                    }
                }
            }
            // A job whose groups must deliver nothing is complete now.
            self.after_progress(now, cfg);
            return;
        }
        if a.satisfied {
            if let Some(j) = self.send.job_mut(h.job_id) {
                j.peer_satisfied = true;
            }
        }
        if let Some(a) = self.send.on_acked(h.seq, &self.pol) {
            self.on_rtt_sample(now - a.sent);
            if !a.spurious {
                self.rto_backoff = 0;
            }
            // Marks count where they are acted upon: on every queue with
            // `ecn_reaction`, on queue 0 alone with `ecn_reaction_queue0`.
            if h.flags.has(Flags::ECE) && cfg.reacts_to_marks(a.queue) {
                self.send.epoch.marked += 1;
            }
        }
        for &r in a.ranges() {
            self.send.on_acked_range(r, &self.pol);
        }
        self.send.on_cumulative(a.cumulative, &self.pol);
        self.send.detect_fast(cfg.reorder_threshold, cfg, &self.pol);
        if let Some(sent) = self.send.take_probe_answer() {
            // The tail probe arrived: what was sent a quarter RTT or more
            // before it and is still unacknowledged did not (RACK's
            // reordering window, RFC 8985 section 6.2).
            let window = Duration::from_nanos(self.rtt(cfg).as_nanos() / 4);
            let deadline = Instant::from_nanos(sent.as_nanos().saturating_sub(window.as_nanos()));
            self.send.detect_timeout(deadline, cfg, &self.pol);
        }
        self.undo_spurious_cuts();
        self.after_progress(now, cfg);
    }

    pub(super) fn after_progress(&mut self, now: Instant, cfg: &Config) {
        if self.send.may_finish() {
            self.finish_jobs(now, cfg);
        }
        self.arm_or_defer_loss(cfg);
    }

    /// Reports jobs that finished and queues the FINs that may go.
    fn finish_jobs(&mut self, now: Instant, cfg: &Config) {
        let mut fins = Vec::new();
        // extra data (send more) may take one RTO past the job's end
        let extra_for = self.rto(cfg);
        for report in self
            .send
            .take_finished(now, cfg.send_more, extra_for, &self.pol)
        {
            let id = report.job;
            self.events.push_back(Event::JobComplete {
                job: id,
                role: Role::Sender,
                outcome: Ok(report),
            });
            fins.push(id);
        }
        // A job sending extra data (send more) says FIN once that is resolved.
        fins.retain(|&id| self.send.job_mut(id).is_some_and(|j| !j.fin_deferred));
        fins.extend(self.send.take_fin_ready(now, &self.pol));
        for id in fins {
            self.control.push_back(Control::Fin { job: id });
            if let Some(j) = self.send.job_mut(id) {
                j.control_sent = Some(now);
            }
            self.arm_control(now, cfg);
        }
    }
}
