//! Precise prefixes (seed 002) and tensor transfer (seed 001) end to end.
mod common;
use approxnet_proto::config::Integrity;
use approxnet_proto::event::Role;
use approxnet_proto::harness::Pair;
use approxnet_proto::stats::DropReason;
use approxnet_proto::tensor::TensorSpec;
use approxnet_proto::{Config, Event, JobSpec};
use common::*;

fn flipping_link() -> approxnet_proto::harness::LinkConfig {
    let mut l = link(0.0);
    l.bit_flip = 0.3;
    l
}

fn message(i: u32) -> Vec<u8> {
    (0..4000u32)
        .map(|k| (k.wrapping_mul(31) ^ i) as u8)
        .collect()
}

#[test]
fn precise_prefix_is_never_delivered_corrupted() {
    let precise = 1000;
    let mut spec = JobSpec::new(0.8).unwrap();
    for i in 0..150 {
        spec = spec.message_with_prefix(0, message(i), precise);
    }
    let mut pair = Pair::symmetric(cfg(), flipping_link(), 3);
    let job = run(&mut pair, spec);
    let mut damaged = 0;
    let mut n = 0;
    for (_, e) in &pair.server_events {
        if let Event::MessageDelivered {
            msg,
            payload,
            damaged: d,
            precise_len,
            ..
        } = e
        {
            n += 1;
            let want = message(*msg);
            assert_eq!(*precise_len, precise);
            assert_eq!(&payload[..precise], &want[..precise], "precise part exact");
            if *d {
                damaged += 1;
                assert_ne!(payload, &want);
            } else {
                assert_eq!(payload, &want, "undamaged means intact");
            }
        }
    }
    assert!(n >= 120 && damaged > 0, "{n} delivered, {damaged} damaged");
    assert!(pair.server.stats().dropped(DropReason::BadChecksum) > 0);
    assert!(outcome(&pair.server_events, job, Role::Receiver)
        .unwrap()
        .guarantee_held());
}

#[test]
fn strict_receiver_drops_damaged_approximate_data() {
    let mut spec = JobSpec::new(0.8).unwrap();
    for i in 0..100 {
        spec = spec.message_with_prefix(0, message(i), 100);
    }
    let server = Config {
        integrity: Integrity::Strict,
        ..cfg()
    };
    let mut pair = Pair::new(cfg(), server, flipping_link(), link(0.0), 4);
    run(&mut pair, spec);
    for (_, e) in &pair.server_events {
        if let Event::MessageDelivered {
            msg,
            payload,
            damaged,
            ..
        } = e
        {
            assert!(!damaged);
            assert_eq!(payload, &message(*msg));
        }
    }
    assert!(pair.server.stats().dropped(DropReason::DamagedApproximate) > 0);
}

#[test]
fn fully_precise_messages_arrive_exact_or_not_at_all() {
    let mut spec = JobSpec::new(0.9).unwrap();
    for i in 0..100 {
        spec = spec.message(0, message(i));
    }
    let mut pair = Pair::symmetric(cfg(), flipping_link(), 5);
    run(&mut pair, spec);
    for (msg, payload) in delivered(&pair.server_events)
        .into_iter()
        .map(|(_, m, p)| (m, p))
    {
        assert_eq!(payload, message(msg));
    }
}

#[test]
fn tensor_delivers_at_fraction_p_with_exact_missing_ranges() {
    let values: Vec<f32> = (0..20_000).map(|i| i as f32 * 0.5).collect();
    let spec = JobSpec::tensor(TensorSpec::from_f32(&values, 0.85));
    let mut pair = Pair::symmetric(cfg(), link(0.1), 6);
    let job = run(&mut pair, spec);
    let (data, missing, fraction) = pair
        .server_events
        .iter()
        .find_map(|(_, e)| match e {
            Event::TensorReady {
                data,
                missing,
                fraction,
                ..
            } => Some((data.clone(), missing.clone(), *fraction)),
            _ => None,
        })
        .expect("tensor ready");
    assert!(fraction >= 0.85, "{fraction}");
    let got: Vec<f32> = data
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let missing_elems: usize = missing.iter().map(|(a, b)| (b - a) as usize).sum();
    assert!((1.0 - missing_elems as f64 / values.len() as f64 - fraction).abs() < 1e-9);
    for (i, v) in got.iter().enumerate() {
        let is_missing = missing
            .iter()
            .any(|&(a, b)| (a as usize) <= i && i < b as usize);
        if is_missing {
            assert_eq!(*v, 0.0, "zero-filled");
        } else {
            assert_eq!(*v, values[i]);
        }
    }
    assert!(outcome(&pair.server_events, job, Role::Receiver)
        .unwrap()
        .guarantee_held());
}

