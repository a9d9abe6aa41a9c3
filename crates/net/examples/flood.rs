//! Benchmark of issue 11's flood: a new client's JCT for a 200 x 4 KB
//! MSR-1 job with no flood and under a forged-JOB flood from thousands of
//! spoofed loopback addresses, against a default server (secret from the
//! OS) and against one whose secret the attacker guessed (the pre-fix
//! fixed seed), with the server's state and the process's peak RSS. The
//! baseline is the same packet rate of junk (dropped at the header): on a
//! small host the attacker, the client and the server share the cores, and
//! that alone slows the client; a CPU-only busy loop on one core shows what
//! losing a core alone costs it. Each case also prints where the client's
//! time went (handshake share, RTOs, socket drops, each thread's CPU and
//! run-queue wait), and the core's own cost per datagram of each kind.
//! Run by `benches/net/flood.sh`; prints one line per case.
//!
//! Usage: flood [SOURCES] [ROUNDS]   (default 4096 sources, 5 rounds)

#[path = "../tests/attack/mod.rs"]
mod attack;

use approxnet_net::{Endpoint, RuntimeConfig};
use attack::Kind;
use std::time::Duration;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Where the client's time went, summed over the runs: the handshake's
/// share, the client's timer-declared losses, datagrams the kernel dropped
/// at each socket, and each thread's CPU and run-queue wait as a share of
/// the client's wall time.
fn print_diag(runs: &[attack::Outcome]) {
    let sum = |f: &dyn Fn(&attack::Diag) -> Duration| -> Duration {
        runs.iter().map(|o| f(&o.diag)).sum()
    };
    let count = |f: &dyn Fn(&attack::Diag) -> u64| -> u64 { runs.iter().map(|o| f(&o.diag)).sum() };
    let wall: Duration = runs.iter().map(|o| o.jct).sum();
    let mut errors: Vec<&str> = runs
        .iter()
        .filter_map(|o| o.diag.error.as_deref())
        .collect();
    errors.dedup();
    let share = |d: Duration| d.as_secs_f64() / wall.as_secs_f64().max(1e-9);
    println!(
        "  where the time went (all runs): handshake {:.0} % of the wall time; client RTO losses {}, \
         retransmissions {}; socket drops server {} / client {}; CPU share of the wall time: flood {:.2}, \
         server {:.2} (waited {:.2}), client {:.2} (waited {:.2}); server read {} datagrams; \
         client errors: {:?}",
        100.0 * share(sum(&|d| d.connect)),
        count(&|d| d.client_rtos),
        count(&|d| d.client_retx),
        count(&|d| d.server_sock_drops),
        count(&|d| d.client_sock_drops),
        share(sum(&|d| d.flood_cpu)),
        share(sum(&|d| d.server_cpu)),
        share(sum(&|d| d.server_wait)),
        share(sum(&|d| d.client_cpu)),
        share(sum(&|d| d.client_wait)),
        count(&|d| d.server_datagrams),
        errors,
    );
}

