//! The batched calls: a batch of received datagrams in one call, a burst
//! of datagrams to send in one call. They do what the single-datagram
//! calls do one after another at the same `now` — the same datagrams,
//! byte for byte, the same events in the same order, the same timers —
//! but derive a connection's timers and ready-queue entry once per run of
//! its datagrams instead of once per datagram (the per-call work that
//! made up most of what the endpoint spends beyond parsing, bookkeeping
//! and writing; docs/performance.md, "Sixth pass").

use super::{Endpoint, Transmit};
use crate::time::Instant;
use std::net::SocketAddr;
use thiserror::Error;

/// Why [`Endpoint::poll_transmits`] wrote nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BurstError {
    /// Each datagram gets `stride` bytes of the buffer, and a DATA packet
    /// needs `Config::mtu` of them.
    #[error("stride {stride} is below the MTU {mtu}: a DATA packet would not fit")]
    StrideBelowMtu {
        /// The stride given.
        stride: usize,
        /// The endpoint's `Config::mtu`.
        mtu: usize,
    },
}

impl Endpoint {
    /// Feeds a batch of received datagrams (as read by one `recvmmsg`),
    /// each with its sender. The same as calling
    /// [`Endpoint::handle_datagram`] for each in order at `now` — nothing
    /// the endpoint emits differs — with less work: a run of DATA (or of
    /// ACK) datagrams of one connection derives the connection's timers
    /// and its place in the send queue once, after the run, rather than
    /// after every datagram. Anything malformed is dropped and counted,
    /// as `handle_datagram` does; never panics.
    pub fn handle_datagrams<'a>(
        &mut self,
        now: Instant,
        datagrams: impl IntoIterator<Item = (SocketAddr, &'a [u8])>,
    ) {
        self.tick(now);
        for (from, data) in datagrams {
            self.receive(now, from, data, true);
        }
        self.flush_deferred();
    }

    /// The deferred half of `touched` of the connection whose run of
    /// datagrams just ended (`Endpoint::deferred`).
    pub(super) fn flush_deferred(&mut self) {
        if let Some((i, data_in)) = self.deferred.take() {
            // a run of ACKs left its loss timer to now (the one way a
            // connection's loss timer waits while it is received on)
            if let Some(c) = self.slots[i].conn.as_mut() {
                c.settle_loss(&self.cfg);
            }
            self.rederive(i, data_in);
        }
    }

    /// Writes up to `buf.len() / stride` datagrams into `buf`, the k-th at
    /// `buf[k * stride..]`, and appends one [`Transmit`] per datagram to
    /// `out` (its `len` counts from the start of its stride); returns how
    /// many. The same datagrams, in the same order, as that many calls of
    /// [`Endpoint::poll_transmit`] at `now` would give — fewer when
    /// nothing more is due — with less work: a connection that sends
    /// several DATA packets in a row (a pacing credit, a wake-up that
    /// releases a window) has its timers derived once, after the last.
    /// A driver calls it again while it returns a full buffer. `stride`
    /// must be at least `Config::mtu`.
    pub fn poll_transmits(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        stride: usize,
        out: &mut Vec<Transmit>,
    ) -> Result<usize, BurstError> {
        if stride < self.cfg.mtu {
            return Err(BurstError::StrideBelowMtu {
                stride,
                mtu: self.cfg.mtu,
            });
        }
        self.tick(now);
        let max = buf.len() / stride;
        let mut n = 0;
        while n < max {
            if self.replies.is_empty()
                && self.ready.is_empty()
                && self.poll_timeout().is_none_or(|t| t > now)
            {
                break;
            }
            let seg = &mut buf[n * stride..(n + 1) * stride];
            let Some(t) = self.next_transmit_in(now, seg, true) else {
                break;
            };
            out.push(t);
            n += 1;
        }
        self.settle_burst(now);
        Ok(n)
    }

    /// Derives the timers of the connection that ended a burst with
    /// packets sent since its last derivation (`Endpoint::unsettled`), as
    /// the single call after its last packet would have.
    fn settle_burst(&mut self, now: Instant) {
        let Some(i) = self.unsettled.take() else {
            return;
        };
        if let Some(c) = self.slots[i].conn.as_mut() {
            c.settle_loss(&self.cfg);
            if let Some(d) = c.after_data_sent(now) {
                debug_assert!(c.events.is_empty());
                debug_assert_eq!(c.poll_timeout(now, &self.cfg), d);
                self.rearm(i, d);
                return;
            }
        }
        self.touched(i);
    }
}
