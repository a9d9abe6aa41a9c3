//! The command line of `approxnet-perf` (clap), turned into a [`Command`].
//! Option names follow iperf3 where one exists (`-i`, `-t`, `-c`, `-B`, `-J`).

use super::atp::ClientPlan;
use super::produce::Production;
use super::sizes::Sizes;
use crate::config::RuntimeConfigError;
use crate::sys::SocketKind;
use crate::RuntimeConfig;
use approxnet_proto::{PacketSplit, Rate};
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::time::Duration;

const AFTER_HELP: &str = "\
Production (client): by default every message of a job is ready when the
job starts. --gap-us fixed:US / exp:US produces them over time instead: the
first at job start, each later one US microseconds (exp: on average,
exponential gaps) after the previous; --produce-mbps R spaces them by their
size at R Mbit/s. The job is then a streaming job (N announced up front),
each message is handed over at its production time, and the job ends once
every group holds ceil(MSR N): the rest is never sent (bytes_unsent;
bytes_unproduced of it not produced by then). JCT runs from the first
message's production to the sender's JobComplete.

Reverse (-R): the client sends its plan, the server runs it back over the
same connection (one reverse test at a time) and sends its sender figures
at the end; the client reports what it received, with those figures under
`sender`.

The client reports goodput, measured loss, delivered fraction per group, JCT
percentiles, retransmissions, time per switch queue, one line per interval
(-i) and, in --json only, a sampled TLR / rate / queue timeline.
Exit: 0 ok, 1 run failed, 2 bad arguments.

Examples:
  approxnet-perf server                                   # stays up for every client
  approxnet-perf client -c 10.0.0.2:7700 --msr 0.5 -t 10 -i 1
  approxnet-perf client -c 10.0.0.2:7700 -R --msr 0.5 -t 10   # the server sends
  approxnet-perf client -c 10.0.0.2:7700 --groups 1.0,0.5 --gap-us exp:50 --json";

/// approxnet-perf: iperf-like load for the approxnet runtime.
#[derive(Parser, Debug)]
#[command(name = "approxnet-perf", version, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// Print one JSON object (with the interval series) instead of text.
    #[arg(short = 'J', long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) mode: Mode,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Mode {
    /// Serve ATP jobs (stays up across clients unless --jobs / --idle say otherwise).
    Server(ServerArgs),
    /// Send ATP jobs to a server for --duration seconds.
    Client(ClientArgs),
    /// Kernel TCP baseline: accept one connection and read to EOF.
    TcpServer(TcpServerArgs),
    /// Kernel TCP baseline: one bulk flow for --duration seconds.
    TcpClient(TcpClientArgs),
}

