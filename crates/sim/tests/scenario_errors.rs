//! Bad scenario files get messages that name the key and the allowed values.

use approxnet_sim::scenario;

const OK: &str = r#"
duration_ms = 1.0
[topology]
kind = "fat_tree"
k = 4
host_gbps = 10.0
[[jobs]]
sizes = "fbkv"
load = 0.1
scheme = "dctcp"
"#;

fn err(sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match scenario::parse(OK, &sets) {
        Err(e) => e.to_string(),
        Ok(f) => match scenario::build(&f) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sets:?} accepted"),
        },
    }
}

#[test]
fn the_base_scenario_is_fine() {
    scenario::build(&scenario::parse(OK, &[]).unwrap()).unwrap();
}

#[test]
fn unknown_key_is_named_with_alternatives() {
    let e = err(&["topology.kk=4"]);
    assert!(e.contains("kk") && e.contains("host_gbps"), "{e}");
}

#[test]
fn bad_values_name_key_and_allowed() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["jobs.0.scheme=\"quic\""],
            &["jobs.0.scheme", "dctcp-es", "atp-full"],
        ),
        (
            &["jobs.0.sizes=\"huge\""],
            &["jobs.0.sizes", "fbkv", "web_search"],
        ),
        (&["jobs.0.msr=1.7"], &["jobs.0.msr", "0 < msr <= 1"]),
        (&["topology.kind=\"ring\""], &["topology.kind", "fat_tree"]),
        (&["topology.k=5"], &["topology.k", "even"]),
        (&["topology.host_gbps=-1.0"], &["topology.host_gbps", "> 0"]),
        (
            &["switch.scheduler=\"wfq2\""],
            &["switch.scheduler", "strict, drr"],
        ),
        (
            &["switch.scheduler=\"drr\"", "switch.weights=[1.0]"],
            &["switch.weights", "8 positive"],
        ),
        (
            &["topology.ecmp=\"random\""],
            &["topology.ecmp", "flow, spray"],
        ),
        (&["jobs.0.pattern=\"ring\""], &["jobs.0.pattern", "incast"]),
        (
            &["jobs.0.gaps=\"pareto\""],
            &["jobs.0.gaps", "unknown", "fbkv", "exp:<mean_us>"],
        ),
        (
            &["jobs.0.gaps=\"exp:0\""],
            &["jobs.0.gaps", "mean must be > 0"],
        ),
        (
            &["jobs.0.gaps=\"fixed:-3\""],
            &["jobs.0.gaps", "gap must be >= 0"],
        ),
        (
            &["jobs.0.gaps=\"exp:soon\""],
            &["jobs.0.gaps", "not a number"],
        ),
        (
            &["jobs.0.scheme=\"atp-full\"", "atp.bundle_bytes=10000"],
            &["atp.bundle_bytes", "0 ..= 9000"],
        ),
        (
            &["jobs.0.scheme=\"atp-full\"", "atp.queue_rule=\"bounded\""],
            &["atp.queue_rule", "eq1 or msr-bounded"],
        ),
        (
            &["jobs.0.pattern=\"incast\"", "jobs.0.target=99"],
            &["jobs.0.target", "0 ..= 15"],
        ),
        (
            &["output.queue_ports=\"x\""],
            &["output.queue_ports", "host_facing"],
        ),
        (&["duration_ms=0.0"], &["duration_ms"]),
        (
            &["switch.buffer_preset=\"big\""],
            &["switch.buffer_preset", "netapprox"],
        ),
        (&["jobs.0.queue=9"], &["jobs.queue"]),
        (&["switch.dt_alpha=0.0"], &["switch.dt_alpha", "> 0"]),
        (
            &["switch.queue_reserved_kb=-1.0"],
            &["switch.queue_reserved_kb", ">= 0"],
        ),
        (
            &["switch.queue_reserved_kb=100.0"],
            &[
                "switch.queue_reserved_kb",
                "more than its 1500000-byte buffer",
            ],
        ),
    ];
    for (sets, want) in cases {
        let e = err(sets);
        for w in *want {
            assert!(e.contains(w), "{sets:?}: {e:?} lacks {w:?}");
        }
    }
}

#[test]
fn malformed_override_is_refused() {
    let e = err(&["no_equals_sign"]);
    assert!(e.contains("key.path=value"), "{e}");
}

#[test]
fn missing_file_names_the_path() {
    let e = scenario::load(std::path::Path::new("/nonexistent/x.toml"), &[]).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.toml"));
}

#[test]
fn follow_needs_another_native_class() {
    let e = err(&["jobs.0.follow=\"nobody\""]);
    assert!(
        e.contains("jobs.0.follow") && e.contains("another class"),
        "{e}"
    );
    let e = err(&["jobs.0.follow_at_ms=[1.0]"]);
    assert!(e.contains("jobs.0.follow"), "{e}");
}
