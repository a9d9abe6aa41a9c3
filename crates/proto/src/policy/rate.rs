//! Rate controllers: how the sending rate reacts, once per epoch, to the
//! measured loss `rho` and the current TLR.

use crate::units::Rate;

/// What a rate controller sees at the end of an epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateInput {
    /// Measured loss of the epoch, `rho = 1 - acked / sent` over the packets
    /// whose fate became known during the epoch (seed 000 §4.2, footnote 3).
    pub rho: f64,
    /// The connection's current target loss rate.
    pub tlr: f64,
    /// Highest rate: the NIC line rate (`Rmax`).
    pub max: Rate,
    /// Lowest rate: one packet per RTT (`Rmin`).
    pub min: Rate,
    /// Fraction of the epoch's acknowledged packets that carried an ECN
    /// mark (0 where queues drop instead of marking).
    pub marked: f64,
    /// The sender has caught up with a streaming job's production, which
    /// is not over (`Config::production_aware_rate`).
    pub production_limited: bool,
}

/// Decides the next epoch's sending rate.
pub trait RateController: Send {
    /// The rate to use at the start.
    fn initial(&self, max: Rate) -> Rate;
    /// The rate for epoch `i + 1` given rate `current` in epoch `i`.
    fn next(&mut self, current: Rate, input: &RateInput) -> Rate;
}

/// ATP Base: always send at line rate (raw UDP behaviour).
#[derive(Clone, Copy, Debug, Default)]
pub struct LineRate;

impl RateController for LineRate {
    fn initial(&self, max: Rate) -> Rate {
        max
    }
    fn next(&mut self, _current: Rate, input: &RateInput) -> Rate {
        input.max
    }
}

/// Slack-based rate control, seed 000 §4.2 (and, while a streaming job is
/// production-limited, a target loss of 0 with one packet per RTT of
/// additive increase: `Config::production_aware_rate`):
/// if `rho < TLR`: `R = (1 - m) R + m Rmax` (eq. 2); else `R = R (1 - rho / 2)`
/// (eq. 3); never below `Rmin` (one packet per RTT).
///
/// Two additions, both documented in `docs/ARCHITECTURE.md`:
/// * an epoch with no loss at all (`rho = 0`) also counts as below target.
///   Read literally, eq. 2 never fires for a TLR of 0 (MSR = 1 traffic), so
///   a reliable flow that slowed down once could never speed up again;
/// * ECN marks, where a queue marks instead of dropping (seed 000 gives the
///   non-approximate queue DCTCP marking at K = 65), are answered as DCTCP
///   answers them, which ATP says it enhances: `alpha <- (1 - g) alpha + g F`
///   with `g = 1/16`, and an epoch with marks but loss within target moves
///   `R <- R (1 - alpha / 2) + Rmin` (multiplicative cut, one packet per RTT
///   of additive increase) instead of jumping toward `Rmax`. `alpha` starts
///   at 1, as Linux's DCTCP starts it (`dctcp_alpha_on_init` =
///   `DCTCP_MAX_ALPHA`): the first marked epoch halves the rate. Started
///   at 0, the first cuts were 1/32, 1/16, ... of the rate, and a sender at
///   line rate into a marking queue filled the switch's shared buffer
///   before it slowed (FBHD MSR 1: p99 queue 1.46 MB with alpha_0 = 0,
///   0.39 MB with alpha_0 = 1).
#[derive(Clone, Copy, Debug)]
pub struct SlackRate {
    /// Gain `m` of eq. 2 (seed 000 gives no value; default 0.125).
    pub gain: f64,
    /// Starting rate as a fraction of `Rmax` (default 1: start at line rate).
    pub start_fraction: f64,
    /// DCTCP's running estimate of the marked fraction.
    alpha: f64,
}

/// DCTCP's EWMA gain `g` (Alizadeh et al. 2010), used for ECN marks.
const DCTCP_G: f64 = 1.0 / 16.0;

impl SlackRate {
    /// A controller with gain `m` that starts at `start_fraction` of `Rmax`.
    pub fn new(gain: f64, start_fraction: f64) -> SlackRate {
        SlackRate {
            gain,
            start_fraction,
            alpha: 1.0,
        }
    }
}

impl Default for SlackRate {
    fn default() -> Self {
        SlackRate::new(0.125, 1.0)
    }
}

