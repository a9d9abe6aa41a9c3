//! Round-trip estimation and the retransmission timeout (RFC 6298) of the
//! reliable sender.

use approxnet_proto::time::Duration;

/// Retransmission-timer policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoConfig {
    /// Lower bound on the RTO.
    pub min: Duration,
    /// RTO before the first RTT sample.
    pub initial: Duration,
    /// Upper bound after back-off.
    pub max: Duration,
    /// Use `initial` always (pFabric's fixed, small timeout) instead of
    /// RFC 6298 estimation and back-off.
    pub fixed: bool,
}

#[cfg(test)]
impl RtoConfig {
    /// The transports' unit tests' timer: 100 us, backing off to 10 ms.
    pub(crate) fn for_tests() -> RtoConfig {
        RtoConfig {
            min: Duration::from_micros(100),
            initial: Duration::from_micros(100),
            max: Duration::from_millis(10),
            fixed: false,
        }
    }
}

/// RFC 6298 smoothed RTT, variation and RTO, with exponential back-off.
///
/// A sample recomputes the RTO from the estimate, which also undoes any
/// back-off (RFC 6298 section 5.7; Linux resets `icsk_backoff` on a valid
/// sample). With timestamps every new ACK is a sample, so a backed-off
/// timer returns to the estimate on the first ACK after a timeout.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RtoConfig,
    srtt: Option<f64>,
    rttvar: f64,
    rto: Duration,
}

impl RttEstimator {
    /// No sample yet: the RTO is `cfg.initial`.
    pub fn new(cfg: RtoConfig) -> Self {
        RttEstimator {
            cfg,
            srtt: None,
            rttvar: 0.0,
            rto: cfg.initial,
        }
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// The smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(|s| Duration::from_nanos(s as u64))
    }

    /// An RTT sample of `r`.
    #[inline(always)]
    pub fn sample(&mut self, r: Duration) {
        let r = super::f64_of(r.as_nanos());
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        if !self.cfg.fixed {
            let est = self.srtt.unwrap_or(r) + 4.0 * self.rttvar;
            // `est >= 0`: the signed conversion (cheaper) is `est as u64`
            // below 2^63 ns, and saturates above, where the clamp is `max`
            debug_assert!(est >= 0.0);
            let ns = (est as i64 as u64).clamp(self.cfg.min.as_nanos(), self.cfg.max.as_nanos());
            self.rto = Duration::from_nanos(ns);
        }
    }

    /// The timer expired: double the RTO (up to the maximum).
    pub fn back_off(&mut self) {
        if !self.cfg.fixed {
            let ns = self
                .rto
                .as_nanos()
                .saturating_mul(2)
                .min(self.cfg.max.as_nanos());
            self.rto = Duration::from_nanos(ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_after_back_off_returns_to_the_estimate() {
        let mut e = RttEstimator::new(RtoConfig {
            min: Duration::from_millis(5),
            initial: Duration::from_millis(5),
            max: Duration::from_secs(1),
            fixed: false,
        });
        e.sample(Duration::from_micros(40));
        assert_eq!(e.rto(), Duration::from_millis(5));
        for _ in 0..4 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_millis(80));
        e.sample(Duration::from_micros(40));
        assert_eq!(e.rto(), Duration::from_millis(5));
    }
}
