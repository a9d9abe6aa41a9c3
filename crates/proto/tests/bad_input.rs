//! Hostile and broken input: every case dropped with a counted reason,
//! never a panic, never unbounded memory.
mod common;
use approxnet_proto::harness::{Pair, CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::stats::DropReason;
use approxnet_proto::time::Duration;
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::{GroupDesc, HeaderRepr, JobRepr, Packet, PacketType};
use approxnet_proto::{Event, JobSpec};
use common::*;
use proptest::prelude::*;
use std::net::SocketAddr;

#[test]
fn unknown_connection_is_dropped() {
    let (mut pair, mut h) = established();
    h.conn_id ^= 0xdead_beef;
    h.precise_len = 100;
    let before = pair.server.stats().dropped(DropReason::UnknownConnection);
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(
        pair.server.stats().dropped(DropReason::UnknownConnection),
        before + 1
    );
}

#[test]
fn spoofed_source_for_a_real_connection_is_dropped() {
    let (mut pair, mut h) = established();
    h.precise_len = 100;
    let spoof: SocketAddr = "10.9.9.9:4433".parse().unwrap();
    pair.server
        .handle_datagram(pair.now, spoof, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::WrongPeer), 1);
}

#[test]
fn forged_job_with_guessed_cookie_is_refused() {
    let (mut pair, _) = established();
    let mut h = HeaderRepr {
        ty: PacketTypeField(PacketType::Job),
        conn_id: 0x1234_5678_9abc_def0,
        ..Default::default()
    };
    let j = JobRepr {
        tensor: None,
        groups: vec![GroupDesc {
            id: 0,
            messages: 4,
            must_deliver: 2,
        }],
    };
    let mut body = vec![0u8; j.buffer_len()];
    j.emit(&mut body);
    h.precise_len = body.len() as u16;
    let other: SocketAddr = "10.0.0.7:1".parse().unwrap();
    pair.server
        .handle_datagram(pair.now, other, &craft(h, &body));
    assert_eq!(
        pair.server.stats().dropped(DropReason::UnknownConnection),
        1
    );
    assert_eq!(pair.server.connection_count(), 1);
}

#[test]
fn stale_epoch_is_dropped() {
    let (mut pair, mut h) = established();
    h.epoch = h.epoch.wrapping_sub(1000);
    h.precise_len = 100;
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::StaleEpoch), 1);
}

#[test]
fn message_past_the_announced_end_is_dropped() {
    let (mut pair, mut h) = established();
    h.msg_id = 10; // the job has messages 0..10
    h.precise_len = 100;
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::OutOfRange), 1);
    let (mut pair, mut h) = established();
    h.group = 77;
    h.precise_len = 100;
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::OutOfRange), 1);
}

#[test]
fn inconsistent_packet_count_is_dropped() {
    let (mut pair, mut h) = established();
    h.pkt_count += 1;
    h.precise_len = 100;
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::Inconsistent), 1);
}

#[test]
fn lying_length_field_is_dropped() {
    let (mut pair, mut h) = established();
    h.precise_len = 100;
    let mut bytes = craft(h, &[0; 100]);
    bytes.truncate(120);
    pair.server.handle_datagram(pair.now, CLIENT_ADDR, &bytes);
    assert_eq!(pair.server.stats().dropped(DropReason::Malformed), 1);
}

#[test]
fn every_short_or_overlong_datagram_is_counted_malformed() {
    // The receive path checks a datagram's lengths in one place (issue 19):
    // each prefix of a valid DATA packet, and the packet with bytes added,
    // is counted malformed and never read past its end.
    let (mut pair, mut h) = established();
    h.precise_len = 100;
    let bytes = craft(h, &[0; 100]);
    let mut longer = bytes.clone();
    longer.push(0);
    let mut n = 0;
    for cut in (0..bytes.len()).map(|k| &bytes[..k]).chain([&longer[..]]) {
        pair.server.handle_datagram(pair.now, CLIENT_ADDR, cut);
        n += 1;
        assert_eq!(pair.server.stats().dropped(DropReason::Malformed), n);
    }
    assert_eq!(pair.server.stats().dropped_total(), n);
}

#[test]
fn job_announcing_2_pow_40_messages_is_refused_without_allocating() {
    let (mut pair, data) = established();
    // 256 groups of 2^32 - 1 messages each: about 2^40 in total.
    let groups = (0..256u16)
        .map(|id| GroupDesc {
            id,
            messages: u32::MAX,
            must_deliver: 0,
        })
        .collect();
    let j = JobRepr {
        tensor: None,
        groups,
    };
    let mut body = vec![0u8; j.buffer_len()];
    j.emit(&mut body);
    let h = HeaderRepr {
        ty: PacketTypeField(PacketType::Job),
        conn_id: data.conn_id,
        job_id: 99,
        precise_len: body.len() as u16,
        ..Default::default()
    };
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &body));
    assert_eq!(pair.server.stats().dropped(DropReason::CapExceeded), 1);
    let buffered = pair.server.buffered_bytes(pair.server_events[0].0).unwrap();
    assert!(buffered < 1 << 20, "{buffered} bytes held");
}