impl RateController for SlackRate {
    fn initial(&self, max: Rate) -> Rate {
        Rate::bps(max.as_bps() * self.start_fraction)
    }
    fn next(&mut self, current: Rate, i: &RateInput) -> Rate {
        let r = current.as_bps();
        self.alpha = (1.0 - DCTCP_G) * self.alpha + DCTCP_G * i.marked.clamp(0.0, 1.0);
        // Production-limited, a lost message costs the job a later
        // message's production time and sending faster buys nothing: the
        // target loss is 0 and the rate grows by one packet per RTT, as a
        // reliable transport's congestion avoidance does, instead of
        // eq. 2's jump toward Rmax.
        let below_target = i.rho == 0.0 || (!i.production_limited && i.rho < i.tlr);
        let next = if !below_target {
            r * (1.0 - i.rho / 2.0)
        } else if i.marked > 0.0 {
            r * (1.0 - self.alpha / 2.0) + i.min.as_bps()
        } else if i.production_limited {
            r + i.min.as_bps()
        } else {
            (1.0 - self.gain) * r + self.gain * i.max.as_bps()
        };
        // Never below Rmin, never above Rmax (Rmax wins if a tiny RTT
        // makes Rmin exceed it: it is applied last).
        Rate::bps(next.max(i.min.as_bps()).min(i.max.as_bps()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq2_eq3_hand_computed_trace() {
        let mut c = SlackRate::new(0.125, 0.5);
        let max = Rate::gbps(40.0);
        let min = Rate::gbps(0.1);
        let mut r = c.initial(max);
        assert_eq!(r.as_bps(), 20e9);
        let inp = |rho, tlr| RateInput {
            rho,
            tlr,
            max,
            min,
            marked: 0.0,
            production_limited: false,
        };
        // rho 0.1 < TLR 0.25: 0.875 * 20 + 0.125 * 40 = 22.5 Gbps
        r = c.next(r, &inp(0.1, 0.25));
        assert!((r.as_bps() - 22.5e9).abs() < 1.0);
        // rho 0.4 >= TLR 0.25: 22.5 * (1 - 0.2) = 18 Gbps
        r = c.next(r, &inp(0.4, 0.25));
        assert!((r.as_bps() - 18e9).abs() < 1.0);
        // rho = TLR is not below it: 18 * (1 - 0.125) = 15.75 Gbps
        r = c.next(r, &inp(0.25, 0.25));
        assert!((r.as_bps() - 15.75e9).abs() < 1.0);
        // total loss many times: floored at Rmin
        for _ in 0..100 {
            r = c.next(r, &inp(1.0, 0.0));
        }
        assert_eq!(r.as_bps(), min.as_bps());
        // a loss-free epoch increases even with TLR 0
        r = c.next(r, &inp(0.0, 0.0));
        assert!(r.as_bps() > min.as_bps());
    }

    #[test]
    fn ecn_marks_cut_like_dctcp_and_add_one_packet_per_rtt() {
        let mut c = SlackRate::new(0.125, 1.0);
        let (max, min) = (Rate::gbps(40.0), Rate::gbps(1.0));
        let inp = |marked| RateInput {
            rho: 0.0,
            tlr: 0.0,
            max,
            min,
            marked,
            production_limited: false,
        };
        // alpha starts at 1 (Linux DCTCP) and stays 1 after a fully marked
        // epoch: 40 * (1 - 1/2) + 1 = 21 Gbps
        let r = c.next(max, &inp(1.0));
        assert!((r.as_bps() - 21e9).abs() < 1.0);
        // unmarked epochs decay alpha by 15/16 each (no cut without marks)
        let mut d = SlackRate::new(0.125, 1.0);
        let _ = d.next(max, &inp(0.0));
        let r2 = d.next(max, &inp(0.25)); // alpha = 15/16 * 15/16 + 1/16 * 1/4
        let alpha = 225.0 / 256.0 + 1.0 / 64.0;
        assert!(
            (r2.as_bps() - (40e9 * (1.0 - alpha / 2.0) + 1e9)).abs() < 1.0,
            "{r2}"
        );
        // marks keep coming: the rate settles, it does not collapse to Rmin
        let mut r = r;
        for _ in 0..200 {
            r = c.next(r, &inp(0.5));
        }
        assert!(r.as_bps() > 3.0 * min.as_bps(), "{r}");
    }

    #[test]
    fn production_limited_targets_no_loss_and_adds_one_packet_per_rtt() {
        let mut c = SlackRate::new(0.125, 1.0);
        let (max, min) = (Rate::gbps(1.0), Rate::mbps(10.0));
        let inp = |rho, production_limited| RateInput {
            rho,
            tlr: 0.75,
            max,
            min,
            marked: 0.0,
            production_limited,
        };
        // loss within the TLR: eq. 2 when the network limits the job ...
        let r = c.next(Rate::mbps(800.0), &inp(0.2, false));
        assert!((r.as_bps() - (0.875 * 800e6 + 0.125 * 1e9)).abs() < 1.0);
        // ... eq. 3 when its production does: 800 * (1 - 0.1) = 720 Mbps
        let r = c.next(Rate::mbps(800.0), &inp(0.2, true));
        assert!((r.as_bps() - 720e6).abs() < 1.0, "{r}");
        // a loss-free production-limited epoch adds Rmin, not eq. 2's step
        let r = c.next(Rate::mbps(720.0), &inp(0.0, true));
        assert!((r.as_bps() - 730e6).abs() < 1.0, "{r}");
    }

    #[test]
    fn line_rate_ignores_loss() {
        let max = Rate::gbps(10.0);
        let i = RateInput {
            rho: 0.9,
            tlr: 0.0,
            max,
            min: Rate::mbps(1.0),
            marked: 0.0,
            production_limited: false,
        };
        assert_eq!(LineRate.next(Rate::gbps(1.0), &i), max);
    }
}
