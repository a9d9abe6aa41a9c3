//! Reliability and security of the runtime over real sockets on 127.0.0.1:
//! floods of garbage and of spoofed connection ids, malformed datagrams,
//! a peer that vanishes. Traffic is bounded in count; waits are bounded by
//! a generous safety limit whose expiry is a failure, never a pass.

use approxnet_net::{ConnectError, Endpoint, JobWaitError, RuntimeConfig};
use approxnet_proto::event::{JobFailure, Role};
use approxnet_proto::rng::Rng;
use approxnet_proto::stats::DropReason;
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{HeaderRepr, PacketType};
use approxnet_proto::{Event, JobSpec};
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(30);

fn lo() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A well-formed datagram (valid CRC) with the given header fields.
fn craft(ty: PacketType, conn_id: u64, body: &[u8], fix: impl FnOnce(&mut HeaderRepr)) -> Vec<u8> {
    let mut h = HeaderRepr {
        ty: PacketTypeField(ty),
        conn_id,
        pkt_count: 1,
        precise_len: body.len() as u16,
        body_len: body.len() as u16,
        ..HeaderRepr::default()
    };
    fix(&mut h);
    let mut buf = vec![0u8; 48 + body.len()];
    let n = h.emit_with_body(&mut buf, body);
    buf.truncate(n);
    buf
}

fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// The attack mix: garbage of every length, then spoofed connection ids
/// carried by well-formed DATA, JOB and unknown-type packets.
fn attack(rng: &mut Rng, i: u64) -> Vec<u8> {
    let conn = rng.next_u64() | 1;
    match i % 4 {
        0 => {
            let len = rng.below(1400) as usize;
            random_bytes(rng, len)
        }
        1 => {
            let len = 100 + rng.below(1000) as usize;
            let body = random_bytes(rng, len);
            let (job, seq) = (rng.next_u64() as u32, rng.next_u64() as u32);
            craft(PacketType::Data, conn, &body, |h| {
                h.job_id = job;
                h.seq = seq;
            })
        }
        2 => {
            let body = random_bytes(rng, 64);
            craft(PacketType::Job, conn, &body, |_| {})
        }
        _ => craft(PacketType::Unknown(99), conn, &[], |_| {}),
    }
}

#[test]
fn legit_job_completes_while_receiver_is_flooded() {
    const FLOOD: u64 = 40_000;
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    // Part of the flood is already waiting before the client shows up.
    let attacker = UdpSocket::bind(lo()).unwrap();
    let mut rng = Rng::new(7);
    for i in 0..FLOOD / 4 {
        attacker.send_to(&attack(&mut rng, i), addr).unwrap();
    }
    let serve = thread::spawn(move || {
        let mut server = server;
        let (mut delivered, mut accepted) = (0u32, 0u32);
        let deadline = Instant::now() + BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "server: job did not complete within the bound"
            );
            match server.next_event(Some(left)).unwrap() {
                Some((_, Event::MessageDelivered { .. })) => delivered += 1,
                Some((_, Event::Accepted)) => accepted += 1,
                Some((
                    _,
                    Event::JobComplete {
                        role: Role::Receiver,
                        outcome,
                        ..
                    },
                )) => {
                    assert!(outcome.expect("receiver outcome").guarantee_held());
                    break;
                }
                _ => {}
            }
        }
        (server, delivered, accepted)
    });
    // The rest of the flood runs alongside the job.
    let flood = thread::spawn(move || {
        let mut rng = Rng::new(8);
        for i in FLOOD / 4..FLOOD {
            // Bounded, loopback only; a full socket buffer just drops.
            let _ = attacker.send_to(&attack(&mut rng, i), addr);
        }
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).expect("handshake despite the flood");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[4096; 200]).unwrap())
        .unwrap();
    let report = client.wait_job(h, job, Some(BOUND)).expect("job completes");
    assert!(report.guarantee_held());
    assert_eq!(report.groups[0].delivered, 200);
    flood.join().unwrap();
    let (server, delivered, accepted) = serve.join().unwrap();
    assert_eq!(delivered, 200);
    assert_eq!(accepted, 1, "spoofed ids never open a connection");
    assert!(server.core().connection_count() <= 1);
    let core = server.core().stats();
    assert!(core.dropped_total() > 0, "the flood was seen and dropped");
    assert_eq!(core.dropped(DropReason::WrongPeer), 0);
    assert_eq!(server.stats().recv.truncated, 0);
}

