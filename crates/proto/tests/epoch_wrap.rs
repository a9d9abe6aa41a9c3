//! A streaming job that stays open but idle for longer than 2^15 epochs
//! (issue 19: ~2.3 s at a 70 us RTT). An open job ends an epoch every
//! smoothed RTT, and DATA carries a 16-bit epoch number, which the
//! receiver checks against the newest it saw (`RecvSide::epoch_ok`: more
//! than `STALE_EPOCHS` (64) behind is stale, and with wrapping arithmetic
//! a number more than 2^15 ahead reads as behind). Counted over idle
//! epochs too, the number the job's next DATA carried had wrapped past
//! that window and every packet was dropped `StaleEpoch`: the job failed.
//! The wire epoch now advances only over epochs in which DATA left
//! (`Connection::end_epoch`): every later message must arrive, and no
//! packet be dropped as stale.

mod common;

use approxnet_proto::event::Role;
use approxnet_proto::harness::{LinkConfig, Pair, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, Event, JobSpec, Pushed, Rate};
use common::{delivered, outcome};

/// Messages in the job: `FIRST` before the idle spell, the rest after.
const MESSAGES: u32 = 20;
const FIRST: u32 = 5;

fn msg(i: u32) -> MessageSpec {
    MessageSpec {
        group: 0,
        payload: Payload::Bytes(vec![i as u8; 1000]),
        precise_len: 1000,
    }
}

/// The highest epoch the client's connection ended among its events from
/// `*seen` on; moves `*seen` past them.
fn last_epoch(pair: &Pair, seen: &mut usize, last: &mut u64) -> u64 {
    for (_, e) in &pair.client_events[*seen..] {
        if let Event::Epoch(s) = e {
            *last = (*last).max(s.epoch);
        }
    }
    *seen = pair.client_events.len();
    *last
}

#[test]
fn an_idle_stream_past_the_epoch_wrap_still_delivers() {
    // A ~12 us RTT: 2^15 epochs pass in ~0.4 s of virtual time.
    let cfg = Config {
        line_rate: Rate::gbps(10.0),
        idle_timeout: Duration::from_secs(1),
        ..Config::default()
    };
    let link = LinkConfig {
        delay: Duration::from_micros(5),
        rate: Rate::gbps(10.0),
        ..LinkConfig::default()
    };
    let mut pair = Pair::symmetric(cfg, link, 19);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = JobSpec {
        messages: vec![msg(0)],
        ..JobSpec::streaming(1.0, MESSAGES).unwrap()
    };
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    let first: Vec<_> = (1..FIRST).map(msg).collect();
    assert_eq!(
        pair.client.push_messages(pair.now, h, job, first).unwrap(),
        Pushed::Queued((FIRST - 1) as usize)
    );
    let got = pair.run_until(Duration::from_secs(1), |p| {
        delivered(&p.server_events).len() == FIRST as usize
    });
    assert!(got, "the first messages arrived");

    // Idle, the job open (its keepalive JOBs are all that pass), for
    // ~3/4 of 2^16 epochs: a 16-bit number that far ahead of the newest
    // the receiver saw reads as ~2^14 behind, deep in the stale range.
    let (mut seen, mut last) = (0, 0);
    let before = last_epoch(&pair, &mut seen, &mut last);
    let target = before + 3 * (1 << 14);
    pair.run_until(Duration::from_secs(2), |p| {
        last_epoch(p, &mut seen, &mut last) >= target
    });
    let idle_epochs = last - before;
    assert!(
        idle_epochs >= 3 * (1 << 14),
        "the idle spell spans only {idle_epochs} epochs"
    );

    let rest: Vec<_> = (FIRST..MESSAGES).map(msg).collect();
    assert_eq!(
        pair.client.push_messages(pair.now, h, job, rest).unwrap(),
        Pushed::Queued((MESSAGES - FIRST) as usize)
    );
    pair.run_until(Duration::from_secs(1), |p| {
        p.job_done_at_client(job) && p.job_done_at_server(job)
    });
    let stale = pair.server.stats().dropped(DropReason::StaleEpoch);
    assert_eq!(stale, 0, "DATA after the idle spell dropped as stale");
    let mut msgs: Vec<u32> = delivered(&pair.server_events)
        .iter()
        .map(|&(_, m, _)| m)
        .collect();
    msgs.sort_unstable();
    assert_eq!(msgs, (0..MESSAGES).collect::<Vec<_>>(), "every message");
    assert!(outcome(&pair.client_events, job, Role::Sender).is_ok());
    assert!(outcome(&pair.server_events, job, Role::Receiver).is_ok());
}
