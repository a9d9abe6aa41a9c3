//! Streaming jobs (seed 000 §2.2, §3.3.2): N announced up front, messages
//! handed over as produced, and a job that ends once `ceil(MSR * N)` of
//! every group arrived — the sender told so by the receiver, the rest never
//! sent.

mod common;

use approxnet_proto::event::Role;
use approxnet_proto::harness::{Pair, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::time::Duration;
use approxnet_proto::{Event, JobError, JobSpec, Pushed};
use common::{cfg, delivered, link, outcome};

fn msg(group: u16, n: usize) -> MessageSpec {
    MessageSpec {
        group,
        payload: Payload::Bytes(vec![7; n]),
        precise_len: n,
    }
}

/// Produces one 1 KB message every `gap` until `n` were handed over or the
/// job says it is complete; returns (pushed, refused-as-complete).
fn produce(
    pair: &mut Pair,
    h: approxnet_proto::ConnectionHandle,
    job: u32,
    n: u32,
    gap: Duration,
) -> (u32, u32) {
    let (mut pushed, mut late) = (1, 0); // message 0 came with the job
    while pushed + late < n {
        let until = pair.now + gap;
        pair.run_until(gap, |p| p.now >= until);
        match pair
            .client
            .push_messages(pair.now, h, job, vec![msg(0, 1000)])
        {
            Ok(Pushed::Queued(1)) => pushed += 1,
            Ok(Pushed::JobComplete) => late += 1,
            other => panic!("{other:?}"),
        }
    }
    (pushed, late)
}

/// Connects and opens a streaming job of `n` messages at `msr`, its first
/// 1 KB message handed over with it.
fn open_stream(pair: &mut Pair, msr: f64, n: u32) -> (approxnet_proto::ConnectionHandle, u32) {
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = JobSpec {
        messages: vec![msg(0, 1000)],
        ..JobSpec::streaming(msr, n).unwrap()
    };
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    (h, job)
}

#[test]
fn a_streaming_job_ends_at_its_msr_and_sends_nothing_after() {
    let mut pair = Pair::symmetric(cfg(), link(0.0), 5);
    let (h, job) = open_stream(&mut pair, 0.5, 100);
    // one message per 100 us, RTT 40 us: the 50th arrives ~5 ms in
    let (pushed, late) = produce(&mut pair, h, job, 100, Duration::from_micros(100));
    pair.run_until(Duration::from_millis(50), |p| p.job_done_at_server(job));
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert!(s.guarantee_held(), "{s:?}");
    assert_eq!(s.groups[0].messages, 100);
    assert_eq!(s.groups[0].must_deliver, 50);
    // it stopped within a round trip of the 50th message: one more at most
    assert!(
        (50..=52).contains(&pushed),
        "{pushed} pushed, {late} refused"
    );
    assert_eq!(pushed + late, 100);
    let got = delivered(&pair.server_events);
    assert_eq!(got.len() as u32, s.groups[0].delivered);
    assert!(got
        .iter()
        .all(|&(g, m, ref p)| g == 0 && m < 100 && p.len() == 1000));
    let satisfied = pair
        .server_events
        .iter()
        .filter(|(_, e)| matches!(e, Event::JobSatisfied { job: j } if *j == job))
        .count();
    assert_eq!(satisfied, 1, "JobSatisfied is raised once");
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert!(r.guarantee_held());
    assert_eq!(r.groups[0].abandoned, 100 - r.groups[0].delivered);
}

#[test]
fn messages_ready_at_once_stop_at_the_msr_too() {
    // The all-at-once job is the special case: 2,000 messages at MSR 0.25
    // over a clean path; what had not left when the receiver said "enough"
    // is never sent.
    let mut pair = Pair::symmetric(cfg(), link(0.0), 6);
    let job = pair
        .transfer(
            JobSpec::uniform(0.25, &vec![1000; 2000]).unwrap(),
            Duration::from_secs(1),
        )
        .unwrap();
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert!(s.guarantee_held());
    assert!(s.groups[0].delivered >= 500);
    // in flight when the signal came back: at most a few RTTs of data
    assert!(s.packets < 1200, "{s:?}");
    assert!(s.unsent_bytes >= 800 * 1000, "{s:?}");
    assert_eq!(s.bytes, 2000 * 1000);
}

#[test]
fn a_lossy_streaming_job_still_holds_its_guarantee() {
    let mut pair = Pair::symmetric(cfg(), link(0.3), 7);
    let (h, job) = open_stream(&mut pair, 0.75, 200);
    produce(&mut pair, h, job, 200, Duration::from_micros(20));
    assert!(pair.run_until(Duration::from_secs(1), |p| p.job_done_at_server(job)));
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert!(s.guarantee_held() && r.guarantee_held(), "{s:?} {r:?}");
    assert!(r.groups[0].delivered >= 150);
}

#[test]
fn bad_pushes_are_errors_and_take_nothing() {
    let mut pair = Pair::symmetric(cfg(), link(0.0), 8);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = JobSpec::streaming(1.0, 2).unwrap().group(3, 1.0).unwrap();
    assert_eq!(
        JobSpec::streaming(1.0, 0).unwrap_err(),
        JobError::Empty,
        "N = 0"
    );
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    // group 3 was defined but announced nothing and got nothing: unknown
    let now = pair.now;
    assert!(matches!(
        pair.client.push_messages(now, h, job, vec![msg(3, 10)]),
        Err(JobError::UnknownGroup { group: 3, .. })
    ));
    assert!(matches!(
        pair.client.push_messages(now, h, job, vec![msg(9, 10)]),
        Err(JobError::UnknownGroup { group: 9, .. })
    ));
    // three messages for a group of two: refused whole
    assert!(matches!(
        pair.client
            .push_messages(now, h, job, vec![msg(0, 10), msg(0, 10), msg(0, 10)]),
        Err(JobError::GroupFull {
            group: 0,
            announced: 2,
            msg: 2
        })
    ));
    let bad_prefix = MessageSpec {
        precise_len: 11,
        ..msg(0, 10)
    };
    assert!(matches!(
        pair.client.push_messages(now, h, job, vec![bad_prefix]),
        Err(JobError::PreciseTooLong { .. })
    ));
    assert_eq!(
        pair.client.push_messages(now, h, job + 7, vec![msg(0, 10)]),
        Err(JobError::UnknownJob(job + 7))
    );
    // the two messages still fit, and the job completes with them
    assert_eq!(
        pair.client
            .push_messages(now, h, job, vec![msg(0, 10), msg(0, 10)]),
        Ok(Pushed::Queued(2))
    );
    assert!(pair.run_until(Duration::from_millis(10), |p| p.job_done_at_server(job)));
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert_eq!(r.groups[0].delivered, 2);
    // a tensor job cannot stream
    let t = approxnet_proto::tensor::TensorSpec::from_f32(&[1.0; 8], 1.0);
    let mut tj = JobSpec::tensor(t);
    tj.groups[0].announced = Some(4);
    assert_eq!(
        pair.client.send_job(pair.now, h, tj),
        Err(JobError::TensorStreaming)
    );
}

#[test]
fn pushes_of_many_messages_over_many_groups_are_counted_per_group() {
    // `push_messages` counts a call's messages per group on the stack up
    // to 16 groups / messages and on the heap past that (issue 19): both
    // ways, a group filled past its N refuses the whole call, and every
    // message gets its group's next id in the order pushed.
    let mut pair = Pair::symmetric(cfg(), link(0.0), 8);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let mut spec = JobSpec::streaming(1.0, 3).unwrap();
    for g in 1..20 {
        spec = spec.group(g, 1.0).unwrap().announce(g, 3).unwrap();
    }
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    let mut next = [0u8; 20];
    let mut m = |g: u16| {
        next[g as usize] += 1;
        MessageSpec {
            group: g,
            payload: Payload::Bytes(vec![g as u8, next[g as usize] - 1]),
            precise_len: 2,
        }
    };
    let now = pair.now;
    let mut push = |msgs| pair.client.push_messages(now, h, job, msgs);
    // 16 messages over 16 groups; 17 over 16 groups (two for group 19)
    assert_eq!(push((0..16).map(&mut m).collect()), Ok(Pushed::Queued(16)));
    let b: Vec<_> = [19, 19].into_iter().chain(0..15).map(&mut m).collect();
    assert_eq!(push(b), Ok(Pushed::Queued(17)));
    // a fourth for group 19 at index 18 of 19: refused whole
    let probe = |g: u16, k: u8| MessageSpec {
        group: g,
        payload: Payload::Bytes(vec![0xee, k]),
        precise_len: 2,
    };
    let c: Vec<_> = (1..18).chain([19, 19]).map(|g| probe(g, 0)).collect();
    assert_eq!(
        push(c),
        Err(JobError::GroupFull {
            group: 19,
            announced: 3,
            msg: 18
        })
    );
    // group 0 holds two: a third fits, a fourth (index 1 of 2) does not
    assert_eq!(
        push(vec![probe(0, 1), probe(0, 2)]),
        Err(JobError::GroupFull {
            group: 0,
            announced: 3,
            msg: 1
        })
    );
    // the rest, exactly: every group ends at 3
    let mut rest = Vec::new();
    for g in 0..20u16 {
        let have = [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 2][g as usize];
        rest.extend((have..3).map(|_| m(g)));
    }
    assert_eq!(push(rest), Ok(Pushed::Queued(20 * 3 - 33)));
    assert!(pair.run_until(Duration::from_millis(20), |p| p.job_done_at_server(job)));
    let mut got = delivered(&pair.server_events);
    got.sort();
    let want: Vec<_> = (0..20u16)
        .flat_map(|g| (0..3u32).map(move |k| (g, k, vec![g as u8, k as u8])))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_lost_message_is_resent_when_no_fresh_one_can_take_its_place() {
    // One message per ms over a path losing 30 %: giving a lost message up
    // would wait a production gap for its replacement; resending it costs
    // one RTT (40 us). Ten of twenty must arrive: the job ends soon after
    // the tenth message is produced, not after ~14.
    let mut pair = Pair::symmetric(cfg(), link(0.3), 9);
    let (h, job) = open_stream(&mut pair, 0.5, 20);
    let start = pair.now;
    produce(&mut pair, h, job, 20, Duration::from_millis(1));
    pair.run_until(Duration::from_millis(50), |p| p.job_done_at_client(job));
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert!(s.guarantee_held(), "{s:?}");
    assert!(s.lost_packets > 0 && s.retransmissions > 0, "{s:?}");
    assert!(
        s.jct < Duration::from_micros(10_500),
        "JCT {:?} from {start:?}: lost messages waited for production",
        s.jct
    );
}
