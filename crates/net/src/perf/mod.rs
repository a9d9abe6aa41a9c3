//! `approxnet-perf`: an iperf-like load generator for the approxnet runtime.
//!
//! ```text
//! approxnet-perf server [-B 0.0.0.0:7700] [--jobs N] [--idle SECS] [--udplite] [-J]
//! approxnet-perf client -c ADDR [--msr 1.0 | --groups 1.0,0.5] [--sizes fixed:65536]
//!                [--messages 64] [-t 5] [-i SECS] [--jobs N] [--window 2] [--precise 1.0]
//!                [--line-rate-gbps 10] [--seed S] [--udplite] [-J]
//!                [--gap-us none | fixed:US | exp:US | --produce-mbps R] [--gap-seed S] [-R]
//! approxnet-perf tcp-server [-B 0.0.0.0:7701] [-J]
//! approxnet-perf tcp-client -c ADDR [-t 5] [-i SECS] [--cc cubic] [-J]
//! ```
//! Options follow iperf3 where it has one (`-c`, `-B`, `-t`, `-i`, `-J`);
//! a server stays up across clients unless `--jobs` / `--idle` end it;
//! `client -R` reverses the direction (the server sends). The
//! client prints goodput, measured loss, delivered fraction per group, JCT
//! percentiles, retransmissions, the time spent in each switch queue and one
//! line per interval; `--json` prints one JSON object that also carries the
//! interval series and a sampled rate / TLR / queue timeline.
//! Exit status: 0 on success, 1 when the run failed, 2 on bad arguments.
//!
//! The tool is this module's [`main`]: the `approxnet-perf` binary is a
//! one-line wrapper, and the Python package calls the same function through
//! its native module (`approxnet perf` works from an installed wheel).

mod atp;
mod cli;
mod cpu;
mod interval;
mod produce;
mod receive;
mod report;
mod reverse;
mod sizes;
mod tcp;

use clap::Parser;
use cli::{Cli, Command};
use report::Json;

/// Runs a parsed command; errors here are run failures (exit status 1).
fn run(cmd: Command, json: bool) -> Result<Json, String> {
    match cmd {
        Command::Server {
            bind,
            cfg,
            jobs,
            idle,
        } => atp::server(bind, cfg, jobs, idle),
        Command::Client { bind, cfg, plan } if plan.reverse => reverse::client(bind, cfg, *plan),
        Command::Client { bind, cfg, plan } => atp::client(bind, cfg, *plan),
        Command::TcpServer(bind) => tcp::server(bind),
        Command::TcpClient {
            server,
            duration,
            cc,
            interval,
        } => tcp::client(server, duration, &cc, interval, !json),
    }
}

/// Text output: one line per field; series (the interval reports were
/// printed as they happened, the timeline is for --json) are summarised.
fn print_human(j: &Json) {
    let Json::Object(fields) = j else { return };
    for (k, v) in fields {
        match v {
            Json::String(s) => println!("{k:>20}: {s}"),
            Json::Number(n) if n.is_f64() => {
                println!("{k:>20}: {:.4}", n.as_f64().unwrap_or(f64::NAN))
            }
            Json::Array(a) if k == "timeline" || k == "intervals" => {
                println!("{k:>20}: {} samples (see --json)", a.len())
            }
            other => println!("{k:>20}: {other}"),
        }
    }
}

/// Runs `approxnet-perf` with `argv` (without the program name); returns
/// the exit status (0 success, 1 the run failed, 2 bad arguments). Prints
/// to the process's stdout / stderr.
pub fn main(argv: Vec<String>) -> u8 {
    let cli = match Cli::try_parse_from(std::iter::once("approxnet-perf".to_string()).chain(argv)) {
        Ok(c) => c,
        Err(e) => {
            // --help and --version are not errors; clap renders both.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let json = cli.json;
    let cmd = match cli.mode.command(json) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("approxnet-perf: {e}\nusage: approxnet-perf server|client|tcp-server|tcp-client [options] (see --help)");
            return 2;
        }
    };
    match run(cmd, json) {
        Ok(report) => {
            if json {
                println!("{report}");
            } else {
                print_human(&report);
            }
            if report["jobs_failed"].as_u64().unwrap_or(0) > 0 {
                1
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("approxnet-perf: {e}");
            1
        }
    }
}
