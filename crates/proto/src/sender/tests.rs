//! Unit tests of the sending half: ACK ranges and remembered losses
//! across the wrap of sequence numbers.

use super::*;
use crate::config::Config;
use crate::job::JobSpec;
use crate::rng::Rng;
use crate::wire::SeqRange;
use std::collections::BTreeSet;

/// ACKs whose ranges stay long and repeat in every ACK (the cumulative
/// point stuck behind the first packet), straddle the u32 wrap of
/// sequence numbers and reach outside the flight list acknowledge
/// every packet in flight exactly once, just those they cover.
#[test]
fn repeated_ack_ranges_across_wrap_resolve_each_packet_once() {
    const PACKETS: u32 = 3000;
    let cfg = Config::default();
    let pol = cfg.variant.policies(cfg.rate);
    let first = u32::MAX - 1000;
    let mut send = SendSide::new(first);
    let job = JobSpec::uniform(1.0, &vec![100; PACKETS as usize]).unwrap();
    send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
    for _ in 0..PACKETS {
        let np = send.next_packet(&pol, 0).expect("a packet to send");
        send.on_sent(Instant::ZERO, &np, 0);
    }
    let sent: Vec<u32> = (0..PACKETS).map(|i| first.wrapping_add(i)).collect();
    let mut covered = BTreeSet::<u32>::new();
    let mut ack = |send: &mut SendSide, ranges: &[SeqRange]| {
        for &r in ranges {
            send.on_acked_range(r, &pol);
            if r.is_well_formed() {
                covered.extend(sent.iter().filter(|&&s| r.contains(s)));
            }
        }
        let n = covered.len() as u64;
        assert_eq!(send.epoch.acked, n, "each covered packet acknowledged once");
        assert_eq!(send.in_flight, PACKETS as u64 - n);
        assert_eq!(send.jobs[0].groups[0].delivered as u64, n);
    };
    let mut rng = Rng::new(3);
    let last = first.wrapping_add(PACKETS - 1);
    let mut newest = first;
    while newest != last {
        let left = last.wrapping_sub(newest);
        newest = newest.wrapping_add((1 + rng.below(50) as u32).min(left));
        // Everything after the first packet up to the newest (one
        // range, wrapping once the newest passes u32::MAX), plus a
        // range anywhere: before, inside, after or around the window,
        // or not well formed at all.
        let mut ranges = vec![SeqRange {
            start: first.wrapping_add(1),
            end: newest.wrapping_add(1),
        }];
        let points = [0, u32::MAX, first, newest, last, rng.next_u64() as u32];
        let mut pick = || {
            let p = points[rng.below(points.len() as u64) as usize];
            p.wrapping_add(rng.below(64) as u32).wrapping_sub(32)
        };
        ranges.push(SeqRange {
            start: pick(),
            end: pick(),
        });
        ack(&mut send, &ranges);
    }
    // What no range says: the stuck first packet.
    send.on_acked(first, &pol);
    assert_eq!(send.epoch.acked, PACKETS as u64);
    assert_eq!(send.in_flight, 0);
    assert!(send.flights.is_empty());
    assert_eq!(send.base_seq, send.next_seq);
}

/// Declared losses are remembered by sequence number and forgotten
/// oldest first across the wrap; a late cumulative ACK across the wrap
/// recognises them as spurious.
#[test]
fn lost_packets_across_wrap_are_forgotten_oldest_first() {
    let cfg = Config::default();
    let pol = cfg.variant.policies(cfg.rate);
    let first = u32::MAX - 5;
    let mut send = SendSide::new(first);
    let job = JobSpec::uniform(1.0, &[100; 12]).unwrap();
    send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
    let later = Instant::from_nanos(1000);
    for i in 0..12 {
        let np = send.next_packet(&pol, 0).expect("a packet to send");
        send.on_sent(if i < 10 { Instant::ZERO } else { later }, &np, 0);
    }
    assert_eq!(send.detect_timeout(Instant::ZERO, &cfg, &pol), 10);
    assert_eq!(send.oldest_lost(), Some(first));
    send.forget_oldest_loss();
    assert_eq!(send.oldest_lost(), Some(first.wrapping_add(1)));
    // The cumulative point moves across the wrap, past one packet
    // still in flight: every remembered loss before it proves spurious.
    send.on_cumulative(first.wrapping_add(11), &pol);
    assert_eq!(send.jobs[0].spurious, 9);
    assert_eq!(send.oldest_lost(), None);
    assert_eq!(send.in_flight, 1);
}