/// Runtime and transport options shared by the ATP modes (defaults: RuntimeConfig).
#[derive(Args, Debug)]
pub(crate) struct Common {
    /// Link rate the sender paces against, Gbit/s.
    #[arg(long, default_value_t = 10.0)]
    line_rate_gbps: f64,
    /// Minimum retransmission timeout, us.
    #[arg(long)]
    min_rto_us: Option<u64>,
    /// Pacing burst, us.
    #[arg(long)]
    pacing_burst_us: Option<u64>,
    /// How far ahead the runtime releases paced packets, us.
    #[arg(long)]
    lookahead_us: Option<u64>,
    /// Pacing batch, us.
    #[arg(long)]
    batch_us: Option<u64>,
    /// One ACK per this many DATA packets.
    #[arg(long)]
    ack_every: Option<u32>,
    /// Transport checksums on (1) or off (0).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    transport_checksums: u8,
    /// Datagrams read per wake-up.
    #[arg(long)]
    recv_budget: Option<usize>,
    /// Busy-poll the socket this long before sleeping, us (0: off; at most 10000).
    #[arg(long)]
    busy_poll_us: Option<u64>,
    /// Receive coalescing: while data flows, sleep this long between reads, us (0: off; at most 1000).
    #[arg(long)]
    rx_coalesce_us: Option<u64>,
    /// GSO segments per send (1..=64).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    gso_segments: Option<u64>,
    /// Socket send and receive buffers, KiB.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    socket_buffer_kib: Option<u64>,
    /// Reproducible run: seeds the core's secrets (cookie key, connection ids,
    /// first sequence numbers) and the workload; default: secrets from the OS,
    /// workload seed 1.
    #[arg(long)]
    seed: Option<u64>,
    /// Largest datagram (path MTU minus 28 for IPv4 + UDP).
    #[arg(long)]
    mtu: Option<usize>,
    /// How messages are cut into packets: full (all full but a short
    /// last), even (as many, of near-equal size) or tiled (all of one size
    /// that divides the message); default: the runtime's.
    #[arg(long, value_parser = parse_packet_split)]
    packet_split: Option<PacketSplit>,
    /// Eq. 2's gain m, in (0, 1].
    #[arg(long)]
    rate_gain: Option<f64>,
    /// UDP-Lite sockets (checksum coverage per datagram).
    #[arg(long)]
    udplite: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ServerArgs {
    /// Address to listen on.
    #[arg(short = 'B', long, default_value = "0.0.0.0:7700")]
    bind: SocketAddr,
    /// Stop after this many jobs (default: never).
    #[arg(long)]
    jobs: Option<u64>,
    /// Stop after this many seconds without events (default: never).
    #[arg(long)]
    idle: Option<f64>,
    /// Reassemble every message's bytes (reports only need sizes).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    keep_payloads: u8,
    /// Connect the UDP socket to the client while it is the only one (1):
    /// further clients' handshakes are dropped until it is gone; 0 serves
    /// several clients at once (RuntimeConfig::connect_socket).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    connect_socket: u8,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
pub(crate) struct ClientArgs {
    /// The server, IP:PORT.
    #[arg(short = 'c', long)]
    server: SocketAddr,
    /// Local address.
    #[arg(short = 'B', long, default_value = "0.0.0.0:0")]
    bind: SocketAddr,
    /// Connect the UDP socket to the server (1) or not (0): the client
    /// talks to one server only (RuntimeConfig::connect_socket).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    connect_socket: u8,
    /// One group's MSR (seed 000 section 3.3).
    #[arg(long, conflicts_with = "groups")]
    msr: Option<f64>,
    /// Several groups' MSRs, e.g. 1.0,0.5 (messages are dealt round-robin).
    #[arg(long)]
    groups: Option<String>,
    /// Message sizes: fixed:N, uniform:A:B or cdf:PATH.
    #[arg(long, default_value = "fixed:65536")]
    sizes: String,
    /// Messages per job.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    messages: u64,
    /// Largest message a size distribution may draw, bytes.
    #[arg(long, default_value_t = 16 << 20)]
    max_size: usize,
    /// Precise (checksummed) fraction of each message.
    #[arg(long, default_value_t = 1.0)]
    precise: f64,
    /// Seconds to start jobs for.
    #[arg(
        short = 't',
        long,
        default_value_t = 5.0,
        allow_negative_numbers = true
    )]
    duration: f64,
    /// Stop after this many jobs.
    #[arg(long)]
    jobs: Option<u64>,
    /// Jobs in flight at once, per connection.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    window: u64,
    /// Parallel connections to the server, each with its own window (iperf3's -P).
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=128))]
    parallel: u64,
    /// Production gaps: none, fixed:US or exp:US.
    #[arg(long, conflicts_with = "produce_mbps")]
    gap_us: Option<String>,
    /// Production rate, Mbit/s (gaps = message size at this rate).
    #[arg(long)]
    produce_mbps: Option<String>,
    /// Reverse mode: the server sends the jobs described here and the client
    /// receives them (iperf3's -R).
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Seeds the production gaps alone (default: --seed, else 1).
    #[arg(long)]
    gap_seed: Option<u64>,
    /// Report every this many seconds (0: no interval reports).
    #[arg(
        short = 'i',
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    interval: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
pub(crate) struct TcpServerArgs {
    /// Address to listen on.
    #[arg(short = 'B', long, default_value = "0.0.0.0:7701")]
    bind: SocketAddr,
}

#[derive(Args, Debug)]
pub(crate) struct TcpClientArgs {
    /// The server, IP:PORT.
    #[arg(short = 'c', long)]
    server: SocketAddr,
    /// Seconds to send for.
    #[arg(
        short = 't',
        long,
        default_value_t = 5.0,
        allow_negative_numbers = true
    )]
    duration: f64,
    /// Congestion control (reno, cubic, bbr, ... as the kernel offers).
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// Report every this many seconds (0: no interval reports).
    #[arg(
        short = 'i',
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    interval: f64,
}

/// A parsed command, ready to run.
pub(crate) enum Command {
    Server {
        bind: SocketAddr,
        cfg: RuntimeConfig,
        jobs: u64,
        idle: Option<Duration>,
    },
    Client {
        bind: SocketAddr,
        cfg: RuntimeConfig,
        plan: Box<ClientPlan>,
    },
    TcpServer(SocketAddr),
    TcpClient {
        server: SocketAddr,
        duration: Duration,
        cc: String,
        interval: Option<Duration>,
    },
}

/// Seconds as a duration: finite and >= 0, else an error naming the option.
fn secs(name: &str, s: f64) -> Result<Duration, String> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(format!("--{name} {s}: expected seconds >= 0"));
    }
    Duration::try_from_secs_f64(s).map_err(|e| format!("--{name}: {e}"))
}

/// An interval, or None for 0.
fn interval(s: f64) -> Result<Option<Duration>, String> {
    let d = secs("interval", s)?;
    Ok((!d.is_zero()).then_some(d))
}

