//! The delivery window: an optional cap on packets in flight, from the
//! delivery rate measured over recent epochs times the lowest RTT seen
//! (`Config::window_gain`).
//!
//! Seed 000's rate control reacts to loss against a target loss rate; for
//! traffic that is never resent and whose loss nobody tolerates — SAP's
//! approximate datagrams (seed 002) — every congestion loss is data gone
//! for good, and a group with MSR 0 gives eq. 1 a TLR near 1, so the rate
//! never falls. The window stops the overflow before it happens instead:
//! with at most `gain x delivery rate x min RTT` packets in flight, a
//! window-limited sender keeps at most `(gain - 1)` bandwidth-delay
//! products queued at its bottleneck, whatever its pacing rate. It grows
//! by up to `gain` per epoch while the queue stays below one min RTT
//! (`delivered per epoch / epoch length x min RTT` rises), as BBR's
//! in-flight cap does (Cardwell et al., "BBR", ACM Queue 2016: cwnd =
//! cwnd_gain x BtlBw x RTprop with cwnd_gain 2). Corruption losses do not
//! move it: only deliveries do.

use crate::time::{Duration, Instant};

/// Epochs over which the highest delivery rate is kept (BBR keeps ~10
/// round trips).
const RATE_EPOCHS: usize = 10;

/// Packets allowed in flight before the first estimate and never fewer
/// (TCP's initial window, RFC 6928).
pub(crate) const MIN_WINDOW: u64 = 10;

/// The delivery-rate and min-RTT estimates and the cap they give.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeliveryWindow {
    min_rtt: Option<Duration>,
    /// Packets per second delivered in each of the last epochs (ring).
    rates: [f64; RATE_EPOCHS],
    next: usize,
    /// The same for the last epochs that delivered anything (for
    /// `full_cap_rtt`: a sparse sender's or a silent path's empty epochs
    /// must not stretch the drain time without bound).
    busy_rates: [f64; RATE_EPOCHS],
    busy_next: usize,
    /// The largest of `rates` and of `busy_rates`, kept up to date by
    /// `on_epoch`: `cap` is asked several times per packet (every
    /// `window_open`), the rates change once per epoch.
    best: f64,
    busy_best: f64,
}

impl DeliveryWindow {
    /// An RTT sample.
    pub(crate) fn on_rtt(&mut self, sample: Duration) {
        if sample.as_nanos() > 0 {
            self.min_rtt = Some(self.min_rtt.map_or(sample, |m| m.min(sample)));
        }
    }

    /// An epoch from `start` to `now` in which `acked` packets were
    /// acknowledged.
    pub(crate) fn on_epoch(&mut self, acked: u64, start: Instant, now: Instant) {
        let len = now.saturating_since(start).as_secs_f64();
        if len <= 0.0 {
            return;
        }
        let rate = acked as f64 / len;
        self.best = Self::replace_max(&mut self.rates, &mut self.next, self.best, rate);
        if acked > 0 {
            self.busy_best = Self::replace_max(
                &mut self.busy_rates,
                &mut self.busy_next,
                self.busy_best,
                rate,
            );
        }
    }

    /// `rate` written over the oldest entry of `ring` (at `*next`, which
    /// moves on); returns the ring's new largest entry given `best`, its
    /// largest before. The rates are finite and never negative (packets
    /// over a positive length), so `max` is exact and the largest entry
    /// changes only when `rate` tops it or the overwritten entry was it:
    /// only then is the ring scanned, as it was at every epoch (an idle
    /// epoch writes 0 over, mostly, something smaller than the best).
    #[inline(always)]
    fn replace_max(ring: &mut [f64; RATE_EPOCHS], next: &mut usize, best: f64, rate: f64) -> f64 {
        let old = std::mem::replace(&mut ring[*next], rate);
        *next = (*next + 1) % RATE_EPOCHS;
        if rate >= best {
            rate
        } else if old < best {
            best
        } else {
            ring.iter().copied().fold(0.0, f64::max)
        }
    }

