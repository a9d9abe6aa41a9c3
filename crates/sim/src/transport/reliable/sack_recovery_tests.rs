//! Tests of SACK loss recovery (`sack_recovery.rs`): a sender against a
//! receiver over a FIFO path with chosen losses.

use super::*;
use crate::transport::cc::NewReno;
use crate::transport::receiver::StreamReceiver;
use crate::transport::sack::blocks_allowed;
use approxnet_proto::time::Duration;
use std::collections::{HashMap, VecDeque};

/// Runs a sender of `total` bytes (MSS 1000, initial window `iw`, min
/// RTO 5 ms) against a receiver over a FIFO path (10 us each way, 0.8
/// us per segment), dropping the first `n` transmissions of segment
/// `i` for every `(i, n)` in `lose`. Returns (timeouts,
/// retransmissions, completion time, when the cumulative ACK passed
/// the last lost segment).
fn transfer(
    opts: TcpOptions,
    iw: u32,
    total: u64,
    lose: &[(u64, u32)],
) -> (u64, u64, Instant, Instant) {
    let rto = RtoConfig {
        min: Duration::from_millis(5),
        initial: Duration::from_millis(5),
        max: Duration::from_secs(1),
        fixed: false,
    };
    let mut s =
        ReliableSender::new(NewReno { init_pkts: iw }, total, 1000, rto, false).with_options(opts);
    let blocks = if opts.sack {
        blocks_allowed(opts.timestamps)
    } else {
        0
    };
    let mut r = StreamReceiver::new(total).with_sack(blocks);
    let d = Duration::from_micros(10);
    let gap = Duration::from_nanos(800);
    let mut drops: HashMap<u64, u32> = lose.iter().copied().collect();
    let mut now = Instant::ZERO;
    let mut out = Vec::new();
    let mut data: VecDeque<(Instant, Hdr)> = VecDeque::new();
    let mut acks: VecDeque<(Instant, Hdr)> = VecDeque::new();
    let mut wire_free = Instant::ZERO;
    let last_lost = lose.iter().map(|l| (l.0 + 1) * 1000).max().unwrap_or(0);
    let mut repaired = None;
    s.start(now, &mut Outbox::to_list(&mut out));
    for _ in 0..100_000 {
        for seg in out.drain(..) {
            if let Some(n) = drops.get_mut(&(seg.hdr.seq / 1000)) {
                if *n > 0 {
                    *n -= 1;
                    continue;
                }
            }
            wire_free = wire_free.max(now) + gap;
            data.push_back((wire_free + d, seg.hdr));
        }
        if repaired.is_none() && s.snd_una >= last_lost {
            repaired = Some(now);
        }
        if s.finished() {
            assert!(r.complete());
            let rep = repaired.unwrap_or(now);
            return (s.stats().timeouts, s.stats().retx_pkts, now, rep);
        }
        let next_data = data.front().map(|x| x.0);
        let next_ack = acks.front().map(|x| x.0);
        let t = [next_data, next_ack, s.timer()]
            .into_iter()
            .flatten()
            .min()
            .expect("something pending");
        now = t;
        if next_ack == Some(t) {
            let (_, a) = acks.pop_front().unwrap();
            s.on_ack(now, &a, &mut Outbox::to_list(&mut out));
        } else if next_data == Some(t) {
            let (_, h) = data.pop_front().unwrap();
            let a = r.on_data(h.seq, h.len, false, h.ts);
            assert!(a.sack.len() <= blocks);
            acks.push_back((now + d, a));
        } else {
            s.on_timer(now, &mut Outbox::to_list(&mut out));
        }
    }
    panic!("did not finish");
}

fn opts(sack: bool) -> TcpOptions {
    TcpOptions {
        sack,
        ..TcpOptions::default()
    }
}

fn once(idx: &[u64]) -> Vec<(u64, u32)> {
    idx.iter().map(|&i| (i, 1)).collect()
}

#[test]
fn sack_recovers_a_tail_of_losses_without_a_timeout() {
    let (to, retx, _, _) = transfer(opts(true), 10, 45_000, &once(&[5, 6, 7, 8, 9]));
    assert_eq!((to, retx), (0, 5));
}

/// Several holes: SACK resends each once, never times out, and has them
/// all repaired sooner than NewReno (one hole per round trip). (The
/// whole transfer is not always faster: `ssthresh` from `pipe` after
/// heavy loss is smaller than NewReno's.)
#[test]
fn several_holes_are_repaired_in_one_recovery() {
    let patterns: [&[u64]; 5] = [
        &[0, 1, 2],
        &[3, 4, 5, 6, 7, 8, 9],
        &[9],
        &[2, 12, 13, 14, 15, 16, 17, 18, 19],
        &[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22],
    ];
    for p in patterns {
        let (to, retx, _, rep) = transfer(opts(true), 10, 65_536, &once(p));
        let (_, _, _, rep_reno) = transfer(opts(false), 10, 65_536, &once(p));
        assert_eq!((to, retx), (0, p.len() as u64), "{p:?}");
        // holes within one window (not [2, 12..19], two episodes)
        if p.len() > 1 && p[p.len() - 1] - p[0] < 15 {
            assert!(rep < rep_reno, "{p:?}: {rep:?} vs NewReno {rep_reno:?}");
        } else {
            assert!(rep <= rep_reno, "{p:?}: {rep:?} vs NewReno {rep_reno:?}");
        }
    }
}

