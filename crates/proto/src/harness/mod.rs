//! A two-endpoint test harness in virtual time (the shape of quinn's
//! `tests/util.rs`): a client and a server [`Endpoint`] joined by two
//! deterministic [`Link`]s. Used by the tests, the benchmarks and the demo.

pub mod direct;
pub mod forge;
pub mod fuzz;
mod link;

pub use link::{Link, LinkConfig, LinkStats};

use crate::config::Config;
use crate::endpoint::{ConnectionHandle, Endpoint};
use crate::event::Event;
use crate::job::JobSpec;
use crate::time::{Duration, Instant};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The client's address inside the harness.
pub const CLIENT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 4433);
/// The server's address inside the harness.
pub const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 4433);

/// Two endpoints, two links, one virtual clock.
pub struct Pair {
    /// The connecting side.
    pub client: Endpoint,
    /// The accepting side.
    pub server: Endpoint,
    /// Client -> server direction.
    pub forward: Link,
    /// Server -> client direction.
    pub reverse: Link,
    /// Virtual time now.
    pub now: Instant,
    /// Events seen at the client, in order.
    pub client_events: Vec<(ConnectionHandle, Event)>,
    /// Events seen at the server, in order.
    pub server_events: Vec<(ConnectionHandle, Event)>,
    /// Datagrams the harness moved.
    pub datagrams: u64,
    buf: Vec<u8>,
}

impl Pair {
    /// Builds a pair; the links' randomness derives from `seed`.
    pub fn new(
        client: Config,
        server: Config,
        forward: LinkConfig,
        reverse: LinkConfig,
        seed: u64,
    ) -> Pair {
        let mtu = client.mtu.max(server.mtu);
        Pair {
            client: Endpoint::new(client, seed ^ 0xc1).expect("valid client config"),
            server: Endpoint::new(server, seed ^ 0x5e).expect("valid server config"),
            forward: Link::new(forward, seed.wrapping_mul(3).wrapping_add(1)),
            reverse: Link::new(reverse, seed.wrapping_mul(5).wrapping_add(2)),
            now: Instant::ZERO,
            client_events: Vec::new(),
            server_events: Vec::new(),
            datagrams: 0,
            buf: vec![0; mtu.max(2048)],
        }
    }

    /// Same configuration and impairments in both directions.
    pub fn symmetric(cfg: Config, link: LinkConfig, seed: u64) -> Pair {
        Pair::new(
            cfg,
            cfg,
            link,
            LinkConfig {
                loss: 0.0,
                bit_flip: 0.0,
                ..link
            },
            seed,
        )
    }

    fn flush(&mut self) {
        while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
            self.datagrams += 1;
            self.forward.send(self.now, self.buf[..t.len].to_vec());
        }
        while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
            self.datagrams += 1;
            self.reverse.send(self.now, self.buf[..t.len].to_vec());
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
    }

    /// Advances to the next event (arrival or timer); `false` when nothing is left.
    pub fn step(&mut self) -> bool {
        self.flush();
        let next = [
            self.forward.next_arrival(),
            self.reverse.next_arrival(),
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(b) = self.forward.receive(self.now) {
            self.server.handle_datagram(self.now, CLIENT_ADDR, &b);
        }
        while let Some(b) = self.reverse.receive(self.now) {
            self.client.handle_datagram(self.now, SERVER_ADDR, &b);
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.flush();
        true
    }

    /// Steps until `done` holds or virtual time passes `limit`.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Pair) -> bool) -> bool {
        let end = self.now + limit;
        while !done(self) {
            if self.now > end || !self.step() {
                return done(self);
            }
        }
        true
    }

    /// Connects, sends `spec`, and steps until both sides reported the job
    /// complete (or `limit` of virtual time passed). Returns the job id.
    pub fn transfer(&mut self, spec: JobSpec, limit: Duration) -> Option<u32> {
        let h = self.client.connect(self.now, SERVER_ADDR).ok()?;
        let job = self.client.send_job(self.now, h, spec).ok()?;
        let finished = self.run_until(limit, |p| {
            p.job_done_at_client(job) && p.job_done_at_server(job)
        });
        finished.then_some(job)
    }

    /// Whether the client saw `JobComplete` for `job`.
    pub fn job_done_at_client(&self, job: u32) -> bool {
        self.client_events
            .iter()
            .any(|(_, e)| matches!(e, Event::JobComplete { job: j, .. } if *j == job))
    }

    /// Whether the server saw `JobComplete` for `job`.
    pub fn job_done_at_server(&self, job: u32) -> bool {
        self.server_events
            .iter()
            .any(|(_, e)| matches!(e, Event::JobComplete { job: j, .. } if *j == job))
    }
}
