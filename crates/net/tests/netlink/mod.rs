//! Two private network namespaces joined by `approxnet-link`, for tests
//! that run real traffic through the emulated error-prone link. Root only.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Bound on every wait: reaching it fails the test.
pub const BOUND: Duration = Duration::from_secs(30);
pub const IP_A: &str = "10.77.0.1";
pub const IP_B: &str = "10.77.0.2";
pub const IPPROTO_UDPLITE: i32 = 136;
pub const UDPLITE_SEND_CSCOV: i32 = 10;
pub const UDPLITE_RECV_CSCOV: i32 = 11;

pub fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("running ip");
    assert!(st.success(), "`ip {}` failed", args.join(" "));
}

/// The relay's real-time priority (SCHED_FIFO), so that it runs as soon
/// as a frame is due: a link does not stop because the host is busy. At
/// the normal priority, on a loaded host (load ~18 on 2 cores),
/// `sap_congestion`'s capped run lost 15-43 of 2,000 in 2 of 16 runs, and
/// where counted the losses were at side A's device queue (the link's
/// 16-frame queue): the stalled relay stops draining it while the sender
/// goes on (presumably once its packets age out of the in-flight cap,
/// `cap_age`; not traced). With this priority: 0-3 lost in 27 runs at
/// load 18-23 (docs/runtime.md, "Tests").
const RELAY_PRIORITY: i32 = 10;

fn realtime(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: sched_setscheduler is async-signal-safe and touches only the
    // child about to exec; a refusal (no CAP_SYS_NICE) is reported by
    // `Link::up` after the spawn, not here.
    unsafe {
        cmd.pre_exec(|| {
            let p = libc::sched_param {
                sched_priority: RELAY_PRIORITY,
            };
            libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
            Ok(())
        });
    }
}

/// Two namespaces joined by the relay; everything removed on drop.
pub struct Link {
    ns: [String; 2],
    relay: Option<Child>,
    stats: String,
}

