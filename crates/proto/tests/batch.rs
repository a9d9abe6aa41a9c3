//! The batched calls (`Endpoint::handle_datagrams`,
//! `Endpoint::poll_transmits`) against the single-datagram calls: the
//! same datagrams byte for byte, the same events, the same counters and
//! timers, on one connection and on an endpoint with several.

use approxnet_proto::harness::direct::{connected_messages, pump_bursts, Bursts};
use approxnet_proto::harness::{CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::{Duration, Instant};
use approxnet_proto::wire::Packet;
use approxnet_proto::{
    BurstError, Config, ConnectionHandle, Endpoint, Event, JobSpec, Rate, Transmit,
};
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

fn cfg() -> Config {
    Config {
        line_rate: Rate::gbps(100.0),
        keep_payloads: false,
        idle_timeout: Duration::from_secs(60),
        ..Config::default()
    }
}

/// Two endpoints back to back, driven in bursts: every datagram moved
/// and the final state, for single calls and for batched calls.
fn two_endpoints(
    ack_every: u32,
    msr: f64,
    packets: usize,
    per_message: usize,
    tick_us: u64,
    batched: bool,
) -> (Vec<Vec<u8>>, u64, String) {
    let c = Config { ack_every, ..cfg() };
    let (mut a, mut b, now) = connected_messages(c, msr, packets, per_message);
    let mut wire = Vec::new();
    let tick = Duration::from_micros(tick_us);
    let (data, wakeups) = pump_bursts(
        &mut Bursts::new(2048),
        &mut a,
        &mut b,
        now,
        tick,
        batched,
        Some(&mut wire),
    );
    assert!(wakeups > 0);
    let (ta, tb) = (a.poll_timeout(), b.poll_timeout());
    let state = format!("{:?} {:?} {ta:?} {tb:?}", a.stats(), b.stats());
    (wire, data, state)
}

#[test]
fn bursts_of_one_connection_are_the_same_datagrams_as_single_calls() {
    let cases = [
        (1, 0.5, 600, 1),
        (1, 1.0, 920, 46),
        (1, 0.8, 300, 3),
        (16, 1.0, 920, 46),
        (16, 0.5, 600, 1),
    ];
    for (ack_every, msr, packets, per_message) in cases {
        for tick_us in [1, 10, 100] {
            let single = two_endpoints(ack_every, msr, packets, per_message, tick_us, false);
            let batch = two_endpoints(ack_every, msr, packets, per_message, tick_us, true);
            assert!(single.1 >= (packets as f64 * msr) as u64, "the job ran");
            assert_eq!(single.0.len(), batch.0.len(), "msr {msr} tick {tick_us}");
            for (k, (s, b)) in single.0.iter().zip(&batch.0).enumerate() {
                assert_eq!(s, b, "datagram {k}, msr {msr}, tick {tick_us} us");
            }
            assert_eq!(single.1, batch.1);
            assert_eq!(single.2, batch.2);
        }
    }
}

#[test]
fn bursts_come_out_longer_than_one_datagram() {
    // With a 100 us tick each wake-up releases the pacer's credit: the
    // batched calls see runs, so the test above compares real bursts.
    let (mut a, mut b, now) = connected_messages(cfg(), 1.0, 2000, 1);
    let (data, wakeups) = pump_bursts(
        &mut Bursts::new(2048),
        &mut a,
        &mut b,
        now,
        Duration::from_micros(100),
        true,
        None,
    );
    assert!(data >= 2000);
    assert!(
        data > 10 * wakeups,
        "{data} DATA packets in {wakeups} wake-ups"
    );
}

#[test]
fn a_stride_below_the_mtu_is_refused_by_name() {
    let mut e = Endpoint::new(cfg(), 1).expect("valid config");
    let mut buf = vec![0u8; 4096];
    let mut out: Vec<Transmit> = Vec::new();
    let err = e
        .poll_transmits(Instant::ZERO, &mut buf, 1000, &mut out)
        .expect_err("1000 < mtu");
    assert_eq!(
        err,
        BurstError::StrideBelowMtu {
            stride: 1000,
            mtu: cfg().mtu
        }
    );
    assert!(err.to_string().contains("stride 1000"));
    // an empty batch and a buffer too short for one stride do nothing
    e.handle_datagrams(Instant::ZERO, std::iter::empty());
    assert_eq!(
        e.poll_transmits(Instant::ZERO, &mut buf[..10], 2048, &mut out),
        Ok(0)
    );
    assert!(out.is_empty());
}

fn addr(last: u8) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)), 4433)
}

