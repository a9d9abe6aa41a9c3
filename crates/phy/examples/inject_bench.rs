//! Throughput of the bit-error injector against a memcpy of the same buffer
//! in the same run (benches/phy/inject.sh). Prints one line per case:
//! GB/s of payload and the ratio to memcpy's GB/s.
//!
//! Usage: inject_bench [MiB per buffer (64)] [BER (1e-5)] [repetitions (15)]

use approxnet_phy::approx_types::{transmit, DType, PlaneLayout};
use approxnet_phy::inject::BitErrors;
use std::hint::black_box;
use std::time::Instant;

/// The best of `reps` timings of `f` in seconds.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let mib = arg(1, 64.0) as usize;
    let ber = arg(2, 1e-5);
    let reps = arg(3, 15.0) as usize;
    let len = mib << 20;
    let src: Vec<u8> = (0..len).map(|i| (i * 131 % 251) as u8).collect();
    let mut dst = vec![0u8; len];
    let gb = len as f64 / 1e9;

    let memcpy = best(reps, || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    let mut inj = BitErrors::new(ber, 1).expect("BER in [0, 1]");
    let mut flips = 0;
    let inject = best(reps, || {
        flips = inj.apply(black_box(&mut dst), 0);
        black_box(&mut dst);
    });
    let copy_inject = best(reps, || {
        dst.copy_from_slice(black_box(&src));
        inj.apply(&mut dst, 0);
        black_box(&mut dst);
    });
    let layout = PlaneLayout::new(DType::F64, 16).expect("level 16 fits f64");
    let mut seed = 0;
    let through_layout = best(reps.min(5), || {
        seed += 1;
        transmit(&layout, black_box(&mut dst), ber, 0.0, seed).expect("whole f64s");
    });
    let mut planes = vec![0u8; len];
    let to_planes = best(reps.min(5), || {
        layout
            .to_planes(black_box(&dst), &mut planes)
            .expect("whole f64s");
    });
    let from_planes = best(reps.min(5), || {
        layout
            .from_planes(black_box(&planes), &mut dst)
            .expect("whole f64s");
    });
    let m = gb / memcpy;
    println!("buffer {mib} MiB, BER {ber:e}, best of {reps}; flips per pass ~{flips}");
    println!("memcpy                         {m:8.2} GB/s  ratio 1.00");
    for (name, t) in [
        ("inject (in place)", inject),
        ("memcpy + inject", copy_inject),
        ("f64 level 16: to_planes", to_planes),
        ("f64 level 16: from_planes", from_planes),
        ("f64 level 16: layout+inject+back", through_layout),
    ] {
        println!("{name:<32} {:8.2} GB/s  ratio {:.2}", gb / t, memcpy / t);
    }
}