/// The delivered tensor of the first TensorReady event.
fn tensor_ready(pair: &Pair) -> (Vec<u8>, Vec<(u32, u32)>) {
    pair.server_events
        .iter()
        .find_map(|(_, e)| match e {
            Event::TensorReady { data, missing, .. } => Some((data.clone(), missing.clone())),
            _ => None,
        })
        .expect("tensor ready")
}

#[test]
fn protected_tensor_bits_arrive_exact_under_bit_flips() {
    // seed 004 §4.1: the top 16 bits of every f64 in the precise prefix;
    // every delivered element keeps them, while flips reach the rest
    let values: Vec<f64> = (0..6000).map(|i| (i as f64 * 0.37).sin() * 1e3).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let spec = JobSpec::tensor(TensorSpec {
        dtype: approxnet_proto::wire::Dtype::F64,
        data,
        deliver_fraction: 0.9,
        protect_bits: 16,
    });
    let mut pair = Pair::symmetric(cfg(), flipping_link(), 11);
    run(&mut pair, spec);
    let (got, missing) = tensor_ready(&pair);
    let mut damaged = 0;
    for (i, c) in got.chunks(8).enumerate() {
        if missing
            .iter()
            .any(|&(a, b)| a as usize <= i && i < b as usize)
        {
            continue;
        }
        let (g, w) = (
            u64::from_le_bytes(c.try_into().unwrap()),
            values[i].to_bits(),
        );
        assert_eq!(g >> 48, w >> 48, "element {i}: protected bits changed");
        damaged += usize::from(g != w);
    }
    assert!(damaged > 0, "no flips reached an unprotected bit");
    assert!(pair.server.stats().dropped(DropReason::BadChecksum) > 0);
}

#[test]
fn a_protected_tensor_on_a_clean_link_arrives_whole() {
    // the layout and its inverse across the wire, at a level that splits a byte
    let values: Vec<f32> = (0..3000).map(|i| i as f32 * -0.25 + 7.0).collect();
    let spec = JobSpec::tensor(TensorSpec::from_f32(&values, 1.0).protect(11));
    let mut pair = Pair::symmetric(cfg(), link(0.0), 12);
    run(&mut pair, spec);
    let (got, missing) = tensor_ready(&pair);
    assert!(missing.is_empty());
    let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(got, want);
    // above the element's 32 bits: refused when the job is queued
    let bad = JobSpec::tensor(TensorSpec::from_f32(&values, 1.0).protect(33));
    let mut pair = Pair::symmetric(cfg(), link(0.0), 13);
    let h = pair
        .client
        .connect(pair.now, approxnet_proto::harness::SERVER_ADDR)
        .expect("connect");
    let e = pair.client.send_job(pair.now, h, bad).unwrap_err();
    assert!(e.to_string().contains("protect_bits"), "{e}");
}

#[test]
fn tensor_packets_hold_whole_elements() {
    let values: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let spec = JobSpec::tensor(TensorSpec::from_f32(&values, 1.0));
    let mut pair = Pair::symmetric(cfg(), link(0.0), 7);
    run(&mut pair, spec);
    let (data, missing) = pair
        .server_events
        .iter()
        .find_map(|(_, e)| match e {
            Event::TensorReady { data, missing, .. } => Some((data.clone(), missing.clone())),
            _ => None,
        })
        .unwrap();
    assert!(missing.is_empty());
    assert_eq!(data.len(), 4000);
    assert_eq!(&data[..8], &[0, 0, 0, 0, 0, 0, 0x80, 0x3f]);
}

#[test]
fn prefix_delegated_to_the_transport_only_where_trusted() {
    let mut spec = JobSpec::new(1.0).unwrap();
    for i in 0..20 {
        spec = spec.message(0, message(i));
    }
    // Both sides trust the transport: the job completes, payloads intact.
    let trusting = Config {
        transport_checksums: true,
        ..cfg()
    };
    let mut pair = Pair::symmetric(trusting, link(0.0), 8);
    run(&mut pair, spec.clone());
    assert_eq!(delivered(&pair.server_events).len(), 20);
    // A receiver that does not trust its transport refuses such DATA.
    let mut pair = Pair::new(trusting, cfg(), link(0.0), link(0.0), 8);
    let h = pair
        .client
        .connect(pair.now, approxnet_proto::harness::SERVER_ADDR)
        .unwrap();
    pair.client.send_job(pair.now, h, spec).unwrap();
    pair.run_until(approxnet_proto::time::Duration::from_millis(20), |_| false);
    assert!(delivered(&pair.server_events).is_empty());
    assert!(pair.server.stats().dropped(DropReason::BadChecksum) > 0);
}
