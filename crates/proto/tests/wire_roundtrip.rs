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
            a.push_range(SeqRange { start: s.min(u32::MAX - 1000), end: s.min(u32::MAX - 1000) + l });
        }
        let mut buf = vec![0u8; a.buffer_len()];
        a.emit(&mut buf);
        prop_assert_eq!(AckRepr::parse(&buf).unwrap(), a);
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
