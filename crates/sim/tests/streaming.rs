//! Jobs that produce their messages over time, EarlySend's stop signal and
//! connection setup (issue 10): behaviour, never timing of the simulator.

mod common;
use common::*;

const ONE_WAY_NS: u64 = 2 * 10_000;

#[test]
fn earlysend_stops_one_way_delay_after_the_receiver_had_enough() {
    for scheme in ["dctcp-es", "tcp-es", "pfabric-es"] {
        let b = run(&pair(scheme, "fixed:2", 0.5, 3), &[]);
        assert_eq!(b.sim.jobs.len(), 3);
        for j in &b.sim.jobs {
            let f = &b.sim.flows[j.flow.unwrap() as usize];
            let done = j.done.expect("done");
            assert_eq!(f.enough_at, Some(done));
            let stop = f.stopped_at.expect("the stop signal reached the sender");
            assert!(
                (stop - done).as_nanos() >= ONE_WAY_NS,
                "{scheme}: stop {stop:?} done {done:?}"
            );
            assert!(f.cancelled);
            // what left after the receiver had enough is bounded by what the
            // window and production allow in one one-way delay
            assert!(
                f.sent_after_enough <= 8,
                "{scheme}: {}",
                f.sent_after_enough
            );
            assert!(j.delivered >= j.needed);
        }
    }
}

#[test]
fn nothing_is_sent_after_the_stop_arrives() {
    // slow production: the stop arrives long before the last message
    let b = run(&pair("dctcp-es", "fixed:100", 0.25, 1), &[]);
    let j = &b.sim.jobs[0];
    let f = &b.sim.flows[j.flow.unwrap() as usize];
    let stop = f.stopped_at.expect("stopped");
    // messages 0 and 1 were needed; production of message 2 is at 200 us,
    // after the stop signal came back
    assert!(stop < j.ready_at(2).unwrap(), "{stop:?}");
    assert_eq!(
        b.sim.job_produced[0], 2,
        "production stopped at the stop signal"
    );
    assert_eq!(f.stats().sent_pkts, 2);
}

#[test]
fn jobs_finish_no_earlier_than_their_messages_are_produced() {
    let gap = 50_000; // 50 us
    for (scheme, msr) in [
        ("dctcp", 1.0),
        ("dctcp-ss", 0.5),
        ("dctcp-es", 0.5),
        ("udp", 1.0),
    ] {
        let b = run(&pair(scheme, "fixed:50", msr, 2), &[]);
        for j in &b.sim.jobs {
            let jct = j.jct().expect("done");
            assert_eq!(j.ready_ns.len(), 8);
            match scheme {
                // the needed-th message in order, then one one-way delay
                "dctcp-es" => assert!(jct >= 3 * gap + ONE_WAY_NS, "{scheme} {jct}"),
                // SampleSend waits for its last sampled message
                "dctcp-ss" => {
                    let f = &b.sim.flows[j.flow.unwrap() as usize];
                    let last = *f.msg_index.last().unwrap() as u64;
                    assert!(jct >= last * gap + ONE_WAY_NS, "{scheme} {jct}");
                }
                _ => assert!(jct >= 7 * gap + ONE_WAY_NS, "{scheme} {jct}"),
            }
            assert!(jct < 7 * gap + 200_000, "{scheme} {jct}");
        }
    }
}

#[test]
fn the_handshake_delays_only_the_first_job_of_a_pair() {
    let text = pair("dctcp", "none", 1.0, 3);
    let with = run(&text, &[]);
    let without = run(&text, &["transport.handshake=false"]);
    let jct = |b: &approxnet_sim::scenario::Built| -> Vec<u64> {
        b.sim.jobs.iter().map(|j| j.jct().expect("done")).collect()
    };
    let (a, b) = (jct(&with), jct(&without));
    assert_eq!(a.len(), 3);
    // one round trip (two one-way delays) more for the first job only
    assert!(a[0] >= b[0] + 2 * ONE_WAY_NS, "{a:?} {b:?}");
    assert_eq!(a[1..], b[1..]);
    // the SYN and SYN-ACK crossed the network: 2 packets x 2 hops
    assert_eq!(with.sim.counters.hops, without.sim.counters.hops + 4);
    // UDP has no connection to set up
    let u = pair("udp", "none", 1.0, 3);
    assert_eq!(
        jct(&run(&u, &[])),
        jct(&run(&u, &["transport.handshake=false"]))
    );
}

/// `reuse_connections = false` (issue 12 item 4, ns-3's per-round
/// sockets): every job of the pair pays its own SYN / SYN-ACK round trip.
#[test]
fn without_reuse_every_job_of_a_pair_handshakes() {
    let text = pair("tcp", "none", 1.0, 3);
    let reuse = run(&text, &[]);
    let own = run(&text, &["transport.reuse_connections=false"]);
    let none = run(&text, &["transport.handshake=false"]);
    let jct = |b: &approxnet_sim::scenario::Built| -> Vec<u64> {
        b.sim.jobs.iter().map(|j| j.jct().expect("done")).collect()
    };
    let (r, o, n) = (jct(&reuse), jct(&own), jct(&none));
    assert_eq!(o.len(), 3);
    assert_eq!(o[0], r[0]);
    for i in 0..3 {
        assert!(o[i] >= n[i] + 2 * ONE_WAY_NS, "{o:?} {n:?}");
    }
    assert_eq!(r[1..], n[1..]);
    // three SYNs and three SYN-ACKs crossed the network: 6 packets x 2 hops
    assert_eq!(own.sim.counters.hops, none.sim.counters.hops + 12);
}

/// `handshake_ack = true`: the sender's ACK of the SYN-ACK crosses the
/// network once per connection (2 hops), is not answered, and goes out
/// ahead of the first data.
#[test]
fn the_handshake_ack_is_one_more_packet_per_connection() {
    let text = pair("tcp", "none", 1.0, 3);
    let jct = |b: &approxnet_sim::scenario::Built| -> Vec<u64> {
        b.sim.jobs.iter().map(|j| j.jct().expect("done")).collect()
    };
    for (reuse, conns) in [("true", 1), ("false", 3)] {
        let r = format!("transport.reuse_connections={reuse}");
        let without = run(&text, &[r.as_str()]);
        let with = run(&text, &[r.as_str(), "transport.handshake_ack=true"]);
        assert_eq!(
            with.sim.counters.hops,
            without.sim.counters.hops + 2 * conns,
            "reuse {reuse}"
        );
        let (a, b) = (jct(&with), jct(&without));
        // the first data waits behind the ACK on the sender's NIC
        assert!(a[0] > b[0], "{a:?} {b:?}");
        assert!(with.sim.jobs.iter().all(|j| j.done.is_some()));
    }
}

#[test]
fn streaming_runs_repeat_bit_for_bit() {
    let text = pair("dctcp-es", "fbkv", 0.5, 20);
    let a = summary(&run(&text, &[]));
    assert_eq!(a, summary(&run(&text, &[])));
    assert_ne!(a, summary(&run(&text, &["seed=9"])));
}
