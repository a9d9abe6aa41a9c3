//! Profiling driver for the sender's ACK path under loss: one MSR 1 job of
//! one-packet messages over a link that drops 1 % of DATA packets (the
//! criterion case `lossy link per DATA packet`). ATP resends under new
//! sequence numbers, so every ACK repeats long selective ranges. Prints the
//! wall time per DATA packet sent (link model included).
//!
//! Run: `cargo run --release -p approxnet-proto --example lossy_cost [runs] [packets]`
//! Under callgrind: `valgrind --tool=callgrind target/release/examples/lossy_cost 1 20000`

use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, JobSpec, Rate};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let packets: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let cfg = Config {
        line_rate: Rate::gbps(10.0),
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    };
    let link = LinkConfig {
        loss: 0.01,
        delay: Duration::from_micros(50),
        buffer: 4 << 20,
        ..LinkConfig::default()
    };
    let sizes = vec![cfg.max_payload() - 4; packets];
    let (mut sent, mut spent) = (0u64, std::time::Duration::ZERO);
    for _ in 0..runs {
        let mut p = Pair::symmetric(cfg, link, 7);
        let job = JobSpec::uniform(1.0, &sizes).expect("valid MSR");
        let t = std::time::Instant::now();
        let done = p.transfer(job, Duration::from_secs(10));
        spent += t.elapsed();
        assert!(done.is_some(), "the job finished");
        sent += p.client.stats().transmitted;
    }
    println!(
        "{sent} client datagrams in {spent:?}: {:.0} ns each (link model and ACKs included)",
        spent.as_nanos() as f64 / sent as f64
    );
}
