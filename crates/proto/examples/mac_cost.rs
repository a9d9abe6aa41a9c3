//! What authenticating every packet would cost (issue 11): ns per packet
//! for the CRC32C the core computes today over header + precise prefix,
//! and for a 64-bit keyed tag over the same bytes, with SipHash-1-3 (the
//! standard library's hasher, keyed by hashing a 128-bit key first) as the
//! stand-in for a per-connection MAC. Release build:
//! `cargo run --release -p approxnet-proto --example mac_cost`.

use approxnet_proto::wire::crc::crc32c;
use std::hash::{DefaultHasher, Hasher};
use std::hint::black_box;
use std::time::Instant;

fn per_packet_ns(len: usize, f: impl Fn(&[u8]) -> u64) -> f64 {
    let data: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
    let n = 2_000_000 / (1 + len / 64);
    let mut acc = 0u64;
    let t = Instant::now();
    for i in 0..n {
        acc ^= f(black_box(&data)).wrapping_add(i as u64);
    }
    black_box(acc);
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let key = [0x0123_4567_89ab_cdef_u64, 0xfedc_ba98_7654_3210];
    let tag = |d: &[u8]| {
        let mut h = DefaultHasher::new();
        h.write_u64(key[0]);
        h.write_u64(key[1]);
        h.write(d);
        h.finish()
    };
    println!("bytes covered | CRC32C ns/packet | keyed SipHash-1-3 ns/packet | ratio");
    // header only (control, fully approximate DATA), header + small
    // precise prefix, and a whole precise 1472-byte datagram
    for len in [48usize, 112, 560, 1472] {
        let c = per_packet_ns(len, |d| crc32c(d) as u64);
        let s = per_packet_ns(len, tag);
        println!("{len:>13} | {c:>16.1} | {s:>27.1} | {:.1}x", s / c);
    }
}
