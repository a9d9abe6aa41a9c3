//! The reliable sender's loss recovery with SACK (RFC 6675).
//!
//! * Every ACK updates the scoreboard; an ACK that SACKs new data without
//!   moving the cumulative point is a duplicate ACK (RFC 6675 section 2).
//! * Recovery begins at the third duplicate ACK, or earlier once the first
//!   unacknowledged byte is deemed lost (`IsLost`: more than 2 MSS SACKed
//!   above it). `ssthresh` comes from the congestion control given `pipe`
//!   at that moment (what is still in the network: lost and SACKed bytes
//!   excluded), as ns-3 3.44 does with SACK; RFC 6675 step 4.2 says half
//!   of FlightSize (`snd_nxt - snd_una`). On the incast of
//!   docs/validation.md ns-3's rule drops as many packets as ns-3 (290 per
//!   round at IW 10) where FlightSize drops 308-339 and times out 4x as
//!   often.
//! * In recovery the sender sends while `pipe` (bytes still in the network:
//!   RFC 6675 `SetPipe`) is below the window, choosing by `NextSeg`: lost
//!   holes first, then new data, then holes below the highest SACK. With
//!   PRR (RFC 6937) the window is `pipe + sndcnt` on every ACK; without it,
//!   `ssthresh` at once. Recovery ends when the data outstanding at its
//!   start is acknowledged: `cwnd = ssthresh`.
//! * Outside recovery, limited transmit (if on) is RFC 6675 section 5's:
//!   new data while `pipe` leaves room in the window.
//! * A timeout marks every unSACKed byte then outstanding as lost and
//!   resends those (in order, from one segment of window, growing by slow
//!   start); SACKed bytes are not resent (the SACK information is kept, as
//!   Linux and ns-3 keep it).

use super::*;
use crate::transport::prr::Prr;
use crate::transport::sack::{Scoreboard, DUP_THRESH};

/// A sender's SACK recovery state.
#[derive(Clone, Debug, Default)]
pub(super) struct SackState {
    /// What the receiver holds above `snd_una`.
    sb: Scoreboard,
    /// Proportional rate reduction of the recovery in progress.
    prr: Prr,
    /// After a timeout, the `snd_nxt` of then; until it is acknowledged
    /// every unSACKed byte below it is lost.
    loss_point: Option<u64>,
}

/// The scoreboard of a sender without SACK state.
static EMPTY: Scoreboard = Scoreboard::EMPTY;

impl<C: CongestionControl> ReliableSender<C> {
    fn sb(&self) -> &Scoreboard {
        self.sack.as_deref().map_or(&EMPTY, |s| &s.sb)
    }

    fn st(&mut self) -> &mut SackState {
        self.sack.get_or_insert_with(Box::default)
    }

    fn loss_point(&self) -> Option<u64> {
        self.sack.as_ref().and_then(|s| s.loss_point)
    }

    /// In fast recovery or recovering from a timeout.
    fn in_recovery(&self) -> bool {
        self.recover.is_some() || self.loss_point().is_some()
    }

    fn pipe(&self) -> u64 {
        self.sb().pipe(self.snd_una, self.snd_nxt, self.mss as u64)
    }

