//! Which jobs a `[[jobs]]` pattern creates, and which combinations are
//! refused (issue 12 item 6).

mod common;
use approxnet_sim::scenario;
use common::*;

const BASE: &str = r#"
duration_ms = 1.0
[topology]
kind = "dumbbell"
senders = 2
receivers = 2
host_gbps = 10.0
[[jobs]]
pattern = "pairs"
pairs = [[0, 2], [1, 3]]
sizes = "fixed:20000"
load = 0.0
scheme = "dctcp"
start_ms = 0.1
"#;

fn build_err(sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let f = scenario::parse(BASE, &sets).expect("parses");
    match scenario::build(&f) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{sets:?} accepted"),
    }
}

#[test]
fn pairs_without_load_is_one_job_per_pair() {
    let b = run(BASE, &[]);
    let got: Vec<(u32, u32, u64)> = b
        .sim
        .jobs
        .iter()
        .map(|j| (j.src, j.dst, j.start.as_nanos()))
        .collect();
    assert_eq!(got, vec![(0, 2, 100_000), (1, 3, 100_000)]);
    assert!(b.sim.jobs.iter().all(|j| j.done.is_some()));
}

#[test]
fn a_poisson_class_with_no_load_is_switched_off() {
    // what fig14's "alone" runs rely on
    let text = BASE.replace(
        "pattern = \"pairs\"\npairs = [[0, 2], [1, 3]]",
        "pattern = \"all_to_all\"",
    );
    assert!(run(&text, &[]).sim.jobs.is_empty());
    assert!(!run(&text, &["jobs.0.load=0.3"]).sim.jobs.is_empty());
}

#[test]
fn pairs_with_load_is_a_poisson_stream_per_pair() {
    let b = run(BASE, &["jobs.0.load=0.3"]);
    assert!(b.sim.jobs.len() > 4, "{}", b.sim.jobs.len());
}

#[test]
fn patterns_that_would_ignore_a_key_are_refused() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["jobs.0.pattern=\"bulk\"", "jobs.0.load=0.5"],
            &["jobs.0.load", "one job per sender"],
        ),
        (
            &["jobs.0.jitter_us=5.0"],
            &["jobs.0.jitter_us", "only with pattern \"bulk\""],
        ),
        (
            &["jobs.0.pattern=\"all_to_all\"", "jobs.0.load=0.1"],
            &["jobs.0.pairs", "only with pattern \"pairs\""],
        ),
    ];
    for (sets, want) in cases {
        let e = build_err(sets);
        for w in *want {
            assert!(e.contains(w), "{sets:?}: {e:?} lacks {w:?}");
        }
    }
}
