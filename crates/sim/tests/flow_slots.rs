//! Flow slots reused once nothing names the flow (`engine::slots`): a run
//! that reuses them gives exactly the jobs, flows and counters of one that
//! keeps every flow, although flows finish with packets and timers of
//! theirs still outstanding (late duplicates and ACKs after a loss, a
//! retransmission deadline still armed), which a slot freed at once would
//! hand to the next flow.

use approxnet_sim::scenario::{self, Built};

/// A k = 4 fat-tree under DCTCP, TCP and pFabric, with small switch
/// buffers, bit errors and a retransmission timeout about one round trip
/// under load: drops, timeouts and spurious retransmissions that arrive
/// after their flow is acknowledged.
const LOSSY: &str = r#"
duration_ms = 1.5
seed = 7
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
link_delay_us = 2.0
ber = 2e-7
[switch]
buffer_kb = 15.0
[transport]
min_rto_us = 25.0
initial_rto_us = 25.0
[[jobs]]
name = "dctcp"
sizes = "fbkv"
messages = 4
load = 0.15
scheme = "dctcp"
[[jobs]]
name = "tcp"
sizes = "fbkv"
messages = 3
load = 0.15
scheme = "tcp"
[[jobs]]
name = "pfabric"
sizes = "fbkv"
messages = 2
load = 0.15
scheme = "pfabric"
"#;

/// Runs `LOSSY`; reuses slots if `reuse` is `Some(keep records)`.
fn run(reuse: Option<bool>) -> Built {
    let f = scenario::parse(LOSSY, &[]).expect("scenario parses");
    let mut b = scenario::build(&f).expect("scenario builds");
    if let Some(records) = reuse {
        b.sim.reuse_flow_slots(records);
    }
    b.sim.run();
    b.sim.finalize();
    b
}

#[test]
fn reused_slots_change_no_outcome() {
    let keep = run(None);
    let reuse = run(Some(true));
    let flows = keep.sim.flow_records();
    assert_eq!(reuse.sim.flow_records(), flows);
    // every job's record but the index of its flow's slot and its message
    // list (freed with the flow; its count and bytes stay)
    let jobs = |b: &Built| -> Vec<String> {
        b.sim
            .jobs
            .iter()
            .map(|j| {
                format!(
                    "{:?}",
                    approxnet_sim::job::Job {
                        flow: None,
                        msgs: Vec::new(),
                        ..j.clone()
                    }
                )
            })
            .collect()
    };
    assert_eq!(jobs(&reuse), jobs(&keep));
    let freed = reuse.sim.jobs.iter().filter(|j| j.msgs.is_empty()).count();
    assert!(freed * 2 > reuse.sim.jobs.len(), "{freed} lists freed");
    assert!(keep
        .sim
        .jobs
        .iter()
        .all(|j| j.msgs.len() == j.n_msgs as usize));
    // without flow records: the same jobs
    let bare = run(Some(false));
    assert_eq!(jobs(&bare), jobs(&keep));
    assert_eq!(bare.sim.counters, keep.sim.counters);
    assert_eq!(reuse.sim.counters, keep.sim.counters);
    assert_eq!(reuse.sim.events.executed(), keep.sim.events.executed());
    eprintln!(
        "{} flows, {} done, {} slots, {} deferred, {:?} stale timers, {:?}",
        flows.len(),
        flows.iter().filter(|f| f.done.is_some()).count(),
        reuse.sim.flows.len(),
        reuse.sim.deferred_frees(),
        reuse.sim.stale_timers(),
        keep.sim.counters
    );
    // the run is lossy, and slots were reused many times over
    assert!(keep.sim.counters.drops > 100, "{:?}", keep.sim.counters);
    assert!(flows.iter().any(|f| f.stats.timeouts > 0));
    assert!(flows.len() > 1_000, "{} flows", flows.len());
    assert!(
        reuse.sim.flows.len() * 4 < flows.len(),
        "{} slots for {} flows",
        reuse.sim.flows.len(),
        flows.len()
    );
    assert_eq!(keep.sim.flows.len(), flows.len());
    // many flows retired with a packet or timer of theirs outstanding: a
    // slot freed at retirement would have met it later
    assert!(
        reuse.sim.deferred_frees() > 100,
        "{}",
        reuse.sim.deferred_frees()
    );
}
