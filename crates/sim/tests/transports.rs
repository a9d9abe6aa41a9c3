//! Baseline transports and the sender-side approximation schemes.

mod common;
use common::*;

const LEAF_SPINE: &str = r#"
duration_ms = 3.0
seed = 3
[topology]
kind = "leaf_spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
oversubscription = 2.0
host_gbps = 10.0
[[jobs]]
sizes = "fixed:20000"
messages = 8
load = 0.4
msr = 0.5
stop_ms = 1.5
scheme = "dctcp-es"
[output]
queue_sample_us = 5.0
"#;

fn all_done(b: &approxnet_sim::scenario::Built) -> bool {
    b.sim.jobs.iter().all(|j| j.done.is_some())
}

#[test]
fn every_native_scheme_finishes_its_jobs() {
    for s in [
        "dctcp",
        "dctcp-ss",
        "dctcp-es",
        "tcp",
        "tcp-ss",
        "tcp-es",
        "pfabric",
        "pfabric-ss",
        "pfabric-es",
        "aeolus",
        "aeolus-ss",
        "aeolus-es",
    ] {
        let b = run(LEAF_SPINE, &[&format!("jobs.0.scheme=\"{s}\"")]);
        assert!(!b.sim.jobs.is_empty());
        assert!(
            all_done(&b),
            "{s}: {} of {} done",
            b.sim.jobs.iter().filter(|j| j.done.is_some()).count(),
            b.sim.jobs.len()
        );
    }
}

#[test]
fn samplesend_sends_msr_of_the_messages_earlysend_sends_all() {
    let ss = run(LEAF_SPINE, &["jobs.0.scheme=\"dctcp-ss\""]);
    assert!(ss
        .sim
        .jobs
        .iter()
        .all(|j| j.sent_msgs == 4 && j.needed == 4));
    let es = run(LEAF_SPINE, &["jobs.0.scheme=\"dctcp-es\""]);
    assert!(es
        .sim
        .jobs
        .iter()
        .all(|j| j.sent_msgs == 8 && j.delivered >= 4));
    // EarlySend stops its flow once enough arrived
    assert!(es.sim.flows.iter().any(|f| f.cancelled));
    let exact = run(
        LEAF_SPINE,
        &["jobs.0.scheme=\"dctcp\"", "jobs.0.approximate=false"],
    );
    assert!(exact.sim.jobs.iter().all(|j| j.delivered == 8));
}

#[test]
fn udp_loses_under_incast_and_counts_whole_messages() {
    let b = run(&incast(8, 2.0, 400_000, "udp"), &["switch.buffer_kb=100.0"]);
    assert!(b.sim.counters.drops > 0);
    let f = &b.sim.flows[0];
    assert_eq!(f.stats().retx_pkts, 0);
    assert!(b.sim.jobs.iter().any(|j| j.done.is_none()));
}

#[test]
fn pfabric_uses_tiny_buffers_and_still_delivers() {
    let b = run(&incast(8, 5.0, 200_000, "pfabric"), &[]);
    assert!(
        b.sim.counters.drops > 0,
        "8 line-rate starts into a ~2 BDP buffer must drop"
    );
    assert!(b.sim.flows.iter().all(|f| f.done.is_some()));
}
