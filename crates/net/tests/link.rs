//! The error-prone link (`approxnet-link`) between two private network
//! namespaces, with the real kernel judging the damage: UDP-Lite drops
//! what its coverage protects and delivers the rest, TCP sees damaged
//! segments as loss and still completes, and the bit errors a receiver
//! finds match the configured BER. Root only (`ip`, /dev/net/tun); elsewhere
//! the tests print "skipped" and pass. Every wait is bounded.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Bound on every wait: reaching it fails the test.
const BOUND: Duration = Duration::from_secs(30);
const IP_A: &str = "10.77.0.1";
const IP_B: &str = "10.77.0.2";
const IPPROTO_UDPLITE: i32 = 136;
const UDPLITE_SEND_CSCOV: i32 = 10;
const UDPLITE_RECV_CSCOV: i32 = 11;

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().expect("running ip");
    assert!(st.success(), "`ip {}` failed", args.join(" "));
}

/// Two namespaces joined by the relay; everything removed on drop.
struct Link {
    ns: [String; 2],
    relay: Option<Child>,
    stats: String,
}

impl Link {
    /// The relay with `args` between two fresh namespaces, addresses set, or
    /// why the test is skipped.
    fn up(args: &[&str]) -> Option<Link> {
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_approxnet-link"))
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
    fn within<T: Send + 'static>(
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
    fn a_to_b(&self, frames: u64) -> Counters {
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

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(mut c) = self.relay.take() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
        let _ = std::fs::remove_file(&self.stats);
    }
}

/// Direction A-to-B counters from the relay's JSON.
#[derive(Debug, Default)]
struct Counters {
    frames: u64,
    intact: u64,
    damaged: u64,
}

impl Counters {
    fn parse(json: &str) -> Counters {
        let part = json.split("\"b_to_a\"").next().unwrap_or("");
        let field = |k: &str| -> u64 {
            let key = format!("\"{k}\": ");
            part.split(&key)
                .nth(1)
                .and_then(|r| r.split([',', '}']).next())
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        Counters {
            frames: field("frames"),
            intact: field("intact"),
            damaged: field("damaged"),
        }
    }
}

/// A counter of this thread's namespace from /proc/net/snmp, e.g.
/// ("UdpLite", "InCsumErrors").
fn snmp(proto: &str, field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp").expect("snmp");
    let mut lines = text.lines().filter(|l| l.starts_with(&format!("{proto}:")));
    let (names, values) = (lines.next().unwrap(), lines.next().unwrap());
    let i = names
        .split_whitespace()
        .position(|n| n == field)
        .expect("snmp field");
    values.split_whitespace().nth(i).unwrap().parse().unwrap()
}

fn udplite(cscov: Option<i32>, recv_cscov: Option<i32>, bind: Option<&str>) -> UdpSocket {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(
        Domain::IPV4,
        Type::DGRAM,
        Some(Protocol::from(IPPROTO_UDPLITE)),
    )
    .expect("UDP-Lite socket");
    for (opt, v) in [
        (UDPLITE_SEND_CSCOV, cscov),
        (UDPLITE_RECV_CSCOV, recv_cscov),
    ] {
        if let Some(v) = v {
            // SAFETY: an int option on a valid socket.
            let rc = unsafe {
                libc::setsockopt(
                    sock.as_raw_fd(),
                    IPPROTO_UDPLITE,
                    opt,
                    (&v as *const i32).cast(),
                    4,
                )
            };
            assert_eq!(rc, 0, "UDP-Lite coverage option");
        }
    }
    sock.set_recv_buffer_size(8 << 20).unwrap();
    if let Some(a) = bind {
        sock.bind(&a.parse::<SocketAddr>().unwrap().into()).unwrap();
    }
    sock.into()
}

/// Sends `n` UDP-Lite datagrams of `payload` covering `cscov` bytes from A
/// to B; returns what B's socket received and B's InCsumErrors increase,
/// once every frame the relay passed up is accounted for (received, or
/// counted in B's UDP-Lite InErrors).
fn udplite_run(link: &Link, n: usize, payload: Vec<u8>, cscov: i32) -> (Vec<Vec<u8>>, u64) {
    let rx = link.within(1, move || {
        let s = udplite(None, Some(8), Some(&format!("{IP_B}:7900")));
        (
            s,
            snmp("UdpLite", "InErrors"),
            snmp("UdpLite", "InCsumErrors"),
        )
    });
    let (rx, errors_before, csum_before) = rx.join().unwrap();
    let sent = payload.clone();
    link.within(0, move || {
        let s = udplite(Some(cscov), None, None);
        for _ in 0..n {
            s.send_to(&sent, format!("{IP_B}:7900")).unwrap();
        }
    })
    .join()
    .unwrap();
    let c = link.a_to_b(n as u64);
    let passed = c.intact + c.damaged;
    link.within(1, move || {
        rx.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let deadline = Instant::now() + BOUND;
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65536];
        loop {
            // InErrors counts checksum failures and damaged lengths alike.
            let errors = snmp("UdpLite", "InErrors") - errors_before;
            if got.len() as u64 + errors >= passed {
                return (got, snmp("UdpLite", "InCsumErrors") - csum_before);
            }
            assert!(
                Instant::now() < deadline,
                "{} received + {errors} dropped < {passed}",
                got.len()
            );
            if let Ok(k) = rx.recv(&mut buf) {
                got.push(buf[..k].to_vec());
            }
        }
    })
    .join()
    .unwrap()
}

#[test]
fn udplite_coverage_decides_what_the_kernel_drops() {
    // The relay flips bit 0 of IP-payload byte N of every frame; the
    // UDP-Lite header is bytes 0..8, the covered payload 8..24.
    let payload: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
    let Some(inside) = Link::up(&["--mode", "approximate", "--channel", "flip-at:12"]) else {
        return;
    };
    let (got, errors) = udplite_run(&inside, 50, payload.clone(), 8 + 16);
    assert!(got.is_empty(), "damage inside the coverage must be dropped");
    assert_eq!(errors, 50, "the kernel counted each as a checksum error");
    drop(inside);

    let outside = Link::up(&["--mode", "approximate", "--channel", "flip-at:100"]).unwrap();
    let (got, errors) = udplite_run(&outside, 50, payload.clone(), 8 + 16);
    assert_eq!(errors, 0);
    assert_eq!(got.len(), 50, "damage outside the coverage is delivered");
    let mut expect = payload;
    expect[100 - 8] ^= 1;
    assert!(
        got.iter().all(|d| *d == expect),
        "exactly the flipped bit differs"
    );
}

#[test]
fn measured_ber_matches_the_configured_one() {
    const BER: f64 = 1e-4;
    const N: usize = 3000;
    let Some(link) = Link::up(&[
        "--mode",
        "approximate",
        "--channel",
        "ber:1e-4",
        "--seed",
        "5",
    ]) else {
        return;
    };
    let payload: Vec<u8> = (0..1000u32).map(|i| (i * 31 + 7) as u8).collect();
    // Coverage = the UDP-Lite header only: every payload error reaches us.
    let (got, _) = udplite_run(&link, N, payload.clone(), 8);
    let bits = (got.len() * payload.len() * 8) as f64;
    let flips: u32 = got
        .iter()
        .flat_map(|d| d.iter().zip(&payload).map(|(a, b)| (a ^ b).count_ones()))
        .sum();
    assert!(
        got.len() > N * 9 / 10,
        "most datagrams arrive: {}",
        got.len()
    );
    let measured = f64::from(flips) / bits;
    // 99.9 % normal interval of a binomial proportion.
    let half = 3.29 * (BER * (1.0 - BER) / bits).sqrt();
    assert!(
        (measured - BER).abs() <= half,
        "measured BER {measured:.3e} outside {BER:e} +- {half:.2e} ({flips} flips in {bits} bits)"
    );
}

#[test]
fn tcp_through_the_approximate_link_sees_damage_as_loss() {
    // ~2.4 % of 1500-byte frames damaged; TCP's checksum drops them.
    let Some(link) = Link::up(&[
        "--mode",
        "approximate",
        "--channel",
        "ber:2e-6",
        "--seed",
        "3",
    ]) else {
        return;
    };
    const BYTES: usize = 4 << 20;
    let data: Vec<u8> = (0..BYTES).map(|i| (i % 251) as u8).collect();
    let server = link.within(1, move || {
        let l = TcpListener::bind(format!("{IP_B}:7901")).unwrap();
        let errors = snmp("Tcp", "InCsumErrors");
        (l, errors)
    });
    let (listener, errors_before) = server.join().unwrap();
    let reader = link.within(1, move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(BOUND)).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        (got, snmp("Tcp", "InCsumErrors") - errors_before)
    });
    let sent = data.clone();
    let retrans = link.within(0, move || {
        let before = snmp("Tcp", "RetransSegs");
        let mut s =
            TcpStream::connect_timeout(&format!("{IP_B}:7901").parse().unwrap(), BOUND).unwrap();
        s.set_write_timeout(Some(BOUND)).unwrap();
        s.write_all(&sent).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        snmp("Tcp", "RetransSegs") - before
    });
    let (got, csum_errors) = reader.join().unwrap();
    let retrans = retrans.join().unwrap();
    assert!(
        got == data,
        "TCP delivered the stream intact ({} of {BYTES} bytes)",
        got.len()
    );
    assert!(
        csum_errors > 0,
        "the receiving kernel dropped damaged segments"
    );
    assert!(
        retrans > 0,
        "the sender retransmitted what the link damaged"
    );
}