/// The fast retransmission is lost too: SACKs of later data reveal it
/// (lost retransmission detection) and it is resent without a timeout;
/// NewReno has to wait for the timer.
#[test]
fn a_lost_retransmission_is_resent_without_a_timeout() {
    let lose = [(3, 2)];
    let (to, retx, t, _) = transfer(opts(true), 10, 65_536, &lose);
    assert_eq!((to, retx), (0, 2));
    assert!(t < Instant::ZERO + Duration::from_millis(1), "{t:?}");
    let (to, _, _, _) = transfer(opts(false), 10, 65_536, &lose);
    assert_eq!(to, 1);
}

/// The third duplicate ACK resends the hole at once, with or without
/// PRR, although `pipe` (12 sent - 3 SACKed - 1 lost = 8 segments) is
/// above the new window (5): RFC 6675 step 4.3.
#[test]
fn the_fast_retransmit_ignores_the_window() {
    for prr in [true, false] {
        let o = TcpOptions { prr, ..opts(true) };
        let rto = RtoConfig {
            min: Duration::from_millis(5),
            initial: Duration::from_millis(5),
            max: Duration::from_secs(1),
            fixed: false,
        };
        let mut s = ReliableSender::new(NewReno { init_pkts: 10 }, 100_000, 1000, rto, false)
            .with_options(o);
        let mut r = StreamReceiver::new(100_000).with_sack(3);
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 10);
        out.clear();
        // segment 0 lost; 1, 2, 3 arrive: three duplicate ACKs
        for k in 1..4u64 {
            let a = r.on_data(k * 1000, 1000, false, 1);
            s.on_ack(t, &a, &mut Outbox::to_list(&mut out));
        }
        let resent: Vec<u64> = out.iter().filter(|x| x.retx).map(|x| x.hdr.seq).collect();
        assert_eq!(resent, vec![0], "prr {prr}");
        assert!(s.w.ssthresh <= 5000.0);
    }
}

/// The paths for a sender without SACK state (`plain_ack`, and
/// `sack_send` outside recovery with no duplicate ACK) do what the
/// general ones do with an empty scoreboard: the same segments, window,
/// timer and counters, ACK by ACK, over ACKs that advance by any amount
/// or not at all, marked or not, with the NIC's room and production
/// limiting now and then.
#[test]
fn the_plain_ack_path_matches_the_general_one() {
    let rto = RtoConfig {
        min: Duration::from_micros(100),
        initial: Duration::from_micros(100),
        max: Duration::from_millis(10),
        fixed: false,
    };
    for seed in 1..20u64 {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let total = 300_000;
        let make = || {
            ReliableSender::new(crate::transport::cc::Dctcp::new(4), total, 1000, rto, false)
                .with_options(TcpOptions::default())
                .with_produced(20_000)
        };
        let mut plain = make();
        let mut general = make();
        general.sack = Some(Box::default());
        let (mut out_p, mut out_g) = (Vec::new(), Vec::new());
        let mut now = Instant::ZERO;
        plain.start(now, &mut Outbox::to_list(&mut out_p));
        general.start(now, &mut Outbox::to_list(&mut out_g));
        for step in 0..3000 {
            now += Duration::from_nanos(100 + next(2000));
            if next(10) == 0 {
                let room = next(4) as u32;
                plain.set_tx_room(room);
                general.set_tx_room(room);
            }
            if next(7) == 0 {
                let p = plain.produced() + next(5000);
                plain.produce(now, p, &mut Outbox::to_list(&mut out_p));
                general.produce(now, p, &mut Outbox::to_list(&mut out_g));
            }
            // the fast send and the general one, from the same state
            if plain.dupacks == 0 && !plain.in_recovery() {
                let (mut a, mut b) = (plain.clone(), plain.clone());
                let (mut oa, mut ob) = (Vec::new(), Vec::new());
                a.sack_send(now, &mut Outbox::to_list(&mut oa));
                b.sack_send_by_pipe(now, &mut Outbox::to_list(&mut ob));
                assert_eq!(oa, ob, "seed {seed} step {step}");
                assert_eq!((a.snd_nxt, a.max_flight), (b.snd_nxt, b.max_flight));
                assert_eq!(a.is_cwnd_limited, b.is_cwnd_limited);
            }
            let una = plain.snd_una;
            let span = plain.snd_nxt - una;
            let ack = match next(4) {
                0 => una,
                _ => una + next(span + 1).min(3000),
            };
            let h = Hdr {
                kind: Kind::Ack,
                ack,
                ece: next(5) == 0,
                ts: now.as_nanos().saturating_sub(next(50_000)) + 1,
                ..Hdr::default()
            };
            plain.on_ack(now, &h, &mut Outbox::to_list(&mut out_p));
            general.on_ack(now, &h, &mut Outbox::to_list(&mut out_g));
            assert!(plain.sack.is_none());
            assert_eq!(out_p, out_g, "seed {seed} step {step}");
            assert_eq!(plain.cwnd(), general.cwnd());
            assert_eq!(plain.timer(), general.timer());
            assert_eq!(plain.stats(), general.stats());
            assert_eq!(
                (plain.snd_una, plain.snd_nxt),
                (general.snd_una, general.snd_nxt)
            );
            if plain.finished() {
                break;
            }
        }
        assert!(plain.snd_una > 0, "seed {seed}: nothing acknowledged");
    }
}

/// Without PRR the window drops to ssthresh at once (RFC 6675); both
/// recover without a timeout.
#[test]
fn classic_recovery_also_repairs_the_holes() {
    let o = TcpOptions {
        prr: false,
        ..opts(true)
    };
    let (to, retx, _, _) = transfer(o, 10, 65_536, &once(&[3, 4, 5, 6, 7, 8, 9]));
    assert_eq!((to, retx), (0, 7));
}
