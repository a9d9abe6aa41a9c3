//! Benchmarks for the sans-IO core: header parse + emit, and sender plus
//! receiver processing per DATA packet (endpoint to endpoint, no link model).
//!
//! Run: `cargo bench -p approxnet-proto --bench proto`
#![allow(missing_docs)]

use approxnet_proto::harness::direct::{self, pump};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{Flags, HeaderRepr, Packet, PacketType};
use approxnet_proto::{Config, Endpoint, Rate};
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

fn connected(msr: f64, packets: usize, keep: bool) -> (Endpoint, Endpoint, Instant) {
    let cfg = Config {
        line_rate: Rate::gbps(100.0),
        keep_payloads: keep,
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    };
    direct::connected(cfg, msr, packets)
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