#[test]
fn malformed_datagrams_are_counted_and_dropped() {
    let mut server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let tx = UdpSocket::bind(lo()).unwrap();
    let mut rng = Rng::new(11);
    let mut sent = 0u64;
    let mut bad_crc = 0u64;
    let mut send = |b: &[u8]| {
        tx.send_to(b, addr).unwrap();
        sent += 1;
    };
    send(&[]); // empty
    for len in 1..48 {
        send(&random_bytes(&mut rng, len)); // shorter than a header
    }
    let good = craft(PacketType::Data, 42, &[7u8; 64], |_| {});
    let mut v = good.clone();
    v[0] = 2; // unknown version
    send(&v);
    let mut v = good.clone();
    v[100] ^= 0xff; // damaged precise byte: checksum fails
    send(&v);
    bad_crc += 1;
    let mut v = good.clone();
    v.push(0); // body longer than its length field says
    send(&v);
    send(&craft(PacketType::Data, 42, &[1; 10], |h| {
        h.precise_len = 11
    })); // prefix > body
    send(&craft(PacketType::Ack, 42, &[1; 10], |h| h.precise_len = 4)); // control not precise
    send(&craft(PacketType::Data, 42, &[1; 10], |h| h.pkt_index = 3)); // index >= count
    for _ in 0..50 {
        let body = random_bytes(&mut rng, 200);
        send(&craft(PacketType::Data, rng.next_u64() | 1, &body, |_| {})); // spoofed id
        send(&craft(PacketType::Job, rng.next_u64() | 1, &body, |_| {})); // forged cookie
    }
    let deadline = Instant::now() + BOUND;
    while server.stats().recv.datagrams < sent {
        assert!(Instant::now() < deadline, "datagrams did not arrive");
        server.drive(Some(Duration::from_millis(100))).unwrap();
    }
    let core = server.core().stats();
    assert_eq!(server.stats().recv.datagrams, sent);
    assert_eq!(
        core.dropped_total(),
        sent,
        "every malformed datagram counted once"
    );
    assert_eq!(core.accepted, 0);
    assert_eq!(core.dropped(DropReason::BadChecksum), bad_crc);
    assert_eq!(core.dropped(DropReason::UnknownConnection), 100);
    assert_eq!(server.core().connection_count(), 0);
    assert!(server.poll_event().is_none(), "no event from garbage");
}

fn short_idle() -> RuntimeConfig {
    let mut cfg = RuntimeConfig::default();
    cfg.proto.idle_timeout = approxnet_proto::Duration::from_millis(300);
    cfg
}

#[test]
fn sender_whose_peer_vanishes_mid_job_gets_a_clear_error() {
    let mut server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let mut client = Endpoint::bind(lo(), short_idle()).unwrap();
    let h = client.start_connect(addr).unwrap();
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[50_000; 400]).unwrap())
        .unwrap();
    // Serve until the job is under way, then the server disappears.
    let deadline = Instant::now() + BOUND;
    let mut started = false;
    while !started {
        assert!(Instant::now() < deadline, "job never started");
        client.drive(Some(Duration::from_millis(5))).unwrap();
        while let Some((_, ev)) = server.next_event(Some(Duration::from_millis(5))).unwrap() {
            started |= matches!(ev, Event::MessageDelivered { .. });
            if started {
                break;
            }
        }
    }
    drop(server);
    let err = client.wait_job(h, job, Some(BOUND)).unwrap_err();
    match &err {
        JobWaitError::Failed(JobFailure::PeerUnresponsive)
        | JobWaitError::ConnectionLost(JobFailure::PeerUnresponsive) => {}
        other => panic!("expected a peer-unresponsive error, got {other:?}"),
    }
    // The message tells a user what happened.
    assert!(err.to_string().contains("idle timeout"), "{err}");
}

#[test]
fn connect_to_a_silent_port_fails_within_the_idle_timeout() {
    // A bound socket that never answers: the handshake must give up.
    let silent = UdpSocket::bind(lo()).unwrap();
    let mut client = Endpoint::bind(lo(), short_idle()).unwrap();
    match client.connect(silent.local_addr().unwrap()) {
        Err(ConnectError::Lost(JobFailure::PeerUnresponsive)) => {}
        other => panic!("expected a clear handshake failure, got {other:?}"),
    }
}

