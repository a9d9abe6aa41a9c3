//! Tests of the reliable sender without SACK recovery (`reliable.rs`):
//! production, the window, timeouts, timestamps, limited transmit, NIC room.

use super::*;
use crate::transport::cc::{Dctcp, NewReno};
use crate::transport::sack::SackBlocks;
use approxnet_proto::time::Duration;

fn rto() -> RtoConfig {
    RtoConfig::for_tests()
}

fn ack(n: u64) -> Hdr {
    Hdr {
        kind: Kind::Ack,
        seq: 0,
        len: 0,
        ack: n,
        ece: false,
        ts: 0,
        sack: SackBlocks::NONE,
    }
}

/// Whatever the window, nothing past the produced bytes is sent, and
/// produced bytes go out as soon as the window allows.
#[test]
fn produce_never_sends_beyond_produced_bytes() {
    let cc = NewReno { init_pkts: 10 };
    let mut s = ReliableSender::new(cc, 100_000, 1000, rto(), false).with_produced(0);
    let mut out = Vec::new();
    let t = Instant::ZERO;
    s.start(t, &mut Outbox::to_list(&mut out));
    assert!(out.is_empty());
    assert_eq!(s.timer(), None);
    let mut produced = 0;
    let mut acked = 0;
    for step in 0..200u64 {
        produced = (produced + 700 * (step % 3)).min(100_000);
        s.produce(t, produced, &mut Outbox::to_list(&mut out));
        for seg in out.drain(..) {
            assert!(seg.hdr.seq + seg.hdr.len as u64 <= produced);
            acked = acked.max(seg.hdr.seq + seg.hdr.len as u64);
        }
        // every step's production fits the (acknowledged, growing) window
        assert_eq!(s.snd_nxt(), produced);
        s.on_ack(t, &ack(acked), &mut Outbox::to_list(&mut out));
        for seg in out.drain(..) {
            assert!(seg.hdr.seq + seg.hdr.len as u64 <= produced);
        }
    }
    assert_eq!(s.produced(), produced);
    // nothing outstanding while waiting for the application: no timer
    assert_eq!(s.timer(), None);
    assert_eq!(s.stats().retx_pkts, 0);
}

#[test]
fn the_window_limits_what_production_releases() {
    let cc = NewReno { init_pkts: 2 };
    let mut s = ReliableSender::new(cc, 10_000, 1000, rto(), false).with_produced(500);
    let mut out = Vec::new();
    s.start(Instant::ZERO, &mut Outbox::to_list(&mut out));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].hdr.len, 500);
    s.produce(Instant::ZERO, 10_000, &mut Outbox::to_list(&mut out));
    // 500 B + 1000 B fit a 2-segment (2000 B) window, a third does not
    let sent: u64 = out.iter().map(|s| s.hdr.len as u64).sum();
    assert_eq!(sent, 1500);
}

fn ack_ts(n: u64, ts: u64) -> Hdr {
    Hdr { ts, ..ack(n) }
}

/// After a timeout DCTCP grows from one segment at once: its window
/// reduction (and alpha window) ended with the timeout, though the old
/// `snd_nxt` is far ahead (issue 12 item 3: the window stayed at one
/// segment until everything sent before the timeout was re-acked).
#[test]
fn dctcp_grows_after_a_timeout() {
    let mut s = ReliableSender::new(Dctcp::new(10), 10_000_000, 1000, rto(), false)
        .with_options(TcpOptions::default());
    let mut out = Vec::new();
    let t = Instant::ZERO;
    s.start(t, &mut Outbox::to_list(&mut out));
    // slow start without marks, then one ECE: a cut, cwr_end at snd_nxt
    let mut acked = 0;
    for i in 0..100 {
        acked += 1000;
        let a = Hdr {
            ece: i == 99,
            ..ack_ts(acked, 1)
        };
        s.on_ack(t, &a, &mut Outbox::to_list(&mut out));
    }
    let far = s.snd_nxt();
    out.clear();
    let t1 = t + Duration::from_millis(50);
    s.on_timer(t1, &mut Outbox::to_list(&mut out));
    assert_eq!(s.cwnd(), 1000.0);
    // the go-back-N resend is acknowledged: the window grows (slow start)
    acked += 1000;
    s.on_ack(
        t1,
        &ack_ts(acked, t1.as_nanos() + 1),
        &mut Outbox::to_list(&mut out),
    );
    assert!(acked < far);
    assert_eq!(s.cwnd(), 2000.0);
}

