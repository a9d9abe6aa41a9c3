//! The runtime over real sockets on 127.0.0.1: jobs complete end to end.

use approxnet_net::{Endpoint, RuntimeConfig};
use approxnet_proto::event::Role;
use approxnet_proto::{Event, JobSpec, PacketSplit};
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

/// Safety bound on any wait: reaching it is a failure, never a pass.
const BOUND: Option<Duration> = Some(Duration::from_secs(20));

fn lo() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// Runs a server until it reports `jobs` receiver-side completions; returns
/// (delivered messages, receiver reports).
fn serve(mut server: Endpoint, jobs: usize) -> (u64, Vec<approxnet_proto::JobReport>) {
    serve_on(&mut server, jobs)
}

/// [`serve`] on a borrowed endpoint (its counters stay readable).
fn serve_on(server: &mut Endpoint, jobs: usize) -> (u64, Vec<approxnet_proto::JobReport>) {
    let mut delivered = 0;
    let mut reports = Vec::new();
    while reports.len() < jobs {
        let Some((_, ev)) = server.next_event(BOUND).expect("server io") else {
            panic!("server saw no event within the bound");
        };
        match ev {
            Event::MessageDelivered { .. } => delivered += 1,
            Event::JobComplete {
                role: Role::Receiver,
                outcome,
                ..
            } => reports.push(outcome.expect("receiver-side job outcome")),
            _ => {}
        }
    }
    (delivered, reports)
}

/// One 50-message job from a client to a server, both with `cfg`, checked
/// end to end.
fn one_job(cfg: RuntimeConfig) {
    jobs_of(cfg, 50);
}

/// One job of `n` 20 kB messages from a client to a server, both with
/// `cfg`, checked end to end; the server's runtime counters.
fn jobs_of(cfg: RuntimeConfig, n: usize) -> approxnet_net::RuntimeStats {
    let server = Endpoint::bind(lo(), cfg.clone()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        let (delivered, reports) = serve_on(&mut server, 1);
        (delivered, reports, server.stats())
    });
    let mut client = Endpoint::bind(lo(), cfg).unwrap();
    let h = client.connect(addr).expect("handshake");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &vec![20_000; n]).unwrap())
        .unwrap();
    let report = client.wait_job(h, job, BOUND).expect("job completes");
    assert_eq!(report.groups[0].delivered as usize, n);
    let (delivered, reports, stats) = t.join().unwrap();
    assert_eq!(delivered as usize, n);
    assert!(reports[0].guarantee_held());
    stats
}

#[test]
fn receive_coalescing_naps_between_reads_and_zero_turns_it_off() {
    // 200 messages of 15 datagrams each, read in GRO batches: a read
    // finds more than RX_COALESCE_MIN_DATAGRAMS, so the wait after it naps.
    let cfg = |rx_coalesce| RuntimeConfig {
        rx_coalesce,
        ..RuntimeConfig::default()
    };
    let st = jobs_of(cfg(Duration::from_micros(200)), 200);
    assert!(st.naps >= 1, "{st:?}");
    let st = jobs_of(cfg(Duration::ZERO), 200);
    assert_eq!(st.naps, 0, "0 turns it off: {st:?}");
}

#[test]
fn a_client_with_connect_socket_connects_its_socket_and_refuses_a_second_peer() {
    let cfg = RuntimeConfig {
        connect_socket: true,
        ..RuntimeConfig::default()
    };
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let a = server.local_addr();
    let t = thread::spawn(move || serve(server, 1));
    let mut client = Endpoint::bind(lo(), cfg).unwrap();
    let h = client
        .connect(a)
        .expect("handshake over the connected socket");
    assert_eq!(client.socket().connected_peer(), Some(a));
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[20_000; 30]).unwrap())
        .unwrap();
    client.wait_job(h, job, BOUND).expect("job completes");
    assert_eq!(t.join().unwrap().0, 30);
    // Another connection to the same peer is fine; another peer could not
    // answer the connected socket: a clear error, no connection.
    let before = client.core().connection_count();
    client.start_connect(a).expect("same peer");
    let other = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    match client.start_connect(other.local_addr()) {
        Err(approxnet_net::ConnectError::Io(e)) => {
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains("connect_socket"), "{e}");
        }
        r => panic!("a second peer was not refused: {r:?}"),
    }
    assert_eq!(client.core().connection_count(), before + 1);
}

