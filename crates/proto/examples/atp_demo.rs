//! The foundation demo: one job through two ATP endpoints over the
//! deterministic lossy virtual link, at MSR 1.0, 0.75 and 0.5.
//!
//! Run: `cargo run --release -p approxnet-proto --example atp_demo`

use approxnet_proto::event::{JobReport, Role};
use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Event, JobSpec, Rate};

const MESSAGES: usize = 2000;
const METADATA: usize = 20;

fn job(msr: f64) -> JobSpec {
    // Group 0: the data, with the job's MSR. Group 1: metadata that must arrive (MSR 1).
    let mut spec = JobSpec::new(msr).unwrap().group(1, 1.0).unwrap();
    for i in 0..MESSAGES {
        spec = spec.message(0, vec![(i % 256) as u8; 1000 + (i * 37) % 4000]);
    }
    for i in 0..METADATA {
        spec = spec.message(1, format!("metadata record {i}").into_bytes());
    }
    spec
}

fn main() {
    let link = LinkConfig {
        delay: Duration::from_micros(25),
        rate: Rate::gbps(4.0),
        buffer: 64 * 1024,
        loss: 0.05,
        burst_enter: 0.01,
        burst_exit: 0.25,
        burst_loss: 0.5,
        reorder: 0.01,
        ..LinkConfig::default()
    };
    let cfg = Config {
        line_rate: Rate::gbps(10.0),
        ..Config::default()
    };
    println!("approxnet ATP demo: {MESSAGES} data messages (group 0) + {METADATA} metadata (group 1, MSR 1)");
    println!("sender NIC 10 Gbps into a 4 Gbps bottleneck (64 KB buffer), 25 us one way,\n5% random loss + bursts, 1% reordering; seed 42\n");
    println!(
        "{:>5} | {:>18} | {:>14} | {:>9} | {:>10} | {:>8} | {:>10}",
        "MSR", "group 0 delivered", "group 1", "pkt loss", "JCT", "retx", "guarantee"
    );
    println!("{}", "-".repeat(95));
    let mut all_held = true;
    for msr in [1.0, 0.75, 0.5] {
        let mut pair = Pair::symmetric(cfg, link, 42);
        let Some(id) = pair.transfer(job(msr), Duration::from_secs(10)) else {
            println!("{msr:>5} | job did not finish within 10 s of virtual time");
            all_held = false;
            continue;
        };
        let report =
            |events: &[(approxnet_proto::ConnectionHandle, Event)], role| -> Option<JobReport> {
                events.iter().find_map(|(_, e)| match e {
                    Event::JobComplete {
                        job,
                        role: r,
                        outcome: Ok(rep),
                    } if *job == id && *r == role => Some(rep.clone()),
                    _ => None,
                })
            };
        let (Some(s), Some(r)) = (
            report(&pair.client_events, Role::Sender),
            report(&pair.server_events, Role::Receiver),
        ) else {
            println!("{msr:>5} | job failed");
            all_held = false;
            continue;
        };
        let g = |id: u16| r.groups.iter().find(|g| g.id == id).cloned().unwrap();
        let (g0, g1) = (g(0), g(1));
        let held = r.guarantee_held() && s.guarantee_held();
        all_held &= held;
        println!(
            "{:>5.2} | {:>8}/{:<4} (>={:>4}) | {:>6}/{:<7} | {:>8.2}% | {:>10} | {:>8} | {:>10}",
            msr,
            g0.delivered,
            g0.messages,
            g0.must_deliver,
            g1.delivered,
            g1.messages,
            100.0 * s.loss_rate(),
            s.jct.to_string(),
            s.retransmissions,
            if held { "held" } else { "MISSED" }
        );
    }
    println!("\nJCT is virtual time at the sender; packet loss is the share of DATA packets declared lost.");
    if !all_held {
        std::process::exit(1);
    }
}