/// With timestamps the first new ACK after a timeout is an RTT sample
/// (of the retransmission), so the backed-off RTO returns to the
/// estimate; without them (Karn) it stays backed off.
#[test]
fn timestamps_undo_the_back_off_on_the_next_ack() {
    for timestamps in [true, false] {
        let opts = TcpOptions {
            timestamps,
            limited_transmit: false,
            sack: false,
            prr: false,
        };
        let cc = NewReno { init_pkts: 10 };
        let mut s = ReliableSender::new(cc, 1_000_000, 1000, rto(), false).with_options(opts);
        let mut out = Vec::new();
        let t = Instant::ZERO;
        s.start(t, &mut Outbox::to_list(&mut out));
        let rtt = Duration::from_micros(40);
        s.on_ack(t + rtt, &ack_ts(1000, 1), &mut Outbox::to_list(&mut out));
        let base = s.rto();
        let mut now = t + rtt;
        for _ in 0..3 {
            now = s.timer().unwrap();
            s.on_timer(now, &mut Outbox::to_list(&mut out));
        }
        assert_eq!(s.rto(), Duration::from_nanos(base.as_nanos() * 8));
        let resent = out.last().unwrap().hdr;
        let back = now + rtt;
        s.on_ack(
            back,
            &ack_ts(resent.seq + 1000, resent.ts),
            &mut Outbox::to_list(&mut out),
        );
        if timestamps {
            assert!(s.rto() <= base, "{:?} vs {base:?}", s.rto());
        } else {
            assert_eq!(s.rto(), Duration::from_nanos(base.as_nanos() * 8));
        }
    }
}

/// RFC 3042: with a window of two, the first two duplicate ACKs each
/// release one new segment (so a third can arrive); without limited
/// transmit nothing is sent.
#[test]
fn limited_transmit_sends_one_segment_per_early_duplicate_ack() {
    for lt in [true, false] {
        let opts = TcpOptions {
            timestamps: true,
            limited_transmit: lt,
            sack: false,
            prr: false,
        };
        let cc = NewReno { init_pkts: 2 };
        let mut s = ReliableSender::new(cc, 100_000, 1000, rto(), false).with_options(opts);
        let mut out = Vec::new();
        s.start(Instant::ZERO, &mut Outbox::to_list(&mut out));
        assert_eq!(out.len(), 2);
        out.clear();
        // segment 0 lost, segment 1 arrives: duplicate ACK of 0
        s.on_ack(Instant::ZERO, &ack(0), &mut Outbox::to_list(&mut out));
        let first: Vec<u64> = out.drain(..).map(|s| s.hdr.seq).collect();
        s.on_ack(Instant::ZERO, &ack(0), &mut Outbox::to_list(&mut out));
        let second: Vec<u64> = out.drain(..).map(|s| s.hdr.seq).collect();
        if lt {
            assert_eq!((first, second), (vec![2000], vec![3000]));
        } else {
            assert!(first.is_empty() && second.is_empty());
        }
        // the third duplicate ACK retransmits the hole
        s.on_ack(Instant::ZERO, &ack(0), &mut Outbox::to_list(&mut out));
        assert_eq!(out[0].hdr.seq, 0);
        assert!(out[0].retx);
    }
}

/// A sender with no NIC room holds new data; room releases it.
#[test]
fn nic_room_bounds_what_is_handed_over() {
    let cc = NewReno { init_pkts: 10 };
    let mut s = ReliableSender::new(cc, 100_000, 1000, rto(), false);
    s.set_tx_room(3);
    let mut out = Vec::new();
    s.start(Instant::ZERO, &mut Outbox::to_list(&mut out));
    assert_eq!(out.len(), 3);
    s.set_tx_room(2);
    s.produce(Instant::ZERO, 100_000, &mut Outbox::to_list(&mut out));
    assert_eq!(out.len(), 5);
}
