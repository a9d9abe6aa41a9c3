//! Open-ended streams (seed 002, SAP sockets): a streaming job announced
//! with a large N, one precise group (MSR 1: acknowledged, retransmitted,
//! delivered in order) and one approximate group (MSR 0: sent once, never
//! retransmitted), ended by the application at what it produced
//! (`Endpoint::end_stream`), after which it completes like any job.

mod common;

use approxnet_proto::event::Role;
use approxnet_proto::harness::{Pair, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::time::Duration;
use approxnet_proto::{ConnectionHandle, Event, JobError, JobSpec};
use common::{cfg, delivered, link, outcome};

const PRECISE: u16 = 0;
const APPROX: u16 = 1;
const OPEN_N: u32 = 1 << 16;

fn open(pair: &mut Pair) -> (ConnectionHandle, u32) {
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = JobSpec::new(1.0)
        .unwrap()
        .group(APPROX, 0.0)
        .unwrap()
        .announce(PRECISE, OPEN_N)
        .unwrap()
        .announce(APPROX, OPEN_N)
        .unwrap();
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    (h, job)
}

fn datagram(group: u16, i: u32) -> MessageSpec {
    let mut b = vec![group as u8; 600];
    b[..4].copy_from_slice(&i.to_be_bytes());
    MessageSpec {
        group,
        precise_len: if group == PRECISE { b.len() } else { 4 },
        payload: Payload::Bytes(b),
    }
}

/// Pushes `n` datagrams alternating precise / approximate, 50 us apart.
fn produce(pair: &mut Pair, h: ConnectionHandle, job: u32, n: u32) {
    for i in 0..n {
        let group = if i % 2 == 0 { PRECISE } else { APPROX };
        pair.client
            .push_messages(pair.now, h, job, vec![datagram(group, i)])
            .unwrap();
        let until = pair.now + Duration::from_micros(50);
        pair.run_until(Duration::from_micros(50), |p| p.now >= until);
    }
}

#[test]
fn an_ended_stream_completes_with_every_precise_datagram_in_order() {
    let mut pair = Pair::symmetric(cfg(), link(0.05), 11);
    let (h, job) = open(&mut pair);
    produce(&mut pair, h, job, 400);
    // Still open: nothing completes while the stream runs.
    assert!(!pair.job_done_at_client(job));
    pair.client.end_stream(pair.now, h, job).unwrap();
    assert!(
        pair.run_until(Duration::from_secs(2), |p| p.job_done_at_client(job)
            && p.job_done_at_server(job))
    );
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert_eq!(s.groups[0].messages, 200, "N shrank to what was produced");
    assert_eq!(s.groups[0].delivered, 200);
    assert_eq!(s.groups[1].messages, 200);
    assert_eq!(s.groups[1].must_deliver, 0);
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert!(r.guarantee_held());
    let got = delivered(&pair.server_events);
    let precise: Vec<u32> = got
        .iter()
        .filter(|(g, _, _)| *g == PRECISE)
        .map(|(_, m, _)| *m)
        .collect();
    assert_eq!(
        precise,
        (0..200).collect::<Vec<_>>(),
        "in order, none missing"
    );
    let approx = got.iter().filter(|(g, _, _)| *g == APPROX).count();
    assert!(
        (150..200).contains(&approx),
        "5 % loss, none resent: {approx}"
    );
    // Only the approximate datagrams the link lost are missing, each
    // reported once at the end.
    let abandoned = pair
        .server_events
        .iter()
        .filter(|(_, e)| matches!(e, Event::MessageAbandoned { group: APPROX, .. }))
        .count();
    assert_eq!(abandoned + approx, 200);
}

#[test]
fn approximate_datagrams_are_never_retransmitted() {
    // Approximate only: every loss is final, whatever the production pace
    // (no resend while the stream waits for production, no tail probe).
    let mut pair = Pair::symmetric(cfg(), link(0.2), 12);
    let (h, job) = open(&mut pair);
    for i in 0..200 {
        pair.client
            .push_messages(pair.now, h, job, vec![datagram(APPROX, i)])
            .unwrap();
        let until = pair.now + Duration::from_micros(200);
        pair.run_until(Duration::from_micros(200), |p| p.now >= until);
    }
    pair.client.end_stream(pair.now, h, job).unwrap();
    assert!(pair.run_until(Duration::from_secs(2), |p| p.job_done_at_client(job)));
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert_eq!(s.retransmissions, 0, "{s:?}");
    assert_eq!(s.packets, 200);
    assert!(s.lost_packets > 20, "the link lost some: {s:?}");
}

#[test]
fn end_stream_is_checked() {
    let mut pair = Pair::symmetric(cfg(), link(0.0), 13);
    let (h, job) = open(&mut pair);
    assert_eq!(
        pair.client.end_stream(pair.now, h, job + 7),
        Err(JobError::UnknownJob(job + 7))
    );
    pair.client.end_stream(pair.now, h, job).unwrap();
    // Ending twice changes nothing; pushing after the end is refused.
    pair.client.end_stream(pair.now, h, job).unwrap();
    let e = pair
        .client
        .push_messages(pair.now, h, job, vec![datagram(PRECISE, 0)])
        .unwrap_err();
    assert!(matches!(e, JobError::GroupFull { .. }), "{e:?}");
    // An empty ended stream completes at once, with nothing to deliver.
    assert!(
        pair.run_until(Duration::from_secs(1), |p| p.job_done_at_client(job)
            && p.job_done_at_server(job))
    );
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert_eq!(r.groups[0].messages, 0);
}

#[test]
fn an_ended_stream_still_sends_what_was_queued() {
    // A slow link: 300 approximate datagrams handed over at once queue in
    // the sender; ending the stream right away must not discard them.
    let mut slow = link(0.0);
    slow.rate = approxnet_proto::Rate::mbps(50.0);
    let mut pair = Pair::symmetric(cfg(), slow, 14);
    let (h, job) = open(&mut pair);
    let msgs = (0..300).map(|i| datagram(APPROX, i)).collect();
    pair.client.push_messages(pair.now, h, job, msgs).unwrap();
    pair.client.end_stream(pair.now, h, job).unwrap();
    assert!(
        pair.run_until(Duration::from_secs(2), |p| p.job_done_at_client(job)
            && p.job_done_at_server(job))
    );
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert_eq!(s.unsent_bytes, 0, "{s:?}");
    assert_eq!(s.packets, 300);
    let approx = delivered(&pair.server_events).len();
    assert!(approx > 250, "{approx} delivered");
}

/// The receiver's side of one exchange step: every datagram `from` sends,
/// with `keep` deciding which are delivered.
fn ferry(
    from: &mut approxnet_proto::Endpoint,
    to: &mut approxnet_proto::Endpoint,
    from_addr: std::net::SocketAddr,
    now: approxnet_proto::time::Instant,
    mut keep: impl FnMut(&approxnet_proto::wire::HeaderRepr, &[u8]) -> bool,
) -> Vec<(approxnet_proto::wire::HeaderRepr, Vec<u8>)> {
    let mut buf = vec![0u8; 2048];
    let mut seen = Vec::new();
    while let Some(t) = from.poll_transmit(now, &mut buf) {
        let d = buf[..t.len].to_vec();
        let h = approxnet_proto::wire::HeaderRepr::parse(
            &approxnet_proto::wire::Packet::new_unchecked(&d[..]),
        )
        .unwrap();
        if keep(&h, &d) {
            to.handle_datagram(now, from_addr, &d);
        }
        seen.push((h, d));
    }
    seen
}

#[test]
fn a_late_ack_of_the_first_job_does_not_confirm_the_re_announce() {
    use approxnet_proto::harness::CLIENT_ADDR;
    use approxnet_proto::wire::{Flags, PacketType};
    use approxnet_proto::Endpoint;
    let mut a = Endpoint::new(cfg(), 1).unwrap();
    let mut b = Endpoint::new(cfg(), 2).unwrap();
    let mut now = approxnet_proto::time::Instant::ZERO;
    let h = a.connect(now, SERVER_ADDR).unwrap();
    ferry(&mut a, &mut b, CLIENT_ADDR, now, |_, _| true);
    ferry(&mut b, &mut a, SERVER_ADDR, now, |_, _| true);
    let spec = JobSpec::streaming(1.0, OPEN_N).unwrap();
    let job = a.send_job(now, h, spec).unwrap();
    // the JOB goes through; its JOB_KNOWN ACK is held back (late)
    ferry(&mut a, &mut b, CLIENT_ADDR, now, |_, _| true);
    let acks = ferry(&mut b, &mut a, SERVER_ADDR, now, |h, _| {
        !h.flags.has(Flags::JOB_KNOWN)
    });
    let late: Vec<Vec<u8>> = acks
        .into_iter()
        .filter(|(h, _)| h.flags.has(Flags::JOB_KNOWN))
        .map(|(_, d)| d)
        .collect();
    assert_eq!(late.len(), 1, "the receiver acknowledged the JOB");
    a.push_messages(now, h, job, (0..3).map(|i| datagram(PRECISE, i)).collect())
        .unwrap();
    for _ in 0..4 {
        ferry(&mut a, &mut b, CLIENT_ADDR, now, |_, _| true);
        ferry(&mut b, &mut a, SERVER_ADDR, now, |_, _| true);
    }
    // the stream ends at 3; its re-announce is lost, and the late ACK of
    // the first JOB (announcing OPEN_N) arrives instead
    a.end_stream(now, h, job).unwrap();
    ferry(&mut a, &mut b, CLIENT_ADDR, now, |h, _| {
        h.ty.0 != PacketType::Job
    });
    a.handle_datagram(now, SERVER_ADDR, &late[0]);
    // from here everything is delivered, timers fire as they come
    let mut receiver = None;
    for _ in 0..200 {
        ferry(&mut a, &mut b, CLIENT_ADDR, now, |_, _| true);
        ferry(&mut b, &mut a, SERVER_ADDR, now, |_, _| true);
        while let Some((_, e)) = b.poll_event() {
            if let Event::JobComplete {
                role: Role::Receiver,
                outcome,
                ..
            } = e
            {
                receiver = Some(outcome);
            }
        }
        if receiver.is_some() {
            break;
        }
        now = a.poll_timeout().map_or(now, |t| now.max(t)) + Duration::from_micros(1);
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    let r = receiver
        .expect("the receiver finished the job")
        .expect("with its guarantee met");
    assert_eq!(r.groups[0].delivered, 3);
}