/// A hub with three connections (jobs out to two peers, one job in from
/// the second), its batches mixing both peers' ACKs and DATA, a
/// malformed datagram and every 13th DATA-sized datagram lost. Returns
/// every datagram moved, every event (endpoint, handle, event) and the
/// final counters.
/// Every datagram moved, every event (endpoint, handle, event), the final
/// counters.
type Run = (Vec<Vec<u8>>, Vec<(usize, ConnectionHandle, Event)>, String);

fn hub(batched: bool) -> Run {
    let c = Config {
        line_rate: Rate::gbps(10.0),
        idle_timeout: Duration::from_secs(5),
        ..Config::default()
    };
    let addrs = [SERVER_ADDR, addr(11), addr(12)];
    let mut eps: Vec<Endpoint> = (0..3)
        .map(|k| Endpoint::new(c, 40 + k as u64).expect("valid config"))
        .collect();
    let mut now = Instant::ZERO;
    let mut jobs = Vec::new();
    for (from, to, msr, size) in [(0, 1, 1.0, 1000), (0, 2, 0.6, 3000), (2, 0, 0.7, 1400)] {
        let h = eps[from].connect(now, addrs[to]).expect("slot");
        let spec = JobSpec::uniform(msr, &vec![size; 150]).expect("valid MSR");
        jobs.push((from, eps[from].send_job(now, h, spec).expect("job")));
    }
    let stride = c.mtu;
    let mut buf = vec![0u8; stride * 7];
    let mut out = Vec::new();
    let (mut wire, mut events) = (Vec::new(), Vec::new());
    let mut lost = 0u32;
    let mut complete = 0;
    let mut garbage = 0;
    for step in 0..200_000u32 {
        loop {
            // every endpoint sends what it has; the hub's inbox takes the
            // peers' datagrams alternately, two at a time
            let mut inbox: Vec<Vec<(SocketAddr, Vec<u8>)>> = vec![Vec::new(); 3];
            let mut moved = false;
            for k in 0..3 {
                loop {
                    out.clear();
                    let n = if batched {
                        eps[k]
                            .poll_transmits(now, &mut buf, stride, &mut out)
                            .expect("stride")
                    } else {
                        while out.len() < 7 {
                            let seg = &mut buf[out.len() * stride..(out.len() + 1) * stride];
                            match eps[k].poll_transmit(now, seg) {
                                Some(t) => out.push(t),
                                None => break,
                            }
                        }
                        out.len()
                    };
                    if n == 0 {
                        break;
                    }
                    moved = true;
                    for (j, t) in out.iter().enumerate() {
                        let d = buf[j * stride..j * stride + t.len].to_vec();
                        wire.push(d.clone());
                        if t.len > 900 {
                            lost += 1;
                            if lost.is_multiple_of(13) {
                                continue;
                            }
                        }
                        let to = addrs.iter().position(|a| *a == t.dst).expect("known peer");
                        inbox[to].push((addrs[k], d));
                    }
                }
            }
            if !moved {
                break;
            }
            let (p1, p2): (Vec<_>, Vec<_>) = inbox[0].drain(..).partition(|(a, _)| *a == addrs[1]);
            let (mut i1, mut i2) = (p1.into_iter(), p2.into_iter());
            loop {
                let before = inbox[0].len();
                inbox[0].extend(i1.by_ref().take(2));
                inbox[0].extend(i2.by_ref().take(2));
                if inbox[0].len() == before {
                    break;
                }
            }
            if step.is_multiple_of(5) {
                garbage += 1;
                let mid = inbox[0].len() / 2;
                inbox[0].insert(mid, (addrs[1], vec![0xab; 60]));
            }
            for k in 0..3 {
                for (b, chunk) in inbox[k].chunks(5 + step as usize % 4).enumerate() {
                    if batched && b % 3 != 2 {
                        eps[k].handle_datagrams(now, chunk.iter().map(|(a, d)| (*a, &d[..])));
                    } else {
                        for (a, d) in chunk {
                            eps[k].handle_datagram(now, *a, d);
                        }
                    }
                }
            }
        }
        for (k, e) in eps.iter_mut().enumerate() {
            while let Some((h, ev)) = e.poll_event() {
                if matches!(ev, Event::JobComplete { .. }) {
                    complete += 1;
                }
                events.push((k, h, ev));
            }
        }
        if complete == 2 * jobs.len() {
            break;
        }
        let Some(t) = eps.iter_mut().filter_map(|e| e.poll_timeout()).min() else {
            break;
        };
        // wake-ups on a 20 us grid: several connections due at once
        let grid = 20_000;
        now = now.max(Instant::from_nanos(t.as_nanos().div_ceil(grid) * grid));
        for e in &mut eps {
            e.handle_timeout(now);
        }
    }
    assert_eq!(complete, 2 * jobs.len(), "every job completed at both ends");
    // the malformed datagrams were counted, not taken
    let hub = eps[0].stats();
    assert!(garbage > 0);
    assert_eq!(
        hub.dropped(DropReason::Malformed) + hub.dropped(DropReason::BadChecksum),
        garbage
    );
    let state = eps
        .iter_mut()
        .map(|e| {
            let t = e.poll_timeout();
            format!("{:?} {t:?} {}", e.stats(), e.connection_count())
        })
        .collect::<Vec<_>>()
        .join("\n");
    (wire, events, state)
}