#[test]
fn buffered_bytes_stay_under_the_cap() {
    let mut c = cfg();
    c.limits.max_buffered_bytes = 64 * 1024;
    let mut pair = Pair::symmetric(c, link(0.0), 3);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    pair.run_until(Duration::from_millis(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    // Many large multi-packet messages; first packets arrive, the rest are held back.
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(1.0, &[60_000; 20]).unwrap())
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut max_seen = 0;
    let mut server_conn = None;
    for _ in 0..2000 {
        pair.now += Duration::from_micros(2);
        while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
            let p = Packet::new_checked(&buf[..t.len]).unwrap();
            let hd = HeaderRepr::parse(&p).unwrap();
            if hd.ty.0 == PacketType::Data && hd.pkt_index + 1 == hd.pkt_count {
                continue; // withhold every last packet so nothing completes
            }
            pair.server
                .handle_datagram(pair.now, CLIENT_ADDR, &buf[..t.len]);
            while let Some((sh, _)) = pair.server.poll_event() {
                server_conn = Some(sh);
            }
            if let Some(sh) = server_conn {
                max_seen = max_seen.max(pair.server.buffered_bytes(sh).unwrap_or(0));
            }
        }
    }
    assert!(max_seen > 0 && max_seen <= 64 * 1024, "{max_seen}");
    assert!(pair.server.stats().dropped(DropReason::CapExceeded) > 0);
}

#[test]
fn silent_peer_gives_a_clear_error_in_bounded_time() {
    let mut c = cfg();
    c.idle_timeout = Duration::from_millis(50);
    let mut pair = Pair::symmetric(c, link(0.0), 4);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    pair.run_until(Duration::from_millis(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(0.5, &[3000; 50]).unwrap())
        .unwrap();
    pair.forward
        .set_config(approxnet_proto::harness::LinkConfig {
            loss: 1.0,
            ..link(0.0)
        });
    let start = pair.now;
    let lost = pair.run_until(Duration::from_secs(1), |p| {
        p.client_events
            .iter()
            .any(|(_, e)| matches!(e, Event::ConnectionLost { .. }))
    });
    assert!(lost);
    assert!(pair.now - start <= Duration::from_millis(60));
    assert!(pair.client_events.iter().any(|(_, e)| matches!(
        e,
        Event::JobComplete {
            outcome: Err(approxnet_proto::event::JobFailure::PeerUnresponsive),
            ..
        }
    )));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let (mut pair, _) = established();
        pair.server.handle_datagram(pair.now, CLIENT_ADDR, &bytes);
        pair.client.handle_datagram(pair.now, SERVER_ADDR, &bytes);
        pair.server.handle_timeout(pair.now);
    }

    #[test]
    fn mutated_valid_packets_with_fixed_checksum_never_panic(
        at in 0usize..200, val in any::<u8>(), extra in 0usize..3,
    ) {
        let (mut pair, h) = established();
        let mut hd = h;
        hd.precise_len = 100;
        let mut bytes = craft(hd, &[7; 100]);
        let i = at % bytes.len();
        bytes[i] = val;
        bytes.extend(std::iter::repeat_n(0, extra));
        if let Ok(mut p) = Packet::new_checked(&mut bytes[..]) {
            p.fill_checksum();
        }
        pair.server.handle_datagram(pair.now, CLIENT_ADDR, &bytes);
        pair.server.handle_timeout(pair.now + Duration::from_millis(1));
        let mut buf = vec![0u8; 2048];
        while pair.server.poll_transmit(pair.now, &mut buf).is_some() {}
    }
}

