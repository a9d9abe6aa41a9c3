//! Congestion-control policies for [`super::reliable::ReliableSender`].

use super::f64_of;

/// Window state a policy may change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Congestion window, bytes.
    pub cwnd: f64,
    /// Slow-start threshold, bytes.
    pub ssthresh: f64,
    /// Maximum segment size, bytes.
    pub mss: f64,
}

/// What an ACK told the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// The ACK carried ECN echo.
    pub ece: bool,
    /// Cumulative ACK after this ACK.
    pub snd_una: u64,
    /// Next new byte to send.
    pub snd_nxt: u64,
    /// Bytes in flight before this ACK.
    pub flight: u64,
    /// The window may grow: the sender used it lately (congestion window
    /// validation, RFC 7661 / Linux `tcp_is_cwnd_limited`: in slow start
    /// while `cwnd < 2 x` the largest flight of the last window, in
    /// congestion avoidance only if the window, not the application or the
    /// NIC's back-pressure, limited the last window's sending).
    pub cwnd_limited: bool,
}

/// A congestion-control policy: hooks called by the reliable sender.
pub trait CongestionControl {
    /// Initial window, bytes.
    fn initial_cwnd(&self, mss: f64) -> f64;
    /// A new cumulative ACK arrived (not during fast recovery).
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo);
    /// Three duplicate ACKs: a loss detected fast.
    fn on_fast_loss(&mut self, w: &mut Window, flight: u64);
    /// A retransmission timeout.
    fn on_timeout(&mut self, w: &mut Window, flight: u64);
    /// Whether the flow is ECN-capable.
    fn ect(&self) -> bool {
        false
    }
    /// Whether a timeout resends the whole window from the first unacked
    /// byte (go-back-N, TCP without SACK) or only that first segment.
    fn go_back_n(&self) -> bool {
        true
    }
}

fn reno_growth(w: &mut Window, acked: u64, cwnd_limited: bool) {
    if !cwnd_limited {
        return;
    }
    if w.cwnd < w.ssthresh {
        w.cwnd += f64_of(acked);
    } else {
        w.cwnd += w.mss * f64_of(acked) / w.cwnd;
    }
}

fn halve(w: &mut Window, flight: u64) {
    w.ssthresh = (flight as f64 / 2.0).max(2.0 * w.mss);
}

/// NewReno-like loss-based control (RFC 5681 / 6582 window rules).
#[derive(Clone, Debug)]
pub struct NewReno {
    /// Initial window in segments.
    pub init_pkts: u32,
}

impl CongestionControl for NewReno {
    fn initial_cwnd(&self, mss: f64) -> f64 {
        self.init_pkts as f64 * mss
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        reno_growth(w, a.acked, a.cwnd_limited);
    }
    fn on_fast_loss(&mut self, w: &mut Window, flight: u64) {
        halve(w, flight);
        w.cwnd = w.ssthresh;
    }
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        halve(w, flight);
        w.cwnd = w.mss;
    }
}

/// DCTCP (Alizadeh et al. 2010): the window shrinks by `alpha / 2` once per
/// window of data with marks, `alpha` an EWMA (gain `g`) of the fraction of
/// marked bytes. Loss handling as NewReno.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Initial window in segments (`TransportParams::init_cwnd_pkts`).
    pub init_pkts: u32,
    /// EWMA gain g (DCTCP paper: 1/16).
    pub g: f64,
    /// Current alpha.
    pub alpha: f64,
    window_end: u64,
    acked: u64,
    marked: u64,
    cwr_end: u64,
}

impl Dctcp {
    /// DCTCP with initial window `init_pkts`, g = 1/16, alpha starting at 1
    /// (Linux and ns-3 `DctcpAlphaOnInit` default).
    pub fn new(init_pkts: u32) -> Dctcp {
        Dctcp {
            init_pkts,
            g: 1.0 / 16.0,
            alpha: 1.0,
            window_end: 0,
            acked: 0,
            marked: 0,
            cwr_end: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn initial_cwnd(&self, mss: f64) -> f64 {
        self.init_pkts as f64 * mss
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.acked += a.acked;
        if a.ece {
            self.marked += a.acked;
        }
        if a.snd_una >= self.window_end {
            if self.acked > 0 {
                let f = f64_of(self.marked) / f64_of(self.acked);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = a.snd_nxt;
        }
        if a.ece && a.snd_una > self.cwr_end {
            // once per window of data
            w.cwnd = (w.cwnd * (1.0 - self.alpha / 2.0)).max(w.mss);
            w.ssthresh = w.cwnd;
            self.cwr_end = a.snd_nxt;
        } else if a.snd_una > self.cwr_end {
            reno_growth(w, a.acked, a.cwnd_limited);
        }
    }
    fn on_fast_loss(&mut self, w: &mut Window, flight: u64) {
        halve(w, flight);
        w.cwnd = w.ssthresh;
    }
    /// A timeout ends the window reduction in progress and the alpha
    /// window (Linux leaves CWR for the Loss state): the sender goes back to
    /// `snd_una`, so a `cwr_end` or `window_end` at the old `snd_nxt`
    /// would block growth from one segment, and freeze alpha, until
    /// everything sent before the timeout is acknowledged again.
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        halve(w, flight);
        w.cwnd = w.mss;
        self.cwr_end = 0;
        self.window_end = 0;
    }
    fn ect(&self) -> bool {
        true
    }
}

/// pFabric's minimal rate control (Alizadeh et al. 2013, section 4.3):
/// start at line rate with a window of one bandwidth-delay product, keep it
/// on losses (the network's priority dropping does the work), and fall to
/// one segment only after repeated consecutive timeouts.
#[derive(Clone, Debug)]
pub struct PFabricCc {
    /// Window at line rate (one BDP), bytes.
    pub bdp_bytes: f64,
    /// Consecutive timeouts before probe mode.
    pub probe_after: u32,
    consecutive_timeouts: u32,
}

impl PFabricCc {
    /// pFabric with a BDP window; probe mode after 5 consecutive timeouts.
    pub fn new(bdp_bytes: f64) -> PFabricCc {
        PFabricCc {
            bdp_bytes,
            probe_after: 5,
            consecutive_timeouts: 0,
        }
    }
}

impl CongestionControl for PFabricCc {
    fn initial_cwnd(&self, mss: f64) -> f64 {
        self.bdp_bytes.max(mss)
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.consecutive_timeouts = 0;
        if w.cwnd < self.bdp_bytes {
            w.cwnd = (w.cwnd + f64_of(a.acked)).min(self.bdp_bytes);
        }
    }
    fn on_fast_loss(&mut self, _w: &mut Window, _flight: u64) {}
    /// pFabric retransmits selectively (its senders keep SACK state); a
    /// go-back-N burst of low-priority duplicates would sit in the priority
    /// queues ahead of the flow's own new packets.
    fn go_back_n(&self) -> bool {
        false
    }
    fn on_timeout(&mut self, w: &mut Window, _flight: u64) {
        self.consecutive_timeouts += 1;
        if self.consecutive_timeouts >= self.probe_after {
            w.cwnd = w.mss;
        }
    }
}