#[test]
fn a_server_with_connect_socket_connects_to_its_one_client_and_lets_the_next_in_after_it() {
    // An explicit port: a socket bound to port 0 is never connected on
    // accept (dissolving the association would release its port).
    let port = std::net::UdpSocket::bind(lo())
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let cfg = RuntimeConfig {
        connect_socket: true,
        ..RuntimeConfig::default()
    };
    let mut server = Endpoint::bind(addr, cfg).unwrap();
    assert_eq!(server.socket().connected_peer(), None);
    let (tx, rx) = std::sync::mpsc::channel();
    let t = thread::spawn(move || {
        for _ in 0..2 {
            let (delivered, _) = serve_on(&mut server, 1);
            assert_eq!(delivered, 30);
            let peer = server.socket().connected_peer();
            // The client closes; the association ends with the connection.
            let deadline = std::time::Instant::now() + BOUND.unwrap();
            while server.core().connection_count() > 0 {
                assert!(std::time::Instant::now() < deadline, "never closed");
                server.drive(BOUND).expect("server io");
            }
            tx.send((peer, server.socket().connected_peer())).unwrap();
        }
    });
    for _ in 0..2 {
        let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
        let h = client.connect(addr).expect("handshake");
        let job = client
            .send_job(h, JobSpec::uniform(1.0, &[20_000; 30]).unwrap())
            .unwrap();
        client.wait_job(h, job, BOUND).expect("job completes");
        client.close(h).unwrap();
        assert!(client.finish(BOUND.unwrap()).unwrap(), "client closed");
        let (during, after) = rx.recv_timeout(BOUND.unwrap()).expect("server");
        assert_eq!(during, Some(client.local_addr()), "connected to its client");
        assert_eq!(after, None, "free for the next client");
    }
    t.join().unwrap();
}

#[test]
fn rx_coalesce_over_its_cap_is_a_bind_error_naming_it() {
    let cfg = RuntimeConfig {
        rx_coalesce: approxnet_net::config::MAX_RX_COALESCE + Duration::from_micros(1),
        ..RuntimeConfig::default()
    };
    let Err(e) = Endpoint::bind(lo(), cfg) else {
        panic!("bind accepted an over-long receive coalescing");
    };
    assert!(e.to_string().contains("rx_coalesce"), "{e}");
}

#[test]
fn busy_polling_endpoints_complete_a_job() {
    let cfg = RuntimeConfig {
        busy_poll: Duration::from_millis(5),
        ..RuntimeConfig::default()
    };
    one_job(cfg);
}

#[test]
fn a_wait_within_the_busy_poll_bound_never_sleeps_and_zero_turns_it_off() {
    // No peer and no connection: the only thing to wait for is the
    // caller's 1 ms timeout.
    let cfg = |busy_poll| RuntimeConfig {
        busy_poll,
        ..RuntimeConfig::default()
    };
    let mut ep = Endpoint::bind(lo(), cfg(Duration::from_millis(2))).unwrap();
    assert!(ep
        .next_event(Some(Duration::from_millis(1)))
        .unwrap()
        .is_none());
    let st = ep.stats();
    assert_eq!(st.sleeps, 0, "polled through the whole wait: {st:?}");
    assert!(st.busy_polls >= 1, "{st:?}");
    // A wait far longer than the bound: poll for the bound, then sleep for
    // the rest (300 ms: only a stall of that length inside the 100 us of
    // polling would let the wait pass without a sleep).
    let mut ep = Endpoint::bind(lo(), cfg(Duration::from_micros(100))).unwrap();
    assert!(ep
        .next_event(Some(Duration::from_millis(300)))
        .unwrap()
        .is_none());
    let st = ep.stats();
    assert!(st.sleeps >= 1, "{st:?}");
    assert!(st.recv.empty >= 2, "polled before sleeping: {st:?}");
    let mut ep = Endpoint::bind(lo(), cfg(Duration::ZERO)).unwrap();
    assert!(ep
        .next_event(Some(Duration::from_millis(1)))
        .unwrap()
        .is_none());
    let st = ep.stats();
    assert_eq!(st.busy_polls, 0, "0 turns it off: {st:?}");
    assert!(st.sleeps >= 1, "{st:?}");
}

