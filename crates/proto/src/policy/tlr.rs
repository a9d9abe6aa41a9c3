//! Target loss rate (TLR) sources.

/// What a TLR source needs to know about one group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupProgress {
    /// Minimal sampling rate of the group.
    pub msr: f64,
    /// Messages in the group, `N`.
    pub messages: u32,
    /// Messages delivered whole so far.
    pub delivered: u32,
    /// Messages given up on (lost) so far.
    pub lost: u32,
}

/// Computes a group's target loss rate at the end of each epoch.
pub trait TlrSource: Send {
    /// The TLR for the next epoch, in `[0, 1]`.
    fn tlr(&self, g: &GroupProgress) -> f64;
}

/// ATP FixTLR (seed 000 §4.1): TLR stays at `1 - MSR`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedTlr;

impl TlrSource for FixedTlr {
    fn tlr(&self, g: &GroupProgress) -> f64 {
        (1.0 - g.msr).clamp(0.0, 1.0)
    }
}

/// Dynamic TLR, seed 000 §4.2 eq. 1:
/// `TLR_{i+1} = ((1 - MSR) N - lost) / (N - delivered)`; `TLR_0 = 1 - MSR`.
///
/// When nothing remains to deliver the group no longer constrains the rate
/// and the TLR is 1; values above 1 (more slack than messages left) are
/// capped at 1, negative ones at 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct DynamicTlr;

impl TlrSource for DynamicTlr {
    fn tlr(&self, g: &GroupProgress) -> f64 {
        let remaining = g.messages.saturating_sub(g.delivered) as f64;
        if remaining <= 0.0 {
            return 1.0;
        }
        let slack = (1.0 - g.msr) * g.messages as f64 - g.lost as f64;
        (slack / remaining).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(msr: f64, n: u32, delivered: u32, lost: u32) -> GroupProgress {
        GroupProgress {
            msr,
            messages: n,
            delivered,
            lost,
        }
    }

    #[test]
    fn eq1_hand_computed_trace() {
        // N = 100, MSR = 0.75: 25 messages may be lost.
        let t = DynamicTlr;
        assert!((t.tlr(&g(0.75, 100, 0, 0)) - 0.25).abs() < 1e-12); // TLR_0 = 1 - MSR
                                                                    // epoch 1: 40 delivered, 10 lost -> (25 - 10) / (100 - 40) = 0.25
        assert!((t.tlr(&g(0.75, 100, 40, 10)) - 0.25).abs() < 1e-12);
        // epoch 2: 50 delivered, 20 lost -> 5 / 50 = 0.1
        assert!((t.tlr(&g(0.75, 100, 50, 20)) - 0.1).abs() < 1e-12);
        // epoch 3: 70 delivered, 25 lost -> 0 / 30 = 0 (no slack left)
        assert_eq!(t.tlr(&g(0.75, 100, 70, 25)), 0.0);
        // a lucky group: 95 delivered, 0 lost -> 25 / 5 = 5, capped at 1
        assert_eq!(t.tlr(&g(0.75, 100, 95, 0)), 1.0);
        assert_eq!(FixedTlr.tlr(&g(0.75, 100, 70, 25)), 0.25);
    }
}
