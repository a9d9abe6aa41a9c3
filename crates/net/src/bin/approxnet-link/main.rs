//! `approxnet-link`: a relay between two TUN devices that emulates an
//! error-prone wireless last hop (seed 002's 802.11 link).
//!
//! ```text
//! approxnet-link --a-netns NS --a-dev DEV --b-netns NS --b-dev DEV
//!     [--mode integrity|approximate|sap] [--channel ber:P | ge:GOOD:BAD:P_GB:P_BG | flip-at:N[:MIN] | snr:DB]
//!     [--rate-mbps R] [--overhead-bytes B] [--retry-limit 7] [--damage both|a-to-b|b-to-a]
//!     [--seed S] [--stats PATH]
//! ```
//! It creates the two devices (in the given namespaces), prints `ready` on
//! stdout, and relays frames both ways until SIGTERM or SIGINT; the caller
//! gives the devices addresses and brings them up. `--stats PATH` receives
//! `{"a_to_b": {...}, "b_to_a": {...}}` every 200 ms and at exit.
//! Exit status: 0 after a signal, 1 when a device fails, 2 on bad arguments.

mod airtime;
mod arq;
mod channel;
mod ofdm;
mod relay;
mod stats;
mod tun;

use airtime::Airtime;
use arq::LinkMode;
use channel::{Channel, ChannelSpec};
use clap::Parser;
use stats::LinkStats;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tun::Tun;

