//! Scheduling, rate control and queue selection seen through the endpoint.
mod common;
use approxnet_proto::event::Role;
use approxnet_proto::harness::{LinkConfig, Pair};
use approxnet_proto::{Config, Event, JobSpec, Variant};
use common::*;

fn delivery_order(variant: Variant) -> Vec<u32> {
    let c = Config { variant, ..cfg() };
    let mut pair = Pair::symmetric(c, link(0.0), 1);
    // Hand-built backlog: message sizes in packets 5, 1, 3, 2.
    let p = c.mtu - 48 - 4;
    let spec = JobSpec::uniform(0.5, &[5 * p, p, 3 * p, 2 * p]).unwrap();
    run(&mut pair, spec);
    pair.server_events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::MessageDelivered { msg, .. } => Some(*msg),
            _ => None,
        })
        .collect()
}

#[test]
fn mrdf_sends_least_remaining_first() {
    // Shortest remaining data first: 1 packet, 2, 3, then 5.
    assert_eq!(delivery_order(Variant::Full), vec![1, 3, 2, 0]);
    // Announcement order without MRDF.
    assert_eq!(delivery_order(Variant::Rc), vec![0, 1, 2, 3]);
}

#[test]
fn every_variant_meets_the_guarantee() {
    for v in Variant::ALL {
        let c = Config {
            variant: v,
            ..cfg()
        };
        let mut pair = Pair::symmetric(c, link(0.15), 21);
        let job = run(&mut pair, JobSpec::uniform(0.6, &vec![3000; 200]).unwrap());
        let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
        assert!(r.guarantee_held(), "{v}");
    }
}

fn epochs(pair: &Pair) -> Vec<approxnet_proto::event::EpochStats> {
    pair.client_events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Epoch(s) => Some(*s),
            _ => None,
        })
        .collect()
}

#[test]
fn rate_backs_off_when_loss_exceeds_tlr_and_queue_follows_tlr() {
    // A 1 Gbps bottleneck with a small buffer behind a 10 Gbps sender:
    // starting at line rate overflows it, so rho > TLR and the rate drops.
    let mut l = link(0.0);
    l.rate = approxnet_proto::Rate::gbps(1.0);
    l.buffer = 30_000;
    let mut pair = Pair::new(cfg(), cfg(), l, link(0.0), 3);
    let job = run(&mut pair, JobSpec::uniform(0.5, &vec![8000; 400]).unwrap());
    let e = epochs(&pair);
    assert!(e.len() > 5);
    assert_eq!(
        e[0].queue, 4,
        "TLR 0.5 starts in queue 4 (seed 000 Fig. 10)"
    );
    let min_rate = e.iter().map(|s| s.rate.as_bps()).fold(f64::MAX, f64::min);
    assert!(
        min_rate < 5e9,
        "rate should fall well below line rate, min {min_rate}"
    );
    for s in &e {
        // the default queue rule never sinks below the MSR's queue (4)
        let k = ((s.tlr.min(0.5) * 8.0).floor() as u8).clamp(1, 7);
        assert_eq!(
            s.queue, k,
            "queue = clamp(floor(min(TLR, 1 - MSR) * 8), 1, 7)"
        );
    }
    let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
    assert!(r.guarantee_held());
}

#[test]
fn fixed_tlr_never_moves_but_dynamic_does() {
    let mut l = link(0.0);
    l.rate = approxnet_proto::Rate::gbps(1.0);
    l.buffer = 20_000;
    let run_v = |v| {
        let c = Config {
            variant: v,
            ..cfg()
        };
        let mut pair = Pair::new(c, c, l, link(0.0), 8);
        run(&mut pair, JobSpec::uniform(0.5, &vec![4000; 300]).unwrap());
        epochs(&pair)
    };
    let fixed = run_v(Variant::FixTlr);
    assert!(fixed
        .iter()
        .all(|s| (s.tlr - 0.5).abs() < 1e-12 && s.queue == 4));
    let full = run_v(Variant::Full);
    assert!(full.iter().any(|s| (s.tlr - 0.5).abs() > 1e-3));
    assert!(full.iter().any(|s| s.queue != 4));
    let fixprio = run_v(Variant::FixPrio);
    assert!(fixprio.iter().all(|s| s.queue == 4));
}

