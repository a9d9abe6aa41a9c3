//! `approxnet-perf`: an iperf-like load generator for the approxnet runtime.
//!
//! ```text
//! approxnet-perf server [--bind 0.0.0.0:7700] [--jobs N] [--idle SECS] [--udplite] [--json]
//! approxnet-perf client --server ADDR [--msr 1.0 | --groups 1.0,0.5] [--sizes fixed:65536]
//!                [--messages 64] [--duration 5] [--jobs N] [--window 2] [--precise 1.0]
//!                [--line-rate-gbps 10] [--seed S] [--udplite] [--json]
//!                [--gap-us none | fixed:US | exp:US | --produce-mbps R] [--gap-seed S]
//! approxnet-perf tcp-server [--bind 0.0.0.0:7701] [--json]
//! approxnet-perf tcp-client --server ADDR [--duration 5] [--cc cubic] [--json]
//! ```
//! The client prints goodput, measured loss, delivered fraction per group,
//! JCT percentiles, retransmissions, the time spent in each switch queue and
//! a sampled rate / TLR / queue timeline; `--json` prints one JSON object.
//! Exit status: 0 on success, 1 when the run failed, 2 on bad arguments.
//!
//! The tool is this module's [`main`]: the `approxnet-perf` binary is a
//! one-line wrapper, and the Python package calls the same function through
//! its native module (`approxnet perf` works from an installed wheel).

mod args;
mod atp;
mod cpu;
mod produce;
mod report;
mod sizes;
mod tcp;

use crate::sys::SocketKind;
use crate::RuntimeConfig;
use approxnet_proto::Rate;
use args::Args;
use report::Json;
use std::net::SocketAddr;
use std::time::Duration;

const USAGE: &str =
    "usage: approxnet-perf server|client|tcp-server|tcp-client [options] (see --help)";

const HELP: &str = "\
approxnet-perf: iperf-like load for the approxnet runtime

  approxnet-perf server [--bind 0.0.0.0:7700] [--jobs N] [--idle SECS] [--udplite] [--json]
  approxnet-perf client --server IP:PORT [--msr 1.0 | --groups 1.0,0.5]
        [--sizes fixed:N | uniform:A:B | cdf:PATH] [--messages 64] [--duration 5]
        [--jobs N] [--window 2] [--precise 1.0] [--udplite] [--json]
        [--gap-us none | fixed:US | exp:US | --produce-mbps R] [--gap-seed S]
  approxnet-perf tcp-server [--bind 0.0.0.0:7701] [--json]
  approxnet-perf tcp-client --server IP:PORT [--duration 5] [--cc cubic] [--json]

