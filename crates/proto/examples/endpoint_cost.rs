//! Profiling driver: moves DATA packets endpoint to endpoint (no link model)
//! and prints the wall time per DATA packet (sender emit + receiver parse,
//! deliver and ACK + sender ACK processing, timers included).
//!
//! Run: `cargo run --release -p approxnet-proto --example endpoint_cost [jobs] [packets]`
//! Under callgrind for exact instruction counts:
//! `valgrind --tool=callgrind target/release/examples/endpoint_cost 3 2000`

use approxnet_proto::harness::direct::{connected, pump};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Rate};

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let packets: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut total = 0u64;
    let mut spent = std::time::Duration::ZERO;
    for _ in 0..jobs {
        let cfg = Config {
            line_rate: Rate::gbps(100.0),
            keep_payloads: false,
            idle_timeout: Duration::from_secs(60),
            ..Config::default()
        };
        let (mut a, mut b, now) = connected(cfg, 0.5, packets);
        let t = std::time::Instant::now();
        total += pump(&mut a, &mut b, now);
        spent += t.elapsed();
    }
    println!(
        "{total} DATA packets in {spent:?}: {:.0} ns per DATA packet (its ACK included)",
        spent.as_nanos() as f64 / total as f64
    );
}
