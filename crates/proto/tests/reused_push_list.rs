//! Two ways of driving an endpoint that must not change what it does
//! (issue 19, the simulator's per-call work): handing a streaming job's
//! messages over from one reused list (`Endpoint::push_messages_from`)
//! rather than a fresh `Vec` per push, and turning the epoch events off
//! (`Config::epoch_events`). Each run is compared with its twin event by
//! event (payloads, reports and counters included) and datagram count, over
//! a lossy link.

mod common;

use approxnet_proto::harness::{Pair, SERVER_ADDR};
use approxnet_proto::job::{MessageSpec, Payload};
use approxnet_proto::rng::Rng;
use approxnet_proto::time::Duration;
use approxnet_proto::{Config, ConnectionHandle, Event, JobError, JobSpec, Pushed};
use common::link;

fn msg(n: usize, tag: u8) -> MessageSpec {
    MessageSpec {
        group: 0,
        payload: Payload::Bytes(vec![tag; n]),
        precise_len: n.min(64),
    }
}

type Log = (Vec<Result<Pushed, JobError>>, Pair);

/// A stream of `n` announced messages over a 2 % lossy link, handed over
/// 1-4 at a time at random gaps, then one push of 1,100 (more than a push
/// reserves room for ahead) and the rest; `reuse` pushes them from one
/// list, checked empty after every call (errors included), else a fresh
/// `Vec` each time.
fn stream(cfg: Config, seed: u64, n: u32, reuse: bool) -> Log {
    let mut pair = Pair::symmetric(cfg, link(0.02), seed);
    let h: ConnectionHandle = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    let spec = JobSpec {
        messages: vec![msg(900, 0)],
        ..JobSpec::streaming(0.5, n).unwrap()
    };
    let job = pair.client.send_job(pair.now, h, spec).unwrap();
    let mut rng = Rng::new(seed);
    let mut list = Vec::new();
    let mut results = Vec::new();
    let (mut produced, mut big) = (1, false);
    while produced < n {
        let gap = Duration::from_micros([0, 2, 15, 60][rng.below(4) as usize]);
        let until = pair.now + gap;
        pair.run_until(gap, |p| p.now >= until);
        let k = if produced >= 200 && !big {
            big = true;
            1_100
        } else {
            1 + rng.below(4) as u32
        }
        .min(n - produced);
        let batch: Vec<MessageSpec> = (0..k)
            .map(|i| msg(1 + rng.below(2_500) as usize, (produced + i) as u8))
            .collect();
        produced += k;
        let r = if reuse {
            list.extend(batch);
            let r = pair.client.push_messages_from(pair.now, h, job, &mut list);
            assert!(list.is_empty(), "the list is left empty ({r:?})");
            r
        } else {
            pair.client.push_messages(pair.now, h, job, batch)
        };
        results.push(r);
        // an unknown job: refused, and the list still left empty
        if reuse && produced % 7 == 0 {
            list.push(msg(10, 0));
            let r = pair
                .client
                .push_messages_from(pair.now, h, job + 9, &mut list);
            assert_eq!(r, Err(JobError::UnknownJob(job + 9)));
            assert!(list.is_empty());
        }
    }
    pair.run_until(Duration::from_millis(200), |p| p.job_done_at_client(job));
    assert!(pair.job_done_at_client(job), "the stream completes");
    (results, pair)
}

#[test]
fn a_reused_list_streams_as_fresh_lists_do() {
    for (seed, n) in [(1, 40), (2, 1_500)] {
        let (fresh, a) = stream(common::cfg(), seed, n, false);
        let (reused, b) = stream(common::cfg(), seed, n, true);
        assert_eq!(fresh, reused);
        assert!(fresh
            .iter()
            .any(|r| matches!(r, Ok(Pushed::Queued(k)) if *k > 1)));
        if n > 1_100 {
            assert!(fresh.contains(&Ok(Pushed::Queued(1_100))));
        }
        assert_eq!(a.datagrams, b.datagrams);
        assert_eq!(a.client_events, b.client_events);
        assert_eq!(a.server_events, b.server_events);
    }
}

fn is_epoch(e: &(ConnectionHandle, Event)) -> bool {
    matches!(e.1, Event::Epoch(_))
}

#[test]
fn epoch_events_off_leave_every_other_event_and_datagram() {
    for seed in [3, 4] {
        let on = common::cfg();
        let off = Config {
            epoch_events: false,
            ..on
        };
        let (r_on, a) = stream(on, seed, 300, false);
        let (r_off, b) = stream(off, seed, 300, false);
        assert_eq!(r_on, r_off);
        assert_eq!(a.datagrams, b.datagrams);
        assert!(a.client_events.iter().filter(|e| is_epoch(e)).count() > 10);
        assert!(!b.client_events.iter().any(is_epoch));
        let kept: Vec<_> = a
            .client_events
            .into_iter()
            .filter(|e| !is_epoch(e))
            .collect();
        assert_eq!(kept, b.client_events);
        assert_eq!(a.server_events, b.server_events);
    }
}