Common ATP options (defaults: RuntimeConfig): --line-rate-gbps 10 --min-rto-us
  --pacing-burst-us --lookahead-us --batch-us --ack-every --transport-checksums 0|1
  --recv-budget 16384 --gso-segments 64 --socket-buffer-kib 4096
  --seed S (reproducible run; default: the core's secrets - cookie key,
  connection ids, first sequence numbers - from the OS, workload seed 1)
  --mtu 1472 (largest datagram; path MTU minus 28 for IPv4 + UDP)
  --rate-gain 0.125 (eq. 2's m);
  server: --keep-payloads 0|1.
Production (client): by default every message of a job is ready when the
  job starts. --gap-us fixed:US / exp:US produces them over time instead:
  the first at job start, each later one US microseconds (exp: on average,
  exponential gaps) after the previous; --produce-mbps R spaces them by
  their size at R Mbit/s. The job is then a streaming job (N announced up
  front), each message is handed over at its production time, and the job
  ends once every group holds ceil(MSR N): the rest is never sent
  (bytes_unsent; bytes_unproduced of it not produced by then). JCT runs
  from the first message's production to the sender's JobComplete.
  --gap-seed (default --seed) seeds the gaps alone (splitmix64, the same
  gaps as experiments/testbed/tools.py with that seed).
The client reports goodput, measured loss, delivered fraction per group,
JCT percentiles, retransmissions, time per switch queue and a sampled
TLR / rate / queue timeline. Exit: 0 ok, 1 run failed, 2 bad arguments.";

fn runtime_config(a: &mut Args) -> Result<RuntimeConfig, String> {
    let mut cfg = RuntimeConfig::default();
    if a.flag("udplite") {
        cfg.socket.kind = SocketKind::UdpLite;
    }
    let rate: f64 = a.get("line-rate-gbps", 10.0)?;
    cfg.proto.line_rate = Rate::gbps(rate);
    // --seed makes a run reproducible (the core's secrets too); without it
    // the core's secrets come from the OS and the workload uses seed 1.
    let seed = match a.get_str("seed") {
        None => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| format!("--seed: cannot parse `{v}`"))?,
        ),
    };
    cfg.seed = seed;
    cfg.pacing_lookahead =
        Duration::from_micros(a.get("lookahead-us", cfg.pacing_lookahead.as_micros() as u64)?);
    cfg.pacing_batch =
        Duration::from_micros(a.get("batch-us", cfg.pacing_batch.as_micros() as u64)?);
    let burst: u64 = a.get("pacing-burst-us", cfg.proto.pacing_burst.as_nanos() / 1000)?;
    cfg.proto.pacing_burst = approxnet_proto::Duration::from_micros(burst);
    cfg.proto.ack_every = a.get("ack-every", cfg.proto.ack_every)?;
    cfg.proto.transport_checksums = a.get("transport-checksums", 1u8)? != 0;
    cfg.recv_budget = a.get("recv-budget", cfg.recv_budget)?;
    cfg.proto.mtu = a.get("mtu", cfg.proto.mtu)?;
    let gain: f64 = a.get("rate-gain", cfg.proto.rate.gain)?;
    if !(gain > 0.0 && gain <= 1.0) {
        return Err(format!("--rate-gain {gain} is out of range: give (0, 1]"));
    }
    cfg.proto.rate.gain = gain;
    cfg.gso_segments = a.get("gso-segments", cfg.gso_segments)?;
    let kib: usize = a.get("socket-buffer-kib", cfg.socket.recv_buffer >> 10)?;
    if kib == 0 {
        return Err("--socket-buffer-kib must be at least 1".into());
    }
    cfg.socket.recv_buffer = kib << 10;
    cfg.socket.send_buffer = kib << 10;
    if !(1..=64).contains(&cfg.gso_segments) {
        return Err(format!(
            "--gso-segments {} is out of range: give 1..=64",
            cfg.gso_segments
        ));
    }
    let rto_us: u64 = a.get("min-rto-us", cfg.proto.min_rto.as_nanos() / 1000)?;
    cfg.proto.min_rto = approxnet_proto::Duration::from_micros(rto_us);
    cfg.proto.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

fn addr(a: &mut Args, key: &str, default: Option<&str>) -> Result<SocketAddr, String> {
    let v = a
        .get_str(key)
        .or(default.map(str::to_string))
        .ok_or_else(|| format!("--{key} is required"))?;
    v.parse()
        .map_err(|_| format!("--{key} `{v}`: expected IP:PORT"))
}

fn secs(a: &mut Args, key: &str, default: f64) -> Result<Duration, String> {
    let s: f64 = a.get(key, default)?;
    if !(s.is_finite() && s >= 0.0) {
        return Err(format!("--{key}: expected seconds >= 0"));
    }
    Duration::try_from_secs_f64(s).map_err(|e| format!("--{key}: {e}"))
}

/// A parsed command, ready to run.
enum Command {
    Server(SocketAddr, RuntimeConfig, u64, Option<Duration>),
    Client(SocketAddr, RuntimeConfig, atp::ClientPlan),
    TcpServer(SocketAddr),
    TcpClient(SocketAddr, Duration, String),
}