/// approxnet-link: relay between two TUN devices emulating an error-prone link.
///
/// Bits are flipped only after the IP header; a try whose errors hit the IP
/// header loses the frame (the receiving kernel would drop it).
#[derive(Parser, Debug)]
#[command(name = "approxnet-link", version)]
struct Cli {
    /// Namespace of device A (default: here).
    #[arg(long)]
    a_netns: Option<String>,
    /// Device A (created).
    #[arg(long)]
    a_dev: String,
    /// Namespace of device B (default: here).
    #[arg(long)]
    b_netns: Option<String>,
    /// Device B (created).
    #[arg(long)]
    b_dev: String,
    /// integrity: damaged frames are retried (airtime each) up to
    /// --retry-limit, then dropped; approximate: one try, delivered as
    /// received; sap: approximate for UDP-Lite frames with partial checksum
    /// coverage, integrity for the rest (seed 002's driver).
    #[arg(long, default_value = "integrity")]
    mode: String,
    /// ber:P (independent bit errors), ge:GOOD:BAD:P_GB:P_BG
    /// (Gilbert-Elliott, state changes per transmission) or flip-at:N[:MIN]
    /// (bit 0 of IP-payload byte N of every frame of MIN+ bytes; tests) or
    /// snr:DB (the uncoded BER of the --rate-mbps 802.11a/g constellation
    /// at that SNR: a rate-dependent BER).
    #[arg(long, default_value = "ber:0")]
    channel: String,
    /// Link rate, Mbit/s (0: no serialisation delay).
    #[arg(long, default_value_t = 0.0)]
    rate_mbps: f64,
    /// Per-try bytes on the air besides the frame.
    #[arg(long, default_value_t = 0)]
    overhead_bytes: usize,
    /// Tries of a damaged frame in integrity mode (802.11's default 7).
    #[arg(long, default_value_t = 7)]
    retry_limit: u32,
    /// Which directions the channel damages: both, a-to-b or b-to-a.
    #[arg(long, default_value = "both")]
    damage: String,
    /// Error seed; direction b-to-a uses seed + 1.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// JSON counters, rewritten every 200 ms and at exit.
    #[arg(long)]
    stats: Option<String>,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Everything the command line sets.
struct Settings {
    a: (Option<String>, String),
    b: (Option<String>, String),
    mode: LinkMode,
    channel: ChannelSpec,
    rate_bps: Option<f64>,
    overhead: usize,
    retry_limit: u32,
    damage_a_to_b: bool,
    damage_b_to_a: bool,
    seed: u64,
    stats: Option<String>,
}

fn settings(c: Cli) -> Result<Settings, String> {
    let mode = LinkMode::parse(&c.mode)?;
    let rate = c.rate_mbps;
    if !(rate.is_finite() && rate >= 0.0) {
        return Err(format!("--rate-mbps: {rate} is not a rate (0 or more)"));
    }
    // snr:DB: the BER of the link rate's 802.11a/g constellation (ofdm.rs).
    let channel = match c.channel.strip_prefix("snr:") {
        Some(db) => {
            let db = db
                .parse::<f64>()
                .map_err(|_| format!("--channel snr: `{db}` is not an SNR in dB"))?;
            ChannelSpec::Ber(ofdm::snr_ber(db, rate)?)
        }
        None => ChannelSpec::parse(&c.channel)?,
    };
    let (damage_a_to_b, damage_b_to_a) = match c.damage.as_str() {
        "both" => (true, true),
        "a-to-b" => (true, false),
        "b-to-a" => (false, true),
        o => return Err(format!("--damage `{o}`: expected both, a-to-b or b-to-a")),
    };
    Ok(Settings {
        a: (c.a_netns, c.a_dev),
        b: (c.b_netns, c.b_dev),
        mode,
        channel,
        rate_bps: (rate > 0.0).then_some(rate * 1e6),
        overhead: c.overhead_bytes,
        retry_limit: c.retry_limit,
        damage_a_to_b,
        damage_b_to_a,
        seed: c.seed,
        stats: c.stats,
    })
}

fn main() -> ExitCode {
    // clap exits 2 on bad arguments and 0 after --help / --version.
    let s = match settings(Cli::parse()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("approxnet-link: {e}");
            return ExitCode::from(2);
        }
    };
    match run(s) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("approxnet-link: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(s: Settings) -> Result<(), String> {
    // SAFETY: installing an async-signal-safe handler (one atomic store).
    unsafe {
        libc::signal(
            libc::SIGTERM,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let a = Tun::create(s.a.0.as_deref(), &s.a.1)?;
    let b = Tun::create(s.b.0.as_deref(), &s.b.1)?;
    println!("ready");
    let _ = std::io::stdout().flush();
    let (ab, ba) = (LinkStats::default(), LinkStats::default());
    let never = ChannelSpec::Ber(0.0);
    let direction = |from, to, damage: bool, seed, stats| {
        let spec = if damage { &s.channel } else { &never };
        let channel = Channel::new(spec, seed);
        relay::Direction {
            from,
            to,
            mode: s.mode,
            retry_limit: s.retry_limit,
            clean: channel.is_clean(spec),
            channel,
            air: Airtime::new(s.rate_bps, s.overhead),
            stats,
        }
    };
    let write_stats = || -> Result<(), String> {
        let Some(path) = &s.stats else { return Ok(()) };
        let tmp = format!("{path}.tmp");
        let ber = s
            .channel
            .mean_ber()
            .map_or("null".into(), |b| format!("{b:e}"));
        let body = format!(
            "{{\"configured_ber\": {ber}, \"a_to_b\": {}, \"b_to_a\": {}}}\n",
            ab.json(),
            ba.json()
        );
        std::fs::write(&tmp, body)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("--stats {path}: {e}"))
    };
    std::thread::scope(|scope| {
        let d1 = direction(&a, &b, s.damage_a_to_b, s.seed, &ab);
        let d2 = direction(&b, &a, s.damage_b_to_a, s.seed.wrapping_add(1), &ba);
        let t1 = scope.spawn(|| relay::run(d1, &STOP));
        let t2 = scope.spawn(|| relay::run(d2, &STOP));
        let mut result = Ok(());
        while !STOP.load(Ordering::Relaxed) && !t1.is_finished() && !t2.is_finished() {
            std::thread::sleep(Duration::from_millis(200));
            if let Err(e) = write_stats() {
                result = Err(e);
                break;
            }
        }
        STOP.store(true, Ordering::Relaxed);
        for t in [t1, t2] {
            let r = t
                .join()
                .map_err(|_| "a relay thread panicked".to_string())?;
            result = result.and(r);
        }
        result.and(write_stats())
    })
}
