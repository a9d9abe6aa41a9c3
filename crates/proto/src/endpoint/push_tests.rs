//! The timers an endpoint derives after a push that queued messages
//! (`Connection::after_push`, issue 19) are those the full derivation
//! gives, checked in release builds too (the endpoint's own check is a
//! debug assertion).

use crate::harness::{LinkConfig, Pair, SERVER_ADDR};
use crate::job::{JobSpec, MessageSpec, Payload};
use crate::rng::Rng;
use crate::time::Duration;
use crate::units::Rate;
use crate::{Config, Pushed};

fn msg(n: usize) -> MessageSpec {
    MessageSpec {
        group: 0,
        payload: Payload::Bytes(vec![7; n]),
        precise_len: n,
    }
}

/// Streams produced at random gaps (back to back, within the pacer's
/// interval on a 100 Mb/s path, after a quiet spell, past the keepalive
/// time) over lossless and lossy links: after
/// every push the connection's timer table and the endpoint's deadline
/// are what `poll_timeout` derives from scratch.
#[test]
fn a_push_derives_the_timers_the_full_derivation_gives() {
    for (seed, loss, msr) in [(1, 0.0, 0.5), (2, 0.05, 0.5), (3, 0.05, 1.0)] {
        let cfg = Config {
            line_rate: Rate::gbps(0.1),
            ..Config::default()
        };
        let link = LinkConfig {
            delay: Duration::from_micros(20),
            rate: Rate::gbps(0.1),
            loss,
            ..LinkConfig::default()
        };
        let mut pair = Pair::symmetric(cfg, link, seed);
        let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
        let spec = JobSpec {
            messages: vec![msg(1000)],
            ..JobSpec::streaming(msr, 400).unwrap()
        };
        let job = pair.client.send_job(pair.now, h, spec).unwrap();
        let mut rng = Rng::new(seed);
        let mut queued = 0;
        for _ in 0..120 {
            let gap = Duration::from_micros([0, 3, 30, 200, 3000, 300_000][rng.below(6) as usize]);
            let until = pair.now + gap;
            pair.run_until(gap, |p| p.now >= until);
            let msgs = (0..1 + rng.below(3)).map(|_| msg(1 + rng.below(3000) as usize));
            match pair.client.push_messages(pair.now, h, job, msgs.collect()) {
                Ok(Pushed::Queued(_)) => queued += 1,
                Ok(Pushed::JobComplete) => break,
                other => panic!("{other:?}"),
            }
            let ep = &mut pair.client;
            let (now, i) = (ep.now, h.index as usize);
            let s = &mut ep.slots[i];
            let c = s.conn.as_mut().expect("the connection is open");
            let kept = c.timers_shown();
            let fresh = c.poll_timeout(now, &ep.cfg);
            assert_eq!(kept, c.timers_shown(), "seed {seed}: timer table");
            assert_eq!(s.deadline, fresh, "seed {seed}: deadline");
        }
        assert!(queued >= 40, "seed {seed}: {queued} pushes queued");
    }
}