#[test]
fn an_endpoint_with_several_connections_batched_is_the_same_as_single_calls() {
    let single = hub(false);
    let batch = hub(true);
    assert!(single.0.len() > 900, "{} datagrams", single.0.len());
    assert_eq!(single.0.len(), batch.0.len());
    for (k, (s, b)) in single.0.iter().zip(&batch.0).enumerate() {
        assert_eq!(s, b, "datagram {k}");
    }
    assert_eq!(single.1, batch.1);
    assert_eq!(single.2, batch.2);
}

/// A live server fed, in one batch, the client's next DATA packets with
/// some bytes changed (checksums made valid again, so they reach the
/// state machine): what it then sends, raises and counts.
fn mutated_batch(picks: &[(usize, usize, u8)], batched: bool) -> (Vec<Vec<u8>>, String) {
    let (mut a, mut b, mut now) = connected_messages(cfg(), 0.5, 60, 1);
    let mut buf = vec![0u8; 2048];
    let mut sent = Vec::new();
    while sent.len() < 24 {
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            sent.push(buf[..t.len].to_vec());
        }
        let Some(t) = a.poll_timeout() else {
            break;
        };
        now = now.max(t);
        a.handle_timeout(now);
    }
    assert!(sent.len() >= 24, "{} datagrams", sent.len());
    let batch: Vec<Vec<u8>> = picks
        .iter()
        .map(|&(k, pos, x)| {
            let mut d = sent[k % sent.len()].clone();
            let i = pos % d.len();
            d[i] ^= x;
            if let Ok(mut p) = Packet::new_checked(&mut d[..]) {
                p.fill_checksum();
            }
            d
        })
        .collect();
    if batched {
        b.handle_datagrams(now, batch.iter().map(|d| (CLIENT_ADDR, &d[..])));
    } else {
        for d in &batch {
            b.handle_datagram(now, CLIENT_ADDR, d);
        }
    }
    let mut out = Vec::new();
    while let Some(t) = b.poll_transmit(now, &mut buf) {
        out.push(buf[..t.len].to_vec());
    }
    let mut events = Vec::new();
    while let Some(e) = b.poll_event() {
        events.push(e);
    }
    let t = b.poll_timeout();
    (out, format!("{events:?} {:?} {t:?}", b.stats()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn mutated_datagrams_in_a_batch_match_single_calls(
        picks in proptest::collection::vec((0usize..64, 0usize..2048, any::<u8>()), 1..24)
    ) {
        prop_assert_eq!(mutated_batch(&picks, false), mutated_batch(&picks, true));
    }
}
