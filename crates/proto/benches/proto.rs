//! Benchmarks for the sans-IO core: header parse + emit, and sender plus
//! receiver processing per DATA packet (endpoint to endpoint, no link model).
//!
//! Run: `cargo bench -p approxnet-proto --bench proto`
#![allow(missing_docs)]

use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{Flags, HeaderRepr, Packet, PacketType};
use approxnet_proto::{Config, Endpoint, Event, JobSpec, Rate};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};

fn header(body: usize, precise: usize) -> HeaderRepr {
    HeaderRepr {
        ty: PacketTypeField(PacketType::Data),
        flags: Flags(Flags::APPROX_CRC),
        conn_id: 0x1234_5678_9abc_def0,
        job_id: 7,
        group: 1,
        epoch: 3,
        msg_id: 42,
        seq: 100_000,
        pkt_index: 2,
        pkt_count: 5,
        elem_start: 0,
        elem_end: 0,
        precise_len: precise as u16,
        body_len: body as u16,
    }
}

fn wire(c: &mut Criterion) {
    let mut g = c.benchmark_group("header");
    g.throughput(Throughput::Elements(1));
    // Header + a 64-byte precise prefix of a 1400-byte payload.
    let h = header(1400, 64);
    let mut buf = vec![0u8; h.buffer_len()];
    g.bench_function("emit+parse (64 B precise prefix)", |b| {
        b.iter(|| {
            h.emit(&mut buf);
            Packet::new_unchecked(&mut buf[..]).fill_checksum();
            let p = Packet::new_checked(&buf[..]).unwrap();
            black_box(HeaderRepr::parse(&p).unwrap())
        })
    });
    let h = header(1400, 1400);
    let mut buf = vec![0u8; h.buffer_len()];
    g.bench_function("emit+parse (1400 B fully precise)", |b| {
        b.iter(|| {
            h.emit(&mut buf);
            Packet::new_unchecked(&mut buf[..]).fill_checksum();
            let p = Packet::new_checked(&buf[..]).unwrap();
            black_box(HeaderRepr::parse(&p).unwrap())
        })
    });
    g.finish();
}

/// A connected client/server pair with one job queued at the client.
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

fn endpoint(c: &mut Criterion) {
    const PACKETS: usize = 2000;
    let (mut a, mut b, now) = connected(0.5, PACKETS, true);
    let moved = pump(&mut a, &mut b, now);
    assert!(moved >= PACKETS as u64, "pump moved only {moved} packets");
    let mut g = c.benchmark_group("endpoint per DATA packet");
    g.throughput(Throughput::Elements(PACKETS as u64));
    for (name, msr, keep) in [
        ("msr 1.0, payloads kept", 1.0, true),
        ("msr 0.5, payloads kept", 0.5, true),
        ("msr 0.5, counting only", 0.5, false),
    ] {
        g.bench_function(name, |bch| {
            bch.iter_batched(
                || connected(msr, PACKETS, keep),
                |(mut a, mut b, now)| black_box(pump(&mut a, &mut b, now)),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, wire, endpoint);
criterion_main!(benches);