impl Common {
    fn runtime_config(&self) -> Result<RuntimeConfig, String> {
        let mut cfg = RuntimeConfig::default();
        if self.udplite {
            cfg.socket.kind = SocketKind::UdpLite;
        }
        if !(self.line_rate_gbps.is_finite() && self.line_rate_gbps > 0.0) {
            return Err(format!(
                "--line-rate-gbps {}: give a rate > 0",
                self.line_rate_gbps
            ));
        }
        cfg.proto.line_rate = Rate::gbps(self.line_rate_gbps);
        cfg.seed = self.seed;
        if let Some(us) = self.lookahead_us {
            cfg.pacing_lookahead = Duration::from_micros(us);
        }
        if let Some(us) = self.batch_us {
            cfg.pacing_batch = Duration::from_micros(us);
        }
        if let Some(us) = self.pacing_burst_us {
            cfg.proto.pacing_burst = approxnet_proto::Duration::from_micros(us);
        }
        if let Some(n) = self.ack_every {
            cfg.proto.ack_every = n;
        }
        cfg.proto.transport_checksums = self.transport_checksums != 0;
        if let Some(n) = self.recv_budget {
            cfg.recv_budget = n;
        }
        if let Some(us) = self.busy_poll_us {
            cfg.busy_poll = Duration::from_micros(us);
        }
        if let Some(us) = self.rx_coalesce_us {
            cfg.rx_coalesce = Duration::from_micros(us);
        }
        if let Some(n) = self.mtu {
            cfg.proto.mtu = n;
        }
        if let Some(how) = self.packet_split {
            cfg.proto.packet_split = how;
        }
        if let Some(gain) = self.rate_gain {
            if !(gain > 0.0 && gain <= 1.0) {
                return Err(format!("--rate-gain {gain} is out of range: give (0, 1]"));
            }
            cfg.proto.rate.gain = gain;
        }
        if let Some(n) = self.gso_segments {
            cfg.gso_segments = n as usize;
        }
        if let Some(kib) = self.socket_buffer_kib {
            let bytes = usize::try_from(kib)
                .ok()
                .and_then(|k| k.checked_mul(1024))
                .ok_or("--socket-buffer-kib: too large")?;
            cfg.socket.recv_buffer = bytes;
            cfg.socket.send_buffer = bytes;
        }
        if let Some(us) = self.min_rto_us {
            cfg.proto.min_rto = approxnet_proto::Duration::from_micros(us);
        }
        cfg.proto.validate().map_err(|e| e.to_string())?;
        cfg.validate().map_err(|e| {
            let RuntimeConfigError::OutOfRange { field, .. } = &e;
            format!("--{}: {e}", option_for(field))
        })?;
        Ok(cfg)
    }
}

/// The command-line option that sets a `RuntimeConfig` field.
fn option_for(field: &str) -> &'static str {
    match field {
        "busy_poll" => "busy-poll-us",
        "rx_coalesce" => "rx-coalesce-us",
        "socket.recv_buffer" | "socket.send_buffer" => "socket-buffer-kib",
        _ => "runtime option",
    }
}

/// Parses `--packet-split full|even|tiled`.
fn parse_packet_split(s: &str) -> Result<PacketSplit, String> {
    match s {
        "full" => Ok(PacketSplit::Full),
        "even" => Ok(PacketSplit::Even),
        "tiled" => Ok(PacketSplit::Tiled),
        _ => Err(format!("`{s}`: expected full, even or tiled")),
    }
}

/// Parses `--groups 1.0,0.5` into MSRs (each checked by the core later).
fn parse_groups(s: &str) -> Result<Vec<f64>, String> {
    let v: Result<Vec<f64>, _> = s.split(',').map(|x| x.trim().parse::<f64>()).collect();
    let v = v.map_err(|_| format!("--groups `{s}`: expected MSRs like 1.0,0.5"))?;
    if v.is_empty() || v.len() > 64 {
        return Err("--groups: 1 to 64 groups".into());
    }
    Ok(v)
}