#[test]
fn busy_poll_over_its_cap_is_a_bind_error_naming_it() {
    let cfg = RuntimeConfig {
        busy_poll: approxnet_net::config::MAX_BUSY_POLL + Duration::from_micros(1),
        ..RuntimeConfig::default()
    };
    let Err(e) = Endpoint::bind(lo(), cfg) else {
        panic!("bind accepted an over-long busy poll");
    };
    assert!(matches!(e, approxnet_net::BindError::Runtime(_)), "{e:?}");
    assert!(e.to_string().contains("busy_poll"), "{e}");
}

#[test]
fn job_with_msr_one_completes_over_udp() {
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        let conn = server.accept(BOUND).unwrap().expect("a peer connects");
        assert_eq!(server.core().connection_count(), 1);
        assert!(server.core().peer(conn).is_some());
        serve(server, 1)
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).expect("handshake");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[20_000; 50]).unwrap())
        .unwrap();
    let report = client.wait_job(h, job, BOUND).expect("job completes");
    assert!(report.guarantee_held());
    assert_eq!(report.groups[0].delivered, 50);
    let (delivered, reports) = t.join().unwrap();
    assert_eq!(delivered, 50);
    assert!(reports[0].guarantee_held());
}

#[test]
fn approximate_groups_meet_their_msr() {
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || serve(server, 1));
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).unwrap();
    let mut spec = JobSpec::new(1.0).unwrap().group(1, 0.5).unwrap();
    for i in 0..40u32 {
        spec = spec.message((i % 2) as u16, vec![i as u8; 3000]);
    }
    let job = client.send_job(h, spec).unwrap();
    let report = client.wait_job(h, job, BOUND).unwrap();
    assert!(report.guarantee_held());
    for g in &report.groups {
        assert!(g.delivered >= g.must_deliver, "group {} met its MSR", g.id);
    }
    let (_, reports) = t.join().unwrap();
    assert!(reports[0].guarantee_held());
}

#[test]
fn udplite_job_with_precise_prefixes_completes_intact() {
    let server = Endpoint::bind(lo(), RuntimeConfig::udplite()).unwrap();
    // Receivers demand that the checksum covers at least the 48-byte header.
    assert_eq!(server.socket().recv_cscov().unwrap(), 8 + 48);
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        let mut got = Vec::new();
        loop {
            match server
                .next_event(BOUND)
                .unwrap()
                .expect("event within bound")
                .1
            {
                Event::MessageDelivered {
                    msg,
                    payload,
                    precise_len,
                    damaged,
                    ..
                } => got.push((msg, payload, precise_len, damaged)),
                Event::JobComplete {
                    role: Role::Receiver,
                    ..
                } => return got,
                _ => {}
            }
        }
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::udplite()).unwrap();
    let h = client.connect(addr).unwrap();
    let mut spec = JobSpec::new(1.0).unwrap();
    for i in 0..10u32 {
        let bytes: Vec<u8> = (0..5000u32).map(|k| (k * 7 + i) as u8).collect();
        spec = spec.message_with_prefix(0, bytes, 256);
    }
    let job = client.send_job(h, spec).unwrap();
    client.wait_job(h, job, BOUND).unwrap();
    let mut got = t.join().unwrap();
    got.sort_by_key(|g| g.0);
    assert_eq!(got.len(), 10);
    for (msg, payload, precise_len, damaged) in got {
        let want: Vec<u8> = (0..5000u32).map(|k| (k * 7 + msg) as u8).collect();
        assert_eq!(payload, want, "message {msg} intact on a clean path");
        assert!(!damaged);
        assert!(precise_len >= 256);
    }
}