/// Send more (seed 000 §7.2): a satisfied job's unsent messages go only
/// after every packet of the connection's open jobs, at most two in
/// flight; their losses never count in the epoch's loss rate nor back the
/// RTO off; the job's FIN waits until they are resolved, or until its
/// time for extra data is over. Without send more, nothing of the job is
/// sent after it met its MSR.
#[test]
fn send_more_extras_go_last_and_never_count_as_loss() {
    for send_more in [false, true] {
        let cfg = Config {
            send_more,
            ..Config::default()
        };
        let pol = cfg.variant.policies(cfg.rate);
        let mut send = SendSide::new(7);
        // Job A: 10 one-packet messages, MSR 0.5 (5 must arrive).
        let a = JobSpec::uniform(0.5, &[100; 10]).unwrap();
        send.add_job(Instant::ZERO, a, &cfg, &pol).unwrap();
        let a_id = send.jobs[0].id;
        for _ in 0..5 {
            let np = send.next_packet(&pol, 0).unwrap();
            let s = send.on_sent(Instant::ZERO, &np, 4);
            send.on_acked(s, &pol);
        }
        let reports = send.take_finished(Instant::from_nanos(10), send_more, SECOND, &pol);
        assert_eq!(reports.len(), 1, "A met its MSR");
        assert_eq!(reports[0].groups[0].delivered, 5);
        assert_eq!(send.epoch.acked, 5);
        // Job B (reliable) arrives: its 4 packets leave before A's extras.
        let b = JobSpec::uniform(1.0, &[100; 4]).unwrap();
        send.add_job(Instant::ZERO, b, &cfg, &pol).unwrap();
        let b_id = send.jobs[1].id;
        for _ in 0..4 {
            let np = send.next_packet(&pol, 0).unwrap();
            assert_eq!(np.job, b_id);
            let s = send.on_sent(Instant::ZERO, &np, 0);
            send.on_acked(s, &pol);
        }
        let done: Vec<u32> = send
            .take_finished(Instant::from_nanos(20), send_more, SECOND, &pol)
            .iter()
            .map(|r| r.job)
            .collect();
        assert_eq!(done, vec![b_id]);
        if !send_more {
            assert!(
                send.next_packet(&pol, 0).is_none(),
                "nothing of A after its MSR"
            );
            assert!(send.take_fin_ready(Instant::ZERO, &pol).is_empty());
            continue;
        }
        // B done: A's 5 extra messages go now, at most 2 in flight at a
        // time (clocked by their fate), and all are lost (declared by the
        // timer): the loss rate sees none of it, the RTO does not back off,
        // and lost extras are never resent.
        assert!(send.has_data());
        let mut rounds = Vec::new();
        while send.has_data() {
            let mut n = 0;
            while let Some(np) = send.next_packet(&pol, 0) {
                assert_eq!(np.job, a_id);
                send.on_sent(Instant::ZERO, &np, 7);
                n += 1;
            }
            rounds.push(n);
            assert!(
                send.take_fin_ready(Instant::ZERO, &pol).is_empty(),
                "extras still in flight"
            );
            assert_eq!(send.detect_timeout(Instant::ZERO, &cfg, &pol), 0);
        }
        assert_eq!(rounds, vec![2, 2, 1]);
        assert_eq!((send.epoch.acked, send.epoch.lost), (9, 0));
        assert!(send.next_packet(&pol, 0).is_none());
        assert_eq!(send.take_fin_ready(Instant::ZERO, &pol), vec![a_id]);
        // Extra data is best effort: a job's FIN waits for it one
        // `extra_for` at most, then what is left is given up.
        let c = JobSpec::uniform(0.5, &[100; 4]).unwrap();
        send.add_job(Instant::ZERO, c, &cfg, &pol).unwrap();
        for _ in 0..2 {
            let np = send.next_packet(&pol, 0).unwrap();
            let s = send.on_sent(Instant::ZERO, &np, 4);
            send.on_acked(s, &pol);
        }
        let t = Instant::from_nanos(30);
        assert_eq!(send.take_finished(t, true, SECOND, &pol).len(), 1);
        let c_id = send.jobs.last().unwrap().id;
        assert!(send.take_fin_ready(t, &pol).is_empty());
        assert_eq!(send.take_fin_ready(t + SECOND, &pol), vec![c_id]);
        assert!(!send.has_data(), "its extras were given up");
    }
}

