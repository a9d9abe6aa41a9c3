//! The handshake's RTT sample follows Karn's rule (RFC 6298 section 3):
//! after a resent HELLO the answer may be to any of them, so it gives no
//! sample. Counted from the first HELLO, the resends' timeouts became the
//! connection's "RTT" and its RTO several times that: over a lossy link a
//! SAP sender's first JOB was then resent only every 240 ms.

mod common;

use approxnet_proto::event::Event;
use approxnet_proto::harness::{Pair, SERVER_ADDR};
use approxnet_proto::time::Duration;
use approxnet_proto::JobSpec;
use common::{cfg, link};

/// Packets the client offers in the 10 ms after it sends a job into a dead
/// path, once connected after `lost_hellos` HELLOs were lost.
fn offered_after_a_lossy_handshake(lost_hellos: u64) -> u64 {
    let mut pair = Pair::new(cfg(), cfg(), link(1.0), link(0.0), 5);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    // HELLOs leave at 0, 1, 2... ms (the 1 ms RTO floor) and are all lost.
    if lost_hellos > 0 {
        let until = pair.now + Duration::from_micros(lost_hellos * 1_000 - 500);
        pair.run_until(Duration::from_millis(lost_hellos), |p| p.now >= until);
    }
    pair.forward.set_config(link(0.0));
    let connected = |p: &Pair| {
        p.client_events
            .iter()
            .any(|(_, e)| matches!(e, Event::Connected))
    };
    assert!(pair.run_until(Duration::from_millis(5), connected));
    // The path dies again: the job's JOB is resent every RTO.
    pair.forward.set_config(link(1.0));
    let before = pair.forward.stats.offered;
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[4_000; 4]).unwrap())
        .unwrap();
    let until = pair.now + Duration::from_millis(10);
    pair.run_until(Duration::from_millis(10), |p| p.now >= until);
    pair.forward.stats.offered - before
}

#[test]
fn an_answer_to_a_resent_hello_gives_no_rtt_sample() {
    // RTT 40 us: with one HELLO the sample is right and the RTO is its
    // 1 ms floor; after 4 lost HELLOs a ~4 ms sample would make it ~12 ms.
    let clean = offered_after_a_lossy_handshake(0);
    let lossy = offered_after_a_lossy_handshake(4);
    eprintln!("offered in 10 ms: {clean} after a clean handshake, {lossy} after 4 lost HELLOs");
    assert!(
        lossy * 2 >= clean,
        "after 4 lost HELLOs only {lossy} packets in 10 ms (clean handshake: {clean}): \
         the RTO grew from the resends"
    );
}
