//! The `approxnet-perf` binary through its command line: exit codes, a short
//! ATP run on 127.0.0.1 with `--json`, bounded by job count.

use std::process::{Command, Stdio};

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

#[test]
fn client_and_server_run_jobs_and_report_json() {
    // Port 0 is not usable for the server (the client must know it), so
    // pick a free port by binding and releasing it.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Command::new(BIN)
        .args([
            "server", "--bind", &addr, "--jobs", "3", "--idle", "20", "--json",
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
            "3",
            "--duration",
            "20",
            "--messages",
            "8",
            "--sizes",
            "uniform:100:20000",
            "--groups",
            "1.0,0.5",
            "--json",
        ])
        .output()
        .unwrap();
    let server = server.wait_with_output().unwrap();
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
}