/// The core's own cost per datagram of each kind (no sockets): what the
/// server thread spends in `handle_datagram` (and on the events and
/// replies it causes) for junk, a JOB whose id fails the cookie check, and
/// a JOB with a valid (guessed) id, each from 4,096 source addresses.
fn core_cost() {
    use approxnet_proto::{Endpoint as Core, Instant};
    use std::net::SocketAddr;
    let from: Vec<SocketAddr> = (0..4096)
        .map(|i| {
            format!("127.9.{}.{}:9", i / 250, i % 250 + 1)
                .parse()
                .unwrap()
        })
        .collect();
    let ids = attack::guessed_ids(attack::GUESS, &from);
    let n = 200_000usize;
    let mut line = String::from("core cost per datagram (handle_datagram + events, no sockets):");
    for (name, seed, junk) in [
        ("junk", 7, true),
        ("JOB failing the cookie", 7, false),
        ("JOB with a guessed id", attack::GUESS, false),
    ] {
        let mut core = Core::new(RuntimeConfig::default().proto, seed).unwrap();
        let dgrams: Vec<Vec<u8>> = ids
            .iter()
            .map(|&id| {
                let mut d = attack::forged_job(id, 0, 1 << 20);
                if junk {
                    d[0] ^= 0xff;
                }
                d
            })
            .collect();
        let mut buf = vec![0u8; 2048];
        let t0 = std::time::Instant::now();
        for k in 0..n {
            let now = Instant::from_nanos(t0.elapsed().as_nanos() as u64);
            core.handle_datagram(now, from[k % from.len()], &dgrams[k % dgrams.len()]);
            if k % 32 == 31 {
                core.flush_acks(now);
                while core.poll_transmit(now, &mut buf).is_some() {}
                while core.poll_event().is_some() {}
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        line += &format!(" {name} {ns:.0} ns;");
    }
    println!("{line}");
}

fn server(cfg: RuntimeConfig) -> Endpoint {
    Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg).expect("bind on loopback")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse = |i: usize, d: usize| -> usize {
        args.get(i).map_or(d, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("flood: '{s}' is not a count (usage: flood [SOURCES] [ROUNDS])");
                std::process::exit(2)
            })
        })
    };
    let (sources, repeats) = (parse(0, 4096), parse(1, 5).max(1));
    let rss0 = attack::rss_bytes();
    let guessable = RuntimeConfig {
        seed: Some(attack::GUESS),
        ..RuntimeConfig::default()
    };
    let cases = [
        (
            "junk flood (baseline)",
            Kind::Junk,
            RuntimeConfig::default(),
            71u8,
        ),
        (
            "secret from the OS",
            Kind::ForgedJobs,
            RuntimeConfig::default(),
            81u8,
        ),
        ("guessable secret", Kind::ForgedJobs, guessable, 91u8),
    ];
    // Rounds: each an unloaded run, a busy-loop run and one run of each
    // flood, back to back, so that each ratio compares runs seconds apart
    // (other load on a shared host drifts over minutes).
    let mut unloaded = Vec::new();
    let mut busy = Vec::new();
    let mut runs: Vec<Vec<attack::Outcome>> = cases.iter().map(|_| Vec::new()).collect();
    for k in 0..repeats {
        unloaded.push(attack::unloaded_job(server(RuntimeConfig::default())));
        busy.push(attack::busy_loop_job(server(RuntimeConfig::default())));
        for (c, (_, kind, cfg, net)) in cases.iter().enumerate() {
            let o = attack::flooded_job(server(cfg.clone()), *kind, sources, net + k as u8);
            runs[c].push(o);
        }
    }
    let ratio = |jcts: &[Option<Duration>]| -> f64 {
        let mut r: Vec<f64> = jcts
            .iter()
            .zip(&unloaded)
            .filter_map(|(j, u)| Some(j.as_ref()?.as_secs_f64() / u.as_secs_f64()))
            .collect();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "unloaded: JCT median {:.1} ms over {repeats} rounds; RSS {:.1} MB",
        ms(median(unloaded.clone())),
        rss0 as f64 / 1e6
    );
    println!(
        "busy loop on one core, no packets: JCT median {:.1} ms, {:.2}x unloaded (median of the rounds' ratios)",
        ms(median(busy.clone())),
        ratio(&busy.iter().copied().map(Some).collect::<Vec<_>>())
    );
    for ((name, ..), runs) in cases.iter().zip(&runs) {
        let done = runs.iter().filter(|o| o.client_done).count();
        let first_try = runs
            .iter()
            .filter(|o| o.client_done && o.attempts == 1)
            .count();
        let jcts: Vec<Option<Duration>> = runs
            .iter()
            .map(|o| o.client_done.then_some(o.jct))
            .collect();
        let jct = median(
            jcts.iter()
                .flatten()
                .copied()
                .chain((done == 0).then_some(Duration::ZERO))
                .collect(),
        );
        let last = runs.last().expect("at least one run");
        let sent: u64 = runs.iter().map(|o| o.flood_sent).sum();
        let secs: f64 = runs.iter().map(|o| o.flood_secs).sum();
        println!(
            "{name}: {sources} sources, {:.0}k datagrams/s; new client completed {done}/{repeats} \
             ({first_try} at the first of up to {} attempts), \
             JCT median {:.1} ms, {:.2}x unloaded; server at the end of the last run: {} connections \
             ({} opened by the flood), {:.1} MB held, {} evicted; peak RSS {:.1} MB",
            sent as f64 / secs / 1e3,
            attack::ATTEMPTS,
            ms(jct),
            ratio(&jcts),
            last.connections_at_end,
            last.accepted.saturating_sub(1),
            last.held_at_end as f64 / 1e6,
            last.evicted,
            runs.iter().map(|o| o.peak_rss).max().unwrap_or(0) as f64 / 1e6
        );
        print_diag(runs);
    }
    core_cost();
}