    /// Packets allowed in flight at `gain`.
    pub(crate) fn cap(&self, gain: f64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return MIN_WINDOW;
        };
        let bdp = self.best * rtt.as_secs_f64();
        // `as` saturates: a huge estimate is a huge cap, never a wrap.
        ((gain * bdp).ceil() as u64).max(MIN_WINDOW)
    }

    /// The round trip the last packet of a full cap at `gain` may take
    /// when the sender alone queues at the bottleneck: the lowest RTT plus
    /// the time the best delivery rate of the last epochs that delivered
    /// anything takes to drain the cap. `None` before both are measured.
    pub(crate) fn full_cap_rtt(&self, gain: f64) -> Option<Duration> {
        let rtt = self.min_rtt?;
        let best = self.busy_best;
        if best <= 0.0 {
            return None;
        }
        // `as` saturates: a tiny rate is a very long drain, never a wrap.
        let drain = (self.cap(gain) as f64 / best * 1e9) as u64;
        Some(rtt + Duration::from_nanos(drain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    #[test]
    fn the_cap_is_gain_times_the_best_recent_rate_times_the_min_rtt() {
        let mut w = DeliveryWindow::default();
        assert_eq!(w.cap(2.0), MIN_WINDOW, "no estimate yet");
        w.on_rtt(Duration::from_millis(4));
        w.on_rtt(Duration::from_millis(2));
        w.on_rtt(Duration::from_millis(9));
        // 50 packets in 5 ms = 10,000 packets/s; BDP = 10,000 x 2 ms = 20.
        w.on_epoch(50, ms(0), ms(5));
        assert_eq!(w.cap(2.0), 40);
        // A slower epoch does not lower the cap while the fast one is recent.
        w.on_epoch(5, ms(5), ms(10));
        assert_eq!(w.cap(2.0), 40);
        for i in 0..RATE_EPOCHS as u64 {
            w.on_epoch(25, ms(10 + 5 * i), ms(15 + 5 * i));
        }
        assert_eq!(
            w.cap(2.0),
            20,
            "the fast epoch aged out: 5,000/s x 2 ms x 2"
        );
        assert_eq!(w.cap(1.0), MIN_WINDOW, "never below the initial window");
        // 20 packets drain in 4 ms at 5,000/s, after the 2 ms min RTT.
        assert_eq!(w.full_cap_rtt(2.0), Some(Duration::from_millis(6)));
        // Empty epochs lower the cap but do not stretch the drain time.
        for i in 0..RATE_EPOCHS as u64 {
            w.on_epoch(0, ms(100 + 5 * i), ms(105 + 5 * i));
        }
        assert_eq!(w.cap(2.0), MIN_WINDOW);
        assert_eq!(w.full_cap_rtt(2.0), Some(Duration::from_millis(4)));
    }

    /// The largest rates kept by `replace_max` are the rings' maxima, as
    /// the scan at every epoch had them, over epochs that tie, top, age
    /// out the best and deliver nothing.
    #[test]
    fn the_kept_best_rates_are_the_rings_maxima() {
        let mut rng = crate::rng::Rng::new(19);
        let mut w = DeliveryWindow::default();
        let mut t = 0;
        for _ in 0..20_000 {
            // Few distinct values, many ties and empty epochs.
            let acked = [0, 0, 0, 1, 3, 3, 7, 40][rng.below(8) as usize];
            let len = 1 + rng.below(3);
            w.on_epoch(acked, ms(t), ms(t + len));
            t += len;
            let scan = |r: &[f64; RATE_EPOCHS]| r.iter().copied().fold(0.0, f64::max);
            assert_eq!(w.best.to_bits(), scan(&w.rates).to_bits());
            assert_eq!(w.busy_best.to_bits(), scan(&w.busy_rates).to_bits());
        }
    }

    #[test]
    fn an_empty_epoch_or_a_zero_sample_changes_nothing() {
        let mut w = DeliveryWindow::default();
        w.on_rtt(Duration::ZERO);
        assert_eq!(w.cap(2.0), MIN_WINDOW);
        w.on_rtt(Duration::from_millis(1));
        w.on_epoch(100, ms(3), ms(3));
        assert_eq!(w.cap(2.0), MIN_WINDOW);
        assert_eq!(w.full_cap_rtt(2.0), None, "no delivery rate yet");
    }
}
