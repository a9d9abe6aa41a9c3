//! Property tests: `parse(emit(x)) == x` for every wire format.
use approxnet_proto::wire::header::PacketTypeField;
use approxnet_proto::wire::*;
use proptest::prelude::*;

fn any_type() -> impl Strategy<Value = PacketType> {
    any::<u8>().prop_map(PacketType::from)
}

proptest! {
    #[test]
    fn header_round_trips(
        ty in any_type(), flags in any::<u8>(), conn in any::<u64>(), job in any::<u32>(),
        group in any::<u16>(), epoch in any::<u16>(), msg in any::<u32>(), seq in any::<u32>(),
        count in 1u16.., idx in any::<u16>(), es in any::<u32>(), len in any::<u32>(),
        body in proptest::collection::vec(any::<u8>(), 0..300), precise in any::<u16>(),
    ) {
        let precise = if ty.is_control() { body.len() as u16 } else { precise % (body.len() as u16 + 1) };
        let h = HeaderRepr {
            ty: PacketTypeField(ty), flags: Flags(flags & !Flags::CE), conn_id: conn, job_id: job, group, epoch,
            msg_id: msg, seq, pkt_index: idx % count, pkt_count: count,
            elem_start: es, elem_end: es.saturating_add(len % 1000), precise_len: precise,
            body_len: body.len() as u16,
        };
        let mut buf = vec![0u8; h.buffer_len()];
        h.emit_with_body(&mut buf, &body);
        let p = Packet::new_checked(&buf[..]).unwrap();
        let parsed = HeaderRepr::parse(&p);
        if ty.is_control() || ty == PacketType::Data {
            prop_assert_eq!(parsed.unwrap(), h);
        } else {
            // Unknown codepoints round-trip too (precise or not).
            prop_assert_eq!(parsed.unwrap().ty.0, ty);
        }
        prop_assert_eq!(p.body(), &body[..]);
    }

    #[test]
    fn ack_round_trips(cum in any::<u32>(), ce in any::<u32>(), rc in any::<u32>(),
                       ranges in proptest::collection::vec((any::<u32>(), 1u32..1000), 0..=8)) {
        let mut a = AckRepr::new(cum, ce, rc);
        for (s, l) in ranges {
            let r = SeqRange { start: s, end: s.wrapping_add(l) };
            prop_assert!(a.push_range(r));
        }
        let mut buf = vec![0u8; a.buffer_len()];
        a.emit(&mut buf);
        prop_assert_eq!(AckRepr::parse(&buf).unwrap(), a);
    }

    /// Ranges of 1 to 2^31 - 1 numbers starting anywhere, so many wrap past
    /// u32::MAX, round-trip and acknowledge exactly the numbers they span.
    #[test]
    fn ack_ranges_round_trip_across_the_wrap(
        ranges in proptest::collection::vec(
            (prop_oneof![any::<u32>(), (u32::MAX - 300)..=u32::MAX], 1u32..(1 << 31)), 1..=8),
        probe in any::<u32>(),
    ) {
        let mut a = AckRepr::new(0, 0, 0);
        for &(s, l) in &ranges {
            let r = SeqRange { start: s, end: s.wrapping_add(l) };
            prop_assert!(a.push_range(r));
        }
        let mut buf = vec![0u8; a.buffer_len()];
        a.emit(&mut buf);
        let b = AckRepr::parse(&buf).unwrap();
        prop_assert_eq!(b, a);
        for &(s, l) in &ranges {
            prop_assert!(b.acks(s) && b.acks(s.wrapping_add(l - 1)));
        }
        let inside = ranges.iter().any(|&(s, l)| probe.wrapping_sub(s) < l);
        // The cumulative point 0 acknowledges the 2^31 - 1 numbers before it.
        let before_cum = 0u32.wrapping_sub(probe).wrapping_sub(1) < (1 << 31) - 1;
        prop_assert_eq!(b.acks(probe), inside || before_cum);
    }

    /// A range on the wire is accepted exactly when it spans 1 to 2^31 - 1
    /// numbers (wrapping); anything else is refused, never a panic.
    #[test]
    fn ack_range_validity(start in any::<u32>(), end in prop_oneof![any::<u32>(), Just(0u32), Just(u32::MAX)]) {
        let mut buf = vec![0u8; 24];
        buf[12] = 1;
        buf[16..20].copy_from_slice(&start.to_be_bytes());
        buf[20..24].copy_from_slice(&end.to_be_bytes());
        let len = end.wrapping_sub(start);
        prop_assert_eq!(AckRepr::parse(&buf).is_ok(), (1..1 << 31).contains(&len));
    }

    #[test]
    fn job_round_trips(groups in proptest::collection::btree_map(any::<u16>(), (1u32..1_000_000, 0.0f64..=1.0), 1..20)) {
        let j = JobRepr {
            tensor: None,
            groups: groups.into_iter().map(|(id, (n, f))| GroupDesc { id, messages: n, must_deliver: (n as f64 * f) as u32 }).collect(),
        };
        let mut buf = vec![0u8; j.buffer_len()];
        j.emit(&mut buf);
        prop_assert_eq!(JobRepr::parse(&buf).unwrap(), j);
    }

    #[test]
    fn bodies_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = AckRepr::parse(&bytes);
        let _ = JobRepr::parse(&bytes);
        let _ = HelloRepr::parse(&bytes);
        let _ = ResetReason::parse(&bytes);
        if let Ok(p) = Packet::new_checked(&bytes[..]) {
            let _ = HeaderRepr::parse(&p);
        }
    }
}

/// The ranges a receiver writes as sequence numbers wrap: one ending at
/// u32::MAX + 1 (end 0), one spanning the wrap, and u32::MAX itself.
#[test]
fn ack_ranges_at_the_wrap_round_trip() {
    let mut a = AckRepr::new(u32::MAX - 10, 1, 2);
    let ranges = [
        SeqRange {
            start: u32::MAX - 3,
            end: 0,
        },
        SeqRange {
            start: u32::MAX - 7,
            end: 5,
        },
        SeqRange {
            start: u32::MAX,
            end: 1,
        },
    ];
    for r in ranges {
        assert!(a.push_range(r), "{r:?}");
    }
    let mut buf = vec![0u8; a.buffer_len()];
    a.emit(&mut buf);
    let b = AckRepr::parse(&buf).unwrap();
    assert_eq!(b, a);
    assert_eq!(b.ranges(), &ranges);
    assert!(b.acks(u32::MAX) && b.acks(0) && b.acks(4) && !b.acks(5));
}
