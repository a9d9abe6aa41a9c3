//! The datagrams two endpoints exchange, pinned by a digest: a change to
//! the core's per-packet work must leave the wire byte-identical (the
//! performance passes of issue 19), so these digests move only with a
//! documented change of behaviour. The same runs as `endpoint_cost`
//! (`ENDPOINT_COST_WIRE=1`), smaller.

use approxnet_proto::harness::direct::{
    connected_messages, pump_bursts, pump_with, Bursts, WireDigest,
};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Rate};

fn cfg(ack_every: u32) -> Config {
    Config {
        line_rate: Rate::gbps(100.0),
        keep_payloads: false,
        idle_timeout: Duration::from_secs(60),
        ack_every,
        ..Config::default()
    }
}

/// The one-at-a-time loop (`endpoint_cost`'s `ping`): DATA packets sent
/// and the digest of every datagram.
fn ping(packets: usize, per_message: usize) -> (u64, WireDigest) {
    let msr = if per_message > 1 { 1.0 } else { 0.5 };
    let (mut a, mut b, now) = connected_messages(cfg(1), msr, packets, per_message);
    let mut d = WireDigest::default();
    let data = pump_with(&mut a, &mut b, now, |x| d.add(x));
    (data, d)
}

/// The burst loop (`endpoint_cost`'s `single` / `batch`).
fn bursts(packets: usize, per_message: usize, ack_every: u32, batched: bool) -> (u64, WireDigest) {
    let msr = if per_message > 1 { 1.0 } else { 0.5 };
    let (mut a, mut b, now) = connected_messages(cfg(ack_every), msr, packets, per_message);
    let mut moved = Vec::new();
    let tick = Duration::from_micros(10);
    let (data, _) = pump_bursts(
        &mut Bursts::new(2048),
        &mut a,
        &mut b,
        now,
        tick,
        batched,
        Some(&mut moved),
    );
    let mut d = WireDigest::default();
    for x in &moved {
        d.add(x);
    }
    (data, d)
}

#[test]
fn digest_tells_datagrams_apart() {
    let mut a = WireDigest::default();
    a.add(b"ab");
    let mut b = WireDigest::default();
    b.add(b"a");
    b.add(b"b");
    // same bytes, other datagram boundaries
    assert_ne!(a.hash, b.hash);
    let mut c = WireDigest::default();
    c.add(b"ba");
    assert_ne!(a.hash, c.hash);
    assert_eq!((a.datagrams, a.bytes), (1, 2));
}

/// `(DATA packets, datagrams, bytes, digest)` of a run.
fn summary((data, d): (u64, WireDigest)) -> (u64, u64, u64, u64) {
    (data, d.datagrams, d.bytes, d.hash)
}

#[test]
fn one_packet_messages_one_at_a_time() {
    assert_eq!(
        summary(ping(600, 1)),
        (302, 604, 459_836, 0xa84b_f47d_e52e_cf9a)
    );
}

#[test]
fn multi_packet_messages_one_at_a_time() {
    assert_eq!(
        summary(ping(644, 46)),
        (646, 1292, 986_844, 0x7e4c_4e79_20f4_963c)
    );
}

#[test]
fn one_packet_messages_in_bursts() {
    let want = (321, 642, 488_944, 0x918a_9f6c_b839_163f);
    assert_eq!(summary(bursts(600, 1, 1, false)), want);
    assert_eq!(summary(bursts(600, 1, 1, true)), want);
}

#[test]
fn coalesced_acks_in_bursts() {
    assert_eq!(
        summary(bursts(600, 1, 16, true)),
        (321, 347, 470_064, 0xf845_9136_5b39_13e4)
    );
}

#[test]
fn multi_packet_messages_in_bursts() {
    let want = (646, 1292, 986_844, 0x9616_8ca8_1bf1_6d38);
    assert_eq!(summary(bursts(644, 46, 1, false)), want);
    assert_eq!(summary(bursts(644, 46, 1, true)), want);
}
