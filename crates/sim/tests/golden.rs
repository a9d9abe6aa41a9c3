//! Golden regression checks: exact packet counts of small fixed scenarios.
//! A change to these numbers is a change in simulated behaviour: update
//! them only on purpose, and say why in the commit.

mod common;
use approxnet_sim::scenario::Built;
use common::*;

/// (hops, drops, data packets delivered, ECN marks, events) of a finished run.
fn counts(b: &Built) -> (u64, u64, u64, u64, u64) {
    let c = b.sim.counters;
    (
        c.hops,
        c.drops,
        c.delivered_data,
        ecn_marks(b),
        b.sim.events.executed(),
    )
}

#[test]
fn small_dctcp_dumbbell_exact_counts() {
    let b = run(&incast(4, 5.0, 1_000_000, "dctcp"), &[]);
    let got = counts(&b);
    println!("{got:?}");
    assert_eq!(got, GOLDEN_DUMBBELL);
    // every flow finished, nothing lost, nothing retransmitted
    assert!(b.sim.flows.iter().all(|f| f.done.is_some() && f.drops == 0));
    assert!(b.sim.flows.iter().all(|f| f.stats().retx_pkts == 0));
}

/// (hops, drops, data packets delivered, ECN marks, events). Changed with
/// issue 10: initial window 2 (ns-2's default, was 10) and a SYN / SYN-ACK
/// before each sender's first data (+16 hops: 4 pairs x 2 packets x 2 hops).
const GOLDEN_DUMBBELL: (u64, u64, u64, u64, u64) = (11072, 0, 2764, 551, 14696);

/// With the old defaults (initial window 10, no handshake) the old numbers
/// come back: production over time and the new transport code change
/// nothing else for jobs that are ready at once.
#[test]
fn old_defaults_give_the_old_counts() {
    let b = run(
        &incast(4, 5.0, 1_000_000, "dctcp"),
        &["transport.init_cwnd_pkts=10", "transport.handshake=false"],
    );
    let got = counts(&b);
    assert_eq!(got, (11056, 0, 2764, 529, 14708));
}

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
