//! Holding under attack and under vanished peers (issue 11): state a peer
//! made us hold expires after the idle bound, a cap refuses the offending
//! job and never ends the connection, and a full connection table makes
//! room by evicting unproven connections, never live ones; so does a
//! spent endpoint-wide byte budget.

mod common;

use approxnet_proto::event::{JobFailure, Role};
use approxnet_proto::harness::{forge, LinkConfig, Pair, CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Endpoint, Event, JobSpec};
use common::*;
use std::net::SocketAddr;

fn short_idle() -> Config {
    Config {
        idle_timeout: Duration::from_millis(50),
        ..cfg()
    }
}

fn receiver_failed(
    events: &[(approxnet_proto::ConnectionHandle, Event)],
    why: &JobFailure,
) -> bool {
    events.iter().any(|(_, e)| {
        matches!(e, Event::JobComplete { role: Role::Receiver, outcome: Err(f), .. } if f == why)
    })
}

#[test]
fn a_vanished_senders_state_is_gone_within_the_idle_bound() {
    let mut pair = Pair::symmetric(short_idle(), link(0.0), 11);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[1400; 2000]).unwrap())
        .unwrap();
    // let some of it arrive, then the sender vanishes (every packet lost)
    pair.run_until(Duration::from_millis(5), |p| {
        p.server_events
            .iter()
            .filter(|(_, e)| matches!(e, Event::MessageDelivered { .. }))
            .count()
            > 10
    });
    assert_eq!(pair.server.connection_count(), 1);
    pair.forward.set_config(LinkConfig {
        loss: 1.0,
        ..link(0.0)
    });
    let start = pair.now;
    assert!(pair.run_until(Duration::from_secs(1), |p| p.server.connection_count() == 0));
    assert!(
        pair.now - start <= Duration::from_millis(60),
        "{:?}",
        pair.now - start
    );
    assert!(receiver_failed(
        &pair.server_events,
        &JobFailure::PeerUnresponsive
    ));
    assert!(pair
        .server_events
        .iter()
        .any(|(_, e)| matches!(e, Event::ConnectionLost { .. })));
}

#[test]
fn a_paused_streaming_job_outlives_the_idle_timeout() {
    // Production pauses for 4 idle timeouts: keepalives (the JOB resent,
    // answered by the receiver) keep both ends from giving up.
    let mut pair = Pair::symmetric(short_idle(), link(0.0), 12);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let job = pair
        .client
        .send_job(pair.now, h, JobSpec::streaming(1.0, 2).unwrap())
        .unwrap();
    let m = |b: u8| MessageSpec {
        group: 0,
        payload: Payload::Bytes(vec![b; 100]),
        precise_len: 100,
    };
    pair.client
        .push_messages(pair.now, h, job, vec![m(1)])
        .unwrap();
    let until = pair.now + Duration::from_millis(200);
    pair.run_until(Duration::from_millis(300), |p| p.now >= until);
    assert!(!pair
        .client_events
        .iter()
        .any(|(_, e)| matches!(e, Event::ConnectionLost { .. })));
    pair.client
        .push_messages(pair.now, h, job, vec![m(2)])
        .unwrap();
    assert!(pair.run_until(Duration::from_millis(50), |p| p.job_done_at_server(job)));
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert_eq!(r.groups[0].delivered, 2);
}

#[test]
fn a_job_flood_on_a_live_id_leaves_the_live_job_completing() {
    // An on-path attacker who sniffed the connection id sends JOBs with new
    // ids (2^20 messages each) from the client's address. Those over the
    // caps are refused one by one; the connection and its job go on.
    let (mut pair, data) = established();
    let live = data.job_id;
    for k in 0..2000u32 {
        let bytes = forge::job(data.conn_id, 1_000 + k, 1 << 20);
        pair.server.handle_datagram(pair.now, CLIENT_ADDR, &bytes);
        if k % 50 == 0 {
            pair.step();
        }
    }
    assert!(pair.server.stats().dropped(DropReason::CapExceeded) > 0);
    assert!(pair.run_until(Duration::from_secs(1), |p| p.job_done_at_client(live)));
    let s = outcome(&pair.client_events, live, Role::Sender).unwrap();
    assert!(s.guarantee_held(), "{s:?}");
    assert!(!pair
        .client_events
        .iter()
        .any(|(_, e)| matches!(e, Event::ConnectionLost { .. })));
    // the forged jobs hold nothing once the idle bound passed without DATA
    let conn = pair.server_events[0].0;
    pair.run_until(Duration::from_secs(3), |p| {
        p.server.buffered_bytes(conn).is_none_or(|b| b < 1 << 16)
    });
    assert!(pair.server.buffered_bytes(conn).is_none_or(|b| b < 1 << 16));
}

