//! `Config::packet_split` end to end: every split delivers every message
//! byte for byte (precise prefixes included) through a lossy link, uses the
//! packet sizes it promises, and a receiver takes any split a sender makes.
mod common;
use approxnet_proto::event::Role;
use approxnet_proto::harness::{Pair, CLIENT_ADDR};
use approxnet_proto::wire::{HeaderRepr, Packet, PacketType};
use approxnet_proto::{Config, Event, JobSpec, PacketSplit};
use common::*;

const MODES: [PacketSplit; 3] = [PacketSplit::Full, PacketSplit::Even, PacketSplit::Tiled];
const SIZES: [usize; 9] = [1, 1419, 1420, 1421, 3000, 62_480, 65_536, 65_537, 100_000];

fn message(i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|k| (k * 131 + i * 7 + k / 256) as u8)
        .collect()
}

fn job() -> JobSpec {
    let mut spec = JobSpec::new(1.0).unwrap();
    for (i, &len) in SIZES.iter().enumerate() {
        spec = spec.message_with_prefix(0, message(i, len), len / 3);
    }
    spec
}

#[test]
fn every_split_delivers_every_message_intact_through_loss() {
    for how in MODES {
        let c = Config {
            packet_split: how,
            ..cfg()
        };
        // the receiver keeps the default split: it must take any
        let mut pair = Pair::new(c, cfg(), link(0.02), link(0.0), 7);
        let job = run(&mut pair, job());
        let got = delivered(&pair.server_events);
        assert_eq!(got.len(), SIZES.len(), "{how:?}");
        for (_, msg, payload) in got {
            let i = msg as usize;
            assert_eq!(payload, message(i, SIZES[i]), "{how:?} message {i}");
        }
        for (_, e) in &pair.server_events {
            if let Event::MessageDelivered {
                msg, precise_len, ..
            } = e
            {
                assert_eq!(*precise_len, SIZES[*msg as usize] / 3, "{how:?}");
            }
        }
        let s = outcome(&pair.client_events, job, Role::Sender).expect("job met its MSR");
        assert!(s.retransmissions > 0, "{how:?}: the link lost nothing");
    }
}

/// DATA body lengths per message, in the order the client sent them, on a
/// lossless exchange.
fn bodies(how: PacketSplit) -> Vec<Vec<usize>> {
    let c = Config {
        packet_split: how,
        ..cfg()
    };
    let mut pair = Pair::symmetric(c, link(0.0), 3);
    start(&mut pair, job());
    let mut out = vec![Vec::new(); SIZES.len()];
    let mut buf = vec![0u8; 2048];
    for _ in 0..10_000 {
        while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
            let h = HeaderRepr::parse(&Packet::new_checked(&buf[..t.len]).unwrap()).unwrap();
            if h.ty.0 == PacketType::Data && !h.flags.has(approxnet_proto::wire::Flags::BUNDLE) {
                let v = &mut out[h.msg_id as usize];
                assert_eq!(h.pkt_index as usize, v.len(), "{how:?}: sent in order");
                v.push(t.len);
            }
            pair.server
                .handle_datagram(pair.now, CLIENT_ADDR, &buf[..t.len]);
        }
        while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
            pair.client.handle_datagram(
                pair.now,
                approxnet_proto::harness::SERVER_ADDR,
                &buf[..t.len],
            );
        }
        let mut done = false;
        while let Some((_, e)) = pair.client.poll_event() {
            done |= matches!(e, Event::JobComplete { .. });
        }
        match pair.client.poll_timeout() {
            Some(t) if !done => {
                pair.now = t.max(pair.now);
                pair.client.handle_timeout(pair.now);
            }
            _ => return out,
        }
    }
    panic!("{how:?}: the job did not complete")
}

#[test]
fn the_datagrams_have_the_sizes_the_split_promises() {
    // datagram = 48-byte header + body (+ a 4-byte trailer where a packet
    // holds approximate bytes)
    let full = bodies(PacketSplit::Full);
    let tiled = bodies(PacketSplit::Tiled);
    let even = bodies(PacketSplit::Even);
    let m = 6; // 65,536 bytes
    assert_eq!(full[m].len(), 47);
    assert_eq!(even[m].len(), 47);
    assert_eq!(tiled[m].len(), 64);
    // the approximate (unprefixed) part of the message: all but the first
    // packets are approximate, each with its 4-byte trailer
    assert!(full[m][30..46].iter().all(|&l| l == 48 + 1420 + 4));
    assert_eq!(full[m][46], 48 + 216 + 4);
    assert!(even[m][30..46].iter().all(|&l| l == 48 + 1395 + 4));
    assert_eq!(even[m][46], 48 + 1366 + 4);
    assert!(tiled[m][30..].iter().all(|&l| l == 48 + 1024 + 4));
    // one-packet messages are the same in every mode
    for i in 0..3 {
        assert_eq!(full[i], tiled[i]);
        assert_eq!(full[i], even[i]);
    }
    // 62,480 = 44 x 1,420: every mode leaves it as 44 full packets
    assert_eq!(full[5], tiled[5]);
    assert_eq!(full[5], even[5]);
}

#[test]
fn a_receiver_reassembles_a_split_no_sender_of_ours_makes() {
    let (mut pair, h) = established();
    // message 9 of the announced job, as three packets of 7, 1,300 and 1
    // bytes (every split of ours has its short packet last)
    let parts: [&[u8]; 3] = [&[1; 7], &[2; 1300], &[3; 1]];
    for (i, body) in parts.iter().enumerate().rev() {
        let mut d = h;
        d.msg_id = 9;
        d.pkt_index = i as u16;
        d.pkt_count = 3;
        d.seq = h.seq.wrapping_add(1000 + i as u32);
        d.precise_len = body.len() as u16;
        d.flags = approxnet_proto::wire::Flags(0);
        pair.server
            .handle_datagram(pair.now, CLIENT_ADDR, &craft(d, body));
    }
    let mut got = None;
    while let Some((_, e)) = pair.server.poll_event() {
        if let Event::MessageDelivered {
            msg: 9, payload, ..
        } = e
        {
            got = Some(payload);
        }
    }
    let want: Vec<u8> = parts.concat();
    assert_eq!(got, Some(want));
}