/// The lowest rate of the loss-free epochs of one job through a 2 Gbit/s
/// bottleneck that marks CE above 20 KB and never drops.
fn min_loss_free_rate(c: Config, msr: f64) -> f64 {
    let mut l = link(0.0);
    l.rate = approxnet_proto::Rate::gbps(2.0);
    l.buffer = 8 << 20;
    l.ecn_threshold = 20_000;
    let mut pair = Pair::new(c, c, l, link(0.0), 5);
    let job = run(&mut pair, JobSpec::uniform(msr, &vec![8000; 300]).unwrap());
    assert!(outcome(&pair.server_events, job, Role::Receiver)
        .unwrap()
        .guarantee_held());
    let e = epochs(&pair);
    assert!(e.iter().all(|s| s.rho == 0.0), "the link never drops");
    e.iter().map(|s| s.rate.as_bps()).fold(f64::MAX, f64::min)
}

#[test]
fn ecn_reaction_queue0_reacts_to_marks_on_queue_zero_only() {
    let q0 = Config {
        ecn_reaction_queue0: true,
        ..cfg()
    };
    // MSR 1 runs in queue 0: the marks cut its rate (DCTCP, alpha from 1).
    assert!(min_loss_free_rate(q0, 1.0) < 5e9);
    // MSR 0.5 runs in queue 4: the same marks are ignored, as by default.
    assert_eq!(min_loss_free_rate(q0, 0.5), 10e9);
    assert_eq!(min_loss_free_rate(cfg(), 1.0), 10e9);
    // `ecn_reaction` reacts on every queue.
    let all = Config {
        ecn_reaction: true,
        ..cfg()
    };
    assert!(min_loss_free_rate(all, 0.5) < 5e9);
}

#[test]
fn reliable_traffic_uses_queue_zero() {
    let mut pair = Pair::symmetric(cfg(), link(0.0), 2);
    let h = pair
        .client
        .connect(pair.now, approxnet_proto::harness::SERVER_ADDR)
        .unwrap();
    pair.run_until(approxnet_proto::time::Duration::from_millis(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[3000; 3]).unwrap())
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut queues = Vec::new();
    while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
        queues.push((t.queue, t.dscp));
    }
    assert!(!queues.is_empty());
    assert!(queues.iter().all(|&(q, d)| q == 0 && d == 0));
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(0.25, &[3000; 3]).unwrap())
        .unwrap();
    let mut approx = Vec::new();
    for _ in 0..64 {
        pair.now += approxnet_proto::time::Duration::from_micros(50);
        while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
            approx.push((t.queue, t.dscp, t.len));
        }
    }
    // TLR 0.75 -> floor(0.75 * 8) = 6; DSCP carries the queue as a class selector.
    assert!(approx
        .iter()
        .any(|&(q, d, len)| q == 6 && d == 6 << 3 && len > 1000));
}

#[test]
fn coalesced_acks_keep_the_guarantee_with_fewer_datagrams() {
    let run_with = |ack_every| {
        let c = Config { ack_every, ..cfg() };
        let mut pair = Pair::symmetric(c, link(0.1), 12);
        let job = run(&mut pair, JobSpec::uniform(0.7, &vec![3000; 300]).unwrap());
        let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
        assert!(r.guarantee_held(), "ack_every {ack_every}");
        pair.reverse.stats.offered
    };
    let every = run_with(1);
    let fourth = run_with(4);
    assert!(fourth * 2 < every, "{fourth} ACK datagrams vs {every}");
}

