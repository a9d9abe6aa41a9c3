//! Liveness on a loaded host (issue 19's sender stall): two endpoints
//! driven the way `approxnet-net`'s driver drives them — a wake-up reads
//! every datagram that arrived, flushes ACKs, then fires timers and sends,
//! running the core's clock ahead through the next `pacing_lookahead` —
//! but every wake-up may come late, now and then by hundreds of
//! milliseconds (a descheduled process: the HTB bench saw timer wake-ups
//! 0.43 s late at load ~20). Late ACKs then make the loss timer declare
//! packets lost that arrive afterwards (spurious losses). Whatever the
//! delays, as long as every datagram arrives and no wake-up is later than
//! the idle timeout, every job must complete: the connection must never be
//! left with unfinished work, nothing to send and no timer but the idle one.

use approxnet_proto::event::Role;
use approxnet_proto::harness::{Link, LinkConfig, CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::rng::Rng;
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::{Config, ConnectionHandle, Endpoint, Event, JobSpec, PacketSplit, Rate};
use std::net::SocketAddr;

/// The runtime's core settings (`approxnet_net::RuntimeConfig::default`
/// at the 1 Gbit/s HTB bench: `--line-rate-gbps 1`).
fn runtime_cfg(split: PacketSplit) -> Config {
    Config {
        line_rate: Rate::gbps(1.0),
        min_rto: Duration::from_millis(20),
        pacing_burst: Duration::from_millis(1),
        ack_every: 16,
        transport_checksums: true,
        packet_split: split,
        ..Config::default()
    }
}

/// How late wake-ups come.
#[derive(Clone, Copy, Debug)]
struct Load {
    /// Chance that a wake-up is descheduled for long.
    stall: f64,
    /// Longest such descheduling.
    stall_max: Duration,
    /// Longest ordinary lateness.
    jitter: Duration,
}

/// One host: an endpoint, when it next runs, and its clock (never behind
/// what it handed the core).
struct Host {
    ep: Endpoint,
    peer: SocketAddr,
    core_now: Instant,
    wake: Instant,
    late: Duration,
    events: Vec<(ConnectionHandle, Event)>,
}

const LOOKAHEAD: Duration = Duration::from_millis(1);

impl Host {
    /// One wake-up at OS time `real`: read what arrived, then service.
    fn run(&mut self, real: Instant, inbox: &mut Link, out: &mut Link, buf: &mut [u8]) {
        self.core_now = self.core_now.max(real);
        let mut now = self.core_now;
        let mut read = false;
        while let Some(d) = inbox.receive(real) {
            self.ep.handle_datagram(now, self.peer, &d);
            read = true;
        }
        if read {
            self.ep.flush_acks(now);
        }
        let horizon = real + LOOKAHEAD;
        let due_by = real + Duration::from_nanos(LOOKAHEAD.as_nanos() / 2);
        let mut releasing = false;
        loop {
            if self.ep.poll_timeout().is_some_and(|t| t <= now) {
                self.ep.handle_timeout(now);
            }
            let mut sent = 0;
            while let Some(t) = self.ep.poll_transmit(now, buf) {
                out.send(real, buf[..t.len].to_vec());
                sent += 1;
            }
            releasing |= sent > 0;
            match self.ep.poll_timeout() {
                Some(t) if t > now && t <= horizon && (releasing || t <= due_by) => {
                    releasing = true;
                    now = t;
                }
                _ => break,
            }
        }
        self.core_now = now;
        while let Some(e) = self.ep.poll_event() {
            self.events.push(e);
        }
    }

    /// When this host would wake with nothing late: its next timer (half
    /// the lookahead early) or a datagram's arrival.
    fn next_wake(&mut self, inbox: &Link) -> Option<Instant> {
        let timer = self
            .ep
            .poll_timeout()
            .map(|t| Instant::from_nanos(t.as_nanos().saturating_sub(LOOKAHEAD.as_nanos() / 2)));
        [timer, inbox.next_arrival()].into_iter().flatten().min()
    }
}

struct Outcome {
    completed: u32,
    failed: Vec<String>,
    spurious: u64,
    lost_by_timer: u64,
    /// DATA the receiver dropped as of a job it does not hold.
    unknown_job: u64,
    end: Instant,
}

/// Runs `jobs` jobs of `msgs` messages of `size` bytes (MSR `msr`), two at
/// a time as `approxnet-perf client` does, over a 1 Gbit/s path whose hosts
/// wake late as `load` says; stops at the first failure or when all are
/// done (or after `limit` of virtual time).
fn run(
    split: PacketSplit,
    msr: f64,
    jobs: u32,
    msgs: usize,
    size: usize,
    load: Load,
    seed: u64,
) -> Outcome {
    let cfg = runtime_cfg(split);
    let link = LinkConfig {
        delay: Duration::from_micros(30),
        rate: Rate::gbps(1.0),
        buffer: 256 * 1024,
        ..LinkConfig::default()
    };
    let mut fwd = Link::new(link, seed ^ 1);
    let mut rev = Link::new(link, seed ^ 2);
    let mut rng = Rng::new(seed);
    let mut client = Host {
        ep: Endpoint::new(cfg, seed ^ 0xc1).unwrap(),
        peer: SERVER_ADDR,
        core_now: Instant::ZERO,
        wake: Instant::ZERO,
        late: Duration::ZERO,
        events: Vec::new(),
    };
    let mut server = Host {
        ep: Endpoint::new(cfg, seed ^ 0x5e).unwrap(),
        peer: CLIENT_ADDR,
        core_now: Instant::ZERO,
        wake: Instant::FAR_FUTURE,
        late: Duration::ZERO,
        events: Vec::new(),
    };
    let mut buf = vec![0u8; 2048];
    let h = client.ep.connect(Instant::ZERO, SERVER_ADDR).unwrap();
    let spec = || JobSpec::uniform(msr, &vec![size; msgs]).unwrap();
    let (mut started, mut open) = (0u32, 0u32);
    let mut out = Outcome {
        completed: 0,
        failed: Vec::new(),
        spurious: 0,
        lost_by_timer: 0,
        unknown_job: 0,
        end: Instant::ZERO,
    };
    let limit = Instant::from_nanos(60_000_000_000);
    let mut seen = 0;
    loop {
        // the application keeps two jobs open
        while open < 2 && started < jobs {
            client.ep.send_job(client.core_now, h, spec()).unwrap();
            started += 1;
            open += 1;
        }
        // whichever host wakes first runs
        let real = client.wake.min(server.wake);
        if real == Instant::FAR_FUTURE {
            // unfinished jobs, nothing in transit and no timer armed
            out.failed
                .push("stalled: no timer armed at either end".into());
            break;
        }
        if real > limit {
            break;
        }
        if client.wake <= server.wake {
            client.run(real, &mut rev, &mut fwd, &mut buf);
        } else {
            server.run(real, &mut fwd, &mut rev, &mut buf);
        }
        out.end = real;
        for (_, e) in &client.events[seen..] {
            match e {
                Event::JobComplete {
                    role: Role::Sender,
                    outcome,
                    ..
                } => {
                    open -= 1;
                    match outcome {
                        Ok(r) => {
                            out.completed += 1;
                            out.spurious += r.spurious_losses;
                            out.lost_by_timer += r.lost_by_timer;
                        }
                        Err(e) => out.failed.push(e.to_string()),
                    }
                }
                Event::ConnectionLost { reason } => out.failed.push(format!("lost: {reason}")),
                _ => {}
            }
        }
        seen = client.events.len();
        out.unknown_job = server.ep.stats().dropped(DropReason::UnknownJob);
        if !out.failed.is_empty() || out.completed == jobs {
            break;
        }
        // The host that ran draws how late its next wake-up will be; both
        // wake at their next timer or arrival plus that lateness.
        let d = if rng.chance(load.stall) {
            load.stall_max.as_nanos()
        } else {
            load.jitter.as_nanos()
        };
        let late = Duration::from_nanos(rng.below(d.max(1)));
        if client.wake <= server.wake {
            client.late = late;
        } else {
            server.late = late;
        }
        for (host, inbox) in [(&mut client, &rev), (&mut server, &fwd)] {
            host.wake = match host.next_wake(inbox) {
                Some(t) => (t + host.late).max(real),
                None => Instant::FAR_FUTURE,
            };
        }
    }
    out
}

const LOADED: Load = Load {
    stall: 0.02,
    stall_max: Duration::from_millis(430),
    jitter: Duration::from_micros(300),
};

/// A search over seeds and loads (not run by default), e.g.
/// `SEED1=60 STALL_PPM=50000 MSR_PCT=100 cargo test -p approxnet-proto
/// --release --test liveness explore -- --ignored --nocapture`: one line
/// per run. Before the starved-job keepalive 41 of those 120 runs failed
/// (every one with unknown-job drops at the receiver); after it none, nor
/// any of 60 at MSR 0.5 or 60 at MSR 0.9.
#[test]
#[ignore]
fn explore() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let load = Load {
        stall: env("STALL_PPM", 20_000) as f64 / 1e6,
        stall_max: Duration::from_millis(env("STALL_MS", 430)),
        jitter: Duration::from_micros(env("JITTER_US", 300)),
    };
    for seed in env("SEED0", 0)..env("SEED1", 20) {
        for split in [PacketSplit::Full, PacketSplit::Tiled] {
            let msr = env("MSR_PCT", 100) as f64 / 100.0;
            let o = run(split, msr, 6, 64, 65536, load, seed);
            println!(
                "seed {seed} {split:?}: {} done, failures {:?} at {:?} (timer losses {}, spurious {}, unknown-job drops {})",
                o.completed, o.failed, o.end, o.lost_by_timer, o.spurious, o.unknown_job
            );
        }
    }
}

/// Seeds whose runs failed before the starved-job keepalive
/// (`Connection::keep_starved_jobs`): 7 of 40 runs of `explore` failed,
/// every one with the receiver dropping DATA of a job it had expired.
const FAILED_BEFORE: [(u64, PacketSplit); 4] = [
    (0, PacketSplit::Tiled),
    (5, PacketSplit::Full),
    (9, PacketSplit::Tiled),
    (13, PacketSplit::Full),
];

#[test]
fn jobs_complete_on_a_host_that_wakes_late() {
    for (seed, split) in FAILED_BEFORE {
        let o = run(split, 1.0, 6, 64, 65536, LOADED, seed);
        assert!(
            o.failed.is_empty() && o.completed == 6,
            "seed {seed} {split:?}: {} of 6 jobs done, failures {:?} at {:?} (timer losses {}, spurious {}, unknown-job drops {})",
            o.completed,
            o.failed,
            o.end,
            o.lost_by_timer,
            o.spurious,
            o.unknown_job
        );
        assert_eq!(
            o.unknown_job, 0,
            "seed {seed} {split:?}: the receiver forgot a job"
        );
        assert!(
            o.lost_by_timer > 0,
            "seed {seed} {split:?}: the load never fired the loss timer"
        );
    }
}
