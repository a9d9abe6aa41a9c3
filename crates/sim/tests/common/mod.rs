//! Helpers shared by the integration tests.
#![allow(dead_code, missing_docs)]

use approxnet_proto::rng::Rng;
use approxnet_sim::fluid::Demand;
use approxnet_sim::output::Summary;
use approxnet_sim::scenario::{self, Built};

/// Builds a scenario from TOML text with overrides and runs it.
pub(crate) fn run(text: &str, sets: &[&str]) -> Built {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let f = scenario::parse(text, &sets).expect("scenario parses");
    let mut b = scenario::build(&f).expect("scenario builds");
    b.sim.run();
    b.sim.finalize();
    b
}

/// Summary without wall time (for byte-for-byte comparisons).
pub(crate) fn summary(b: &Built) -> String {
    Summary::compute("t", &b.sim, &b.classes, 0.0).json()
}

/// ECN marks over every queue of every port.
pub(crate) fn ecn_marks(b: &Built) -> u64 {
    b.sim
        .net
        .ports
        .iter()
        .flat_map(|p| p.queues.iter())
        .map(|q| q.stats.marked)
        .sum()
}

/// Mean of the sampled backlog (packets) of ports whose peer is `peer_name`.
pub(crate) fn mean_queue_pkts(b: &Built, peer_name: &str) -> f64 {
    let net = &b.sim.net;
    let v: Vec<f64> = b
        .sim
        .samples
        .iter()
        .filter(|s| net.nodes[net.ports[s.port as usize].peer as usize].name == peer_name)
        .map(|s| s.pkts as f64)
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A dumbbell of `n` senders into host `n` through one switch, 10 Gbps.
pub(crate) fn incast(n: u32, ms: f64, bytes: u64, scheme: &str) -> String {
    format!(
        r#"
duration_ms = {ms}
[topology]
kind = "dumbbell"
senders = {n}
host_gbps = 10.0
link_delay_us = 10.0
[switch]
queues = 1
buffer_kb = 1502.0
ecn_k_pkts = 65
[transport]
mss = 1448
header_bytes = 54
min_rto_us = 5000.0
[[jobs]]
pattern = "bulk"
target = {n}
jitter_us = 10.0
sizes = "fixed:{bytes}"
load = 0.0
scheme = "{scheme}"
[output]
queue_sample_us = 10.0
"#
    )
}

/// One sender, one receiver through one switch, 10 us per link: `jobs`
/// jobs of 8 x 1000 B messages produced with `gaps`, at load 0.05.
pub(crate) fn pair(scheme: &str, gaps: &str, msr: f64, jobs: u32) -> String {
    format!(
        r#"
duration_ms = 5.0
seed = 4
[topology]
kind = "dumbbell"
senders = 1
host_gbps = 10.0
link_delay_us = 10.0
[[jobs]]
pattern = "pairs"
pairs = [[0, 1]]
sizes = "fixed:1000"
messages = 8
gaps = "{gaps}"
load = 0.05
max_jobs = {jobs}
msr = {msr}
scheme = "{scheme}"
"#
    )
}

/// 4 senders -> 1 receiver, 64 KiB each, initial window 2, a 15 KB
/// (10-packet) tail-drop buffer, min RTO 5 ms.
pub(crate) fn small_incast(scheme: &str) -> String {
    format!(
        r#"
duration_ms = 20.0
[topology]
kind = "dumbbell"
senders = 4
host_gbps = 10.0
link_delay_us = 10.0
[switch]
queues = 1
buffer_kb = 15.0
[transport]
mss = 1448
header_bytes = 54
init_cwnd_pkts = 2
min_rto_us = 5000.0
initial_rto_us = 5000.0
[[jobs]]
pattern = "bulk"
target = 4
sizes = "fixed:65536"
load = 0.0
scheme = "{scheme}"
"#
    )
}

/// A flow of the flow-level solver.
pub(crate) fn demand(path: &[u32], weight: f64, cap: f64, priority: u8) -> Demand {
    Demand {
        path: path.to_vec(),
        weight,
        cap,
        priority,
    }
}

/// `len` distinct links out of `links` (all of them when there are fewer).
pub(crate) fn random_path(rng: &mut Rng, len: usize, links: usize) -> Vec<u32> {
    let mut path: Vec<u32> = Vec::new();
    while path.len() < len.min(links) {
        let l = rng.below(links as u64) as u32;
        if !path.contains(&l) {
            path.push(l);
        }
    }
    path
}

/// A random flow for the solver's randomized checks: 1 to 4 links, a weight
/// of 0.5 to 3, a rate cap of 0.5 to 4.4 one time in `cap_one_in` (none
/// otherwise), and a priority drawn from `priorities`.
pub(crate) fn random_demand(
    rng: &mut Rng,
    links: usize,
    cap_one_in: u64,
    priorities: &[u8],
) -> Demand {
    let len = 1 + rng.below(4) as usize;
    let path = random_path(rng, len, links);
    demand(
        &path,
        [1.0, 1.0, 2.0, 0.5, 3.0][rng.below(5) as usize],
        if rng.below(cap_one_in) == 0 {
            0.5 + rng.below(40) as f64 / 10.0
        } else {
            f64::INFINITY
        },
        priorities[rng.below(priorities.len() as u64) as usize],
    )
}