/// `may_finish`, the check that spares most ACKs `take_finished` and
/// `take_fin_ready`, is never false where either would find a job: at
/// every step of a job meeting its MSR (with and without send more, so
/// with a FIN deferred for extra data and then given up), both are asked
/// whenever it says no and must find nothing; and it says yes at the ACK
/// that completes the job and while a FIN waits.
#[test]
fn may_finish_is_false_only_where_nothing_would_finish() {
    for send_more in [false, true] {
        let cfg = Config {
            send_more,
            ..Config::default()
        };
        let pol = cfg.variant.policies(cfg.rate);
        let mut send = SendSide::new(3);
        let mut t = Instant::ZERO;
        let check = |send: &mut SendSide, t: Instant| -> bool {
            let may = send.may_finish();
            if !may {
                assert!(send.take_finished(t, send_more, SECOND, &pol).is_empty());
                assert!(send.take_fin_ready(t, &pol).is_empty());
            }
            may
        };
        assert!(!check(&mut send, t), "no job");
        let a = JobSpec::uniform(0.5, &[100; 8]).unwrap();
        send.add_job(t, a, &cfg, &pol).unwrap();
        let mut finished_at = None;
        for k in 0..4 {
            assert!(!check(&mut send, t), "ACK {k}: A below its MSR");
            let np = send.next_packet(&pol, 0).unwrap();
            let s = send.on_sent(t, &np, 4);
            send.on_acked(s, &pol);
            t += crate::time::Duration::from_nanos(10);
            if send.may_finish() {
                finished_at = Some(k);
                assert_eq!(send.take_finished(t, send_more, SECOND, &pol).len(), 1);
            }
        }
        assert_eq!(finished_at, Some(3), "the fourth ACK meets MSR 0.5 of 8");
        assert!(send.jobs[0].done);
        if send_more {
            // A's FIN waits for its extras: asked on every ACK until given up.
            assert!(send.jobs[0].fin_deferred);
            assert!(send.may_finish());
            assert!(send.take_fin_ready(t, &pol).is_empty());
            assert_eq!(send.take_fin_ready(t + SECOND, &pol).len(), 1);
        }
        assert!(!check(&mut send, t + SECOND), "A done, its FIN out");
    }
}

const SECOND: crate::time::Duration = crate::time::Duration::from_secs(1);

/// Losses declared between ACKs whose ranges repeat and grow (the
/// cumulative point stuck behind the first packet): every declared loss a
/// later range covers proves spurious exactly once, although each range is
/// looked up among the remembered losses only where it grew
/// (`late_acks`' notes), and a second range far behind keeps repeating.
#[test]
fn growing_repeated_ranges_find_every_spurious_loss() {
    const PACKETS: u32 = 600;
    let cfg = Config::default();
    let pol = cfg.variant.policies(cfg.rate);
    let first = u32::MAX - 300;
    let mut send = SendSide::new(first);
    let job = JobSpec::uniform(1.0, &vec![100; PACKETS as usize]).unwrap();
    send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
    for i in 0..PACKETS {
        let np = send.next_packet(&pol, 0).expect("a packet to send");
        send.on_sent(Instant::from_nanos(u64::from(i)), &np, 0);
    }
    let mut rng = Rng::new(5);
    let (mut declared, mut covered) = (0u64, 4u32);
    let old = SeqRange {
        start: first.wrapping_add(1),
        end: first.wrapping_add(3),
    };
    while covered < PACKETS {
        covered = (covered + 1 + rng.below(12) as u32).min(PACKETS);
        for r in [
            old,
            SeqRange {
                start: first.wrapping_add(4),
                end: first.wrapping_add(covered),
            },
        ] {
            send.on_acked_range(r, &pol);
        }
        // Now and then the timer declares the next few dozen packets past
        // the range lost; the ACKs in between cover them bit by bit.
        if rng.below(5) == 0 {
            let deadline = Instant::from_nanos(u64::from(covered + rng.below(40) as u32));
            declared += send.detect_timeout(deadline, &cfg, &pol) as u64;
        }
    }
    assert!(
        declared > 100,
        "the timer declared many losses ({declared})"
    );
    // Every declared loss but the two packets no range covers (the
    // first and the fourth) proved spurious.
    assert_eq!(send.jobs[0].spurious, declared - 2);
    assert_eq!(send.oldest_lost(), Some(first));
    send.forget_oldest_loss();
    assert_eq!(send.oldest_lost(), Some(first.wrapping_add(3)));
}

