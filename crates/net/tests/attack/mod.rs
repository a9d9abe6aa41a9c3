//! A forged-JOB flood from many spoofed source addresses, shared by the
//! flood test (`tests/flood.rs`) and its benchmark (`examples/flood.rs`).
//!
//! The attacker sends from thousands of addresses it does not own
//! (127.x.y.z on loopback: it never reads a reply there). For each address
//! it needs a connection id that the server's cookie check accepts; it
//! computes one the only way an off-path attacker can: by running its own
//! copy of the endpoint with a guessed seed and asking that copy for the id
//! it would hand to the address (before issue 11 the runtime's seed was a
//! fixed default, so the guess was right; now it comes from the OS).

#![allow(dead_code)] // each including target uses part of it

use approxnet_net::{Endpoint, RuntimeConfig};
use approxnet_proto::harness::forge;
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::Instant;
use approxnet_proto::wire::HeaderRepr;
use approxnet_proto::{Config, Endpoint as CoreEndpoint, Event, JobSpec};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant as WallInstant};

/// A JOB announcing `messages` (the most the cap allows: 2^20) in one group.
pub(crate) fn forged_job(conn_id: u64, job_id: u32, messages: u32) -> Vec<u8> {
    forge::job(conn_id, job_id, messages)
}

/// The ids a copy of the endpoint seeded with `guess` hands to each of
/// `sources` (an off-path attacker's best guess of the server's ids).
pub(crate) fn guessed_ids(guess: u64, sources: &[SocketAddr]) -> Vec<u64> {
    let mut copy = CoreEndpoint::new(Config::default(), guess).expect("default config");
    let mut buf = vec![0u8; 2048];
    let hello = forge::hello(1);
    sources
        .iter()
        .map(|&src| {
            copy.handle_datagram(Instant::ZERO, src, &hello);
            let tx = copy
                .poll_transmit(Instant::ZERO, &mut buf)
                .expect("the copy answers a HELLO");
            let p = approxnet_proto::wire::Packet::new_checked(&buf[..tx.len]).expect("own packet");
            HeaderRepr::parse(&p).expect("own header").conn_id
        })
        .collect()
}

/// `n` sockets on distinct loopback addresses 127.`net`.a.b (the spoofed
/// sources; nothing reads their replies).
pub(crate) fn spoofed_sockets(net: u8, n: usize) -> std::io::Result<Vec<UdpSocket>> {
    (0..n)
        .map(|i| {
            let addr: SocketAddr = format!("127.{net}.{}.{}:0", i / 250, i % 250 + 1)
                .parse()
                .expect("loopback address");
            let s = UdpSocket::bind(addr)?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .collect()
}

/// What a flood sends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// JOBs with the guessed ids: the attack.
    ForgedJobs,
    /// The same datagrams with a broken first byte, dropped on arrival: the
    /// cost any server pays for the packet rate alone (the baseline).
    Junk,
}

/// A running flood; [`Flood::stop`] ends it and says how many datagrams
/// were handed to the kernel.
pub(crate) struct Flood {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    /// The flood thread's kernel id.
    tid: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Flood {
    /// Sends forged JOBs round-robin over `socks` (with `ids[i]` from
    /// `socks[i]`, a new job id each round) to `server` as fast as one
    /// thread can, until stopped or `max_packets` / `max_time` is reached.
    /// Returns once at least `n` datagrams went out (or `bound` passed):
    /// the flood is under way before whatever the test does next.
    pub(crate) fn wait_sent(&self, n: u64, bound: Duration) {
        let t0 = WallInstant::now();
        while self.sent.load(Ordering::Relaxed) < n && t0.elapsed() < bound {
            thread::sleep(Duration::from_millis(1));
        }
    }

    pub(crate) fn start(
        kind: Kind,
        socks: Vec<UdpSocket>,
        ids: Vec<u64>,
        server: SocketAddr,
        max_packets: u64,
        max_time: Duration,
    ) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let flood_tid = Arc::new(AtomicU64::new(0));
        let (st, se, ft) = (stop.clone(), sent.clone(), flood_tid.clone());
        let thread = thread::spawn(move || {
            ft.store(tid() as u64, Ordering::Relaxed);
            let t0 = WallInstant::now();
            let mut n = 0u64;
            let mut round = 0u32;
            'outer: loop {
                for (s, &id) in socks.iter().zip(&ids) {
                    if n.is_multiple_of(1024) {
                        se.store(n, Ordering::Relaxed);
                        if st.load(Ordering::Relaxed) || t0.elapsed() >= max_time {
                            break 'outer;
                        }
                    }
                    if n >= max_packets {
                        break 'outer;
                    }
                    // a full socket buffer just drops: the flood is best effort
                    let mut dgram = forged_job(id, round, 1 << 20);
                    if kind == Kind::Junk {
                        dgram[0] ^= 0xff; // a bad version: dropped at the header
                    }
                    let _ = s.send_to(&dgram, server);
                    n += 1;
                }
                round = round.wrapping_add(1);
            }
            se.store(n, Ordering::Relaxed);
        });
        Flood {
            stop,
            sent,
            tid: flood_tid,
            thread: Some(thread),
        }
    }

    /// The flood thread's kernel id (0 until it started).
    pub(crate) fn tid(&self) -> i32 {
        self.tid.load(Ordering::Relaxed) as i32
    }

    /// Ends the flood; the datagrams sent.
    pub(crate) fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("flood thread");
        }
        self.sent.load(Ordering::Relaxed)
    }
}

