//! The end of an epoch: eq. 1's TLR per group, eq. 2-3's rate through the
//! rate controller, the queue for the next epoch, and the record of
//! loss-driven rate cuts with their Eifel-style undo.

use super::Connection;
use crate::config::Config;
use crate::event::{EpochStats, Event};
use crate::policy::RateInput;
use crate::time::Instant;
use crate::timer::Timer;
use crate::units::Rate;

/// Rate cuts remembered for undo.
const MAX_CUTS: usize = 8;

/// One epoch's loss-driven rate cut (eq. 3), kept so that it can be undone
/// when enough of the losses behind it prove spurious (late ACKs) — the
/// Eifel idea (RFC 3522) applied to ATP's rate instead of TCP's window.
#[derive(Clone, Copy, Debug)]
pub(super) struct RateCut {
    epoch: u64,
    before: Rate,
    lost: u64,
    resolved: u64,
    tlr: f64,
    spurious: u64,
}

impl Connection {
    /// `Rmin`: one packet per RTT (seed 000 §4.2), never above line rate.
    fn rate_min(&self, cfg: &Config) -> Rate {
        let r = Rate::from_bytes_per(cfg.mtu, self.rtt(cfg));
        Rate::bps(r.as_bps().min(cfg.line_rate.as_bps()))
    }

    /// End of epoch `i`: eq. 1 for every group, eq. 2-3 for the rate, and
    /// the queue for the next epoch (seed 000 §4.2, §5.2).
    pub(super) fn end_epoch(&mut self, now: Instant, cfg: &Config) {
        let count = std::mem::take(&mut self.send.epoch);
        self.window.on_epoch(count.acked, self.epoch_start, now);
        let resolved = count.acked + count.lost;
        let rho = if resolved > 0 {
            count.lost as f64 / resolved as f64
        } else {
            f64::NAN
        };
        let marked = if count.acked > 0 {
            count.marked as f64 / count.acked as f64
        } else {
            0.0
        };
        // Connection TLR: eq. 1 over all active groups, weighted by the
        // messages each still has to deliver (exactly eq. 1 for one group).
        let (mut num, mut den) = (0.0, 0.0);
        let mut queue = None;
        for j in self.send.jobs.iter_mut().filter(|j| !j.done) {
            for g in j.groups.iter_mut().filter(|g| g.unresolved() > 0) {
                g.derive_tlr(&self.pol, cfg.queues);
                let w = (g.messages - g.delivered) as f64;
                num += g.tlr * w;
                den += w;
                if !g.reliable() && queue.is_none() {
                    queue = Some(g.queue);
                }
            }
        }
        let active = den > 0.0;
        if !self.send.producing() {
            self.send.production_limited = false;
        }
        let tlr = if active { num / den } else { 0.0 };
        if active && !rho.is_nan() {
            // Production-limited: loss costs production time, so the rate
            // aims at none (`Config::production_aware_rate`).
            let limited = cfg.production_aware_rate && self.send.production_limited;
            let target = if limited { 0.0 } else { tlr };
            let input = RateInput {
                rho,
                tlr,
                production_limited: limited,
                max: cfg.line_rate,
                min: self.rate_min(cfg),
                marked,
            };
            let before = self.rate;
            self.rate = self.pol.rate.next(self.rate, &input);
            if count.lost > 0 && self.rate < before {
                if self.cuts.len() >= MAX_CUTS {
                    self.cuts.pop_front();
                }
                self.cuts.push_back(RateCut {
                    epoch: self.epoch,
                    before,
                    lost: count.lost,
                    resolved,
                    tlr: target,
                    spurious: 0,
                });
            }
        }
        if active && cfg.epoch_events {
            self.events.push_back(Event::Epoch(EpochStats {
                epoch: self.epoch,
                tlr,
                rho: if rho.is_nan() { 0.0 } else { rho },
                resolved,
                rate: self.rate,
                queue: queue.unwrap_or(0),
                length: self.rtt(cfg),
            }));
        }
        self.epoch += 1;
        self.send.epoch_id = self.epoch;
        // The number DATA carries moves on only past an epoch in which DATA
        // left (issue 19). Seed 000 §4.2 fn. 2 makes an epoch one RTT and
        // measures rho over the packets sent in it; it numbers none on the
        // wire: the number is ours, for the receiver's stale-packet check
        // alone (`RecvSide::epoch_ok`; ACKs' echoes of it are not read, the
        // sender's loss records keep `self.epoch`). An open job ends an
        // epoch every smoothed RTT even while idle, and counted over those
        // the 16-bit number of its next DATA had wrapped past the
        // receiver's window after 2^15 of them (~2.3 s at a 70 us RTT):
        // every packet was dropped `StaleEpoch` and the job failed. The
        // check loses nothing: an epoch without DATA left no packet that
        // could come back late, and between two DATA packets the sender
        // emits the number grows by at most one, so a packet from an
        // earlier epoch still reads as behind and is stale after
        // `STALE_EPOCHS` epochs with traffic, as before; the receiver's
        // check is unchanged and still takes no packet it did not expect.
        // On a connection whose every epoch sent DATA (any busy one) the
        // number is `self.epoch as u16`, as it was.
        if std::mem::take(&mut self.epoch_sent) {
            self.wire_epoch = self.wire_epoch.wrapping_add(1);
        }
        self.epoch_start = now;
        if active || self.send.in_flight > 0 {
            self.timers.set(Timer::Epoch, now + self.rtt(cfg));
        } else {
            self.timers.stop(Timer::Epoch);
        }
    }

    /// Restores the rate from before a cut once the losses behind it, less
    /// those that proved spurious, no longer reach the TLR that triggered it.
    pub(super) fn undo_spurious_cuts(&mut self) {
        if self.send.spurious_epochs.is_empty() {
            return;
        }
        for e in std::mem::take(&mut self.send.spurious_epochs) {
            let Some(i) = self.cuts.iter().position(|c| c.epoch == e) else {
                continue;
            };
            let c = &mut self.cuts[i];
            c.spurious += 1;
            let real = c.lost.saturating_sub(c.spurious);
            let rho = real as f64 / c.resolved.max(1) as f64;
            if real == 0 || rho < c.tlr {
                self.rate = Rate::bps(self.rate.as_bps().max(c.before.as_bps()));
                self.cuts.remove(i);
            }
        }
    }
}