impl Mode {
    /// Checks what clap cannot and builds the command; every error here is
    /// a usage error (exit status 2).
    pub(crate) fn command(self, json: bool) -> Result<Command, String> {
        Ok(match self {
            Mode::Server(a) => {
                let mut cfg = a.common.runtime_config()?;
                cfg.proto.keep_payloads = a.keep_payloads != 0;
                cfg.connect_socket = a.connect_socket != 0;
                let idle = a.idle.map(|s| secs("idle", s)).transpose()?;
                Command::Server {
                    bind: a.bind,
                    cfg,
                    jobs: a.jobs.unwrap_or(u64::MAX),
                    idle: idle.filter(|d| !d.is_zero()),
                }
            }
            Mode::Client(a) => {
                let mut cfg = a.common.runtime_config()?;
                cfg.connect_socket = a.connect_socket != 0;
                let workload_seed = cfg.seed.unwrap_or(1);
                let groups = match &a.groups {
                    Some(g) => parse_groups(g)?,
                    None => vec![a.msr.unwrap_or(1.0)],
                };
                for &m in &groups {
                    approxnet_proto::Msr::new(m).map_err(|e| format!("--msr / --groups: {e}"))?;
                }
                if !(0.0..=1.0).contains(&a.precise) {
                    return Err("--precise: a fraction in [0, 1]".into());
                }
                let production = Production::parse(a.gap_us.as_deref(), a.produce_mbps.as_deref())?;
                if a.reverse && a.parallel > 1 {
                    return Err(
                        "--reverse with --parallel > 1 is not supported (one connection)".into(),
                    );
                }
                if a.reverse && a.sizes.starts_with("cdf:") {
                    return Err("--reverse: --sizes cdf:PATH names a file on this host; give fixed:N or uniform:A:B".into());
                }
                let plan = ClientPlan {
                    server: a.server,
                    groups,
                    sizes: Sizes::parse(&a.sizes)?,
                    sizes_spec: a.sizes,
                    messages: a.messages as usize,
                    max_size: a.max_size,
                    precise: a.precise,
                    duration: secs("duration", a.duration)?,
                    max_jobs: a.jobs.unwrap_or(u64::MAX),
                    window: a.window as usize,
                    seed: workload_seed,
                    production,
                    gap_seed: a.gap_seed.unwrap_or(workload_seed),
                    interval: interval(a.interval)?,
                    print_intervals: !json,
                    parallel: a.parallel as usize,
                    gap_spec: a.gap_us,
                    produce_spec: a.produce_mbps,
                    reverse: a.reverse,
                };
                Command::Client {
                    bind: a.bind,
                    cfg,
                    plan: Box::new(plan),
                }
            }
            Mode::TcpServer(a) => Command::TcpServer(a.bind),
            Mode::TcpClient(a) => Command::TcpClient {
                server: a.server,
                duration: secs("duration", a.duration)?,
                cc: a.cc,
                interval: interval(a.interval)?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        let cli =
            Cli::try_parse_from(std::iter::once("approxnet-perf").chain(args.iter().copied()))
                .map_err(|e| e.to_string())?;
        cli.mode.command(cli.json)
    }

    #[test]
    fn iperf3_short_options_and_defaults() {
        let Ok(Command::Client { plan, .. }) =
            parse(&["client", "-c", "127.0.0.1:9", "-t", "2", "-i", "0.5"])
        else {
            panic!("client expected");
        };
        assert_eq!(plan.duration, Duration::from_secs(2));
        assert_eq!(plan.interval, Some(Duration::from_millis(500)));
        assert_eq!(plan.groups, vec![1.0]);
        assert_eq!(plan.max_jobs, u64::MAX);
        let Ok(Command::Client { cfg, .. }) =
            parse(&["client", "-c", "127.0.0.1:9", "--packet-split", "tiled"])
        else {
            panic!("client expected");
        };
        assert_eq!(cfg.proto.packet_split, PacketSplit::Tiled);
        let Ok(Command::Server {
            jobs, idle, cfg, ..
        }) = parse(&["server"])
        else {
            panic!("server expected");
        };
        assert_eq!(
            (jobs, idle),
            (u64::MAX, None),
            "a server stays up by default"
        );
        assert!(cfg.connect_socket, "connected to its one client by default");
        let Ok(Command::Server { cfg, .. }) = parse(&["server", "--connect-socket", "0"]) else {
            panic!("server expected");
        };
        assert!(!cfg.connect_socket, "0: several clients at once");
    }

    #[test]
    fn bad_values_name_the_option() {
        for (args, needle) in [
            (vec!["client", "-c", "127.0.0.1:9", "-i", "-1"], "interval"),
            (vec!["client", "-c", "127.0.0.1:9", "--msr", "1.5"], "msr"),
            (
                vec!["client", "-c", "127.0.0.1:9", "--groups", "a,b"],
                "groups",
            ),
            (vec!["client", "-c", "nowhere"], "server"),
            (
                vec!["client", "-c", "127.0.0.1:9", "--window", "0"],
                "window",
            ),
            (vec!["server", "--rate-gain", "2"], "rate-gain"),
            (vec!["server", "--gso-segments", "65"], "gso-segments"),
            (vec!["server", "--busy-poll-us", "10001"], "busy-poll-us"),
            (vec!["server", "--packet-split", "half"], "packet-split"),
            (
                vec!["server", "--socket-buffer-kib", "1"],
                "socket-buffer-kib",
            ),
        ] {
            let e = parse(&args).err().unwrap_or_default();
            assert!(e.contains(needle), "{args:?}: {e}");
        }
    }
}
