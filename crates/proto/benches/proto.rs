//! Benchmarks for the sans-IO core: header parse + emit, and sender plus
//! receiver processing per DATA packet (endpoint to endpoint, no link model;
//! and over a lossy link, where ACKs carry long selective ranges).
//!
//! Run: `cargo bench -p approxnet-proto --bench proto`
#![allow(missing_docs)]

use approxnet_proto::harness::direct::{self, pump};
use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{Flags, HeaderRepr, Packet, PacketType};
use approxnet_proto::{Config, Endpoint, JobSpec, Rate};
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

/// One job over a link that loses 1 % of DATA packets. ATP resends under
/// new sequence numbers, so the receiver's cumulative point stays behind the
/// first loss and every ACK repeats long ranges: the sender's range
/// bookkeeping runs on every ACK. Includes the link model's own cost.
fn lossy(c: &mut Criterion) {
    const PACKETS: usize = 20_000;
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
    let sizes = vec![cfg.max_payload() - 4; PACKETS];
    let mut g = c.benchmark_group("lossy link per DATA packet");
    g.throughput(Throughput::Elements(PACKETS as u64));
    g.sample_size(20);
    g.bench_function("msr 1.0, 1 % loss", |bch| {
        bch.iter_batched(
            || {
                (
                    Pair::symmetric(cfg, link, 7),
                    JobSpec::uniform(1.0, &sizes).unwrap(),
                )
            },
            |(mut p, job)| {
                let done = p.transfer(job, Duration::from_secs(10));
                assert!(done.is_some(), "the job finished");
                black_box(p.datagrams)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, wire, endpoint, lossy);
criterion_main!(benches);
