//! Shared helpers for the integration tests.
#![allow(missing_docs)]
#![allow(dead_code, unreachable_pub)]

use approxnet_proto::event::{JobOutcome, Role};
use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Event, Rate};

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
