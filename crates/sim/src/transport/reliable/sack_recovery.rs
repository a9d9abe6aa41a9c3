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

    pub(super) fn sack_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox) {
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
    fn plain_ack(&mut self, now: Instant, hdr: &Hdr, out: &mut Outbox) {
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
    fn retransmit_head(&mut self, now: Instant, out: &mut Outbox) {
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

    pub(super) fn sack_timeout(&mut self, now: Instant, out: &mut Outbox) {
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
    pub(super) fn sack_send(&mut self, now: Instant, out: &mut Outbox) {
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
    fn sack_send_by_pipe(&mut self, now: Instant, out: &mut Outbox) {
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
mod tests {
    use super::*;
    use crate::transport::cc::NewReno;
    use crate::transport::receiver::StreamReceiver;
    use crate::transport::sack::blocks_allowed;
    use approxnet_proto::time::Duration;
    use std::collections::{HashMap, VecDeque};

    /// Runs a sender of `total` bytes (MSS 1000, initial window `iw`, min
    /// RTO 5 ms) against a receiver over a FIFO path (10 us each way, 0.8
    /// us per segment), dropping the first `n` transmissions of segment
    /// `i` for every `(i, n)` in `lose`. Returns (timeouts,
    /// retransmissions, completion time, when the cumulative ACK passed
    /// the last lost segment).
    fn transfer(
        opts: TcpOptions,
        iw: u32,
        total: u64,
        lose: &[(u64, u32)],
    ) -> (u64, u64, Instant, Instant) {
        let rto = RtoConfig {
            min: Duration::from_millis(5),
            initial: Duration::from_millis(5),
            max: Duration::from_secs(1),
            fixed: false,
        };
        let mut s = ReliableSender::new(NewReno { init_pkts: iw }, total, 1000, rto, false)
            .with_options(opts);
        let blocks = if opts.sack {
            blocks_allowed(opts.timestamps)
        } else {
            0
        };
        let mut r = StreamReceiver::new(total).with_sack(blocks);
        let d = Duration::from_micros(10);
        let gap = Duration::from_nanos(800);
        let mut drops: HashMap<u64, u32> = lose.iter().copied().collect();
        let mut now = Instant::ZERO;
        let mut out = Vec::new();
        let mut data: VecDeque<(Instant, Hdr)> = VecDeque::new();
        let mut acks: VecDeque<(Instant, Hdr)> = VecDeque::new();
        let mut wire_free = Instant::ZERO;
        let last_lost = lose.iter().map(|l| (l.0 + 1) * 1000).max().unwrap_or(0);
        let mut repaired = None;
        s.start(now, &mut out);
        for _ in 0..100_000 {
            for seg in out.drain(..) {
                if let Some(n) = drops.get_mut(&(seg.hdr.seq / 1000)) {
                    if *n > 0 {
                        *n -= 1;
                        continue;
                    }
                }
                wire_free = wire_free.max(now) + gap;
                data.push_back((wire_free + d, seg.hdr));
            }
            if repaired.is_none() && s.snd_una >= last_lost {
                repaired = Some(now);
            }
            if s.finished() {
                assert!(r.complete());
                let rep = repaired.unwrap_or(now);
                return (s.stats().timeouts, s.stats().retx_pkts, now, rep);
            }
            let next_data = data.front().map(|x| x.0);
            let next_ack = acks.front().map(|x| x.0);
            let t = [next_data, next_ack, s.timer()]
                .into_iter()
                .flatten()
                .min()
                .expect("something pending");
            now = t;
            if next_ack == Some(t) {
                let (_, a) = acks.pop_front().unwrap();
                s.on_ack(now, &a, &mut out);
            } else if next_data == Some(t) {
                let (_, h) = data.pop_front().unwrap();
                let a = r.on_data(h.seq, h.len, false, h.ts);
                assert!(a.sack.len() <= blocks);
                acks.push_back((now + d, a));
            } else {
                s.on_timer(now, &mut out);
            }
        }
        panic!("did not finish");
    }

    fn opts(sack: bool) -> TcpOptions {
        TcpOptions {
            sack,
            ..TcpOptions::default()
        }
    }

    fn once(idx: &[u64]) -> Vec<(u64, u32)> {
        idx.iter().map(|&i| (i, 1)).collect()
    }

    #[test]
    fn sack_recovers_a_tail_of_losses_without_a_timeout() {
        let (to, retx, _, _) = transfer(opts(true), 10, 45_000, &once(&[5, 6, 7, 8, 9]));
        assert_eq!((to, retx), (0, 5));
    }

    /// Several holes: SACK resends each once, never times out, and has them
    /// all repaired sooner than NewReno (one hole per round trip). (The
    /// whole transfer is not always faster: `ssthresh` from `pipe` after
    /// heavy loss is smaller than NewReno's.)
    #[test]
    fn several_holes_are_repaired_in_one_recovery() {
        let patterns: [&[u64]; 5] = [
            &[0, 1, 2],
            &[3, 4, 5, 6, 7, 8, 9],
            &[9],
            &[2, 12, 13, 14, 15, 16, 17, 18, 19],
            &[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22],
        ];
        for p in patterns {
            let (to, retx, _, rep) = transfer(opts(true), 10, 65_536, &once(p));
            let (_, _, _, rep_reno) = transfer(opts(false), 10, 65_536, &once(p));
            assert_eq!((to, retx), (0, p.len() as u64), "{p:?}");
            // holes within one window (not [2, 12..19], two episodes)
            if p.len() > 1 && p[p.len() - 1] - p[0] < 15 {
                assert!(rep < rep_reno, "{p:?}: {rep:?} vs NewReno {rep_reno:?}");
            } else {
                assert!(rep <= rep_reno, "{p:?}: {rep:?} vs NewReno {rep_reno:?}");
            }
        }
    }

    /// The fast retransmission is lost too: SACKs of later data reveal it
    /// (lost retransmission detection) and it is resent without a timeout;
    /// NewReno has to wait for the timer.
    #[test]
    fn a_lost_retransmission_is_resent_without_a_timeout() {
        let lose = [(3, 2)];
        let (to, retx, t, _) = transfer(opts(true), 10, 65_536, &lose);
        assert_eq!((to, retx), (0, 2));
        assert!(t < Instant::ZERO + Duration::from_millis(1), "{t:?}");
        let (to, _, _, _) = transfer(opts(false), 10, 65_536, &lose);
        assert_eq!(to, 1);
    }

    /// The third duplicate ACK resends the hole at once, with or without
    /// PRR, although `pipe` (12 sent - 3 SACKed - 1 lost = 8 segments) is
    /// above the new window (5): RFC 6675 step 4.3.
    #[test]
    fn the_fast_retransmit_ignores_the_window() {
        for prr in [true, false] {
            let o = TcpOptions { prr, ..opts(true) };
            let rto = RtoConfig {
                min: Duration::from_millis(5),
                initial: Duration::from_millis(5),
                max: Duration::from_secs(1),
                fixed: false,
            };
            let mut s = ReliableSender::new(NewReno { init_pkts: 10 }, 100_000, 1000, rto, false)
                .with_options(o);
            let mut r = StreamReceiver::new(100_000).with_sack(3);
            let mut out = Vec::new();
            let t = Instant::ZERO;
            s.start(t, &mut out);
            assert_eq!(out.len(), 10);
            out.clear();
            // segment 0 lost; 1, 2, 3 arrive: three duplicate ACKs
            for k in 1..4u64 {
                let a = r.on_data(k * 1000, 1000, false, 1);
                s.on_ack(t, &a, &mut out);
            }
            let resent: Vec<u64> = out.iter().filter(|x| x.retx).map(|x| x.hdr.seq).collect();
            assert_eq!(resent, vec![0], "prr {prr}");
            assert!(s.w.ssthresh <= 5000.0);
        }
    }

    /// The paths for a sender without SACK state (`plain_ack`, and
    /// `sack_send` outside recovery with no duplicate ACK) do what the
    /// general ones do with an empty scoreboard: the same segments, window,
    /// timer and counters, ACK by ACK, over ACKs that advance by any amount
    /// or not at all, marked or not, with the NIC's room and production
    /// limiting now and then.
    #[test]
    fn the_plain_ack_path_matches_the_general_one() {
        let rto = RtoConfig {
            min: Duration::from_micros(100),
            initial: Duration::from_micros(100),
            max: Duration::from_millis(10),
            fixed: false,
        };
        for seed in 1..20u64 {
            let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut next = move |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n
            };
            let total = 300_000;
            let make = || {
                ReliableSender::new(crate::transport::cc::Dctcp::new(4), total, 1000, rto, false)
                    .with_options(TcpOptions::default())
                    .with_produced(20_000)
            };
            let mut plain = make();
            let mut general = make();
            general.sack = Some(Box::default());
            let (mut out_p, mut out_g) = (Vec::new(), Vec::new());
            let mut now = Instant::ZERO;
            plain.start(now, &mut out_p);
            general.start(now, &mut out_g);
            for step in 0..3000 {
                now += Duration::from_nanos(100 + next(2000));
                if next(10) == 0 {
                    let room = next(4) as u32;
                    plain.set_tx_room(room);
                    general.set_tx_room(room);
                }
                if next(7) == 0 {
                    let p = plain.produced() + next(5000);
                    plain.produce(now, p, &mut out_p);
                    general.produce(now, p, &mut out_g);
                }
                // the fast send and the general one, from the same state
                if plain.dupacks == 0 && !plain.in_recovery() {
                    let (mut a, mut b) = (plain.clone(), plain.clone());
                    let (mut oa, mut ob) = (Vec::new(), Vec::new());
                    a.sack_send(now, &mut oa);
                    b.sack_send_by_pipe(now, &mut ob);
                    assert_eq!(oa, ob, "seed {seed} step {step}");
                    assert_eq!((a.snd_nxt, a.max_flight), (b.snd_nxt, b.max_flight));
                    assert_eq!(a.is_cwnd_limited, b.is_cwnd_limited);
                }
                let una = plain.snd_una;
                let span = plain.snd_nxt - una;
                let ack = match next(4) {
                    0 => una,
                    _ => una + next(span + 1).min(3000),
                };
                let h = Hdr {
                    kind: Kind::Ack,
                    ack,
                    ece: next(5) == 0,
                    ts: now.as_nanos().saturating_sub(next(50_000)) + 1,
                    ..Hdr::default()
                };
                plain.on_ack(now, &h, &mut out_p);
                general.on_ack(now, &h, &mut out_g);
                assert!(plain.sack.is_none());
                assert_eq!(out_p, out_g, "seed {seed} step {step}");
                assert_eq!(plain.cwnd(), general.cwnd());
                assert_eq!(plain.timer(), general.timer());
                assert_eq!(plain.stats(), general.stats());
                assert_eq!(
                    (plain.snd_una, plain.snd_nxt),
                    (general.snd_una, general.snd_nxt)
                );
                if plain.finished() {
                    break;
                }
            }
            assert!(plain.snd_una > 0, "seed {seed}: nothing acknowledged");
        }
    }

    /// Without PRR the window drops to ssthresh at once (RFC 6675); both
    /// recover without a timeout.
    #[test]
    fn classic_recovery_also_repairs_the_holes() {
        let o = TcpOptions {
            prr: false,
            ..opts(true)
        };
        let (to, retx, _, _) = transfer(o, 10, 65_536, &once(&[3, 4, 5, 6, 7, 8, 9]));
        assert_eq!((to, retx), (0, 7));
    }
}