/// A single-threaded tokio runtime with I/O and timers, for the async face.
fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn async_face_runs_a_job() {
    use approxnet_net::AsyncEndpoint;
    let rt = current_thread_runtime();
    rt.block_on(async {
        let mut server = AsyncEndpoint::bind(lo(), RuntimeConfig::default()).unwrap();
        let mut client = AsyncEndpoint::bind(lo(), RuntimeConfig::default()).unwrap();
        let addr = server.local_addr();
        let serve = async {
            let mut delivered = 0;
            loop {
                match server.next_event(BOUND).await.unwrap().expect("event").1 {
                    Event::MessageDelivered { .. } => delivered += 1,
                    Event::JobComplete {
                        role: Role::Receiver,
                        ..
                    } => return delivered,
                    _ => {}
                }
            }
        };
        let send = async {
            let h = client.connect(addr).await.unwrap();
            let job = client
                .send_job(h, JobSpec::uniform(1.0, &[10_000; 30]).unwrap())
                .unwrap();
            client.wait_job(h, job, BOUND).await.unwrap()
        };
        let (delivered, report) = tokio::join!(serve, send);
        assert_eq!(delivered, 30);
        assert!(report.guarantee_held());
        // Each wait of either side counted once, under one cause.
        for st in [client.stats(), server.stats()] {
            assert!(st.sleeps >= 1, "{st:?}");
            assert_eq!(st.sleep_causes.total().sleeps, st.sleeps, "{st:?}");
            assert_eq!(st.sleep_causes.window.sleeps, 0, "no in-flight cap");
        }
    });
}

#[test]
fn the_async_face_counts_an_idle_wait_as_one_for_the_application() {
    use approxnet_net::AsyncEndpoint;
    let rt = current_thread_runtime();
    rt.block_on(async {
        // No connection: every wait is for the application, and takes time.
        let mut idle = AsyncEndpoint::bind(lo(), RuntimeConfig::default()).unwrap();
        let got = idle.next_event(Some(Duration::from_millis(5))).await;
        assert!(got.unwrap().is_none());
        let st = idle.stats();
        assert!(st.sleeps >= 1, "{st:?}");
        assert_eq!(st.sleep_causes.application.sleeps, st.sleeps, "{st:?}");
        assert!(st.sleep_causes.application.slept_us >= 4_000, "{st:?}");
    });
}

#[test]
fn async_bind_outside_a_runtime_is_an_error_not_a_panic() {
    assert!(approxnet_net::AsyncEndpoint::bind(lo(), RuntimeConfig::default()).is_err());
}

#[test]
fn endpoints_can_move_between_threads_and_tasks() {
    fn assert_send<T: Send>() {}
    assert_send::<Endpoint>();
    assert_send::<approxnet_net::AsyncEndpoint>();
}

#[test]
fn tensor_job_arrives_with_its_values() {
    use approxnet_proto::tensor::TensorSpec;
    let values: Vec<f32> = (0..20_000).map(|i| i as f32 * 0.5).collect();
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        let mut ready = None;
        loop {
            match server
                .next_event(BOUND)
                .unwrap()
                .expect("event within bound")
                .1
            {
                Event::TensorReady {
                    data,
                    missing,
                    fraction,
                    ..
                } => ready = Some((data, missing, fraction)),
                Event::JobComplete {
                    role: Role::Receiver,
                    ..
                } => return ready,
                _ => {}
            }
        }
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).unwrap();
    let job = client
        .send_job(h, JobSpec::tensor(TensorSpec::from_f32(&values, 1.0)))
        .unwrap();
    client.wait_job(h, job, BOUND).unwrap();
    let (data, missing, fraction) = t.join().unwrap().expect("TensorReady before completion");
    assert!(missing.is_empty());
    assert_eq!(fraction, 1.0);
    let got: Vec<f32> = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert_eq!(got, values);
}

