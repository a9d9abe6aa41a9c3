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

/// Slack-based rate control, seed 000 §4.2:
/// if `rho < TLR`: `R = (1 - m) R + m Rmax` (eq. 2); else `R = R (1 - rho / 2)`
/// (eq. 3); never below `Rmin` (one packet per RTT).
///
/// One deviation: an epoch with no loss at all (`rho = 0`) also increases.
/// Read literally, eq. 2 never fires for a TLR of 0 (MSR = 1 traffic), so a
/// reliable flow that slowed down once could never speed up again.
#[derive(Clone, Copy, Debug)]
pub struct SlackRate {
    /// Gain `m` of eq. 2 (seed 000 gives no value; default 0.125).
    pub gain: f64,
    /// Starting rate as a fraction of `Rmax` (default 1: start at line rate).
    pub start_fraction: f64,
}

impl Default for SlackRate {
    fn default() -> Self {
        SlackRate {
            gain: 0.125,
            start_fraction: 1.0,
        }
    }
}

impl RateController for SlackRate {
    fn initial(&self, max: Rate) -> Rate {
        Rate::bps(max.as_bps() * self.start_fraction)
    }
    fn next(&mut self, current: Rate, i: &RateInput) -> Rate {
        let r = current.as_bps();
        let next = if i.rho < i.tlr || i.rho == 0.0 {
            (1.0 - self.gain) * r + self.gain * i.max.as_bps()
        } else {
            r * (1.0 - i.rho / 2.0)
        };
        // Never below Rmin, never above Rmax (Rmin wins if a tiny RTT
        // makes it exceed Rmax: max is applied last).
        Rate::bps(next.max(i.min.as_bps()).min(i.max.as_bps()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq2_eq3_hand_computed_trace() {
        let mut c = SlackRate {
            gain: 0.125,
            start_fraction: 0.5,
        };
        let max = Rate::gbps(40.0);
        let min = Rate::gbps(0.1);
        let mut r = c.initial(max);
        assert_eq!(r.as_bps(), 20e9);
        let inp = |rho, tlr| RateInput { rho, tlr, max, min };
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
    fn line_rate_ignores_loss() {
        let max = Rate::gbps(10.0);
        let i = RateInput {
            rho: 0.9,
            tlr: 0.0,
            max,
            min: Rate::mbps(1.0),
        };
        assert_eq!(LineRate.next(Rate::gbps(1.0), &i), max);
    }
}
