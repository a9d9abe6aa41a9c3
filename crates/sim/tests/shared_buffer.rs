//! Strict priority under a shared switch buffer (issue 12 item 2): a
//! low-priority queue that is never served must not lock the high-priority
//! queue out of the buffer.

mod common;
use common::*;

/// Two UDP senders at line rate into host 2 through one switch, one in
/// queue 0 and one in queue 7 of the same egress port, 20 ms.
const TWO_QUEUES: &str = r#"
duration_ms = 20.0
[topology]
kind = "dumbbell"
senders = 2
host_gbps = 10.0
[[jobs]]
name = "q0"
pattern = "bulk"
senders = [0]
target = 2
sizes = "fixed:30000000"
load = 0.0
scheme = "udp"
queue = 0
[[jobs]]
name = "q7"
pattern = "bulk"
senders = [1]
target = 2
sizes = "fixed:30000000"
load = 0.0
scheme = "udp"
queue = 7
"#;

/// Delivered payload of each class as a fraction of the port's payload
/// capacity over the run (1460 of 1500 bytes per packet at 10 Gbps).
fn shares(sets: &[&str]) -> (f64, f64) {
    let b = run(TWO_QUEUES, sets);
    let cap = 10e9 / 8.0 * 20e-3 * 1460.0 / 1500.0;
    let of = |class: u32| {
        b.sim
            .jobs
            .iter()
            .filter(|j| j.class == class)
            .map(|j| j.delivered_bytes as f64)
            .sum::<f64>()
            / cap
    };
    (of(0), of(1))
}

#[test]
fn default_buffer_respects_strict_priority() {
    let (q0, q7) = shares(&[]);
    assert!(q0 > 0.98, "queue 0 got {q0}");
    assert!(q7 < 0.02, "queue 7 got {q7}");
}

#[test]
fn complete_sharing_inverts_priority() {
    // the old default: queue 7 fills the whole buffer in ~1.2 ms, then
    // queue 0 is refused
    let (q0, q7) = shares(&["switch.buffer_preset=\"complete\""]);
    assert!(q0 < 0.15 && q7 > 0.8, "{q0} {q7}");
}

#[test]
fn either_mechanism_alone_restores_priority_here() {
    for set in ["switch.dt_alpha=8.0", "switch.queue_reserved_kb=1.5"] {
        let (q0, q7) = shares(&["switch.buffer_preset=\"complete\"", set]);
        assert!(q0 > 0.98 && q7 < 0.02, "{set}: {q0} {q7}");
    }
}

#[test]
fn dynamic_threshold_leaves_the_pool_free_share() {
    // queue 7 is never served: it settles at alpha / (1 + alpha) of the pool
    for alpha in [1.0, 8.0] {
        let set = format!("switch.dt_alpha={alpha}");
        let b = run(TWO_QUEUES, &[&set]);
        let sw = b.sim.net.nodes.iter().find(|n| n.name == "sw0").unwrap();
        let port = sw
            .ports
            .iter()
            .map(|&p| &b.sim.net.ports[p as usize])
            .find(|p| b.sim.net.nodes[p.peer as usize].name == "h2")
            .unwrap();
        let held = port.queues[7].stats.max_bytes as f64;
        let pool = sw.buffer.pool as f64;
        let want = alpha / (1.0 + alpha) * pool;
        assert!(
            (held - want).abs() < 3000.0,
            "alpha {alpha}: {held} vs {want}"
        );
    }
}
