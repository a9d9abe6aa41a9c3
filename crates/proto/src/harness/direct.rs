//! Two endpoints wired back to back with no link model: every datagram is
//! handed over at once. Measures the endpoints' own processing cost
//! (benchmarks, profiling) without the virtual link's bookkeeping.

use super::{CLIENT_ADDR, SERVER_ADDR};
use crate::config::Config;
use crate::endpoint::Endpoint;
use crate::event::Event;
use crate::job::JobSpec;
use crate::time::Instant;

/// A connected client and server with one job of `packets` one-packet
/// synthetic messages at `msr` queued at the client. `cfg` is used on both
/// sides.
pub fn connected(cfg: Config, msr: f64, packets: usize) -> (Endpoint, Endpoint, Instant) {
    connected_messages(cfg, msr, packets, 1)
}

/// As [`connected`], with messages of `per_message` full packets each
/// (`packets` in all): the multi-packet messages of a bulk transfer, whose
/// scheduler key changes with every packet sent and acknowledged.
pub fn connected_messages(
    cfg: Config,
    msr: f64,
    packets: usize,
    per_message: usize,
) -> (Endpoint, Endpoint, Instant) {
    let mut a = Endpoint::new(cfg, 1).expect("valid config");
    let mut b = Endpoint::new(cfg, 2).expect("valid config");
    let mut buf = vec![0u8; cfg.mtu.max(2048)];
    let now = Instant::ZERO;
    let h = a.connect(now, SERVER_ADDR).expect("connection slot");
    while let Some(t) = a.poll_transmit(now, &mut buf) {
        b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
    }
    while let Some(t) = b.poll_transmit(now, &mut buf) {
        a.handle_datagram(now, SERVER_ADDR, &buf[..t.len]);
    }
    let per_message = per_message.max(1);
    let size = (cfg.max_payload() - 4) * per_message;
    let job = JobSpec::uniform(msr, &vec![size; packets / per_message]).expect("valid MSR");
    a.send_job(now, h, job).expect("job accepted");
    while a.poll_event().is_some() {}
    (a, b, now)
}

/// Moves every datagram until the client reports its job complete (or
/// nothing is left to do); returns the DATA packets the client sent.
pub fn pump(a: &mut Endpoint, b: &mut Endpoint, mut now: Instant) -> u64 {
    let mut buf = vec![0u8; a.config().mtu.max(2048)];
    let mut data = 0;
    loop {
        let mut moved = false;
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            moved = true;
            data += 1;
            b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
            while let Some(t) = b.poll_transmit(now, &mut buf) {
                a.handle_datagram(now, SERVER_ADDR, &buf[..t.len]);
            }
        }
        while b.poll_event().is_some() {}
        let mut done = false;
        while let Some((_, e)) = a.poll_event() {
            done |= matches!(e, Event::JobComplete { .. });
        }
        if done {
            return data;
        }
        match a.poll_timeout() {
            Some(t) => now = now.max(t),
            None if moved => {}
            None => return data,
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
}