#[test]
fn a_slow_application_gets_back_pressure_not_unbounded_events() {
    let mut scfg = RuntimeConfig {
        max_events: 4,
        ..RuntimeConfig::default()
    };
    scfg.proto.idle_timeout = approxnet_proto::Duration::from_secs(30);
    let mut server = Endpoint::bind(lo(), scfg).unwrap();
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.start_connect(server.local_addr()).unwrap();
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[2000; 300]).unwrap())
        .unwrap();
    // The server's application takes no events for a while.
    let deadline = Instant::now() + BOUND;
    while server.stats().recv_paused == 0 {
        assert!(Instant::now() < deadline, "reading never paused");
        client.drive(Some(Duration::from_millis(2))).unwrap();
        server.drive(Some(Duration::from_millis(2))).unwrap();
    }
    // Bound: the cap plus what one receive batch can carry.
    assert!(
        server.pending_events() <= 4 + 32 * 64,
        "{}",
        server.pending_events()
    );
    // Once the application drains, the job completes.
    let mut delivered = 0;
    let mut report = None;
    while report.is_none() {
        assert!(
            Instant::now() < deadline,
            "job did not complete after draining"
        );
        while let Some((_, ev)) = server.poll_event() {
            delivered += u32::from(matches!(ev, Event::MessageDelivered { .. }));
        }
        server.drive(Some(Duration::from_millis(2))).unwrap();
        match client.wait_job(h, job, Some(Duration::from_millis(2))) {
            Ok(r) => report = Some(r),
            Err(JobWaitError::TimedOut) => {}
            Err(e) => panic!(
                "client: {e}; server stats {:?} core {:?}",
                server.stats(),
                server.core().stats()
            ),
        }
    }
    while let Some((_, ev)) = server.next_event(Some(Duration::from_millis(50))).unwrap() {
        delivered += u32::from(matches!(ev, Event::MessageDelivered { .. }));
    }
    assert!(report.unwrap().guarantee_held());
    assert_eq!(delivered, 300);
}

#[test]
fn an_on_path_attacker_replaying_the_connection_id_from_elsewhere_is_dropped() {
    use socket2::{Domain, Protocol, Socket, Type};
    use std::mem::MaybeUninit;
    // Root only: a raw UDP socket sees the client's datagrams and so the
    // real connection id, as an on-path attacker would.
    let raw = match Socket::new(Domain::IPV4, Type::RAW, Some(Protocol::UDP)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipped: raw socket needs root ({e})");
            return;
        }
    };
    raw.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.start_connect(addr).unwrap();
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[3000; 50]).unwrap())
        .unwrap();
    // Drive both until the sniffer has seen a DATA packet to the server.
    let deadline = Instant::now() + BOUND;
    let mut conn_id = None;
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 65_536];
    while conn_id.is_none() {
        assert!(Instant::now() < deadline, "no DATA seen");
        client.drive(Some(Duration::from_millis(1))).unwrap();
        server.drive(Some(Duration::from_millis(1))).unwrap();
        while let Ok(n) = raw.recv(&mut buf) {
            // SAFETY: recv initialised the first n bytes.
            let p: Vec<u8> = buf[..n]
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect();
            let ihl = usize::from(p[0] & 0x0f) * 4;
            let (udp, dport) = (&p[ihl..], u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]));
            let body = &udp[8..];
            if dport == addr.port() && body.len() > 48 && body[1] == 1 {
                conn_id = Some(u64::from_be_bytes(body[4..12].try_into().unwrap()));
                break;
            }
        }
    }
    // Replay well-formed DATA with the real id from another port.
    let attacker = UdpSocket::bind(lo()).unwrap();
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let body = random_bytes(&mut rng, 500);
        let seq = rng.next_u64() as u32;
        attacker
            .send_to(
                &craft(PacketType::Data, conn_id.unwrap(), &body, |h| h.seq = seq),
                addr,
            )
            .unwrap();
    }
    let mut report = None;
    let mut delivered = 0;
    while report.is_none() {
        assert!(Instant::now() < deadline, "job did not complete");
        server.drive(Some(Duration::from_millis(1))).unwrap();
        while let Some((_, ev)) = server.poll_event() {
            delivered += u32::from(matches!(ev, Event::MessageDelivered { .. }));
        }
        if report.is_none() {
            if let Ok(r) = client.wait_job(h, job, Some(Duration::from_millis(1))) {
                report = Some(r);
            }
        }
    }
    assert!(report.unwrap().guarantee_held());
    // Every replayed datagram is read and refused (bounded wait).
    while server.core().stats().dropped(DropReason::WrongPeer) < 200 || delivered < 50 {
        assert!(Instant::now() < deadline, "replayed datagrams not all seen");
        if let Some((_, ev)) = server.next_event(Some(Duration::from_millis(10))).unwrap() {
            delivered += u32::from(matches!(ev, Event::MessageDelivered { .. }));
        }
    }
    assert_eq!(delivered, 50, "no forged message delivered");
    assert_eq!(server.core().stats().dropped(DropReason::WrongPeer), 200);
}
