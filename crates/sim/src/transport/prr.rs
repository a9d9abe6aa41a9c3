//! Proportional rate reduction (RFC 6937): how much a SACK sender may send
//! per ACK during fast recovery, so that the window comes down to
//! `ssthresh` smoothly over one round trip instead of in one step (and the
//! sender does not fall silent until half the flight has drained). ns-3
//! 3.44's default recovery (`TcpPrrRecovery`) and Linux's since 3.2.

/// PRR state of one recovery episode (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// Bytes the receiver got during recovery (cumulatively or SACKed).
    delivered: u64,
    /// Bytes sent during recovery.
    out: u64,
    /// Flight when recovery began (RecoverFS).
    recover_fs: u64,
}

impl Prr {
    /// Recovery begins with `flight` bytes outstanding.
    pub fn new(flight: u64) -> Prr {
        Prr {
            delivered: 0,
            out: 0,
            recover_fs: flight.max(1),
        }
    }

    /// An ACK during recovery reported `delivered` new bytes; returns the
    /// window for the sends that follow: `pipe + sndcnt` (RFC 6937 section
    /// 3, with the slow-start reduction bound once `pipe <= ssthresh`).
    /// The first call always allows one segment (the fast retransmit).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: f64, mss: u64) -> f64 {
        self.delivered += delivered;
        let ss = ssthresh.max(0.0).floor() as u64;
        let sndcnt = if pipe > ss {
            // proportional: ceil(prr_delivered x ssthresh / RecoverFS) - prr_out
            let target = (self.delivered as u128 * ss as u128).div_ceil(self.recover_fs as u128);
            (target as u64).saturating_sub(self.out)
        } else {
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ss - pipe).min(limit)
        };
        let sndcnt = if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        (pipe + sndcnt) as f64
    }

    /// `len` bytes were sent during recovery.
    pub fn sent(&mut self, len: u64) {
        self.out += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    /// 20 segments outstanding, ssthresh 10: one segment goes out for
    /// every two delivered while pipe is above ssthresh.
    #[test]
    fn sends_half_as_much_as_is_delivered_while_above_ssthresh() {
        let mut p = Prr::new(20 * M);
        let mut pipe = 19 * M; // one segment lost
        let mut sent = 0;
        // the first ACK: the fast retransmit is forced
        let cwnd = p.on_ack(M, pipe, 10.0 * M as f64, M);
        assert_eq!(cwnd, (pipe + M) as f64);
        p.sent(M);
        sent += M;
        for _ in 0..9 {
            pipe -= M;
            let cwnd = p.on_ack(M, pipe, 10.0 * M as f64, M) as u64;
            let can = cwnd.saturating_sub(pipe) / M * M;
            p.sent(can);
            pipe += can;
            sent += can;
        }
        // 10 segments delivered, 5 sent
        assert_eq!(sent, 5 * M);
    }

    /// Below ssthresh (heavy loss) PRR-SSRB grows the flight back towards
    /// ssthresh by at most one segment more than was delivered.
    #[test]
    fn slow_start_reduction_bound_below_ssthresh() {
        let mut p = Prr::new(20 * M);
        p.on_ack(M, 2 * M, 10.0 * M as f64, M);
        p.sent(M);
        let cwnd = p.on_ack(M, 3 * M, 10.0 * M as f64, M) as u64;
        // delivered 2, out 1: limit = max(1, 1) + 1 = 2 segments
        assert_eq!(cwnd - 3 * M, 2 * M);
        // never past ssthresh
        let cwnd = p.on_ack(50 * M, 9 * M, 10.0 * M as f64, M) as u64;
        assert_eq!(cwnd, 10 * M);
    }
}