/// Parses options; every error here is a usage error (exit status 2).
fn parse(mut a: Args) -> Result<Command, String> {
    let cmd = match a.command.as_str() {
        "server" => {
            let bind = addr(&mut a, "bind", Some("0.0.0.0:7700"))?;
            let mut cfg = runtime_config(&mut a)?;
            // Payload bytes are not needed to count them (reports carry sizes);
            // --keep-payloads 1 makes the core reassemble every message's bytes.
            cfg.proto.keep_payloads = a.get("keep-payloads", 0u8)? != 0;
            let jobs: u64 = a.get("jobs", u64::MAX)?;
            let idle = secs(&mut a, "idle", 0.0)?;
            Command::Server(bind, cfg, jobs, (!idle.is_zero()).then_some(idle))
        }
        "client" => {
            let server = addr(&mut a, "server", None)?;
            let bind = addr(&mut a, "bind", Some("0.0.0.0:0"))?;
            let cfg = runtime_config(&mut a)?;
            let workload_seed = cfg.seed.unwrap_or(1);
            let groups = match a.get_str("groups") {
                Some(g) => atp::parse_groups(&g)?,
                None => vec![a.get("msr", 1.0f64)?],
            };
            for &m in &groups {
                approxnet_proto::Msr::new(m).map_err(|e| format!("--msr / --groups: {e}"))?;
            }
            let sizes_spec = a.get_str("sizes").unwrap_or_else(|| "fixed:65536".into());
            let production = produce::Production::parse(
                a.get_str("gap-us").as_deref(),
                a.get_str("produce-mbps").as_deref(),
            )?;
            let plan = atp::ClientPlan {
                server,
                groups,
                sizes: sizes::Sizes::parse(&sizes_spec)?,
                sizes_spec,
                messages: a.get("messages", 64usize)?,
                max_size: a.get("max-size", 16usize << 20)?,
                precise: a.get("precise", 1.0f64)?,
                duration: secs(&mut a, "duration", 5.0)?,
                max_jobs: a.get("jobs", u64::MAX)?,
                window: a.get("window", 2usize)?,
                seed: workload_seed,
                production,
                gap_seed: a.get("gap-seed", workload_seed)?,
            };
            if !(0.0..=1.0).contains(&plan.precise) {
                return Err("--precise: a fraction in [0, 1]".into());
            }
            if plan.messages == 0 || plan.window == 0 {
                return Err("--messages and --window: at least 1".into());
            }
            Command::Client(bind, cfg, plan)
        }
        "tcp-server" => Command::TcpServer(addr(&mut a, "bind", Some("0.0.0.0:7701"))?),
        "tcp-client" => {
            let server = addr(&mut a, "server", None)?;
            let duration = secs(&mut a, "duration", 5.0)?;
            let cc = a.get_str("cc").unwrap_or_else(|| "cubic".into());
            Command::TcpClient(server, duration, cc)
        }
        other => return Err(format!("unknown command `{other}`")),
    };
    a.finish()?;
    Ok(cmd)
}

/// Runs a parsed command; errors here are run failures (exit status 1).
fn run(cmd: Command) -> Result<Json, String> {
    match cmd {
        Command::Server(bind, cfg, jobs, idle) => atp::server(bind, cfg, jobs, idle),
        Command::Client(bind, cfg, plan) => atp::client(bind, cfg, plan),
        Command::TcpServer(bind) => tcp::server(bind),
        Command::TcpClient(server, duration, cc) => tcp::client(server, duration, &cc),
    }
}

fn print_human(j: &Json) {
    if let Json::Obj(fields) = j {
        for (k, v) in fields {
            match v {
                Json::Str(s) => println!("{k:>20}: {s}"),
                Json::Num(x) => println!("{k:>20}: {x:.4}"),
                other => println!("{k:>20}: {}", other.render()),
            }
        }
    }
}

/// Runs `approxnet-perf` with `argv` (without the program name); returns
/// the exit status (0 success, 1 the run failed, 2 bad arguments). Prints
/// to the process's stdout / stderr.
pub fn main(argv: Vec<String>) -> u8 {
    if argv.is_empty()
        || argv
            .iter()
            .any(|a| a == "--help" || a == "-h" || a == "help")
    {
        println!("{HELP}");
        return if argv.is_empty() { 2 } else { 0 };
    }
    let parsed = Args::parse(argv.into_iter()).and_then(|a| {
        let json = a.flag("json");
        parse(a).map(|c| (c, json))
    });
    let (cmd, json) = match parsed {
        Ok(x) => x,
        Err(e) => {
            eprintln!("approxnet-perf: {e}\n{USAGE}");
            return 2;
        }
    };
    match run(cmd) {
        Ok(report) => {
            if json {
                println!("{}", report.render());
            } else {
                print_human(&report);
            }
            let failed = matches!(&report, Json::Obj(f) if f.iter().any(|(k, v)| *k == "jobs_failed" && matches!(v, Json::Int(n) if *n > 0)));
            if failed {
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
