//! The `approxnet-perf` binary through its command line: exit codes, short
//! ATP runs on 127.0.0.1 with `--json` (all messages ready at job start, and
//! produced over time), bounded by job count.

use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_approxnet-perf");

fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("{key} in {json}"));
    let rest = &json[at + key.len() + 3..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn bad_arguments_exit_with_2_before_any_io() {
    for args in [
        vec!["client"],
        vec!["client", "--server", "127.0.0.1:9", "--msr", "1.7"],
        vec!["client", "--server", "127.0.0.1:9", "--typo", "1"],
        vec!["client", "--server", "not-an-address"],
        vec!["client", "--server", "127.0.0.1:9", "--sizes", "weird:3"],
        vec!["bogus"],
        vec!["client", "--server", "127.0.0.1:9", "-R", "-P", "2"],
        vec![
            "client",
            "--server",
            "127.0.0.1:9",
            "-R",
            "--sizes",
            "cdf:x",
        ],
        vec!["client", "--server", "127.0.0.1:9", "--gap-us", "exp:0"],
        vec!["client", "--server", "127.0.0.1:9", "--gap-us", "poisson:5"],
        vec!["client", "--server", "127.0.0.1:9", "--produce-mbps", "-1"],
        vec![
            "client",
            "--server",
            "127.0.0.1:9",
            "--gap-us",
            "fixed:1",
            "--produce-mbps",
            "5",
        ],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let help = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("approxnet-perf client"));
}

/// A free UDP port on 127.0.0.1 (the client must know the server's port).
fn free_addr() -> String {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}")
}

/// Runs a server for `jobs` jobs and a client with `client_args` against
/// it on a free loopback port; returns (client, server) outputs.
fn server_and_client(jobs: &str, client_args: &[&str]) -> (Output, Output) {
    let addr = free_addr();
    let server = Command::new(BIN)
        .args([
            "server", "--bind", &addr, "--jobs", jobs, "--idle", "20", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = Command::new(BIN)
        .args([
            "client",
            "--server",
            &addr,
            "--jobs",
            jobs,
            "--duration",
            "20",
        ])
        .args(client_args)
        .arg("--json")
        .output()
        .unwrap();
    (client, server.wait_with_output().unwrap())
}

#[test]
fn client_and_server_run_jobs_and_report_json() {
    let (client, server) = server_and_client(
        "3",
        &[
            "--messages",
            "8",
            "--sizes",
            "uniform:100:20000",
            "--groups",
            "1.0,0.5",
            "-i",
            "0.002",
        ],
    );
    assert_eq!(
        client.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert_eq!(server.status.code(), Some(0));
    let c = String::from_utf8(client.stdout).unwrap();
    let s = String::from_utf8(server.stdout).unwrap();
    assert_eq!(field(&c, "jobs_completed"), "3");
    assert_eq!(field(&c, "jobs_failed"), "0");
    assert_eq!(field(&s, "jobs"), "3");
    assert!(c.contains("\"jct_ms\"") && c.contains("\"groups\"") && c.contains("\"timeline\""));
    // iperf3's -i: the interval series partitions the run and sums to it
    let report: serde_json::Value = serde_json::from_str(&c).unwrap();
    let series = report["intervals"].as_array().expect("an interval series");
    assert!(!series.is_empty());
    let jobs: u64 = series
        .iter()
        .map(|p| p["jobs_completed"].as_u64().unwrap())
        .sum();
    assert_eq!(jobs, 3);
    for w in series.windows(2) {
        assert_eq!(w[0]["end_s"], w[1]["start_s"]);
    }
}

#[test]
fn produced_messages_stop_at_the_msr() {
    // 16 messages 20 ms apart, MSR 0.5: the 8th is produced 140 ms after
    // the job starts, so no job can complete sooner, and the last messages
    // (produced 160-300 ms in) are never sent. The 160 ms between the 8th
    // and the 16th is the margin a loaded CI host has to deliver and
    // acknowledge the 8th (5 ms was too little on a busy 2-core runner).
    let (client, _) = server_and_client(
        "2",
        &[
            "--window",
            "1",
            "--messages",
            "16",
            "--sizes",
            "fixed:4000",
            "--msr",
            "0.5",
            "--gap-us",
            "fixed:20000",
        ],
    );
    let c = String::from_utf8(client.stdout).unwrap();
    assert_eq!(client.status.code(), Some(0), "{c}");
    assert_eq!(field(&c, "jobs_completed"), "2");
    assert_eq!(field(&c, "production"), "\"fixed:20000\"");
    // p50 of two jobs (nearest rank) is the shorter JCT.
    let jct_min: f64 = field(&c[c.find("\"jct_ms\"").unwrap()..], "p50")
        .parse()
        .unwrap();
    assert!(jct_min >= 140.0, "{c}");
    let unproduced: u64 = field(&c, "bytes_unproduced").parse().unwrap();
    let unsent: u64 = field(&c, "bytes_unsent").parse().unwrap();
    assert!(unproduced > 0 && unsent >= unproduced, "{c}");
    assert_eq!(field(&c, "bytes_offered"), "128000");
}

#[test]
fn parallel_connections_share_the_jobs() {
    // iperf3's -P: three connections, each with its own window
    let (client, server) = server_and_client("6", &["-P", "3", "--messages", "4"]);
    assert_eq!(
        client.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&client.stdout).unwrap();
    let s: serde_json::Value = serde_json::from_slice(&server.stdout).unwrap();
    assert_eq!(c["parallel"], 3);
    assert_eq!(c["jobs_completed"], 6);
    assert_eq!(s["jobs"], 6);
}

#[test]
fn reverse_mode_the_server_sends_and_the_client_receives() {
    // iperf3's -R: the client's plan runs from the server back to it
    let (client, server) = server_and_client(
        "4",
        &[
            "-R",
            "--messages",
            "6",
            "--sizes",
            "uniform:100:20000",
            "--groups",
            "1.0,0.5",
            "-i",
            "0.002",
        ],
    );
    assert_eq!(
        client.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert_eq!(
        server.status.code(),
        Some(0),
        "the server ends after 4 jobs sent"
    );
    let c: serde_json::Value = serde_json::from_slice(&client.stdout).unwrap();
    let s: serde_json::Value = serde_json::from_slice(&server.stdout).unwrap();
    assert_eq!(c["mode"], "atp-client-reverse");
    assert_eq!(
        (c["jobs"].as_u64(), c["jobs_failed"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(c["sender"]["jobs_completed"], 4, "the server's figures");
    // 6 messages dealt over two groups: 3 each per job; MSR 1 delivers
    // all of group 0, MSR 0.5 at least ceil(1.5) = 2 per job of group 1
    let g = c["groups"].as_array().unwrap();
    assert_eq!(
        (g[0]["messages"].as_u64(), g[0]["delivered"].as_u64()),
        (Some(12), Some(12))
    );
    assert_eq!(g[1]["messages"], 12);
    assert!(g[1]["delivered"].as_u64().unwrap() >= 8, "{g:?}");
    assert!(c["bytes_delivered"].as_u64().unwrap() > 0);
    // the client's interval series counts the jobs it received
    let jobs: u64 = c["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["jobs_completed"].as_u64().unwrap())
        .sum();
    assert_eq!(jobs, 4);
    // the server sent them and received none (the request is not a job)
    assert_eq!(
        (s["reverse_tests"].as_u64(), s["jobs_sent"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(s["jobs"], 0);
}
