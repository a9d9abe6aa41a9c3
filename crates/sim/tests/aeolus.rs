//! Aeolus (first RTT unscheduled at line rate, then receiver credits):
//! completion under incast, selective dropping, wasted credits.

mod common;
use common::*;

#[test]
fn aeolus_completes_every_flow_under_incast() {
    let b = run(&incast(8, 5.0, 200_000, "aeolus"), &[]);
    assert_eq!(b.sim.flows.len(), 8);
    for f in &b.sim.flows {
        assert!(f.done.is_some(), "flow {} unfinished", f.id);
        assert!(f.stats().credits > 0);
    }
    assert!(b.sim.credits_sent > 0);
    // eight BDP-sized line-rate bursts into one port: the unscheduled
    // packets above the selective-dropping threshold are dropped, and
    // recovered by credit-driven retransmission
    assert!(b.sim.counters.drops > 0);
    let retx: u64 = b.sim.flows.iter().map(|f| f.stats().retx_pkts).sum();
    assert!(retx > 0);
}

#[test]
fn credits_are_wasted_when_messages_are_produced_slowly() {
    let sets = [
        "topology.link_delay_us=2.0",
        "jobs.0.messages=60",
        "jobs.0.load=0.2",
    ];
    let b = run(&pair("aeolus", "fbkv", 1.0, 3), &sets);
    assert_eq!(b.sim.jobs.len(), 3);
    let mut wasted = 0;
    for j in &b.sim.jobs {
        assert!(j.done.is_some());
        assert_eq!(j.delivered, 60);
        let f = &b.sim.flows[j.flow.unwrap() as usize];
        wasted += f.stats().wasted_credits;
        // ~19 us between messages, one credit per ~1.2 us: most are wasted
        assert!(f.stats().wasted_credits > f.stats().credits / 2);
    }
    assert!(wasted > 0);
}

#[test]
fn aeolus_approximations_finish() {
    for s in ["aeolus-ss", "aeolus-es"] {
        let b = run(
            &incast(4, 5.0, 100_000, s),
            &["jobs.0.msr=0.5", "jobs.0.messages=10"],
        );
        assert!(b.sim.jobs.iter().all(|j| j.done.is_some()), "{s}");
        if s == "aeolus-es" {
            assert!(b.sim.flows.iter().all(|f| f.stopped_at.is_some()));
        }
    }
}
