//! What holds an endpoint's sending back between calls: asked by a driver
//! before it sleeps, so that its counters can say what the sleep waited
//! for (issue 19: a contended ATP sender slept ~0.5 s per 4 s run, cause
//! unknown). Reads state only; changes nothing.

use super::Endpoint;

/// What the endpoint waits for before it can send DATA again, at the
/// instant of its last call. Where connections differ, the first of these
/// that any connection is in, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendHold {
    /// A datagram could leave now (a control packet, or DATA the pacer
    /// and the in-flight cap let go): nothing holds it.
    Ready,
    /// DATA is waiting and the pacer holds it until its next send time.
    Pacer,
    /// DATA is waiting and the in-flight cap (`Config::window_gain`) is full.
    Window,
    /// Nothing to send, but packets are in flight or a job is open: the
    /// peer's ACKs (or FINs) come next.
    Peer,
    /// Nothing to send, in flight or open: the application's next job.
    Application,
}

impl Endpoint {
    /// What holds this endpoint's sending back at the time of its last
    /// call (see [`SendHold`]); handshake replies waiting count as
    /// [`SendHold::Ready`], no connection as [`SendHold::Application`].
    pub fn send_hold(&self) -> SendHold {
        if !self.replies.is_empty() {
            return SendHold::Ready;
        }
        self.slots
            .iter()
            .filter_map(|s| s.conn.as_ref())
            .map(|c| c.send_hold(self.now))
            .min_by_key(|h| *h as u8)
            .unwrap_or(SendHold::Application)
    }
}
