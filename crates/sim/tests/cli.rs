//! The `approxnet-sim` binary: help, quiet runs, the summary's queue line
//! (issue 12 item 6).

mod common;
use std::process::Command;

fn sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_approxnet-sim"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn scenario_file(dir: &std::path::Path) -> String {
    let path = dir.join("incast.toml");
    std::fs::write(&path, common::incast(4, 2.0, 200_000, "dctcp")).unwrap();
    path.to_string_lossy().into_owned()
}

/// Runs the incast scenario written in `dir` with `--out dir/out` and
/// `extra` flags; returns the output directory and the process's output.
fn run_in(dir: &std::path::Path, extra: &[&str]) -> (std::path::PathBuf, std::process::Output) {
    let out_dir = dir.join("out");
    let scenario = scenario_file(dir);
    let mut args = vec!["run", &scenario, "--out", out_dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = sim(&args);
    (out_dir, o)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("approxnet-sim-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn help_prints_usage_and_succeeds() {
    for args in [&["run", "--help"][..], &["--help"], &["run", "-h"]] {
        let o = sim(args);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(out.contains("Usage: approxnet-sim run"), "{args:?}: {out}");
        assert!(!err.contains("unknown option"), "{args:?}: {err}");
    }
    assert_eq!(sim(&["run", "--bogus"]).status.code(), Some(2));
}

#[test]
fn quiet_prints_nothing_and_still_writes_results() {
    let d = tmp("quiet");
    let (out_dir, o) = run_in(&d, &["--quiet"]);
    assert!(o.status.success());
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out_dir.join("summary.json").exists());
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn summary_names_the_busiest_sampled_port() {
    // incast of 4 senders into host 4: the switch port to h4 is the bottleneck
    let d = tmp("busiest");
    let (out_dir, o) = run_in(&d, &[]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("sampled queues"))
        .unwrap_or_else(|| panic!("no queue line in {text}"));
    assert!(
        line.contains("over 5 ports") && line.contains("busiest sw0->h4"),
        "{line}"
    );
    let json = std::fs::read_to_string(out_dir.join("summary.json")).unwrap();
    assert!(json.contains("\"busiest_port\":\"sw0->h4\""), "{json}");
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn topo_reports_hop_counts_and_flow_mode_runs() {
    let d = tmp("topo");
    let path = d.join("df.toml");
    std::fs::write(
        &path,
        "mode = \"flow\"\nduration_ms = 1.0\n[topology]\nkind = \"dragonfly\"\ngroups = 5\n\
         routers_per_group = 2\nglobal_links = 2\nhosts_per_switch = 2\nhost_gbps = 10.0\n\
         [[jobs]]\nsizes = \"fbkv\"\nload = 0.2\nscheme = \"dctcp\"\n",
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let o = sim(&["topo", &p]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // 10 routers in 5 fully connected groups of 2: local, global, local
    assert!(
        out.contains("hosts: 20\n") && out.contains("diameter_hops: 5\n"),
        "{out}"
    );
    let bad = sim(&["topo", &p, "--set", "topology.global_links=1"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("topology.global_links"));
    let out_dir = d.join("out");
    let o = sim(&["run", &p, "--quiet", "--out", &out_dir.to_string_lossy()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out_dir.join("summary.json")).unwrap();
    assert!(summary.contains("\"mode\":\"flow\""), "{summary}");
    std::fs::remove_dir_all(&d).unwrap();
}
