//! The packet trace (`[output] trace_packets`, issue 18): it records what
//! happened without changing it, its drops are the run's drops, it stops at
//! its limit, and a bad limit is an error naming the key.

mod common;
use approxnet_sim::scenario;
use common::*;

fn rows(b: &approxnet_sim::scenario::Built) -> Vec<Vec<String>> {
    let t = b.sim.trace.as_ref().expect("a trace");
    let mut out = Vec::new();
    t.write_csv(&mut out).expect("writes");
    let text = String::from_utf8(out).expect("utf-8");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("t_ns,event,at,src,dst,flow,kind,seq,bytes,ce")
    );
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn the_trace_records_the_run_without_changing_it() {
    // 8-to-1 incast into a 30 KB buffer: TCP loses packets
    let text = incast(8, 3.0, 200_000, "tcp");
    let small = ["switch.buffer_kb=30.0"];
    let plain = run(&text, &small);
    let traced = run(
        &text,
        &["switch.buffer_kb=30.0", "output.trace_packets=2000000"],
    );
    assert_eq!(summary(&plain), summary(&traced), "tracing changed the run");
    assert!(plain.sim.trace.is_none(), "off by default");
    let r = rows(&traced);
    assert_eq!(traced.sim.trace.as_ref().map(|t| t.missed), Some(0));
    let drops = r.iter().filter(|x| x[1] == "drop").count() as u64;
    assert!(drops > 0);
    assert_eq!(drops, traced.sim.counters.drops);
    let t: Vec<u64> = r.iter().map(|x| x[0].parse().expect("t_ns")).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "in time order");
    // every data packet the receiver got was sent by some port first
    let recv_data = r
        .iter()
        .filter(|x| x[1] == "recv" && x[6] == "Data" && x[4] == "8")
        .count();
    let tx_data = r.iter().filter(|x| x[1] == "tx" && x[6] == "Data").count();
    assert!(recv_data > 0 && tx_data >= recv_data);
}

#[test]
fn the_trace_stops_at_its_limit() {
    let b = run(
        &incast(4, 1.0, 50_000, "dctcp"),
        &["output.trace_packets=10"],
    );
    assert_eq!(rows(&b).len(), 10);
    assert!(b.sim.trace.as_ref().is_some_and(|t| t.missed > 0));
}

#[test]
fn a_bad_limit_names_the_key() {
    let f = scenario::parse(
        &incast(2, 1.0, 1000, "tcp"),
        &["output.trace_packets=60000000".to_string()],
    )
    .expect("parses");
    let e = scenario::build(&f)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("output.trace_packets"), "{e}");
    let neg = scenario::parse(
        &incast(2, 1.0, 1000, "tcp"),
        &["output.trace_packets=-1".to_string()],
    );
    assert!(neg.is_err());
}
