//! The error-prone link (`approxnet-link`) between two private network
//! namespaces, with the real kernel judging the damage: UDP-Lite drops
//! what its coverage protects and delivers the rest, TCP sees damaged
//! segments as loss and still completes, and the bit errors a receiver
//! finds match the configured BER. Root only (`ip`, /dev/net/tun); elsewhere
//! the tests print "skipped" and pass. Every wait is bounded.

mod netlink;

use netlink::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

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