#[test]
fn a_refused_job_fails_alone() {
    // A job over the receiver's message cap is refused; the connection and
    // a job that fits go on.
    let mut small = cfg();
    small.limits.max_messages_per_job = 100;
    let mut pair = Pair::new(cfg(), small, link(0.0), link(0.0), 13);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let big = pair
        .client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[100; 500]).unwrap())
        .unwrap();
    let ok = pair
        .client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[100; 50]).unwrap())
        .unwrap();
    assert!(pair.run_until(Duration::from_millis(100), |p| p.job_done_at_server(ok)));
    assert!(matches!(
        outcome(&pair.client_events, big, Role::Sender),
        Err(JobFailure::Refused)
    ));
    assert!(outcome(&pair.client_events, ok, Role::Sender)
        .unwrap()
        .guarantee_held());
}

/// A few rounds of packets between one client (at `addr`) and the server;
/// the client's DATA is withheld unless `data`.
fn exchange(
    cl: &mut Endpoint,
    addr: SocketAddr,
    server: &mut Endpoint,
    t: approxnet_proto::time::Instant,
    data: bool,
    buf: &mut [u8],
) {
    for _ in 0..4 {
        while let Some(tx) = cl.poll_transmit(t, buf) {
            let is_data = buf[1] == 1;
            if data || !is_data {
                server.handle_datagram(t, addr, &buf[..tx.len]);
            }
        }
        while let Some(tx) = server.poll_transmit(t, buf) {
            if tx.dst == addr {
                cl.handle_datagram(t, SERVER_ADDR, &buf[..tx.len]);
            }
        }
    }
}

/// Five milliseconds of timers (ACK delays, retransmissions) with every
/// packet delivered, from `t0`.
fn settle(
    cl: &mut Endpoint,
    addr: SocketAddr,
    server: &mut Endpoint,
    t0: approxnet_proto::time::Instant,
    buf: &mut [u8],
) {
    for k in 1..=5 {
        let t = t0 + Duration::from_millis(k);
        server.handle_timeout(t);
        cl.handle_timeout(t);
        exchange(cl, addr, server, t, true, buf);
    }
}

fn job_done(cl: &mut Endpoint, job: u32) -> bool {
    let mut done = false;
    while let Some((_, e)) = cl.poll_event() {
        done |= matches!(e, Event::JobComplete { job: j, outcome: Ok(_), .. } if j == job);
    }
    done
}

#[test]
fn a_full_table_evicts_unproven_connections_not_live_ones() {
    let mut c = cfg();
    c.limits.max_connections = 8;
    let mut server = Endpoint::new(c, 21).unwrap();
    let mut buf = vec![0u8; 2048];
    let now = approxnet_proto::time::Instant::ZERO;
    // eight clients each send a JOB (a valid cookie) and no DATA
    let mut clients = Vec::new();
    for k in 0..9u16 {
        let addr: SocketAddr = format!("10.0.1.{}:{}", k + 1, 4000 + k).parse().unwrap();
        let mut cl = Endpoint::new(cfg(), 100 + k as u64).unwrap();
        let h = cl.connect(now, SERVER_ADDR).unwrap();
        clients.push((addr, cl, h));
    }
    // one live client with DATA flowing, seven that only announce a job
    let t0 = now;
    for (i, (addr, cl, h)) in clients.iter_mut().enumerate().take(8) {
        exchange(cl, *addr, &mut server, t0, i == 0, &mut buf);
        cl.send_job(t0, *h, JobSpec::uniform(1.0, &[100; 10]).unwrap())
            .unwrap();
        exchange(cl, *addr, &mut server, t0, i == 0, &mut buf);
    }
    assert_eq!(server.connection_count(), 8);
    // later, a ninth client: room is made by evicting a silent unproven one
    let t1 = t0 + Duration::from_millis(5);
    let (addr, cl, h) = &mut clients[8];
    exchange(cl, *addr, &mut server, t1, true, &mut buf);
    let job = cl
        .send_job(t1, *h, JobSpec::uniform(1.0, &[100; 10]).unwrap())
        .unwrap();
    exchange(cl, *addr, &mut server, t1, true, &mut buf);
    assert_eq!(server.stats().evicted, 1);
    assert_eq!(server.connection_count(), 8);
    let mut events = Vec::new();
    while let Some(e) = server.poll_event() {
        events.push(e.1);
    }
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ConnectionLost {
            reason: JobFailure::Evicted
        }
    )));
    // the ninth client's job completes
    assert!(job_done(cl, job), "the new client's job did not complete");
}