#[test]
fn coalesced_acks_after_a_real_loss_cause_no_false_losses() {
    // One early loss stalls the receiver's cumulative point for good (ATP
    // retransmits under new sequence numbers), so every later packet is
    // acknowledged only through SACK ranges; with 32 packets per ACK the
    // sender must still resolve all of them.
    let c = Config {
        ack_every: 32,
        max_ack_delay: approxnet_proto::time::Duration::from_micros(50),
        ..cfg()
    };
    let mut pair = Pair::symmetric(c, link(0.01), 14);
    let job = run(&mut pair, JobSpec::uniform(0.9, &vec![1400; 3000]).unwrap());
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert_no_false_losses(&pair, &s, "ack_every 32");
}

#[test]
fn sequence_numbers_wrapping_mid_job_lose_nothing_and_declare_no_false_losses() {
    // Both ends number their DATA from a few hundred below u32::MAX, so the
    // numbers wrap early in the job and the receiver's cumulative point,
    // its ACK ranges and the sender's loss detection all work across the
    // wrap. Over a lossy link MSR 1 must deliver every message once, and
    // the sender may declare lost only what the link dropped; per-packet
    // and coalesced ACKs (long SACK ranges) alike.
    for ack_every in [1, 32] {
        let c = Config {
            ack_every,
            max_ack_delay: approxnet_proto::time::Duration::from_micros(50),
            ..cfg()
        };
        let mut pair = Pair::symmetric(c, link(0.01), 31);
        let first = u32::MAX - 300;
        pair.client.force_first_seq(Some(first));
        pair.server.force_first_seq(Some(first));
        const MESSAGES: u32 = 3000;
        let job = run(
            &mut pair,
            JobSpec::uniform(1.0, &vec![1400; MESSAGES as usize]).unwrap(),
        );
        let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
        let r = outcome(&pair.server_events, job, Role::Receiver).unwrap();
        assert!(
            r.guarantee_held() && s.guarantee_held(),
            "ack_every {ack_every}"
        );
        let mut ids: Vec<u32> = delivered(&pair.server_events)
            .iter()
            .map(|&(_, m, _)| m)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..MESSAGES).collect::<Vec<_>>(), "each message once");
        assert!(
            s.packets > 301,
            "the numbers wrapped: {} packets from {first}",
            s.packets
        );
        assert_no_false_losses(&pair, &s, &format!("ack_every {ack_every}"));
    }
}

#[test]
fn back_to_back_endpoints_move_every_packet() {
    use approxnet_proto::harness::direct::{connected, pump};
    // MSR 0.5 over a lossless path: the job ends once 250 messages arrived
    // and the other 250 are never sent (seed 000 §3.3.2: at least MSR x N).
    let (mut a, mut b, now) = connected(cfg(), 0.5, 500);
    let sent = pump(&mut a, &mut b, now);
    assert!((250..260).contains(&sent), "{sent} DATA packets");
    let (mut a, mut b, now) = connected(cfg(), 1.0, 500);
    let sent = pump(&mut a, &mut b, now);
    assert!((500..505).contains(&sent), "{sent} datagrams");
}

#[test]
fn a_stalled_receiver_causes_recognised_spurious_losses_not_real_ones() {
    // The receiver's ACKs are held back for 8 ms (a host that was not
    // scheduled — what incast on a busy testbed looks like), far past the
    // 1 ms minimum RTO. Nothing is dropped, so every loss the sender
    // declares during the stall is spurious: the late ACKs must be
    // recognised (and undone), and the backed-off timer must not declare
    // the whole stall's worth of packets lost again and again.
    use approxnet_proto::time::Duration;
    let c = cfg();
    let mut pair = Pair::symmetric(c, link(0.0), 21);
    let job = start(
        &mut pair,
        JobSpec::uniform(0.5, &vec![1400; 20_000]).unwrap(),
    );
    pair.run_until(Duration::from_millis(2), |_| false);
    let normal = pair.reverse.config();
    pair.reverse.set_config(LinkConfig {
        delay: Duration::from_millis(8),
        ..normal
    });
    pair.run_until(Duration::from_millis(3), |_| false);
    pair.reverse.set_config(normal);
    let finished = pair.run_until(Duration::from_secs(2), |p| {
        p.job_done_at_client(job) && p.job_done_at_server(job)
    });
    assert!(finished);
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    let dropped = pair.forward.stats.random_drops + pair.forward.stats.buffer_drops;
    assert!(s.guarantee_held());
    assert!(s.lost_by_timer > 0, "the stall must trip the loss timer");
    assert!(s.spurious_losses > 0, "late ACKs must be recognised");
    // ~2,500 packets left during the 3 ms of held ACKs; the backed-off
    // timer declares only the first few.
    assert!(s.lost_packets < 100, "declared {} lost", s.lost_packets);
    let unexplained = s.lost_packets - s.spurious_losses.min(s.lost_packets);
    assert!(
        unexplained <= dropped + s.lost_packets / 10 + 5,
        "declared {} lost, {} recognised as spurious, the link dropped {dropped}",
        s.lost_packets,
        s.spurious_losses
    );
}

