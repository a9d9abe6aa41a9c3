//! Switch behaviour: DCTCP queue around K, strict priority and DRR at a
//! bottleneck, ECMP determinism and path spread, bit errors.

mod common;
use common::*;

#[test]
fn dctcp_holds_the_queue_near_k_without_drops() {
    let b = run(&incast(16, 10.0, 10_000_000, "dctcp"), &[]);
    let q = mean_queue_pkts(&b, "h16");
    assert!((45.0..85.0).contains(&q), "mean queue {q} pkts, K = 65");
    assert_eq!(b.sim.counters.drops, 0);
    let got: u64 = b.sim.flows.iter().map(|f| f.received_bytes()).sum();
    let gbps = got as f64 * 8.0 / 10e-3 / 1e9;
    assert!(gbps > 9.0, "goodput {gbps}");
}

#[test]
fn lower_k_gives_a_lower_queue() {
    let b = run(
        &incast(16, 10.0, 10_000_000, "dctcp"),
        &["switch.ecn_k_pkts=20"],
    );
    let q = mean_queue_pkts(&b, "h16");
    assert!((10.0..35.0).contains(&q), "mean queue {q} pkts, K = 20");
}

#[test]
fn tcp_without_ecn_fills_the_buffer_and_drops() {
    let b = run(
        &incast(16, 10.0, 10_000_000, "tcp"),
        &["switch.buffer_kb=150.0"],
    );
    assert!(b.sim.counters.drops > 0);
    let retx: u64 = b.sim.flows.iter().map(|f| f.stats().retx_pkts).sum();
    assert!(retx > 0);
}

fn two_queue_udp(sched: &str) -> Vec<u64> {
    let text = r#"
duration_ms = 1.0
[topology]
kind = "dumbbell"
senders = 2
host_gbps = 10.0
[switch]
queues = 2
weights = [3.0, 1.0]
ecn_k_pkts = 0
[[jobs]]
pattern = "bulk"
senders = [0]
target = 2
sizes = "fixed:5000000"
load = 0.0
scheme = "udp"
queue = 0
[[jobs]]
pattern = "bulk"
senders = [1]
target = 2
sizes = "fixed:5000000"
load = 0.0
scheme = "udp"
queue = 1
"#;
    let b = run(text, &[&format!("switch.scheduler=\"{sched}\"")]);
    b.sim.flows.iter().map(|f| f.received_bytes()).collect()
}

#[test]
fn strict_priority_starves_the_lower_queue() {
    let got = two_queue_udp("strict");
    assert!(got[0] > 1_100_000, "{got:?}");
    // the low queue only got the first packets through before the high one filled the port
    assert!(got[1] < got[0] / 50, "{got:?}");
}

#[test]
fn drr_shares_by_weight() {
    let got = two_queue_udp("drr");
    let ratio = got[0] as f64 / got[1] as f64;
    assert!((2.8..3.2).contains(&ratio), "{got:?} ratio {ratio}");
}

const FAT_TREE: &str = r#"
duration_ms = 1.0
seed = 7
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
[[jobs]]
sizes = "fixed:10000"
load = 0.3
scheme = "dctcp"
"#;

#[test]
fn ecmp_is_deterministic_and_spreads_over_cores() {
    let a = run(FAT_TREE, &[]);
    let b = run(FAT_TREE, &[]);
    assert_eq!(summary(&a), summary(&b));
    let per_port = |x: &approxnet_sim::scenario::Built| {
        x.sim
            .net
            .ports
            .iter()
            .map(|p| p.tx_pkts())
            .collect::<Vec<_>>()
    };
    assert_eq!(per_port(&a), per_port(&b));
    let net = &a.sim.net;
    let core_ports_used = net
        .ports
        .iter()
        .filter(|p| net.nodes[p.peer as usize].name.starts_with("core") && p.tx_pkts() > 0)
        .count();
    assert!(
        core_ports_used == 16,
        "only {core_ports_used} of 16 agg->core ports used"
    );
}

#[test]
fn packet_spraying_uses_all_paths_for_one_flow() {
    let text = r#"
duration_ms = 1.0
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
ecmp = "spray"
[[jobs]]
pattern = "bulk"
senders = [0]
target = 15
sizes = "fixed:1000000"
load = 0.0
scheme = "dctcp"
"#;
    let b = run(text, &[]);
    let net = &b.sim.net;
    let up = net
        .ports
        .iter()
        .filter(|p| net.nodes[p.peer as usize].name.starts_with("core") && p.tx_pkts() > 0)
        .count();
    assert!(up >= 3, "{up}");
    assert!(b.sim.flows[0].done.is_some());
}

#[test]
fn bit_errors_corrupt_native_packets_and_tcp_recovers() {
    // 40 ms: with the SYN and ns-2's initial window of 2, one sender's
    // three RTOs (5 ms floor, backed off) end at ~20.2 ms
    let b = run(&incast(2, 40.0, 1_000_000, "tcp"), &["topology.ber=1e-6"]);
    assert!(b.sim.counters.corrupted > 0);
    assert!(b.sim.flows.iter().all(|f| f.done.is_some()));
}