impl Link {
    /// The relay with `args` between two fresh namespaces, addresses set, or
    /// why the test is skipped.
    pub fn up(args: &[&str]) -> Option<Link> {
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } != 0 || !std::path::Path::new("/dev/net/tun").exists() {
            eprintln!("skipped: needs root and /dev/net/tun");
            return None;
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let tag = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let ns = [format!("anxlink-a-{tag}"), format!("anxlink-b-{tag}")];
        let mut link = Link {
            ns: ns.clone(),
            relay: None,
            stats: format!("/tmp/anxlink-{tag}.json"),
        };
        for n in &ns {
            ip(&["netns", "add", n]);
            ip(&["-n", n, "link", "set", "lo", "up"]);
            // No IPv6 chatter (router solicitations) over the link.
            for c in ["all", "default"] {
                let st = Command::new("ip")
                    .args(["netns", "exec", n, "sysctl", "-qw"])
                    .arg(format!("net.ipv6.conf.{c}.disable_ipv6=1"))
                    .status()
                    .expect("sysctl");
                assert!(st.success());
            }
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_approxnet-link"));
        realtime(&mut cmd);
        let mut child = cmd
            .args([
                "--a-netns",
                &ns[0],
                "--a-dev",
                "anl0",
                "--b-netns",
                &ns[1],
                "--b-dev",
                "anl1",
            ])
            .args(["--stats", &link.stats])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting approxnet-link");
        // SAFETY: querying our own child's policy.
        if unsafe { libc::sched_getscheduler(child.id() as i32) } != libc::SCHED_FIFO {
            eprintln!("note: the relay runs at the normal priority (SCHED_FIFO refused)");
        }
        let mut line = String::new();
        let out = child.stdout.take().unwrap();
        link.relay = Some(child);
        BufReader::new(out)
            .read_line(&mut line)
            .expect("relay stdout");
        assert_eq!(line.trim(), "ready", "the relay did not start");
        for (n, dev, me, peer) in [(&ns[0], "anl0", IP_A, IP_B), (&ns[1], "anl1", IP_B, IP_A)] {
            ip(&["-n", n, "addr", "add", me, "peer", peer, "dev", dev]);
            // Room for a test's whole burst: the device queue is the
            // link's queue and would otherwise drop what a slow (debug)
            // relay has not read yet.
            ip(&["-n", n, "link", "set", dev, "txqueuelen", "10000", "up"]);
        }
        Some(link)
    }

    /// Runs `f` on a thread inside namespace `i` (0 = A, 1 = B).
    pub fn within<T: Send + 'static>(
        &self,
        i: usize,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> thread::JoinHandle<T> {
        let path = format!("/var/run/netns/{}", self.ns[i]);
        thread::spawn(move || {
            let ns = File::open(&path).expect("namespace file");
            // SAFETY: a valid namespace fd; moves this thread only.
            let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
    }

    /// The relay's counters for direction A to B, once its stats file shows
    /// at least `frames` frames (bounded).
    pub fn a_to_b(&self, frames: u64) -> Counters {
        let deadline = Instant::now() + BOUND;
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.stats) {
                let c = Counters::parse(&s);
                if c.frames >= frames {
                    return c;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the relay never saw {frames} frames"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Link {
    /// Sets the device queue of side `i` (0 = A, 1 = B) to `frames`: the
    /// link's queue in that direction (the relay reads a frame only when
    /// the previous one has had its air time).
    pub fn set_queue(&self, i: usize, frames: u32) {
        let dev = ["anl0", "anl1"][i];
        ip(&[
            "-n",
            &self.ns[i],
            "link",
            "set",
            dev,
            "txqueuelen",
            &frames.to_string(),
        ]);
    }

    /// Where datagrams were lost inside the hosts, for a failure message:
    /// frames side A's device dropped (its queue, the link's queue
    /// towards B) and datagrams side B's UDP sockets dropped for a full
    /// receive buffer (`RcvbufErrors`).
    pub fn host_drops(&self) -> HostDrops {
        let read = |i: usize, args: &[&str]| {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.ns[i]])
                .args(args)
                .output()
                .expect("ip netns exec");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let device = read(0, &["cat", "/sys/class/net/anl0/statistics/tx_dropped"])
            .trim()
            .parse()
            .unwrap_or(u64::MAX);
        let snmp = read(1, &["cat", "/proc/net/snmp"]);
        let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
        let rcvbuf = match (udp.next(), udp.next()) {
            (Some(names), Some(values)) => names
                .split_whitespace()
                .zip(values.split_whitespace())
                .find(|(n, _)| *n == "RcvbufErrors")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(u64::MAX),
            _ => u64::MAX,
        };
        HostDrops {
            device_a: device,
            rcvbuf_b: rcvbuf,
        }
    }

    /// Ends the relay: from now on the link loses everything.
    pub fn stop_relay(&mut self) {
        if let Some(mut c) = self.relay.take() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop_relay();
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
        let _ = std::fs::remove_file(&self.stats);
    }
}

/// Datagrams lost inside the hosts (`Link::host_drops`; `u64::MAX`: not read).
#[derive(Debug, Clone, Copy)]
pub struct HostDrops {
    /// Side A's device queue (the link's queue towards B) was full.
    pub device_a: u64,
    /// Side B's UDP receive buffers were full.
    pub rcvbuf_b: u64,
}

/// Direction A-to-B counters from the relay's JSON.
#[derive(Debug, Default)]
pub struct Counters {
    pub frames: u64,
    pub intact: u64,
    pub damaged: u64,
}

impl Counters {
    /// Zeros while the file is being rewritten (not yet whole JSON).
    fn parse(json: &str) -> Counters {
        let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
        let field = |k: &str| v["a_to_b"][k].as_u64().unwrap_or(0);
        Counters {
            frames: field("frames"),
            intact: field("intact"),
            damaged: field("damaged"),
        }
    }
}

/// A counter of this thread's namespace from /proc/net/snmp, e.g.
/// ("UdpLite", "InCsumErrors").
pub fn snmp(proto: &str, field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp").expect("snmp");
    let mut lines = text.lines().filter(|l| l.starts_with(&format!("{proto}:")));
    let (names, values) = (lines.next().unwrap(), lines.next().unwrap());
    let i = names
        .split_whitespace()
        .position(|n| n == field)
        .expect("snmp field");
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}