#[test]
fn ipv6_loopback_works_where_available() {
    let v6: SocketAddr = "[::1]:0".parse().unwrap();
    let Ok(server) = Endpoint::bind(v6, RuntimeConfig::default()) else {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    };
    let addr = server.local_addr();
    let t = thread::spawn(move || serve(server, 1));
    let mut client = Endpoint::bind(v6, RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).unwrap();
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &[5000; 20]).unwrap())
        .unwrap();
    assert!(client.wait_job(h, job, BOUND).unwrap().guarantee_held());
    assert_eq!(t.join().unwrap().0, 20);
}

#[test]
fn tiled_cuts_64_kib_messages_into_equal_packets_and_full_is_the_default() {
    // Tiled: 64 packets of 1,024 bytes (GSO sends can then span messages);
    // Full (the default): 46 of 1,420 and one of 216. Both arrive whole.
    for (split, per_message) in [(Some(PacketSplit::Tiled), 64), (None, 47)] {
        let mut cfg = RuntimeConfig::default();
        if let Some(s) = split {
            cfg.proto.packet_split = s;
        }
        let server = Endpoint::bind(lo(), cfg.clone()).unwrap();
        let addr = server.local_addr();
        let t = thread::spawn(move || {
            let mut server = server;
            let mut got = Vec::new();
            while got.len() < 20 {
                match server.next_event(BOUND).expect("server io") {
                    Some((_, Event::MessageDelivered { msg, payload, .. })) => {
                        got.push((msg, payload))
                    }
                    Some(_) => {}
                    None => panic!("server saw no event within the bound"),
                }
            }
            got
        });
        let body = |i: u32| -> Vec<u8> { (0..65_536u32).map(|k| (k * 7 + i) as u8).collect() };
        let mut spec = JobSpec::new(1.0).unwrap();
        for i in 0..20 {
            spec = spec.message(0, body(i));
        }
        let mut client = Endpoint::bind(lo(), cfg).unwrap();
        let h = client.connect(addr).expect("handshake");
        let job = client.send_job(h, spec).unwrap();
        let report = client.wait_job(h, job, BOUND).expect("job completes");
        assert_eq!(
            report.packets - report.retransmissions,
            20 * per_message,
            "{split:?}"
        );
        for (msg, payload) in t.join().unwrap() {
            assert!(payload == body(msg), "{split:?}: message {msg} intact");
        }
    }
}

#[test]
fn every_sleep_is_counted_under_what_it_waited_for() {
    // No connection: a sleep waits for the application.
    let mut ep = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    assert!(ep
        .next_event(Some(Duration::from_millis(1)))
        .unwrap()
        .is_none());
    let st = ep.stats();
    let c = st.sleep_causes;
    assert!(st.sleeps >= 1, "{st:?}");
    assert_eq!(c.application.sleeps, st.sleeps, "{c:?}");
    // A transfer: each sleep of either side counted once, under one cause.
    let server = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let addr = server.local_addr();
    let t = thread::spawn(move || {
        let mut server = server;
        serve_on(&mut server, 1);
        server.stats()
    });
    let mut client = Endpoint::bind(lo(), RuntimeConfig::default()).unwrap();
    let h = client.connect(addr).expect("handshake");
    let job = client
        .send_job(h, JobSpec::uniform(1.0, &vec![20_000; 50]).unwrap())
        .unwrap();
    client.wait_job(h, job, BOUND).expect("job completes");
    for st in [client.stats(), t.join().unwrap()] {
        let c = st.sleep_causes;
        assert_eq!(c.total().sleeps, st.sleeps, "{c:?}");
        assert_eq!(c.window.sleeps, 0, "no in-flight cap: {c:?}");
    }
}
