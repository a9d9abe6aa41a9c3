//! Benchmark of issue 11's flood: a new client's JCT for a 200 x 4 KB
//! MSR-1 job with no flood and under a forged-JOB flood from thousands of
//! spoofed loopback addresses, against a default server (secret from the
//! OS) and against one whose secret the attacker guessed (the pre-fix
//! fixed seed), with the server's state and the process's peak RSS. The
//! baseline is the same packet rate of junk (dropped at the header): on a
//! small host the attacker, the client and the server share the cores, and
//! that alone slows the client.
//! Run by `benches/net/flood.sh`; prints one line per case.
//!
//! Usage: flood [SOURCES] [REPEATS]   (default 4096 sources, 5 repeats)

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

fn server(cfg: RuntimeConfig) -> Endpoint {
    Endpoint::bind("127.0.0.1:0".parse().unwrap(), cfg).expect("bind on loopback")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse = |i: usize, d: usize| -> usize {
        args.get(i).map_or(d, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("flood: '{s}' is not a count (usage: flood [SOURCES] [REPEATS])");
                std::process::exit(2)
            })
        })
    };
    let (sources, repeats) = (parse(0, 4096), parse(1, 5).max(1));
    let rss0 = attack::rss_bytes();
    let unloaded = median(
        (0..repeats)
            .map(|_| attack::unloaded_job(server(RuntimeConfig::default())))
            .collect(),
    );
    println!(
        "unloaded: JCT median {:.1} ms over {repeats} runs; RSS {:.1} MB",
        ms(unloaded),
        rss0 as f64 / 1e6
    );
    let guessable = RuntimeConfig {
        seed: Some(attack::GUESS),
        ..RuntimeConfig::default()
    };
    for (name, kind, cfg, net) in [
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
    ] {
        let runs: Vec<attack::Outcome> = (0..repeats)
            .map(|k| attack::flooded_job(server(cfg.clone()), kind, sources, net + k as u8))
            .collect();
        let done = runs.iter().filter(|o| o.client_done).count();
        let jct = median(
            runs.iter()
                .filter(|o| o.client_done)
                .map(|o| o.jct)
                .collect::<Vec<_>>()
                .into_iter()
                .chain((done == 0).then_some(Duration::ZERO))
                .collect(),
        );
        let last = runs.last().expect("at least one run");
        let sent: u64 = runs.iter().map(|o| o.flood_sent).sum();
        let secs: f64 = runs.iter().map(|o| o.jct.as_secs_f64() + 0.1).sum();
        println!(
            "{name}: {sources} sources, ~{:.0}k datagrams/s; new client completed {done}/{repeats}, \
             JCT median {:.1} ms = {:.2}x unloaded; server at the end of the last run: {} connections \
             ({} opened by the flood), {:.1} MB held, {} evicted; peak RSS {:.1} MB",
            sent as f64 / secs / 1e3,
            ms(jct),
            jct.as_secs_f64() / unloaded.as_secs_f64(),
            last.connections_at_end,
            last.accepted.saturating_sub(1),
            last.held_at_end as f64 / 1e6,
            last.evicted,
            runs.iter().map(|o| o.peak_rss).max().unwrap_or(0) as f64 / 1e6
        );
    }
}
