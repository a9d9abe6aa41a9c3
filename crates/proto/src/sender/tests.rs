//! Unit tests of the sending half: ACK ranges and remembered losses
//! across the wrap of sequence numbers.

use super::*;
use crate::config::Config;
use crate::job::JobSpec;
use crate::rng::Rng;
use crate::wire::SeqRange;

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
