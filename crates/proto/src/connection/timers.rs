//! The loss timer (RTO, backoff, the tail rule and the tail loss probe),
//! `handle_timeout`, control-packet resends and `poll_timeout`.

use super::{Connection, Control, State};
use crate::config::Config;
use crate::event::JobFailure;
use crate::time::{Duration, Instant};
use crate::timer::Timer;

/// How long (epochs) a spurious timer loss keeps the tail's timer backing off.
const DOUBT_EPOCHS: u64 = 16;

/// At most `2^6 = 64` times the base RTO after consecutive timeouts.
const MAX_RTO_BACKOFF: u32 = 6;

/// A wake-up later than `idle_timeout / 10` past the idle deadline counts
/// as a stalled host (`Connection::idle_grace`): the runtime's timer
/// wake-ups are early by half a lookahead (0.5 ms) or late by a few ms at
/// load ~20; descheduled processes were seen 0.43 s late.
const LATE_WAKEUP_DIVISOR: u64 = 10;

impl Connection {
    /// The retransmission timeout: RFC 6298's `SRTT + 4 RTTVAR`, at least
    /// `min_rto`.
    pub(super) fn rto(&self, cfg: &Config) -> Duration {
        let base = match self.srtt {
            Some(s) => s + self.rttvar.saturating_mul(4),
            None => cfg.initial_rtt.saturating_mul(3),
        };
        base.max(cfg.min_rto)
    }

    /// The tail loss probe timeout: two smoothed RTTs plus the receiver's
    /// ACK delay (RFC 8985 section 7.2's PTO).
    fn pto(&self, cfg: &Config) -> Duration {
        self.rtt(cfg).saturating_mul(2) + cfg.max_ack_delay
    }

    /// Whether the loss timer backs off now: while data still flows, or at
    /// a tail when a timer-declared loss proved spurious in the last
    /// [`DOUBT_EPOCHS`] epochs (the RTO is known to be too short here).
    /// Data held back by a full in-flight cap (`Config::window_gain`) does
    /// not flow: as at a tail, the timer keeps the plain RTO (the window
    /// itself frees slots by age, `Connection::cap_age`).
    fn backs_off(&self) -> bool {
        (self.send.has_needed_data() && self.below_cap()) || self.doubts_rto()
    }

    /// Whether a timer-declared loss proved spurious in the last
    /// [`DOUBT_EPOCHS`] epochs (part of [`Self::backs_off`]).
    #[inline(always)]
    fn doubts_rto(&self) -> bool {
        self.send
            .spurious_timer_epoch
            .is_some_and(|e| self.epoch.saturating_sub(e) <= DOUBT_EPOCHS)
    }

    /// The loss timer's timeout: the RTO doubled per consecutive
    /// loss-declaring timer, but never past half the idle timeout (a peer
    /// that is merely slow must not look silent). Control packets (JOB,
    /// FIN, HELLO) keep the plain RTO: DATA of an unannounced job is
    /// dropped by the receiver, so their resends must stay quick.
    pub(super) fn loss_rto(&self, cfg: &Config) -> Duration {
        self.backed_off_rto(cfg, self.backs_off())
    }

    /// [`Self::loss_rto`] as a DATA packet leaves with more needed data
    /// waiting (`SendSide::has_needed_data`, which `backs_off` would ask
    /// again), inlined into `poll_transmit`: the loss timer is armed there
    /// per packet whenever the previous one was acknowledged (a call of
    /// ~32 instructions).
    #[inline(always)]
    pub(super) fn loss_rto_data_waiting(&self, cfg: &Config) -> Duration {
        debug_assert!(self.send.has_needed_data());
        self.backed_off_rto(cfg, self.below_cap() || self.doubts_rto())
    }

    /// The RTO, backed off (`backs_off`) per consecutive loss-declaring
    /// timer up to half the idle timeout.
    #[inline(always)]
    fn backed_off_rto(&self, cfg: &Config, backs_off: bool) -> Duration {
        let rto = self.rto(cfg);
        if !backs_off {
            return rto; // a tail: see `handle_timeout`
        }
        let cap = Duration::from_nanos(cfg.idle_timeout.as_nanos() / 2).max(rto);
        rto.saturating_mul(1 << self.rto_backoff).min(cap)
    }

    /// [`Self::arm_loss_timer`], or, inside a run of a batch
    /// (`defer_loss`), a note to arm it when the run ends: it is derived
    /// from the connection's state alone and read by nothing until then
    /// (a DATA packet's loss-timer check and every derivation of the
    /// deadline settle it first), so arming it once after the run's last
    /// packet leaves it as arming it after each would.
    #[inline(always)]
    pub(super) fn arm_or_defer_loss(&mut self, cfg: &Config) {
        if self.defer_loss {
            self.loss_stale = true;
        } else {
            self.arm_loss_timer(cfg);
        }
    }