#[test]
fn the_endpoint_byte_budget_bounds_many_peers_and_still_admits_a_new_one() {
    // 24 peers with valid cookies each announce two 2^17-message jobs
    // (16 KiB of delivery bitmaps each) and send no DATA: 768 KiB asked
    // of a 128 KiB budget.
    const BUDGET: usize = 128 << 10;
    let mut c = cfg();
    c.limits.max_endpoint_bytes = BUDGET;
    c.limits.max_buffered_bytes = 32 << 10;
    let mut server = Endpoint::new(c, 22).unwrap();
    let mut buf = vec![0u8; 2048];
    let t0 = approxnet_proto::time::Instant::ZERO;
    let big = JobSpec::uniform(0.5, &vec![1; 1 << 17]).unwrap();
    for k in 0..24u16 {
        let addr: SocketAddr = format!("10.0.2.{}:{}", k + 1, 5000 + k).parse().unwrap();
        let mut cl = Endpoint::new(cfg(), 200 + k as u64).unwrap();
        let h = cl.connect(t0, SERVER_ADDR).unwrap();
        exchange(&mut cl, addr, &mut server, t0, false, &mut buf);
        for _ in 0..2 {
            cl.send_job(t0, h, big.clone()).unwrap();
        }
        exchange(&mut cl, addr, &mut server, t0, false, &mut buf);
        assert!(server.held_bytes() <= BUDGET, "{}", server.held_bytes());
    }
    assert!(server.held_bytes() > BUDGET * 3 / 4, "the budget was used");
    assert!(server.stats().dropped(DropReason::CapExceeded) > 0);
    // a real client later: an unproven peer's bytes are freed for its job
    let t1 = t0 + Duration::from_millis(5);
    let addr: SocketAddr = "10.0.3.1:6000".parse().unwrap();
    let mut cl = Endpoint::new(cfg(), 300).unwrap();
    let h = cl.connect(t1, SERVER_ADDR).unwrap();
    exchange(&mut cl, addr, &mut server, t1, true, &mut buf);
    let job = cl
        .send_job(t1, h, JobSpec::uniform(1.0, &[100; 10]).unwrap())
        .unwrap();
    exchange(&mut cl, addr, &mut server, t1, true, &mut buf);
    assert!(server.stats().evicted >= 1);
    assert!(server.held_bytes() <= BUDGET);
    // let the ACK timers run
    settle(&mut cl, addr, &mut server, t1, &mut buf);
    assert!(
        job_done(&mut cl, job),
        "the new client's job did not complete"
    );
}

/// Ids the server (seeded `seed`) hands to each address: what an attacker
/// who guessed the seed computes with a copy of the endpoint.
fn guessed_ids(seed: u64, from: &[SocketAddr]) -> Vec<u64> {
    let mut copy = Endpoint::new(cfg(), seed).unwrap();
    let mut buf = vec![0u8; 2048];
    let t = approxnet_proto::time::Instant::ZERO;
    from.iter()
        .map(|&a| {
            copy.handle_datagram(t, a, &forge::hello(1));
            let tx = copy.poll_transmit(t, &mut buf).unwrap();
            let p = approxnet_proto::wire::Packet::new_checked(&buf[..tx.len]).unwrap();
            approxnet_proto::wire::HeaderRepr::parse(&p)
                .unwrap()
                .conn_id
        })
        .collect()
}

