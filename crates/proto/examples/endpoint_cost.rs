//! Profiling driver: moves DATA packets endpoint to endpoint (no link model)
//! and prints the wall time per DATA packet (sender emit + receiver parse,
//! deliver and ACK + sender ACK processing, timers included).
//!
//! Run: `cargo run --release -p approxnet-proto --example endpoint_cost [jobs] [packets]`
//! Under callgrind for exact instruction counts:
//! `valgrind --tool=callgrind target/release/examples/endpoint_cost 3 2000`

use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::{Config, Endpoint, Event, JobSpec, Rate};

fn connected(packets: usize) -> (Endpoint, Endpoint, Instant) {
    let cfg = Config {
        line_rate: Rate::gbps(100.0),
        keep_payloads: false,
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    };
    let mut a = Endpoint::new(cfg, 1).expect("valid config");
    let mut b = Endpoint::new(cfg, 2).expect("valid config");
    let mut buf = vec![0u8; 2048];
    let now = Instant::ZERO;
    let h = a.connect(now, SERVER_ADDR).expect("connect");
    let t = a.poll_transmit(now, &mut buf).expect("HELLO");
    b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
    let t = b.poll_transmit(now, &mut buf).expect("HELLO_ACK");
    a.handle_datagram(now, SERVER_ADDR, &buf[..t.len]);
    let size = cfg.max_payload() - 4;
    let job = JobSpec::uniform(0.5, &vec![size; packets]).expect("job");
    a.send_job(now, h, job).expect("job accepted");
    while a.poll_event().is_some() {}
    (a, b, now)
}

fn pump(a: &mut Endpoint, b: &mut Endpoint, mut now: Instant) -> u64 {
    let mut buf = vec![0u8; 2048];
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

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let packets: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut total = 0u64;
    let mut spent = std::time::Duration::ZERO;
    for _ in 0..jobs {
        let (mut a, mut b, now) = connected(packets);
        let t = std::time::Instant::now();
        total += pump(&mut a, &mut b, now);
        spent += t.elapsed();
    }
    println!(
        "{total} DATA packets in {spent:?}: {:.0} ns per DATA packet (its ACK included)",
        spent.as_nanos() as f64 / total as f64
    );
}