/// A generous bound on every wait; its expiry is a failure.
pub(crate) const BOUND: Duration = Duration::from_secs(30);
/// The seed an attacker guesses (the old fixed default).
pub(crate) const GUESS: u64 = 1;

pub(crate) struct Outcome {
    /// The new client's job completed with its guarantee.
    pub(crate) client_done: bool,
    /// Its connection attempts (at most [`ATTEMPTS`]; the JCT covers all).
    pub(crate) attempts: u32,
    pub(crate) accepted: u32,
    pub(crate) connections_at_end: usize,
    pub(crate) held_at_end: usize,
    /// Unproven connections (opened by a JOB, no DATA yet) and their bytes.
    pub(crate) unproven_at_end: (usize, usize),
    pub(crate) unknown_dropped: u64,
    pub(crate) evicted: u64,
    pub(crate) flood_sent: u64,
    /// How long the flood ran, in seconds.
    pub(crate) flood_secs: f64,
    /// The new client's job completion time (connect to completion).
    pub(crate) jct: Duration,
    /// The process's peak resident set during the run, sampled every 10 ms.
    pub(crate) peak_rss: u64,
    /// Where the client's time went (for the benchmark's diagnosis).
    pub(crate) diag: Diag,
}

/// Where the new client's time goes under a flood.
#[derive(Clone, Debug, Default)]
pub(crate) struct Diag {
    /// Why the client's connect or job failed, if it did.
    pub(crate) error: Option<String>,
    /// Connect (handshake) time, part of `jct`.
    pub(crate) connect: Duration,
    /// The client's packets declared lost by its retransmission timer.
    pub(crate) client_rtos: u64,
    /// The client's retransmissions.
    pub(crate) client_retx: u64,
    /// Datagrams the kernel dropped at the server's / client's socket
    /// (receive buffer full; `/proc/net/udp` drops).
    pub(crate) server_sock_drops: u64,
    pub(crate) client_sock_drops: u64,
    /// CPU time of the flood, server and client threads while the client
    /// ran, and the time each waited for a CPU (run queue).
    pub(crate) flood_cpu: Duration,
    pub(crate) server_cpu: Duration,
    pub(crate) client_cpu: Duration,
    pub(crate) server_wait: Duration,
    pub(crate) client_wait: Duration,
    /// Datagrams the server read (all of them, the flood's included).
    pub(crate) server_datagrams: u64,
}

/// The calling thread's kernel id.
pub(crate) fn tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// CPU time and run-queue wait of thread `tid` of this process so far
/// (`/proc/self/task/TID/schedstat`: on the CPU, waiting for it).
pub(crate) fn sched(tid: i32) -> (Duration, Duration) {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).unwrap_or_default();
    let mut f = s.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
    let on = f.next().unwrap_or(0);
    let wait = f.next().unwrap_or(0);
    (Duration::from_nanos(on), Duration::from_nanos(wait))
}