/// 2,000 spoofed source addresses in 10.`net`.0.0/16.
fn spoofed(net: u8) -> Vec<SocketAddr> {
    (0..2000u32)
        .map(|i| {
            format!("10.{net}.{}.{}:7000", i / 250, i % 250 + 1)
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn forged_jobs_with_valid_ids_churn_the_unproven_pool_and_a_new_client_gets_in() {
    // The secret was guessed: 2,000 spoofed addresses each open a
    // connection with a 2^20-message JOB (128 KiB of bitmaps charged) and
    // never send DATA. All at one instant: no grace protects the oldest.
    let limits = cfg().limits;
    let mut server = Endpoint::new(cfg(), 31).unwrap();
    let from = spoofed(9);
    let ids = guessed_ids(31, &from);
    let t0 = approxnet_proto::time::Instant::ZERO;
    let mut buf = vec![0u8; 2048];
    let flood = |server: &mut Endpoint, round: u32, t| {
        for (a, &id) in from.iter().zip(&ids) {
            server.handle_datagram(t, *a, &forge::job(id, round, 1 << 20));
            let (n, bytes) = server.unproven();
            assert!(n <= limits.unproven_cap(), "{n} unproven");
            assert!(bytes <= limits.unproven_bytes_cap(), "{bytes} bytes");
        }
        while server.poll_event().is_some() {}
    };
    flood(&mut server, 0, t0);
    // the byte cap (16 MiB / 128 KiB) binds before the count cap
    assert_eq!(server.unproven().0, 128);
    assert_eq!(server.connection_count(), 128);
    assert!(server.held_bytes() <= limits.unproven_bytes_cap());
    assert_eq!(server.stats().evicted, 2000 - 128);
    // a new client at the same instant: its JOB carries the id of our
    // HELLO_ACK and its DATA follows, so the next 2,000 forged JOBs do not
    // evict it
    let addr: SocketAddr = "10.0.4.1:6100".parse().unwrap();
    let mut cl = Endpoint::new(cfg(), 400).unwrap();
    let h = cl.connect(t0, SERVER_ADDR).unwrap();
    exchange(&mut cl, addr, &mut server, t0, true, &mut buf);
    let job = cl
        .send_job(t0, h, JobSpec::uniform(1.0, &[100; 10]).unwrap())
        .unwrap();
    exchange(&mut cl, addr, &mut server, t0, true, &mut buf);
    flood(&mut server, 1, t0);
    assert_eq!(server.unproven().0, 128, "the client's is not among them");
    settle(&mut cl, addr, &mut server, t0, &mut buf);
    assert!(
        job_done(&mut cl, job),
        "the new client's job did not complete"
    );
    assert_eq!(server.stats().evicted, 4000 - 128);
}

#[test]
fn poll_reply_gives_handshake_replies_and_nothing_of_a_connection() {
    // What the runtime sends between receive batches of a flood: only the
    // stateless HELLO_ACKs, never a connection's packets (no timer fires).
    let mut server = Endpoint::new(cfg(), 41).unwrap();
    let mut buf = vec![0u8; 2048];
    let t = approxnet_proto::time::Instant::ZERO;
    let mut cl = Endpoint::new(cfg(), 42).unwrap();
    let h = cl.connect(t, SERVER_ADDR).unwrap();
    cl.send_job(t, h, JobSpec::uniform(1.0, &[100; 4]).unwrap())
        .unwrap();
    let hello = cl.poll_transmit(t, &mut buf).unwrap();
    server.handle_datagram(t, CLIENT_ADDR, &buf[..hello.len]);
    assert!(server.has_replies());
    let ack = server.poll_reply(t, &mut buf).expect("the HELLO_ACK");
    assert_eq!(ack.dst, CLIENT_ADDR);
    assert!(server.poll_reply(t, &mut buf).is_none());
    cl.handle_datagram(t, SERVER_ADDR, &buf[..ack.len]);
    // the client's JOB and DATA make the server's connection want to send
    while let Some(tx) = cl.poll_transmit(t, &mut buf) {
        server.handle_datagram(t, CLIENT_ADDR, &buf[..tx.len]);
    }
    server.flush_acks(t);
    // and a second client's HELLO arrives
    let other: SocketAddr = "10.0.5.1:6200".parse().unwrap();
    server.handle_datagram(t, other, &forge::hello(7));
    let r = server
        .poll_reply(t, &mut buf)
        .expect("the second HELLO_ACK");
    assert_eq!(r.dst, other);
    assert!(server.poll_reply(t, &mut buf).is_none(), "nothing else");
    assert!(!server.has_replies());
    let next = server
        .poll_transmit(t, &mut buf)
        .expect("the connection's ACK");
    assert_eq!(next.dst, CLIENT_ADDR);
}

#[test]
fn a_client_that_got_our_hello_ack_is_not_on_probation() {
    // A real client's JOB carries the id of a HELLO_ACK this server sent;
    // forged JOBs carry ids computed for spoofed addresses. The client's
    // DATA is held back while 2,000 forged JOBs churn the unproven pool:
    // its connection is not in that pool, so it survives and completes.
    let mut server = Endpoint::new(cfg(), 51).unwrap();
    let from = spoofed(8);
    let ids = guessed_ids(51, &from);
    let t0 = approxnet_proto::time::Instant::ZERO;
    let mut buf = vec![0u8; 2048];
    let addr: SocketAddr = "10.0.6.1:6300".parse().unwrap();
    let mut cl = Endpoint::new(cfg(), 500).unwrap();
    let h = cl.connect(t0, SERVER_ADDR).unwrap();
    exchange(&mut cl, addr, &mut server, t0, false, &mut buf);
    let job = cl
        .send_job(t0, h, JobSpec::uniform(1.0, &[100; 10]).unwrap())
        .unwrap();
    exchange(&mut cl, addr, &mut server, t0, false, &mut buf); // JOB, no DATA
    assert_eq!(server.connection_count(), 1);
    assert_eq!(server.unproven().0, 0, "vouched by its HELLO_ACK");
    for (a, &id) in from.iter().zip(&ids) {
        server.handle_datagram(t0, *a, &forge::job(id, 0, 1 << 20));
    }
    assert_eq!(server.unproven().0, 128);
    assert_eq!(server.stats().evicted, 2000 - 128);
    settle(&mut cl, addr, &mut server, t0, &mut buf);
    assert!(job_done(&mut cl, job), "the client's job did not complete");
}
