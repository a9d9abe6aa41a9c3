//! Golden regression checks: exact packet counts of small fixed scenarios.
//! A change to these numbers is a change in simulated behaviour: update
//! them only on purpose, and say why in the commit.

mod common;
use common::*;

#[test]
fn small_dctcp_dumbbell_exact_counts() {
    let b = run(&incast(4, 5.0, 1_000_000, "dctcp"), &[]);
    let c = b.sim.counters;
    let marks: u64 = b
        .sim
        .net
        .ports
        .iter()
        .flat_map(|p| p.queues.iter())
        .map(|q| q.stats.marked)
        .sum();
    let got = (
        c.hops,
        c.drops,
        c.delivered_data,
        marks,
        b.sim.events.executed(),
    );
    println!("{got:?}");
    assert_eq!(got, GOLDEN_DUMBBELL);
    // every flow finished, nothing lost, nothing retransmitted
    assert!(b.sim.flows.iter().all(|f| f.done.is_some() && f.drops == 0));
    assert!(b.sim.flows.iter().all(|f| f.stats().retx_pkts == 0));
}

/// (hops, drops, data packets delivered, ECN marks, events)
const GOLDEN_DUMBBELL: (u64, u64, u64, u64, u64) = (11056, 0, 2764, 529, 14708);

#[test]
fn same_seed_same_bytes_different_seed_differs() {
    let text = include_str!("../../../benches/ns3/dumbbell_dctcp.toml");
    let sets = ["duration_ms=3.0", "topology.senders=6", "jobs.0.target=6"];
    let a = summary(&run(text, &sets));
    let b = summary(&run(text, &sets));
    assert_eq!(a, b);
    let mut s2 = sets.to_vec();
    s2.push("seed=2");
    let c = summary(&run(text, &s2));
    assert_ne!(a, c);
}
