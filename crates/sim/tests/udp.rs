//! The UDP scheme never claims more packets sent than its link can carry
//! (issue 12 item 6).

mod common;
use common::*;

/// One UDP sender with a 30 MB message, 20 ms on a 10 Gbps link.
const ONE_FLOW: &str = r#"
duration_ms = 20.0
[topology]
kind = "dumbbell"
senders = 1
host_gbps = 10.0
[[jobs]]
pattern = "bulk"
senders = [0]
target = 1
sizes = "fixed:30000000"
load = 0.0
scheme = "udp"
"#;

#[test]
fn udp_sent_packets_fit_the_wire() {
    let b = run(ONE_FLOW, &[]);
    let j = &b.sim.jobs[0];
    // 1500-byte packets at 10 Gbps for 20 ms
    let wire = (10e9 / 8.0 * 20e-3 / 1500.0) as u64;
    assert!(
        j.counters.sent_pkts <= wire + 1,
        "{} > {wire}",
        j.counters.sent_pkts
    );
    assert!(
        j.counters.sent_pkts + 5 >= wire,
        "{} < {wire}",
        j.counters.sent_pkts
    );
    // one flow alone: everything sent but the packets in flight arrives
    let delivered_pkts = j.delivered_bytes / 1460;
    assert!(j.counters.sent_pkts - delivered_pkts < 5, "{j:?}");
    assert_eq!(j.counters.lost_pkts, 0);
    // the host does not hold the rest of the message as packets
    assert!(b.sim.pool.peak() < 100, "{}", b.sim.pool.peak());
}