/// Seed 000 §4.3 with slack for one lost message: under MRDF the message
/// given up is the one with the most packets left (here a 10-packet one),
/// and the lost packet of a one-packet message is sent again; under
/// announcement order (ATP Base / RC) the message that lost the packet is
/// given up, as before.
#[test]
fn mrdf_spends_slack_on_the_message_with_most_left() {
    use crate::policy::Variant;
    for (variant, gives_up) in [(Variant::Full, 3), (Variant::Mrdf, 3), (Variant::Rc, 0)] {
        let cfg = Config {
            variant,
            ..Config::default()
        };
        let pol = cfg.variant.policies(cfg.rate);
        let big = 10 * (cfg.max_payload() - APPROX_CRC_LEN);
        let mut send = SendSide::new(1);
        // N = 4, MSR 0.75: 3 must arrive, one may be given up.
        let job = JobSpec::uniform(0.75, &[1000, 1000, 1000, big]).unwrap();
        send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
        let later = Instant::from_nanos(1000);
        let first = send.next_packet(&pol, 0).unwrap();
        assert_eq!(first.msg, 0, "{variant}");
        send.on_sent(Instant::ZERO, &first, 0);
        while let Some(np) = send.next_packet(&pol, 0) {
            send.on_sent(later, &np, 0);
        }
        assert_eq!(send.in_flight, 13, "{variant}");
        assert_eq!(send.detect_timeout(Instant::ZERO, &cfg, &pol), 1);
        let j = &send.jobs[0];
        assert_eq!(j.groups[0].abandoned, 1, "{variant}");
        for (i, m) in j.msgs.iter().enumerate() {
            let want = if i == gives_up {
                MsgState::Abandoned
            } else {
                MsgState::Open
            };
            assert_eq!(m.state, want, "{variant} message {i}");
        }
        let next = send.next_packet(&pol, 0);
        if gives_up == 0 {
            assert!(next.is_none(), "{variant}: nothing to resend");
        } else {
            let np = next.expect("the lost packet again");
            assert_eq!((np.msg, np.pkt, np.retx), (0, 0, true), "{variant}");
        }
    }
}

/// A group's TLR and queue, derived again only when their inputs moved
/// (`SendGroup::derive_tlr`), are at every step what eq. 1 and the queue
/// rule give from the group's counts, from planning (where `end_epoch`
/// has not run yet) on, for every variant's policies.
#[test]
fn kept_tlr_and_queue_match_a_fresh_derivation() {
    for variant in crate::policy::Variant::ALL {
        let cfg = Config {
            variant,
            ..Config::default()
        };
        let pol = cfg.variant.policies(cfg.rate);
        let mut send = SendSide::new(0);
        let job = JobSpec::uniform(0.6, &vec![100; 40]).unwrap();
        send.add_job(Instant::ZERO, job, &cfg, &pol).unwrap();
        let mut rng = Rng::new(19);
        let g = &mut send.jobs[0].groups[0];
        for step in 0..400 {
            if step > 0 {
                // Most epochs move nothing; some resolve a message.
                match rng.below(6) {
                    0 if g.unresolved() > 0 => g.delivered += 1,
                    1 if g.unresolved() > 0 => g.abandoned += 1,
                    2 => {
                        (g.delivered, g.abandoned) = (0, 0);
                    }
                    _ => {}
                }
                g.derive_tlr(&pol, cfg.queues);
            }
            let tlr = pol.tlr.tlr(&g.progress());
            let queue = pol.queue.queue(g.reliable(), g.tlr0, tlr, cfg.queues);
            assert_eq!(g.tlr.to_bits(), tlr.to_bits(), "{variant:?} step {step}");
            assert_eq!(g.queue, queue, "{variant:?} step {step}");
        }
    }
}

