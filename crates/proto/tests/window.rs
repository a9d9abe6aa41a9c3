//! The in-flight cap (`Config::window_gain`, SAP's congestion control for
//! approximate data): before any estimate at most 10 DATA packets leave
//! unacknowledged, whatever the pacing rate allows; without the cap the
//! same sender sends everything it has.

mod common;

use approxnet_proto::event::Event;
use approxnet_proto::harness::{Pair, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::time::Duration;
use approxnet_proto::JobSpec;
use common::{cfg, link};

/// Approximate (MSR 0) datagrams pushed into an open stream.
const PUSHED: u32 = 100;

/// SAP's stream: group 0 precise (MSR 1), group 1 approximate (MSR 0).
fn sap_stream() -> JobSpec {
    JobSpec::new(1.0)
        .unwrap()
        .group(1, 0.0)
        .unwrap()
        .announce(0, 1 << 16)
        .unwrap()
        .announce(1, 1 << 16)
        .unwrap()
}

/// DATA packets the client emits in `us` microseconds (1 us steps) while
/// nothing from the server reaches it.
fn data_sent_without_acks(window_gain: Option<f64>, us: u32) -> u32 {
    let c = approxnet_proto::Config {
        window_gain,
        ..cfg()
    };
    let mut pair = Pair::symmetric(c, link(0.0), 3);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = sap_stream();
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    // Handshake and JOB through the harness.
    let until = pair.now + Duration::from_millis(1);
    pair.run_until(Duration::from_millis(1), |p| p.now >= until);
    assert!(pair
        .client_events
        .iter()
        .any(|(_, e)| matches!(e, Event::Connected)));
    let msgs = (0..PUSHED)
        .map(|i| MessageSpec {
            group: 1,
            payload: Payload::Bytes(vec![i as u8; 800]),
            precise_len: 4,
        })
        .collect();
    pair.client.push_messages(pair.now, h, job, msgs).unwrap();
    let mut buf = vec![0u8; 2048];
    let mut data = 0;
    for _ in 0..us {
        pair.now += Duration::from_micros(1);
        while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
            if t.len > 800 {
                data += 1;
            }
        }
    }
    data
}

#[test]
fn the_cap_holds_the_first_window_to_ten_packets() {
    // 100 us: below the 1 ms RTO floor, so no loss is declared.
    assert_eq!(
        data_sent_without_acks(None, 100),
        PUSHED,
        "uncapped: all leave"
    );
    assert_eq!(data_sent_without_acks(Some(2.0), 100), 10);
}

#[test]
fn a_full_cap_is_freed_every_plain_rto_not_a_backed_off_one() {
    // No ACK ever comes: only the loss timer frees the window. At the
    // plain RTO (1 ms floor; a little more once timer rounds stretch the
    // RTT estimate) all 100 leave within 20 ms; with the timer backed off
    // (1, 2, 4, 8 ms...) only 40 did.
    assert_eq!(data_sent_without_acks(Some(2.0), 20_000), PUSHED);
}

/// Times (us after the path went dead) at which DATA left a capped
/// sender that had streamed `warm` datagrams one per 20 us (RTT, delivery
/// rate and the cap measured), then had 100 more pushed while nothing
/// from the server reached it any more, over `us` microseconds.
fn data_times_after_the_path_dies(warm: u32, us: u32) -> Vec<u32> {
    let c = approxnet_proto::Config {
        window_gain: Some(2.0),
        ..cfg()
    };
    let mut pair = Pair::symmetric(c, link(0.0), 3);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = sap_stream();
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    let msg = |i: u32| MessageSpec {
        group: 1,
        payload: Payload::Bytes(vec![i as u8; 800]),
        precise_len: 4,
    };
    for i in 0..warm {
        pair.client
            .push_messages(pair.now, h, job, vec![msg(i)])
            .unwrap();
        let until = pair.now + Duration::from_micros(20);
        pair.run_until(Duration::from_micros(20), |p| p.now >= until);
    }
    let msgs = (0..PUSHED).map(msg).collect();
    pair.client.push_messages(pair.now, h, job, msgs).unwrap();
    let mut buf = vec![0u8; 2048];
    let mut times = Vec::new();
    for t in 0..us {
        pair.now += Duration::from_micros(1);
        pair.client.handle_timeout(pair.now);
        while let Some(x) = pair.client.poll_transmit(pair.now, &mut buf) {
            if x.len > 800 {
                times.push(t);
            }
        }
    }
    times
}

#[test]
fn a_full_cap_frees_slots_by_age_before_the_rto_but_no_faster_than_one_cap_per_age() {
    // RTT ~40 us, delivery rate ~50,000/s, cap 10: a packet stops counting
    // toward the cap ~0.5 ms after it left (twice the RTT of a full cap),
    // before the loss timer's RTO (~1 ms, the `min_rto` floor) would.
    let times = data_times_after_the_path_dies(200, 3_000);
    let early = times.iter().filter(|&&t| t < 900).count();
    assert!(
        early > 10,
        "only {early} DATA left in 0.9 ms: the cap waited for the RTO ({times:?})"
    );
    // Nothing is ever acknowledged: slots free only by age, so at most one
    // cap (10) leaves per ~0.5 ms, about half the measured delivery rate.
    for (i, w) in times.windows(11).enumerate() {
        assert!(
            w[10] - w[0] >= 400,
            "11 DATA within {} us from packet {i}: faster than one cap per age ({times:?})",
            w[10] - w[0]
        );
    }
}
