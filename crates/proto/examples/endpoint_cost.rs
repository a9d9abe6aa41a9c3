//! Profiling driver: moves DATA packets endpoint to endpoint (no link model)
//! and prints the wall time per DATA packet (sender emit + receiver parse,
//! deliver and ACK + sender ACK processing, timers included).
//!
//! Run: `cargo run --release -p approxnet-proto --example endpoint_cost [jobs] [packets] [packets per message]`
//! Under callgrind for exact instruction counts:
//! `valgrind --tool=callgrind target/release/examples/endpoint_cost 3 2000`
//! (one-packet messages at MSR 0.5); `... endpoint_cost 3 2024 46` sends
//! 64 KiB-class messages of 46 packets at MSR 1, as the veth bench does.
//!
//! A fourth argument drives the endpoints as a runtime does
//! (`harness::direct::pump_bursts`): wake-ups on a `tick` grid (fifth
//! argument, microseconds, default 10), bursts of up to 64 datagrams,
//! each received as one batch: `single` makes one call per datagram,
//! `batch` uses `poll_transmits` / `handle_datagrams` (the same
//! datagrams, byte for byte). `ping` (the default) is the one-at-a-time
//! loop above. E.g. `endpoint_cost 3 2000 1 batch`. A sixth argument sets
//! `Config::ack_every` (default 1: an ACK per DATA packet); the burst
//! modes flush coalesced ACKs after each batch, as the runtime does
//! (`endpoint_cost 3 2000 1 batch 10 16` is the runtime's setting).
//!
//! With `ENDPOINT_COST_WIRE=1` it also prints a digest of every datagram
//! both ends sent (`harness::direct::WireDigest`): a change that must
//! leave the wire byte-identical prints the same line before and after.
//! (The digest costs instructions of its own: take counts without it.)

use approxnet_proto::harness::direct::{
    connected_messages, pump, pump_bursts, pump_with, Bursts, WireDigest,
};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Rate};

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let packets: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let per_message: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mode = args.next().unwrap_or_else(|| "ping".into());
    let tick_us: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    if !matches!(mode.as_str(), "ping" | "single" | "batch") {
        eprintln!("mode: expected ping, single or batch, got {mode:?}");
        std::process::exit(2);
    }
    let ack_every: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut wakeups = 0u64;
    let mut bursts = Bursts::new(2048);
    // one-packet messages at MSR 0.5 (the original case); whole messages at MSR 1
    let msr = if per_message > 1 { 1.0 } else { 0.5 };
    let mut total = 0u64;
    let mut spent = std::time::Duration::ZERO;
    let wire = std::env::var_os("ENDPOINT_COST_WIRE").is_some_and(|v| v != "0");
    let mut digest = WireDigest::default();
    let mut moved = Vec::new();
    for _ in 0..jobs {
        let cfg = Config {
            line_rate: Rate::gbps(100.0),
            keep_payloads: false,
            idle_timeout: Duration::from_secs(60),
            ack_every,
            ..Config::default()
        };
        let (mut a, mut b, now) = connected_messages(cfg, msr, packets, per_message);
        let t = std::time::Instant::now();
        total += match mode.as_str() {
            "ping" if wire => pump_with(&mut a, &mut b, now, |d| digest.add(d)),
            "ping" => pump(&mut a, &mut b, now),
            m => {
                let tick = Duration::from_micros(tick_us);
                let log = wire.then_some(&mut moved);
                let (data, w) =
                    pump_bursts(&mut bursts, &mut a, &mut b, now, tick, m == "batch", log);
                wakeups += w;
                data
            }
        };
        spent += t.elapsed();
        for d in moved.drain(..) {
            digest.add(&d);
        }
    }
    if wire {
        println!(
            "wire digest {:016x}: {} datagrams, {} bytes",
            digest.hash, digest.datagrams, digest.bytes
        );
    }
    println!(
        "{total} DATA packets in {spent:?}: {:.0} ns per DATA packet (its ACK included), {mode}, {wakeups} wake-ups",
        spent.as_nanos() as f64 / total as f64
    );
}
