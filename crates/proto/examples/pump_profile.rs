//! Profiling driver: moves many DATA packets endpoint to endpoint.
#![allow(missing_docs)]
use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::{Config, Endpoint, Event, JobSpec, Rate};
fn connected(msr: f64, packets: usize, keep: bool) -> (Endpoint, Endpoint, Instant) {
    let cfg = Config {
        line_rate: Rate::gbps(100.0),
        keep_payloads: keep,
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    };
    let mut a = Endpoint::new(cfg, 1).unwrap();
    let mut b = Endpoint::new(cfg, 2).unwrap();
    let mut buf = vec![0u8; 2048];
    let now = Instant::ZERO;
    let h = a.connect(now, SERVER_ADDR).unwrap();
    let t = a.poll_transmit(now, &mut buf).unwrap();
    b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
    let t = b.poll_transmit(now, &mut buf).unwrap();
    a.handle_datagram(now, SERVER_ADDR, &buf[..t.len]);
    let size = cfg.max_payload() - 4;
    a.send_job(now, h, JobSpec::uniform(msr, &vec![size; packets]).unwrap())
        .unwrap();
    while a.poll_event().is_some() {}
    (a, b, now)
}

/// Moves every packet: sender emits, receiver handles and ACKs, sender
/// handles the ACK. Returns DATA packets moved.
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
    let t = std::time::Instant::now();
    let mut total = 0;
    for _ in 0..50 {
        let (mut a, mut b, now) = connected(0.5, 2000, false);
        total += pump(&mut a, &mut b, now);
    }
    println!(
        "{total} packets, {:?} per packet",
        t.elapsed() / total as u32
    );
}
