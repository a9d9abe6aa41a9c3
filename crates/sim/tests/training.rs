//! Distributed-training jobs: parameter server and ring all-reduce.

mod common;
use common::*;

const TRAIN: &str = r#"
duration_ms = 20.0
[topology]
kind = "leaf_spine"
spines = 2
leaves = 2
hosts_per_leaf = 4
host_gbps = 40.0
[switch]
queues = 1
[[training]]
name = "ps"
collective = "ps"
workers = [0, 1, 2, 4, 5, 6]
server = 7
iterations = 3
compute_us = 100.0
gradient_kb = 500.0
messages = 20
scheme = "dctcp"
[[training]]
name = "ring"
collective = "ring"
workers = [0, 1, 2, 3, 4, 5]
iterations = 3
compute_us = 100.0
gradient_kb = 500.0
messages = 20
scheme = "dctcp"
"#;

#[test]
fn both_collectives_finish_every_iteration_with_a_barrier() {
    let b = run(TRAIN, &[]);
    for t in &b.sim.trainings {
        assert_eq!(t.state.iterations.len(), 3, "{}", t.state.spec.name);
        assert!(t.state.done().is_some());
        // iterations are back to back and each includes the compute time
        for w in t.state.iterations.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
        for (a, e) in &t.state.iterations {
            assert!((*e - *a).as_nanos() > 100_000);
        }
    }
    // PS: 2 x 6 transfers per iteration; ring: 2 x (6 - 1) steps x 6 transfers
    let per = |c: u32| b.sim.jobs.iter().filter(|j| j.class == c).count();
    assert_eq!(per(0), 3 * 12);
    assert_eq!(per(1), 3 * 60);
    assert_eq!(summary(&b), summary(&run(TRAIN, &[])));
}

#[test]
fn a_loss_bound_shortens_parameter_server_iterations() {
    let exact = run(TRAIN, &[]);
    let bounded = run(
        TRAIN,
        &["training.0.scheme=\"dctcp-es\"", "training.0.msr=0.7"],
    );
    let mean = |b: &approxnet_sim::scenario::Built| {
        let it = &b.sim.trainings[0].state.iterations;
        it.iter().map(|(a, e)| (*e - *a).as_nanos()).sum::<u64>() / it.len() as u64
    };
    assert!(
        mean(&bounded) < mean(&exact),
        "{} vs {}",
        mean(&bounded),
        mean(&exact)
    );
}

#[test]
fn udp_transfers_end_when_every_datagram_arrived_or_was_lost() {
    // the parameter-server incast at line rate overflows the server's
    // port: UDP loses datagrams, never resends them, and the training
    // still runs every iteration on what arrived
    let b = run(
        TRAIN,
        &["training.0.scheme=\"udp\"", "training.1.scheme=\"udp\""],
    );
    for t in &b.sim.trainings {
        assert_eq!(t.state.iterations.len(), 3, "{}", t.state.spec.name);
    }
    let ps: Vec<_> = b.sim.jobs.iter().filter(|j| j.class == 0).collect();
    assert_eq!(ps.len(), 3 * 12);
    assert!(ps.iter().all(|j| j.done.is_some()));
    let lossy = ps
        .iter()
        .filter(|j| j.delivered < j.msgs.len() as u32)
        .count();
    assert!(lossy > 0, "the incast should lose datagrams");
    let lost: u64 = b.sim.flows.iter().map(|f| f.drops).sum();
    assert!(lost > 0);
    // a lossless transfer still ends with its last datagram
    let whole = ps
        .iter()
        .filter(|j| j.delivered == j.msgs.len() as u32)
        .count();
    assert_eq!(whole + lossy, ps.len());
}

#[test]
fn bad_training_entries_are_named() {
    let sets = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for (bad, want) in [
        ("training.0.collective=\"tree\"", "training.0.collective"),
        ("training.0.server=2", "training.0.server"),
        ("training.1.workers=[3]", "training.1.workers"),
    ] {
        let f = approxnet_sim::scenario::parse(TRAIN, &sets(&[bad])).unwrap();
        let e = approxnet_sim::scenario::build(&f)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}