#[test]
fn a_rate_cut_caused_by_spurious_losses_is_undone() {
    // MSR 1 (TLR 0): any declared loss cuts the rate (eq. 3). ACKs held
    // back past the RTO make the timer declare losses that then prove
    // spurious; the cut they caused must be undone as soon as the late
    // ACKs arrive, not climbed back by eq. 2 (1/8 of the gap per epoch).
    use approxnet_proto::time::{Duration, Instant};
    let c = cfg();
    let line = c.line_rate.as_bps();
    let mut pair = Pair::symmetric(c, link(0.0), 22);
    let job = start(
        &mut pair,
        JobSpec::uniform(1.0, &vec![1400; 20_000]).unwrap(),
    );
    pair.run_until(Duration::from_millis(2), |_| false);
    // (virtual time, rate) of every epoch from here on.
    let mut rates: Vec<(Instant, f64)> = Vec::new();
    let mut seen = pair.client_events.len();
    let mut step_until = |pair: &mut Pair, end: Instant, rates: &mut Vec<(Instant, f64)>| {
        while pair.now < end && !pair.job_done_at_client(job) {
            assert!(pair.step(), "ran dry");
            for (_, e) in &pair.client_events[seen..] {
                if let Event::Epoch(s) = e {
                    rates.push((pair.now, s.rate.as_bps()));
                }
            }
            seen = pair.client_events.len();
        }
    };
    let normal = pair.reverse.config();
    pair.reverse.set_config(LinkConfig {
        delay: Duration::from_millis(8),
        ..normal
    });
    let stall_end = pair.now + Duration::from_millis(3);
    step_until(&mut pair, stall_end, &mut rates);
    pair.reverse.set_config(normal);
    // The first ACK sent after the stall lands 20 us after it ends and
    // covers, cumulatively, everything the held ACKs would have.
    let late_acks_in = pair.now + Duration::from_micros(100);
    step_until(&mut pair, Instant::from_nanos(u64::MAX), &mut rates);
    assert!(pair.job_done_at_client(job));
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert!(s.spurious_losses > 0 && s.lost_by_timer > 0, "{s:?}");
    let lowest = rates.iter().map(|&(_, r)| r).fold(f64::MAX, f64::min);
    assert!(
        lowest < 0.8 * line,
        "the spurious losses must have cut the rate: {lowest}"
    );
    // The first epoch after the late ACKs runs at line rate again (without
    // the undo, eq. 2 climbs back 1/8 of the gap per epoch).
    let after = rates
        .iter()
        .find(|&&(t, _)| t > late_acks_in)
        .map(|&(_, r)| r);
    assert!(
        after.is_some_and(|r| r >= 0.95 * line),
        "rate after the late ACKs: {after:?} (line {line}, lowest {lowest})"
    );
}

