//! Shared helpers for the integration tests.
#![allow(missing_docs)]
#![allow(dead_code, unreachable_pub)]

use approxnet_proto::event::{JobOutcome, Role};
use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::time::Duration;
use approxnet_proto::wire::{HeaderRepr, Packet, PacketType};
use approxnet_proto::{Config, Event, JobSpec, Rate};

pub fn cfg() -> Config {
    Config {
        line_rate: Rate::gbps(10.0),
        ..Config::default()
    }
}

pub fn link(loss: f64) -> LinkConfig {
    LinkConfig {
        delay: Duration::from_micros(20),
        rate: Rate::gbps(10.0),
        loss,
        ..LinkConfig::default()
    }
}

pub fn outcome(
    events: &[(approxnet_proto::ConnectionHandle, Event)],
    job: u32,
    role: Role,
) -> JobOutcome {
    events
        .iter()
        .find_map(|(_, e)| match e {
            Event::JobComplete {
                job: j,
                role: r,
                outcome,
            } if *j == job && *r == role => Some(outcome.clone()),
            _ => None,
        })
        .expect("job completed")
}

pub fn delivered(
    events: &[(approxnet_proto::ConnectionHandle, Event)],
) -> Vec<(u16, u32, Vec<u8>)> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::MessageDelivered {
                group,
                msg,
                payload,
                ..
            } => Some((*group, *msg, payload.clone())),
            _ => None,
        })
        .collect()
}

pub fn run(pair: &mut Pair, spec: approxnet_proto::JobSpec) -> u32 {
    pair.transfer(spec, Duration::from_secs(5))
        .expect("job finished on both sides")
}

/// Connects and queues `spec` without running: the test steps the pair.
pub fn start(pair: &mut Pair, spec: approxnet_proto::JobSpec) -> u32 {
    let h = pair
        .client
        .connect(pair.now, approxnet_proto::harness::SERVER_ADDR)
        .expect("connect");
    pair.client
        .send_job(pair.now, h, spec)
        .expect("job accepted")
}

/// Asserts that the sender declared at most 5 more packets lost than the
/// forward link really dropped (and that it dropped some): losses beyond
/// that would be false ones.
#[allow(dead_code)] // not every test file uses it
pub fn assert_no_false_losses(pair: &Pair, s: &approxnet_proto::JobReport, what: &str) {
    let dropped = pair.forward.stats.random_drops + pair.forward.stats.buffer_drops;
    assert!(dropped > 0, "{what}: the link dropped nothing");
    assert!(
        s.lost_packets <= dropped + 5,
        "{what}: declared {} lost, the link dropped {dropped}",
        s.lost_packets
    );
}

/// A datagram of header `h` (its body length set) and `body`.
pub fn craft(h: HeaderRepr, body: &[u8]) -> Vec<u8> {
    let mut h = h;
    h.body_len = body.len() as u16;
    let mut buf = vec![0u8; 48 + body.len()];
    h.emit_with_body(&mut buf, body);
    buf
}

/// A connected pair with one job (MSR 0.5, 10 x 30 KB) announced; returns
/// the first DATA header seen.
pub fn established() -> (Pair, HeaderRepr) {
    let mut pair = Pair::symmetric(cfg(), link(0.0), 1);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    pair.run_until(Duration::from_millis(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(0.5, &[30_000; 10]).unwrap())
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut data = None;
    while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
        let p = Packet::new_checked(&buf[..t.len]).unwrap();
        let hd = HeaderRepr::parse(&p).unwrap();
        pair.server
            .handle_datagram(pair.now, CLIENT_ADDR, &buf[..t.len]);
        if hd.ty.0 == PacketType::Data && data.is_none() {
            data = Some(hd);
        }
    }
    while let Some(e) = pair.server.poll_event() {
        pair.server_events.push(e);
    }
    (pair, data.expect("a DATA packet"))
}