#[test]
fn malformed_bundles_are_dropped_whole() {
    use approxnet_proto::wire::Flags;
    fn record(id: u32, payload: &[u8]) -> Vec<u8> {
        let mut r = id.to_be_bytes().to_vec();
        r.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        r.extend_from_slice(payload);
        r
    }
    let bundle = |h: HeaderRepr, body: &[u8]| -> Vec<u8> {
        let mut h = h;
        h.flags = Flags(Flags::BUNDLE);
        h.pkt_index = 0;
        h.pkt_count = 1;
        h.precise_len = body.len() as u16;
        craft(h, body)
    };
    type Case = (&'static str, Box<dyn Fn(u32) -> Vec<u8>>, DropReason);
    let cases: Vec<Case> = vec![
        (
            "record length past the end",
            Box::new(|id| {
                let mut b = record(id, &[1; 10]);
                b.truncate(12);
                b
            }),
            DropReason::Malformed,
        ),
        (
            "trailing bytes too short for a record",
            Box::new(|id| {
                let mut b = record(id, &[1; 10]);
                b.extend_from_slice(&[0, 0, 0]);
                b
            }),
            DropReason::Malformed,
        ),
        (
            "message id past the group's end",
            Box::new(|id| [record(id, &[1; 10]), record(10, &[2; 10])].concat()),
            DropReason::OutOfRange,
        ),
        (
            "first record is not the header's message",
            Box::new(|id| record(id + 1, &[1; 10])),
            DropReason::Inconsistent,
        ),
        (
            "empty bundle",
            Box::new(|_| Vec::new()),
            DropReason::Inconsistent,
        ),
    ];
    for (what, body, reason) in cases {
        let (mut pair, h) = established();
        let before = pair.server_events.len();
        pair.server
            .handle_datagram(pair.now, CLIENT_ADDR, &bundle(h, &body(h.msg_id)));
        assert_eq!(pair.server.stats().dropped(reason), 1, "{what}");
        while let Some(e) = pair.server.poll_event() {
            pair.server_events.push(e);
        }
        assert!(
            !pair.server_events[before..]
                .iter()
                .any(|(_, e)| matches!(e, Event::MessageDelivered { .. })),
            "{what}: nothing of a bad bundle is delivered"
        );
    }
    // A bundle also flagged as approximate or as a tensor chunk is refused.
    for extra in [Flags::APPROX_CRC, Flags::TENSOR] {
        let (mut pair, h) = established();
        let mut b = bundle(h, &record(h.msg_id, &[1; 10]));
        b[2] |= extra; // the flags byte
        Packet::new_unchecked(&mut b[..]).fill_checksum();
        let before = pair.server.stats().dropped_total();
        pair.server.handle_datagram(pair.now, CLIENT_ADDR, &b);
        assert_eq!(
            pair.server.stats().dropped_total(),
            before + 1,
            "flag {extra:#x}"
        );
    }
}

#[test]
fn a_mode_switch_mid_message_never_makes_approximate_bytes_precise() {
    // A peer sends message 9 as two packets: the first approximate (no
    // precise byte), the second precise whole. The delivered message's
    // precise prefix is what is checked contiguously from its start: 0.
    let (mut pair, mut h) = established();
    h.msg_id = 9;
    h.pkt_count = 2;
    for (i, precise) in [(0u16, 0u16), (1, 100)] {
        h.pkt_index = i;
        h.seq = h.seq.wrapping_add(1000 + u32::from(i));
        h.precise_len = precise;
        pair.server
            .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[i as u8 + 1; 100]));
    }
    let delivered = std::iter::from_fn(|| pair.server.poll_event())
        .find_map(|(_, e)| match e {
            Event::MessageDelivered {
                msg: 9,
                precise_len,
                unchecked,
                payload,
                ..
            } => Some((precise_len, unchecked, payload.len())),
            _ => None,
        })
        .expect("message 9 delivered");
    assert_eq!(delivered, (0, true, 200));
}

#[test]
fn a_known_job_announced_with_other_counts_is_dropped_unless_it_shrinks() {
    let (mut pair, data) = established(); // job of 10 messages, 5 must arrive
    let job = |messages, must_deliver| {
        let j = JobRepr {
            tensor: None,
            groups: vec![GroupDesc {
                id: 0,
                messages,
                must_deliver,
            }],
        };
        let mut body = vec![0u8; j.buffer_len()];
        j.emit(&mut body);
        let h = HeaderRepr {
            ty: PacketTypeField(PacketType::Job),
            precise_len: body.len() as u16,
            ..data
        };
        craft(h, &body)
    };
    for (messages, must) in [(20, 10), (10, 6), (8, 7)] {
        pair.server
            .handle_datagram(pair.now, CLIENT_ADDR, &job(messages, must));
    }
    assert_eq!(
        pair.server.stats().dropped(DropReason::Inconsistent),
        3,
        "growing, a higher must, a must above the old one"
    );
    // Shrinking (an ended stream) is taken: later DATA past the new end
    // is out of range.
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &job(8, 4));
    assert_eq!(pair.server.stats().dropped(DropReason::Inconsistent), 3);
    let mut h = data;
    h.msg_id = 9;
    h.precise_len = 100;
    pair.server
        .handle_datagram(pair.now, CLIENT_ADDR, &craft(h, &[0; 100]));
    assert_eq!(pair.server.stats().dropped(DropReason::OutOfRange), 1);
}
