//! Two endpoints wired back to back with no link model: every datagram is
//! handed over at once. Measures the endpoints' own processing cost
//! (benchmarks, profiling) without the virtual link's bookkeeping.

use super::{CLIENT_ADDR, SERVER_ADDR};
use crate::config::Config;
use crate::endpoint::{Endpoint, Transmit};
use crate::event::Event;
use crate::job::JobSpec;
use crate::time::{Duration, Instant};

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
pub fn pump(a: &mut Endpoint, b: &mut Endpoint, now: Instant) -> u64 {
    pump_with(a, b, now, |_| {})
}

/// [`pump`], handing every datagram moved (both directions, in order) to
/// `wire` first ([`WireDigest::add`]: a change checked byte-identical on
/// the wire). `pump` passes a closure that does nothing, compiled away.
pub fn pump_with(
    a: &mut Endpoint,
    b: &mut Endpoint,
    mut now: Instant,
    mut wire: impl FnMut(&[u8]),
) -> u64 {
    let mut buf = vec![0u8; a.config().mtu.max(2048)];
    let mut data = 0;
    loop {
        let mut moved = false;
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            moved = true;
            data += 1;
            wire(&buf[..t.len]);
            b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
            while let Some(t) = b.poll_transmit(now, &mut buf) {
                wire(&buf[..t.len]);
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

/// A digest of a sequence of datagrams (64-bit FNV-1a over each one's
/// length and bytes): two runs that moved the same datagrams in the same
/// order have the same digest. Not a MAC; for checking that a change
/// left the wire byte-identical (`endpoint_cost` with
/// `ENDPOINT_COST_WIRE=1`, the `wire_digest` test).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireDigest {
    /// The digest so far.
    pub hash: u64,
    /// Datagrams added.
    pub datagrams: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl Default for WireDigest {
    fn default() -> WireDigest {
        WireDigest {
            hash: 0xcbf2_9ce4_8422_2325,
            datagrams: 0,
            bytes: 0,
        }
    }
}

impl WireDigest {
    /// Adds one datagram.
    pub fn add(&mut self, d: &[u8]) {
        let mut h = self.hash;
        for &b in (d.len() as u64).to_le_bytes().iter().chain(d) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.hash = h;
        self.datagrams += 1;
        self.bytes += d.len() as u64;
    }
}

/// Datagrams one burst call of [`pump_bursts`] moves at most (one
/// `recvmmsg` / `sendmmsg` batch of the runtime).
pub const BURST: usize = 64;

/// One direction's burst: up to [`BURST`] datagrams `stride` bytes apart
/// and their [`Transmit`]s.
struct Burst {
    buf: Vec<u8>,
    stride: usize,
    sent: Vec<Transmit>,
}

impl Burst {
    fn new(stride: usize) -> Burst {
        Burst {
            buf: vec![0u8; stride * BURST],
            stride,
            sent: Vec::with_capacity(BURST),
        }
    }

    /// Takes what `e` has to send at `now`: one
    /// [`Endpoint::poll_transmits`] call (`batched`) or one
    /// [`Endpoint::poll_transmit`] call per datagram. Returns how many.
    fn take(&mut self, e: &mut Endpoint, now: Instant, batched: bool) -> usize {
        self.sent.clear();
        let stride = self.stride;
        if batched {
            return e
                .poll_transmits(now, &mut self.buf, stride, &mut self.sent)
                .expect("the stride holds the MTU");
        }
        for k in 0..BURST {
            match e.poll_transmit(now, &mut self.buf[k * stride..(k + 1) * stride]) {
                Some(t) => self.sent.push(t),
                None => break,
            }
        }
        self.sent.len()
    }

    fn datagram(&self, k: usize) -> &[u8] {
        &self.buf[k * self.stride..k * self.stride + self.sent[k].len]
    }

    /// Hands the burst to `e`: one [`Endpoint::handle_datagrams`] call
    /// (`batched`) or one [`Endpoint::handle_datagram`] call each.
    /// Appends each datagram to `wire` when given.
    fn give(
        &self,
        e: &mut Endpoint,
        now: Instant,
        from: std::net::SocketAddr,
        batched: bool,
        wire: &mut Option<&mut Vec<Vec<u8>>>,
    ) {
        let n = self.sent.len();
        if let Some(w) = wire.as_deref_mut() {
            w.extend((0..n).map(|k| self.datagram(k).to_vec()));
        }
        if batched {
            e.handle_datagrams(now, (0..n).map(|k| (from, self.datagram(k))));
        } else {
            for k in 0..n {
                e.handle_datagram(now, from, self.datagram(k));
            }
        }
    }
}

/// The two directions' burst buffers of [`pump_bursts`], made once and
/// reused (zeroing ~190 KB per run cost ~160 instructions per DATA packet
/// of a 1,000-packet run).
pub struct Bursts {
    ab: Burst,
    ba: Burst,
}

impl Bursts {
    /// Buffers for datagrams of up to `stride` bytes (at least the MTU).
    pub fn new(stride: usize) -> Bursts {
        Bursts {
            ab: Burst::new(stride),
            ba: Burst::new(stride),
        }
    }
}

/// As [`pump`], but as a runtime drives the endpoints: each wake-up
/// comes at a multiple of `tick` (a timer's granularity; the deadline
/// rounded up), releases what the pacer allows then (its credit,
/// `Config::pacing_burst`) in bursts of up to [`BURST`] datagrams, the
/// receiver takes each burst as one batch (and sends the ACKs it
/// coalesced, [`Endpoint::flush_acks`]) and its ACKs go back as one.
/// `batched`: through [`Endpoint::poll_transmits`] and
/// [`Endpoint::handle_datagrams`], else one call per datagram; both give
/// the same datagrams (`wire`, when given, gets every datagram moved, in
/// order). `bursts`' stride must hold both endpoints' MTU. Returns the
/// DATA packets the client sent and the wake-ups.
pub fn pump_bursts(
    bursts: &mut Bursts,
    a: &mut Endpoint,
    b: &mut Endpoint,
    mut now: Instant,
    tick: Duration,
    batched: bool,
    mut wire: Option<&mut Vec<Vec<u8>>>,
) -> (u64, u64) {
    let Bursts { ab, ba } = bursts;
    let (mut data, mut wakeups) = (0, 0);
    loop {
        let mut moved = false;
        loop {
            let n = ab.take(a, now, batched);
            if n == 0 {
                break;
            }
            moved = true;
            data += n as u64;
            ab.give(b, now, CLIENT_ADDR, batched, &mut wire);
            // one ACK per batch where ACKs are coalesced (`Config::ack_every`
            // > 1), as the runtime does; nothing waits with `ack_every` 1
            b.flush_acks(now);
            while ba.take(b, now, batched) > 0 {
                ba.give(a, now, SERVER_ADDR, batched, &mut wire);
            }
        }
        while b.poll_event().is_some() {}
        let mut done = false;
        while let Some((_, e)) = a.poll_event() {
            done |= matches!(e, Event::JobComplete { .. });
        }
        if done {
            return (data, wakeups);
        }
        let next = [a.poll_timeout(), b.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        match next {
            Some(t) => {
                let q = tick.as_nanos().max(1);
                now = now.max(Instant::from_nanos(t.as_nanos().div_ceil(q) * q));
                wakeups += 1;
            }
            None if moved => {}
            None => return (data, wakeups),
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
}