    pub(super) fn sack_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>) {
        if self.sack.is_none() && hdr.sack.is_empty() {
            self.plain_ack(now, hdr, out);
            return;
        }
        let mss = self.mss as u64;
        // a cumulative point past what was sent is not believed
        let ack = hdr.ack.min(self.snd_nxt);
        if self.sack.is_none() && !hdr.sack.is_empty() {
            self.sack = Some(Box::default());
        }
        let (old_una, old_sacked) = (self.snd_una, self.sb().sacked_bytes());
        if ack > self.snd_una {
            self.snd_una = ack;
            if let Some(st) = self.sack.as_deref_mut() {
                st.sb.advance(ack);
            }
        }
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        let mut newly = 0;
        if let Some(st) = self.sack.as_deref_mut() {
            for (s, e) in hdr.sack.iter(hdr.ack) {
                newly += st.sb.add(una, nxt, s, e);
            }
        }
        let delivered = (una - old_una + self.sb().sacked_bytes()).saturating_sub(old_sacked);
        if self.recover.is_some() && newly > 0 {
            self.st().sb.detect_lost_retransmissions();
        }
        if self.snd_una > old_una {
            let flight = self.snd_nxt - old_una;
            self.dupacks = 0;
            self.lt_sent = 0;
            self.sample_rtt(now, hdr);
            if matches!(self.loss_point(), Some(lp) if self.snd_una >= lp) {
                let st = self.st();
                st.loss_point = None;
                st.sb.rto_lost = 0;
            }
            match self.recover {
                Some(r) if self.snd_una < r => {
                    self.recovery_ack(delivered);
                    self.retransmit_head(now, out);
                }
                Some(_) => {
                    self.recover = None;
                    if let Some(st) = self.sack.as_deref_mut() {
                        st.sb.clear_retransmissions();
                    }
                    self.w.cwnd = self.w.ssthresh.max(self.w.mss);
                }
                None => {
                    let info = AckInfo {
                        acked: self.snd_una - old_una,
                        ece: hdr.ece,
                        snd_una: self.snd_una,
                        snd_nxt: self.snd_nxt,
                        flight,
                        cwnd_limited: self.cwnd_limited(),
                    };
                    self.cc.on_ack(&mut self.w, &info);
                }
            }
            self.restart_timer(now);
        } else if newly > 0 && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.recover.is_some() {
                self.recovery_ack(delivered);
            }
        }
        if !self.in_recovery()
            && self.snd_nxt > self.snd_una
            && (self.dupacks as u64 >= DUP_THRESH || self.sb().lost_end(mss) > self.snd_una)
        {
            // the flight that sets ssthresh is `pipe`, as ns-3's
            // `TcpSocketBase::EnterRecovery` takes it with SACK (RFC 6675
            // says FlightSize; see the module docs)
            let flight = self.pipe();
            self.cc.on_fast_loss(&mut self.w, flight);
            self.recover = Some(self.snd_nxt);
            let (una, nxt) = (self.snd_una, self.snd_nxt);
            let st = self.st();
            st.sb.high_rxt = una;
            st.prr = Prr::new(nxt - una);
            self.recovery_ack(delivered);
            // the fast retransmit goes out whatever the window (RFC 6675
            // step 4.3; without PRR `pipe` may still exceed `ssthresh`)
            self.retransmit_head(now, out);
        }
        self.sack_send(now, out);
    }

    /// `sack_ack` of an ACK without SACK blocks to a sender that never had
    /// SACK state (no SACK block and no timeout yet: the common case). With
    /// no scoreboard nothing is SACKed, so the ACK is never a duplicate
    /// (`dupacks` stays 0), no byte is deemed lost and no recovery is in
    /// progress: only a new cumulative point matters.
    fn plain_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox<'_>) {
        debug_assert!(self.sack.is_none() && self.recover.is_none() && self.dupacks == 0);
        let ack = hdr.ack.min(self.snd_nxt);
        let old_una = self.snd_una;
        if ack > old_una {
            self.snd_una = ack;
            self.lt_sent = 0;
            self.sample_rtt(now, hdr);
            let info = AckInfo {
                acked: ack - old_una,
                ece: hdr.ece,
                snd_una: ack,
                snd_nxt: self.snd_nxt,
                flight: self.snd_nxt - old_una,
                cwnd_limited: self.cwnd_limited(),
            };
            self.cc.on_ack(&mut self.w, &info);
            self.restart_timer(now);
        }
        self.sack_send(now, out);
    }

    /// Entering fast recovery, and on a partial ACK in it: the first
    /// unacknowledged segment is deemed lost and resent at once unless this
    /// recovery resent it already. On a partial ACK this is RFC 6582's rule,
    /// which ns-3 applies with SACK too (`TcpSocketBase` resends the head on
    /// every partial ACK); without it a hole with nothing SACKed above it
    /// (the tail of what was sent) waits for the timeout, as in plain
    /// RFC 6675.
    fn retransmit_head(&mut self, now: Instant, out: &mut Outbox<'_>) {
        if self.sb().high_rxt > self.snd_una {
            return;
        }
        let next = self
            .sb()
            .ranges()
            .first()
            .map_or(self.snd_nxt, |r| r.0)
            .min(self.snd_nxt);
        let len = (next - self.snd_una).min(self.mss as u64);
        if len == 0 {
            return;
        }
        let (seq, nxt) = (self.snd_una, self.snd_nxt);
        let st = self.st();
        st.sb.high_rxt = seq + len;
        st.sb.retransmitted(seq, seq + len, nxt);
        st.prr.sent(len);
        self.segment_len(now, seq, len as u32, out);
    }

    /// An ACK during fast recovery delivered `delivered` bytes: the window
    /// for what follows (PRR, or RFC 6675's `ssthresh`).
    fn recovery_ack(&mut self, delivered: u64) {
        if self.opts.prr {
            let pipe = self.pipe();
            let (ss, mss) = (self.w.ssthresh, self.mss as u64);
            self.w.cwnd = self.st().prr.on_ack(delivered, pipe, ss, mss);
        } else {
            self.w.cwnd = self.w.ssthresh.max(self.w.mss);
        }
    }

    pub(super) fn sack_timeout(&mut self, now: Instant, out: &mut Outbox<'_>) {
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_timeout(&mut self.w, flight);
        self.recover = None;
        self.dupacks = 0;
        self.lt_sent = 0;
        self.probe = None;
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        let st = self.st();
        st.loss_point = Some(nxt);
        st.sb.rto_lost = nxt;
        st.sb.clear_retransmissions();
        st.sb.high_rxt = una;
        self.rtt.back_off();
        self.deadline = None;
        self.sack_send(now, out);
        self.restart_timer(now);
    }

    /// RFC 6675 `NextSeg`: `(seq, len)` of the next segment to send.
    fn next_seg(&mut self, recovering: bool) -> Option<(u64, u64, bool)> {
        let mss = self.mss as u64;
        if self.recover.is_some() {
            let una = self.snd_una;
            if let Some((s, e)) = self.st().sb.next_relost(una) {
                return Some((s, (e - s).min(mss), true));
            }
        }
        if recovering {
            if let Some((s, e)) = self.sb().next_retx(self.snd_una, mss, false) {
                return Some((s, e - s, false));
            }
        }
        if self.snd_nxt < self.avail && self.tx_room > 0 {
            return Some((self.snd_nxt, (self.avail - self.snd_nxt).min(mss), false));
        }
        if recovering {
            if let Some((s, e)) = self.sb().next_retx(self.snd_una, mss, true) {
                return Some((s, e - s, false));
            }
        }
        None
    }

    /// Sends what the window allows: by `pipe` in recovery (and, with
    /// limited transmit, after duplicate ACKs), by the flight otherwise.
    ///
    /// Inlined into its callers (the ACK paths, the timeout, the sends):
    /// as its own frame after the ACK's it cost ~15 instructions an ACK
    /// in saving and restoring registers (the slow path stays a call).
    #[inline(always)]
    pub(super) fn sack_send(&mut self, now: Instant, out: &mut Outbox<'_>) {
        if self.in_recovery() || self.dupacks > 0 {
            self.sack_send_by_pipe(now, out);
            return;
        }
        // not in recovery and no duplicate ACK: `NextSeg` is new data only,
        // bounded by the flight (no `pipe`, no limited transmit)
        let mss = self.mss as u64;
        let mut sent = false;
        while self.snd_nxt < self.avail && self.tx_room > 0 {
            let seq = self.snd_nxt;
            let len = (self.avail - seq).min(mss);
            let flight = seq - self.snd_una;
            if flight > 0 && f64_of(flight + len) > self.w.cwnd {
                break;
            }
            self.snd_nxt += len;
            self.segment_len(now, seq, len as u32, out);
            sent = true;
        }
        self.after_sends(sent);
    }

    /// After a send loop: the window validation (Linux
    /// `tcp_cwnd_validate`) when something left or the window limited the
    /// flight.
    #[inline(always)]
    fn after_sends(&mut self, sent: bool) {
        let flight = self.snd_nxt - self.snd_una;
        let limited = f64_of(flight) + self.w.mss > self.w.cwnd;
        if sent || limited {
            self.validate_cwnd(limited);
        }
    }

    /// `sack_send` in recovery or after duplicate ACKs.
    #[inline(never)]
    fn sack_send_by_pipe(&mut self, now: Instant, out: &mut Outbox<'_>) {
        let recovering = self.in_recovery();
        let mut sent = false;
        let by_pipe = recovering || (self.opts.limited_transmit && self.dupacks > 0);
        while let Some((seq, len, relost)) = self.next_seg(recovering) {
            let flight = self.snd_nxt - self.snd_una;
            let mut used = if by_pipe { self.pipe() } else { flight };
            if relost {
                // `pipe` still counts the lost copy; the new one replaces it
                used = used.saturating_sub(len);
            }
            if flight > 0 && f64_of(used + len) > self.w.cwnd {
                break;
            }
            if seq == self.snd_nxt {
                if !recovering && self.dupacks > 0 && f64_of(flight + len) > self.w.cwnd {
                    self.lt_sent += len;
                }
                self.snd_nxt += len;
            } else {
                let (nxt, rec) = (self.snd_nxt, self.recover.is_some());
                let st = self.st();
                if relost {
                    st.sb.resent(seq);
                } else {
                    st.sb.high_rxt = st.sb.high_rxt.max(seq + len);
                }
                if rec {
                    st.sb.retransmitted(seq, seq + len, nxt);
                }
            }
            if self.recover.is_some() {
                self.st().prr.sent(len);
            }
            self.segment_len(now, seq, len as u32, out);
            sent = true;
        }
        self.after_sends(sent);
    }
}

#[cfg(test)]
#[path = "sack_recovery_tests.rs"]
mod tests;
