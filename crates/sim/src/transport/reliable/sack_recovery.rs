//! The reliable sender's loss recovery with SACK (RFC 6675).
//!
//! * Every ACK updates the scoreboard; an ACK that SACKs new data without
//!   moving the cumulative point is a duplicate ACK (RFC 6675 section 2).
//! * Recovery begins at the third duplicate ACK, or earlier once the first
//!   unacknowledged byte is deemed lost (`IsLost`: more than 2 MSS SACKed
//!   above it). `ssthresh` comes from the congestion control with the
//!   flight at that moment (RFC 5681 FlightSize, limited transmit's
//!   segments excluded), as without SACK.
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
use crate::transport::sack::DUP_THRESH;

impl<C: CongestionControl> ReliableSender<C> {
    /// In fast recovery or recovering from a timeout.
    fn in_recovery(&self) -> bool {
        self.recover.is_some() || self.loss_point.is_some()
    }

    fn pipe(&self) -> u64 {
        self.sb.pipe(self.snd_una, self.snd_nxt, self.mss as u64)
    }

    pub(super) fn sack_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox) {
        let mss = self.mss as u64;
        // a cumulative point past what was sent is not believed
        let ack = hdr.ack.min(self.snd_nxt);
        let (old_una, old_sacked) = (self.snd_una, self.sb.sacked_bytes());
        if ack > self.snd_una {
            self.snd_una = ack;
            self.sb.advance(ack);
        }
        let mut newly = 0;
        for (s, e) in hdr.sack.iter(hdr.ack) {
            newly += self.sb.add(self.snd_una, self.snd_nxt, s, e);
        }
        let delivered =
            (self.snd_una - old_una + self.sb.sacked_bytes()).saturating_sub(old_sacked);
        if self.snd_una > old_una {
            let flight = self.snd_nxt - old_una;
            self.dupacks = 0;
            self.lt_sent = 0;
            self.sample_rtt(now, hdr);
            if matches!(self.loss_point, Some(lp) if self.snd_una >= lp) {
                self.loss_point = None;
                self.sb.rto_lost = 0;
            }
            match self.recover {
                Some(r) if self.snd_una < r => self.recovery_ack(delivered),
                Some(_) => {
                    self.recover = None;
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
            && (self.dupacks as u64 >= DUP_THRESH || self.sb.lost_end(mss) > self.snd_una)
        {
            // limited transmit's segments do not count (RFC 3042)
            let flight = self.snd_nxt - self.snd_una - self.lt_sent;
            self.cc.on_fast_loss(&mut self.w, flight);
            self.recover = Some(self.snd_nxt);
            self.sb.high_rxt = self.snd_una;
            self.prr = Prr::new(self.snd_nxt - self.snd_una);
            self.recovery_ack(delivered);
        }
        self.sack_send(now, out);
    }

    /// An ACK during fast recovery delivered `delivered` bytes: the window
    /// for what follows (PRR, or RFC 6675's `ssthresh`).
    fn recovery_ack(&mut self, delivered: u64) {
        if self.opts.prr {
            let pipe = self.pipe();
            self.w.cwnd = self
                .prr
                .on_ack(delivered, pipe, self.w.ssthresh, self.mss as u64);
        } else {
            self.w.cwnd = self.w.ssthresh.max(self.w.mss);
        }
    }

    pub(super) fn sack_timeout(&mut self, now: Instant, out: &mut Outbox) {
        let flight = self.snd_nxt - self.snd_una;
        self.cc.on_timeout(&mut self.w, flight);
        self.recover = None;
        self.dupacks = 0;
        self.lt_sent = 0;
        self.probe = None;
        self.loss_point = Some(self.snd_nxt);
        self.sb.rto_lost = self.snd_nxt;
        self.sb.high_rxt = self.snd_una;
        self.rtt.back_off();
        self.deadline = None;
        self.sack_send(now, out);
        self.restart_timer(now);
    }

    /// RFC 6675 `NextSeg`: `(seq, len)` of the next segment to send.
    fn next_seg(&self, recovering: bool) -> Option<(u64, u64)> {
        let mss = self.mss as u64;
        if recovering {
            if let Some((s, e)) = self.sb.next_retx(self.snd_una, mss, false) {
                return Some((s, e - s));
            }
        }
        if self.snd_nxt < self.avail && self.tx_room > 0 {
            return Some((self.snd_nxt, (self.avail - self.snd_nxt).min(mss)));
        }
        if recovering {
            if let Some((s, e)) = self.sb.next_retx(self.snd_una, mss, true) {
                return Some((s, e - s));
            }
        }
        None
    }

    /// Sends what the window allows: by `pipe` in recovery (and, with
    /// limited transmit, after duplicate ACKs), by the flight otherwise.
    pub(super) fn sack_send(&mut self, now: Instant, out: &mut Outbox) {
        let recovering = self.in_recovery();
        let by_pipe = recovering || (self.opts.limited_transmit && self.dupacks > 0);
        let mut sent = false;
        while let Some((seq, len)) = self.next_seg(recovering) {
            let flight = self.snd_nxt - self.snd_una;
            let used = if by_pipe { self.pipe() } else { flight };
            if flight > 0 && (used + len) as f64 > self.w.cwnd {
                break;
            }
            if seq == self.snd_nxt {
                if !recovering && self.dupacks > 0 && (flight + len) as f64 > self.w.cwnd {
                    self.lt_sent += len;
                }
                self.snd_nxt += len;
            } else {
                self.sb.high_rxt = self.sb.high_rxt.max(seq + len);
            }
            if self.recover.is_some() {
                self.prr.sent(len);
            }
            self.segment_len(now, seq, len as u32, out);
            sent = true;
        }
        let flight = self.snd_nxt - self.snd_una;
        let limited = flight as f64 + self.w.mss > self.w.cwnd;
        if sent || limited {
            self.validate_cwnd(limited);
        }
    }
}