/// Datagrams the kernel dropped at the UDP socket bound to `port` on
/// 127.0.0.1 (the `drops` column of `/proc/net/udp`).
pub(crate) fn udp_drops(port: u16) -> u64 {
    let want = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/udp")
        .ok()
        .and_then(|s| {
            s.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|f| f.get(1) == Some(&want.as_str()))
                .and_then(|f| f.last()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Floods `server` from `sources` spoofed addresses while a new client runs
/// one 200 x 4 KB MSR-1 job; returns whether it completed and what the
/// server saw.
pub(crate) fn flooded_job(server: Endpoint, kind: Kind, sources: usize, net: u8) -> Outcome {
    let addr = server.local_addr();
    let socks = spoofed_sockets(net, sources).expect("loopback sockets");
    let from: Vec<SocketAddr> = socks.iter().map(|s| s.local_addr().unwrap()).collect();
    let ids = guessed_ids(GUESS, &from);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_server = stop.clone();
    let server_tid = Arc::new(AtomicU64::new(0));
    let stid = server_tid.clone();
    let serve = thread::spawn(move || {
        stid.store(tid() as u64, Ordering::Relaxed);
        let mut server = server;
        let mut accepted = 0u32;
        let mut peak_rss = rss_bytes();
        let mut sampled = WallInstant::now();
        let deadline = WallInstant::now() + BOUND;
        while !stop_server.load(Ordering::Relaxed) {
            let left = deadline.saturating_duration_since(WallInstant::now());
            assert!(!left.is_zero(), "server: not stopped within the bound");
            let wait = left.min(Duration::from_millis(10));
            if let Some((_, Event::Accepted)) = server.next_event(Some(wait)).unwrap() {
                accepted += 1;
            }
            if sampled.elapsed() >= Duration::from_millis(10) {
                // not per event: reading /proc costs ~10 us, more than an event
                sampled = WallInstant::now();
                peak_rss = peak_rss.max(rss_bytes());
            }
        }
        peak_rss = peak_rss.max(rss_bytes());
        // events the loop had no turn for (a starved thread reads a large
        // batch at once)
        while let Some((_, e)) = server.poll_event() {
            accepted += u32::from(matches!(e, Event::Accepted));
        }
        (server, accepted, peak_rss)
    });
    let f0 = WallInstant::now();
    let flood = Flood::start(kind, socks, ids, addr, 3_000_000, Duration::from_secs(20));
    // the flood is under way before the client shows up: at least two
    // forged JOBs from every source (the tests check it ran past 4,000)
    flood.wait_sent(2 * sources as u64 + 1024, Duration::from_secs(10));
    let mut client =
        Endpoint::bind("127.0.0.1:0".parse().unwrap(), RuntimeConfig::default()).unwrap();
    let mut diag = Diag::default();
    let (sdrops0, cport) = (udp_drops(addr.port()), client.local_addr().port());
    let threads = [
        flood.tid(),
        server_tid.load(Ordering::Relaxed) as i32,
        tid(),
    ];
    let before = threads.map(sched);
    let t0 = WallInstant::now();
    let mut attempts = 0;
    let mut client_done = false;
    // A client whose connection fails tries again, as a real one would.
    while !client_done && attempts < ATTEMPTS {
        attempts += 1;
        client_done = client_attempt(&mut client, addr, t0, &mut diag);
    }
    let jct = t0.elapsed();
    let after = threads.map(sched);
    let d = |k: usize| {
        (
            after[k].0.saturating_sub(before[k].0),
            after[k].1.saturating_sub(before[k].1),
        )
    };
    (diag.flood_cpu, _) = d(0);
    (diag.server_cpu, diag.server_wait) = d(1);
    (diag.client_cpu, diag.client_wait) = d(2);
    diag.server_sock_drops = udp_drops(addr.port()).saturating_sub(sdrops0);
    diag.client_sock_drops = udp_drops(cport);
    let flood_sent = flood.stop();
    let flood_secs = f0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let (server, accepted, peak_rss) = serve.join().unwrap();
    diag.server_datagrams = server.stats().recv.datagrams;
    let core = server.core();
    Outcome {
        client_done,
        attempts,
        accepted,
        connections_at_end: core.connection_count(),
        held_at_end: core.held_bytes(),
        unproven_at_end: core.unproven(),
        unknown_dropped: core.stats().dropped(DropReason::UnknownConnection),
        evicted: core.stats().evicted,
        flood_sent,
        flood_secs,
        jct,
        peak_rss,
        diag,
    }
}

/// Connection attempts the new client makes before giving up.
pub(crate) const ATTEMPTS: u32 = 3;

/// One try of the new client: connect, run the job; whether it completed
/// with its guarantee (else why not in `diag.error`).
fn client_attempt(
    client: &mut Endpoint,
    addr: SocketAddr,
    t0: WallInstant,
    diag: &mut Diag,
) -> bool {
    let spec = JobSpec::uniform(1.0, &[4096; 200]).unwrap();
    match client.connect(addr) {
        Err(e) => {
            diag.error = Some(format!("connect: {e}"));
            false
        }
        Ok(h) => {
            diag.connect = t0.elapsed();
            let job = client.send_job(h, spec).unwrap();
            match client.wait_job(h, job, Some(BOUND)) {
                Err(e) => {
                    diag.error = Some(format!("job: {e}"));
                    false
                }
                Ok(r) => {
                    diag.client_rtos = r.lost_by_timer;
                    diag.client_retx = r.retransmissions;
                    r.guarantee_held() && r.groups[0].delivered == 200
                }
            }
        }
    }
}

/// The new client's JCT for the same job with no flood.
pub(crate) fn unloaded_job(server: Endpoint) -> Duration {
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_server = stop.clone();
    let serve = thread::spawn(move || {
        let mut server = server;
        while !stop_server.load(Ordering::Relaxed) {
            server.next_event(Some(Duration::from_millis(10))).unwrap();
        }
    });
    let mut client =
        Endpoint::bind("127.0.0.1:0".parse().unwrap(), RuntimeConfig::default()).unwrap();
    let t0 = WallInstant::now();
    let h = client.connect(addr).expect("handshake");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[4096; 200]).unwrap())
        .unwrap();
    let r = client
        .wait_job(h, job, Some(BOUND))
        .expect("unloaded job completes");
    assert!(r.guarantee_held());
    let jct = t0.elapsed();
    stop.store(true, Ordering::Relaxed);
    serve.join().unwrap();
    jct
}

/// The new client's JCT with no flood while another thread spins on a CPU
/// (no packets): what sharing the host's cores alone costs it.
pub(crate) fn busy_loop_job(server: Endpoint) -> Duration {
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let spin = thread::spawn(move || {
        let mut x = 0u64;
        while !st.load(Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    });
    let jct = unloaded_job(server);
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    jct
}

/// The process's resident set size in bytes (Linux).
pub(crate) fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}