/// `on_cumulative` before its inline path (issue 19): every packet of the
/// run through `on_acked`, one at a time.
fn on_cumulative_one_by_one(send: &mut SendSide, cum: u32, pol: &Policies) {
    if !crate::seq::before(send.cum_done, cum)
        || cum.wrapping_sub(send.base_seq) as usize > send.flights.len()
    {
        return;
    }
    let popped_some = crate::seq::before(send.cum_done, send.base_seq);
    let mut s = if popped_some {
        send.base_seq
    } else {
        send.cum_done
    };
    while s != cum {
        send.on_acked(s, pol);
        s = s.wrapping_add(1);
    }
    if popped_some {
        let r = SeqRange {
            start: send.cum_done,
            end: cum,
        };
        send.late_acks(r, pol);
    }
    send.cum_done = cum;
}

/// The cumulative point's inline path (`acked_in_order`, the job's slot
/// carried, one pop after the run) keeps the books a call of `on_acked`
/// per packet keeps, whatever the run holds: packets acknowledged
/// before by a range, declared lost (late ACKs), the tail probe,
/// bundles, two jobs interleaved, sequence numbers across the wrap.
/// The whole sending half is compared after every step.
#[test]
fn cumulative_acks_keep_the_books_one_by_one_keeps() {
    let cfg = Config::default();
    let pol = cfg.variant.policies(cfg.rate);
    for seed in 0..24u64 {
        let mut rng = Rng::new(seed);
        let first = (u32::MAX - 400).wrapping_add(seed as u32 * 41);
        let mut a = SendSide::new(first);
        let mut b = SendSide::new(first);
        for s in [&mut a, &mut b] {
            let big = JobSpec::uniform(1.0, &[3000; 40]).unwrap();
            s.add_job(Instant::ZERO, big, &cfg, &pol).unwrap();
            let small = JobSpec::uniform(0.5, &[100; 300]).unwrap();
            s.add_job(Instant::ZERO, small, &cfg, &pol).unwrap();
        }
        let mut inline_steps = 0;
        for step in 1..400u64 {
            let now = Instant::from_nanos(step * 1000);
            match rng.below(10) {
                0..=3 => {
                    let bundle = if rng.below(3) == 0 { 1000 } else { 0 };
                    let probe = rng.below(8) == 0;
                    for _ in 0..1 + rng.below(12) {
                        for s in [&mut a, &mut b] {
                            s.probe_pending |= probe;
                            if let Some(np) = s.next_packet(&pol, bundle) {
                                s.on_sent(now, &np, 0);
                            }
                        }
                    }
                }
                4 => {
                    let start = a.base_seq.wrapping_add(rng.below(40) as u32);
                    let r = SeqRange {
                        start,
                        end: start.wrapping_add(1 + rng.below(8) as u32),
                    };
                    a.on_acked_range(r, &pol);
                    b.on_acked_range(r, &pol);
                }
                5 => {
                    let deadline = Instant::from_nanos((step - rng.below(step)) * 1000);
                    a.detect_timeout(deadline, &cfg, &pol);
                    b.detect_timeout(deadline, &cfg, &pol);
                }
                _ => {
                    let ahead = a.next_seq.wrapping_sub(a.cum_done) as u64;
                    let cum = a.cum_done.wrapping_add(rng.below(ahead + 1) as u32);
                    let moved = a.flights.len();
                    a.on_cumulative(cum, &pol);
                    on_cumulative_one_by_one(&mut b, cum, &pol);
                    inline_steps += usize::from(a.flights.len() != moved);
                }
            }
            assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "seed {seed} step {step}"
            );
            keys_are_current(&a, &pol, seed, step);
        }
        assert!(
            inline_steps > 10,
            "seed {seed}: the runs moved the flight list"
        );
    }
}

/// Every message's scheduler key is the one `sched_key` derives from its
/// state now, and the queue holds exactly the keyed messages: what an ACK
/// that skips `reschedule` for a message neither keyed nor sendable must
/// keep (issue 19).
fn keys_are_current(send: &SendSide, pol: &Policies, seed: u64, step: u64) {
    let mut keyed = 0;
    for j in &send.jobs {
        for mi in 0..j.msgs.len() {
            assert_eq!(
                j.msgs[mi].key,
                SendSide::sched_key(j, mi, pol),
                "seed {seed} step {step}: job {} message {mi}",
                j.id
            );
            keyed += usize::from(j.msgs[mi].key.is_some());
        }
    }
    assert_eq!(send.sched.len(), keyed, "seed {seed} step {step}");
}