/// A reliable job (MSR 1) over a 1 Gbit/s link with a 15 KB buffer that
/// also loses 20 % of packets at random: the job's last packets die too
/// often for no later packet to reveal them. (A job with slack ends once
/// its MSR is met and leaves no such tail.) Runs
/// the job to completion; returns its report and how long after the last
/// DATA packet it completed.
fn lossy_tail(c: Config) -> (approxnet_proto::JobReport, approxnet_proto::time::Duration) {
    use approxnet_proto::time::{Duration, Instant};
    let l = LinkConfig {
        rate: approxnet_proto::Rate::gbps(1.0),
        buffer: 15_000,
        ..link(0.2)
    };
    let mut pair = Pair::symmetric(c, l, 23);
    let job = start(&mut pair, JobSpec::uniform(1.0, &vec![1400; 300]).unwrap());
    let mut last_data = Instant::ZERO;
    let mut offered = 0;
    loop {
        assert!(pair.step(), "ran dry");
        if pair.job_done_at_client(job) {
            break; // its FIN left in this step
        }
        if pair.forward.stats.offered != offered {
            offered = pair.forward.stats.offered;
            last_data = pair.now;
        }
        assert!(pair.now < Instant::ZERO + Duration::from_secs(1));
    }
    let s = outcome(&pair.client_events, job, Role::Sender).unwrap();
    assert!(s.guarantee_held());
    (s, pair.now - last_data)
}

#[test]
fn a_lossy_tail_is_resolved_within_one_rto() {
    // Once everything is sent, one round (timer or tail probe) must resolve
    // the tail, not RTO + 2 RTO + 4 RTO... as the stall backoff would.
    let c = cfg();
    let (s, tail) = lossy_tail(c);
    assert!(
        s.lost_by_timer > 0,
        "the tail must be left to the timer: {s:?}"
    );
    assert!(
        tail < approxnet_proto::time::Duration::from_nanos(c.min_rto.as_nanos() * 3 / 2),
        "the tail took {tail:?} after the last DATA packet (min RTO {:?})",
        c.min_rto
    );
}

#[test]
fn a_tail_loss_probe_resolves_a_lost_tail_long_before_the_rto() {
    // The same tail with a 20 ms RTO floor (what a path with jittery RTT
    // samples gets from RFC 6298's 4 RTTVAR): the loss timer alone would
    // resolve it 20 ms after the last packet left. A tail loss probe, one
    // packet sent two RTTs after the last, is acknowledged and reveals it.
    use approxnet_proto::time::Duration;
    let (s, tail) = lossy_tail(Config {
        min_rto: Duration::from_millis(20),
        ..cfg()
    });
    assert!(s.tail_probes >= 1, "{s:?}");
    // The last DATA packet is the probe itself: the job ends one round trip later.
    assert!(
        tail < Duration::from_millis(2),
        "the tail took {tail:?} after the last DATA packet (RTO floor 20 ms)"
    );
}

#[test]
fn flush_acks_sends_a_held_ack_at_once() {
    // ACKs coalesced 64 to one with a long delay: after 10 DATA packets
    // the receiver holds its ACK; `flush_acks` (what a runtime calls after
    // each receive batch) sends exactly one, covering all ten, at once.
    use approxnet_proto::harness::direct::connected;
    use approxnet_proto::harness::CLIENT_ADDR;
    use approxnet_proto::time::Duration;
    let c = Config {
        ack_every: 64,
        max_ack_delay: Duration::from_millis(10),
        ..cfg()
    };
    let (mut a, mut b, mut now) = connected(c, 1.0, 200);
    let mut buf = vec![0u8; 2048];
    let mut handed = 0;
    while handed < 10 {
        now += Duration::from_micros(2); // past the next pacing slot
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
            handed += 1;
        }
    }
    // The JOB announcement is answered at once; DATA ACKs are held.
    let mut early = 0;
    while b.poll_transmit(now, &mut buf).is_some() {
        early += 1;
    }
    assert!(early <= 1, "{early} datagrams before the flush");
    b.flush_acks(now);
    let t = b.poll_transmit(now, &mut buf).expect("the held ACK");
    assert!(t.len > 0);
    assert!(
        b.poll_transmit(now, &mut buf).is_none(),
        "one ACK, not one per packet"
    );
    // A second flush with nothing held sends nothing.
    b.flush_acks(now);
    assert!(b.poll_transmit(now, &mut buf).is_none());
}
