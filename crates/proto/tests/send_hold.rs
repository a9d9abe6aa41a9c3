//! `Endpoint::send_hold`: what holds sending back, as a driver about to
//! sleep sees it (issue 19's sleep counters in the runtime).
use approxnet_proto::harness::{LinkConfig, Pair, SERVER_ADDR};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, JobSpec, Rate, SendHold};

#[test]
fn a_paced_transfer_waits_for_the_pacer_then_the_peer_then_the_application() {
    let cfg = Config {
        line_rate: Rate::gbps(1.0),
        ..Config::default()
    };
    let link = LinkConfig {
        delay: Duration::from_micros(50),
        rate: Rate::gbps(10.0),
        ..LinkConfig::default()
    };
    let mut pair = Pair::symmetric(cfg, link, 3);
    assert_eq!(
        pair.client.send_hold(),
        SendHold::Application,
        "no connection"
    );
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    assert_eq!(pair.client.send_hold(), SendHold::Ready, "the HELLO waits");
    let job = pair
        .client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[1400; 200]).unwrap())
        .unwrap();
    let mut seen = Vec::new();
    while !(pair.job_done_at_client(job) && pair.job_done_at_server(job)) {
        assert!(pair.step(), "the job ends");
        // Every step sends all it can: what is left is held back, and
        // held by the pacer exactly when DATA waits with its time to come.
        let hold = pair.client.send_hold();
        assert_ne!(hold, SendHold::Ready, "at {:?}", pair.now);
        let mut buf = vec![0u8; 2048];
        assert!(pair.client.poll_transmit(pair.now, &mut buf).is_none());
        if seen.last() != Some(&hold) {
            seen.push(hold);
        }
    }
    pair.run_until(Duration::from_millis(50), |p| {
        p.client.send_hold() == SendHold::Application
    });
    seen.push(pair.client.send_hold());
    // the handshake (the peer), paced DATA with the peer's ACKs between,
    // the tail's ACKs and the FIN's (the peer), then nothing
    assert_eq!(seen.first(), Some(&SendHold::Peer));
    assert!(seen.contains(&SendHold::Pacer), "{seen:?}");
    assert_eq!(
        &seen[seen.len() - 2..],
        [SendHold::Peer, SendHold::Application]
    );
    assert!(!seen.contains(&SendHold::Window), "no in-flight cap set");
}