    /// Arms the loss and probe timers if a run of a batch left them
    /// waiting (`arm_or_defer_loss`).
    #[inline(always)]
    pub(crate) fn settle_loss(&mut self, cfg: &Config) {
        if self.loss_stale {
            self.loss_stale = false;
            self.arm_loss_timer(cfg);
        }
    }

    // With nothing in flight (a packet's ACK resolved the last one:
    // most ACKs of a paced sender) both timers stop, inline; the walk for
    // the oldest packet in flight, out of line (~30 instructions per ACK).
    #[inline(always)]
    pub(super) fn arm_loss_timer(&mut self, cfg: &Config) {
        if self.send.in_flight == 0 {
            // `in_flight` counts the flights whose fate is in flight
            debug_assert!(self.send.oldest_in_flight().is_none());
            self.timers.stop(Timer::Loss);
            self.timers.stop(Timer::Probe);
            return;
        }
        self.arm_loss_timer_in_flight(cfg);
    }

    /// [`Self::arm_loss_timer`] with packets in flight.
    #[inline(never)]
    fn arm_loss_timer_in_flight(&mut self, cfg: &Config) {
        let loss = self.send.oldest_in_flight().map(|t| t + self.loss_rto(cfg));
        match loss {
            Some(t) => self.timers.set(Timer::Loss, t),
            None => self.timers.stop(Timer::Loss),
        }
        // A tail: probe one PTO after the last packet, where that comes
        // before the loss timer (whose RTO carries 4 RTTVAR and backoff);
        // with nothing in flight, no probe (and no PTO to work out).
        match loss.map(|t| (t, self.last_sent + self.pto(cfg))) {
            Some((t, probe)) if probe < t && self.send.can_probe() => {
                self.timers.set(Timer::Probe, probe)
            }
            _ => self.timers.stop(Timer::Probe),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant, cfg: &Config) {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        // The pacing timer only makes the connection ready to send, which
        // the endpoint asks `wants_to_send` about after this call: when no
        // other timer is due there is nothing to do here. (The table is
        // current: the endpoint recomputes it with `poll_timeout` after
        // every call into the connection, and every check below is guarded
        // by a timer — `Idle` covers the silence and receiver-job expiry
        // checks.) Most timeouts of a paced sender are this case.
        if self.state == State::Closed || !self.timers.any_due_except(Timer::Pacing, now) {
            return;
        }
        if let State::Handshaking { nonce } = self.state {
            if now - self.handshake_started >= cfg.idle_timeout {
                self.shutdown(JobFailure::PeerUnresponsive, true);
                return;
            }
            if self.timers.expired(Timer::Control, now) {
                self.control.push_back(Control::Hello(nonce));
                self.hello_resent = true;
                self.timers.set(Timer::Control, now + self.rto(cfg));
            }
            return;
        }
        // State held for the peer (jobs either way, an unanswered close)
        // lasts at most the idle timeout of silence; a job of the peer's
        // that sees neither JOB nor DATA that long goes on its own.
        let outstanding = self.send.busy() || self.close_sent.is_some() || self.recv.has_jobs();
        if outstanding && now - self.last_heard >= cfg.idle_timeout && !self.idle_grace(now, cfg) {
            self.shutdown(JobFailure::PeerUnresponsive, true);
            return;
        }
        self.recv.expire(now, cfg.idle_timeout, &mut self.events);
        if self.timers.expired(Timer::Loss, now) {
            // While data still flows, only packets older than the
            // backed-off RTO are declared, and each such round backs the
            // timer off: a stalled receiver must not have every packet sent
            // meanwhile declared lost again and again. At a tail (nothing
            // left to send) no later packet can reveal a loss and the timer
            // is the only detector: it keeps the plain RTO (a tail lost
            // packet by packet would otherwise wait RTO, 2 RTO, 4 RTO...),
            // unless timer losses proved spurious lately (incast behind a
            // stalled receiver: the plain RTO there declared ~11 000
            // packets that arrived).
            let backs_off = self.backs_off();
            let age = self.loss_rto(cfg);
            let deadline = Instant::from_nanos(now.as_nanos().saturating_sub(age.as_nanos()));
            if self.send.detect_timeout(deadline, cfg, &self.pol) > 0 && backs_off {
                self.rto_backoff = (self.rto_backoff + 1).min(MAX_RTO_BACKOFF);
            }
            self.after_progress(now, cfg);
        }
        if self.timers.expired(Timer::Probe, now) {
            self.timers.stop(Timer::Probe);
            if self.send.can_probe() {
                self.send.queue_probe(&self.pol);
            }
        }
        if self.timers.expired(Timer::Epoch, now) {
            self.end_epoch(now, cfg);
            self.keep_starved_jobs(now, cfg);
        }
        if self.timers.expired(Timer::Control, now) {
            self.timers.stop(Timer::Control);
            self.resend_control(now, cfg);
        }
        if self.timers.expired(Timer::AckDelay, now) {
            self.flush_ack();
        }
        if self.timers.expired(Timer::Keepalive, now) {
            self.timers.stop(Timer::Keepalive);
            if let Some(id) = self.keepalive_job() {
                self.control.push_back(Control::Job(id));
                self.last_keepalive = now;
                if let Some(j) = self.send.job_mut(id) {
                    j.last_tx = now;
                }
            }
        }
    }

    /// A late wake-up's grace (issue 19): when the peer's silence ran out
    /// at a wake-up that came more than a tenth of the idle timeout after
    /// the deadline ([`LATE_WAKEUP_DIVISOR`]), this host was stalled (a
    /// descheduled process), and part of the silence was its own: the peer
    /// had nothing to answer. The peer is then taken as heard now, once —
    /// the idle timer runs again from here — and asked to answer (the JOB
    /// of an open job, which the receiver answers, or the CLOSE again);
    /// only if it stays silent for a whole idle timeout more do its jobs
    /// fail. Returns whether the grace was given. A wake-up on time (every
    /// wake-up in the simulator) gets none: nothing changes there.
    fn idle_grace(&mut self, now: Instant, cfg: &Config) -> bool {
        let deadline = self.last_heard + cfg.idle_timeout;
        let late = now - deadline;
        let bound = Duration::from_nanos(cfg.idle_timeout.as_nanos() / LATE_WAKEUP_DIVISOR);
        if late <= bound || self.idle_grace == Some(self.last_heard) {
            return false;
        }
        self.last_heard = now;
        self.idle_grace = Some(now);
        if let Some(j) = self.send.jobs.iter_mut().find(|j| !j.done) {
            j.last_tx = now;
            self.control.push_back(Control::Job(j.id));
        } else if self.close_sent.is_some() {
            self.control.push_back(Control::Close);
            self.close_sent = Some(now);
        }
        true
    }

    /// Resends the JOB of every open job, acknowledged by the receiver,
    /// that sent neither DATA nor its JOB for a quarter of the idle
    /// timeout, as the keepalive does for a quiet connection. While other
    /// jobs' packets go first (MRDF serves the message with the least left:
    /// a job of large messages waits behind the others' retransmissions),
    /// the receiver's per-job expiry (`RecvSide::expire`) would otherwise
    /// end such a job after the idle timeout without its DATA, drop the
    /// DATA that comes later as of an unknown job, never acknowledge it,
    /// and the sender, heard from no more once the other jobs end, would
    /// give the connection up (issue 19's "both ends silent" failure,
    /// `tests/liveness.rs`). Checked at every epoch's end (the epoch timer
    /// runs while a job is active).
    fn keep_starved_jobs(&mut self, now: Instant, cfg: &Config) {
        let quiet = Duration::from_nanos(cfg.idle_timeout.as_nanos() / 4);
        for j in &mut self.send.jobs {
            if !j.done && j.job_acked && j.control_sent.is_none() && j.last_tx + quiet <= now {
                j.last_tx = now;
                self.control.push_back(Control::Job(j.id));
            }
        }
    }

    /// A job to resend as keepalive: one still open while nothing is sent
    /// (a streaming job between productions), so that the peer, which
    /// answers every JOB, is heard within the idle timeout.
    fn keepalive_job(&self) -> Option<u32> {
        if self.send.in_flight > 0 || self.send.has_data() {
            return None;
        }
        self.send.jobs.iter().find(|j| !j.done).map(|j| j.id)
    }

    fn resend_control(&mut self, now: Instant, cfg: &Config) {
        let rto = self.rto(cfg);
        let mut any = false;
        let due: Vec<(u32, bool)> = self
            .send
            .jobs
            .iter()
            .filter_map(|j| match j.control_sent {
                Some(t) if t + rto <= now => Some((j.id, j.done)),
                Some(_) => {
                    any = true;
                    None
                }
                None => None,
            })
            .collect();
        for (id, done) in due {
            self.control.push_back(if done {
                Control::Fin { job: id }
            } else {
                Control::Job(id)
            });
            if let Some(j) = self.send.job_mut(id) {
                j.control_sent = Some(now);
                j.last_tx = now;
            }
            any = true;
        }
        if let Some(t) = self.close_sent {
            if t + rto <= now {
                self.control.push_back(Control::Close);
                self.close_sent = Some(now);
            }
            any = true;
        }
        if any {
            self.timers.set(Timer::Control, now + rto);
        }
    }

    /// A wake-up where only the pacing timer is due (most timeouts of a
    /// paced sender), handled without `handle_timeout` and a full
    /// `poll_timeout`: nothing the timers derive from changed since the
    /// endpoint last derived them (after every call), except that the
    /// pacer's time came. With the in-flight cap open at `now` the pacing
    /// entry is then off (`next_send <= now`) and every other entry stands,
    /// so the new deadline is the table's minimum without it. `None` when
    /// the full path is needed: another timer due, a connection not
    /// established, or a full cap (its pacing entry depends on `now`).
    #[inline(always)]
    pub(crate) fn pacing_wakeup(&mut self, now: Instant) -> Option<Option<Instant>> {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        if self.state != State::Established
            || !self.timers.expired(Timer::Pacing, now)
            || !self.window_open(now)
        {
            return None;
        }
        // The other timers' minimum answers both whether one of them is
        // due and the deadline once the pacing entry is off (one pass).
        let rest = self.timers.next_without(Timer::Pacing);
        if rest.is_some_and(|t| t <= now) {
            return None;
        }
        debug_assert!(!self.timers.any_due_except(Timer::Pacing, now));
        debug_assert!(self.next_send <= now);
        self.timers.stop(Timer::Pacing);
        self.timers_now = Some(now);
        debug_assert_eq!(self.timers.next(), rest);
        Some(rest)
    }

    /// The timers after a DATA packet left at `now`, derived anew only
    /// where sending can move them: the pacing entry (the pacer's next
    /// time, whether data is left, the in-flight cap). `None` when the
    /// full `poll_timeout` is needed. The table was current before the
    /// call (the endpoint derives it after every call), and sending DATA
    /// changes nothing the idle timer's deadline derives from (silence,
    /// the receiver's jobs): with the idle timer armed before, it stays
    /// armed (a packet is in flight now) at the same deadline; with the
    /// keepalive off before, it stays off (off while anything is in
    /// flight). Otherwise the full path runs.
    #[inline(always)]
    pub(crate) fn after_data_sent(&mut self, now: Instant) -> Option<Option<Instant>> {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        if !matches!(self.state, State::Established)
            || self.send.in_flight == 0
            || self.timers.get(Timer::Idle).is_none()
            || self.timers.get(Timer::Keepalive).is_some()
        {
            return None;
        }
        self.timers_now = Some(now);
        if self.send.has_data() {
            self.derive_pacing(now);
        } else {
            self.timers.stop(Timer::Pacing);
        }
        Some(self.timers.next())
    }

    /// Whether, after a DATA packet left at `now`, the connection can send
    /// the next one of a burst at once with its timers not derived in
    /// between (`Endpoint::poll_transmits`): no control packet or event
    /// waits, and [`Self::after_data_sent`] would take its short path (so
    /// deriving once after the burst's last packet gives what deriving
    /// after each would: sending changes only the pacing entry, derived
    /// from the state the last packet left).
    #[inline(always)]
    pub(crate) fn continues_burst(&self, now: Instant) -> bool {
        self.control.is_empty()
            && self.events.is_empty()
            && self.state == State::Established
            && self.send.in_flight > 0
            && self.timers.get(Timer::Idle).is_some()
            && self.timers.get(Timer::Keepalive).is_none()
            && self.send.has_data()
            && self.next_send <= now
            && self.window_open(now)
    }

    /// The pacing timer of an established connection with data waiting:
    /// the pacer's next time, or when a full in-flight cap frees a slot by
    /// age; off when neither lies ahead.
    #[inline(always)]
    fn derive_pacing(&mut self, now: Instant) {
        let frees = self.window_frees_at(now);
        if self.next_send > now || frees.is_some() {
            let at = frees.map_or(self.next_send, |t| t.max(self.next_send));
            self.timers.set(Timer::Pacing, at);
        } else {
            self.timers.stop(Timer::Pacing);
        }
    }

    /// The idle timer: the peer's silence and the receiver's jobs (their
    /// expiry) while state is held for the peer; the handshake's limit.
    #[inline(always)]
    fn derive_idle(&mut self, cfg: &Config) {
        if self.state == State::Established
            && (self.send.busy() || self.close_sent.is_some() || self.recv.has_jobs())
        {
            let silent = self.last_heard + cfg.idle_timeout;
            let stale = self.recv.next_expiry(cfg.idle_timeout);
            self.timers
                .set(Timer::Idle, stale.map_or(silent, |s| s.min(silent)));
        } else if let State::Handshaking { .. } = self.state {
            self.timers
                .set(Timer::Idle, self.handshake_started + cfg.idle_timeout);
        } else {
            self.timers.stop(Timer::Idle);
        }
    }

    /// The timers after a DATA packet arrived at `now`
    /// (`Connection::on_data_packet`), derived anew only where receiving
    /// can move them: the idle entry (the peer's silence, the receiver's
    /// jobs); `on_data` sets or stops the ACK-delay entry itself. `None`
    /// when the full `poll_timeout` is needed. Receiving DATA changes
    /// nothing on the send side, and the endpoint derived the table after
    /// the previous call: the keepalive entry (send side, `last_sent`,
    /// `last_keepalive`) stands, and with no data waiting to be sent the
    /// pacing entry stays off whatever `now` (with data waiting it depends
    /// on `now` through the in-flight cap, so the full path runs). Loss,
    /// probe, epoch and control entries are never derived.
    #[inline(always)]
    pub(crate) fn after_data_received(
        &mut self,
        now: Instant,
        cfg: &Config,
    ) -> Option<Option<Instant>> {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        if self.state != State::Established || self.timers_now.is_none() || self.send.has_data() {
            return None;
        }
        self.timers_now = Some(now);
        self.derive_idle(cfg);
        Some(self.timers.next())
    }

    /// The timers after messages were queued at `now`
    /// (`Connection::push_messages`), derived anew only where that can move
    /// them: the pacing entry (data is waiting now; the pacer's next time,
    /// the in-flight cap). `None` when the full `poll_timeout` is needed.
    /// The table was current before the call (the endpoint derives it
    /// after every call), and queuing messages changes nothing the idle
    /// entry derives from (the peer's silence, the receiver's jobs; the
    /// send side stays busy: nothing in flight or acknowledged moved, no
    /// job ended): armed before, it stands. With data waiting the
    /// keepalive entry is off (`keepalive_job`), as `poll_timeout` has it.
    /// The epoch entry `push_messages` sets itself; loss, probe and control
    /// entries are never derived.
    #[inline(always)]
    pub(crate) fn after_push(&mut self, now: Instant) -> Option<Option<Instant>> {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        if self.state != State::Established
            || self.timers_now.is_none()
            || self.timers.get(Timer::Idle).is_none()
            || !self.send.has_data()
        {
            return None;
        }
        self.timers_now = Some(now);
        self.timers.stop(Timer::Keepalive);
        self.derive_pacing(now);
        Some(self.timers.next())
    }

    /// The timer table, written out (tests comparing derivations).
    #[cfg(test)]
    pub(crate) fn timers_shown(&self) -> String {
        format!("{:?}", self.timers)
    }

    /// Whether the last `poll_timeout` ran at `now`: then, after a call
    /// that changed none of its inputs (sending a control packet), its
    /// deadline still holds and need not be derived again.
    pub(crate) fn timers_current(&self, now: Instant) -> bool {
        self.timers_now == Some(now)
    }

    // Inlined into `Endpoint::touched` (its one caller on the hot path):
    // -25 instructions per DATA packet.
    #[inline(always)]
    pub(crate) fn poll_timeout(&mut self, now: Instant, cfg: &Config) -> Option<Instant> {
        debug_assert!(!self.loss_stale, "the loss timer was not settled");
        self.timers_now = Some(now);
        if self.state == State::Closed {
            return None;
        }
        self.derive_idle(cfg);
        if self.state == State::Established && self.keepalive_job().is_some() {
            let quiet = self.last_sent.max(self.last_keepalive);
            self.timers.set(
                Timer::Keepalive,
                quiet + Duration::from_nanos(cfg.idle_timeout.as_nanos() / 4),
            );
        } else {
            self.timers.stop(Timer::Keepalive);
        }
        // The pacing timer also wakes the sender when a full in-flight cap
        // frees a slot by age (`window_frees_at`, asked only with data
        // waiting).
        if self.state == State::Established && self.send.has_data() {
            self.derive_pacing(now);
        } else {
            self.timers.stop(Timer::Pacing);
        }
        self.timers.next()
    }
}
