//! A bounded, seeded mutation fuzz run of the datagram entry point on the
//! stable toolchain (no libFuzzer, no coverage feedback): valid datagrams of
//! a real exchange are mutated (bit flips, byte sets, truncation,
//! duplication of a range, splices of two seeds, random bytes) and fed to
//! `harness::fuzz::datagram`, which panics on a bug.
//!
//! `cargo run --release -p approxnet-proto --example fuzz_datagram -- [SECONDS] [SEED]`
//! (defaults 30 s, seed 1). Prints runs, runs per second and the corpus size.

use approxnet_proto::harness::fuzz;
use approxnet_proto::rng::Rng;
use std::time::{Duration, Instant};

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut d = corpus[rng.below(corpus.len() as u64) as usize].clone();
    for _ in 0..=rng.below(4) {
        let n = d.len().max(1) as u64;
        match rng.below(6) {
            0 if !d.is_empty() => {
                let i = rng.below(n) as usize;
                d[i] ^= 1 << rng.below(8);
            }
            1 if !d.is_empty() => {
                let i = rng.below(n) as usize;
                d[i] = rng.next_u64() as u8;
            }
            2 => d.truncate(rng.below(n + 1) as usize),
            3 if !d.is_empty() => {
                let a = rng.below(n) as usize;
                let b = (a + 1 + rng.below(16) as usize).min(d.len());
                let piece = d[a..b].to_vec();
                let at = rng.below(d.len() as u64 + 1) as usize;
                d.splice(at..at, piece);
            }
            4 => {
                let other = &corpus[rng.below(corpus.len() as u64) as usize];
                let cut = rng.below(other.len() as u64 + 1) as usize;
                let keep = rng.below(d.len() as u64 + 1) as usize;
                d.truncate(keep);
                d.extend_from_slice(&other[cut..]);
            }
            _ => {
                let len = rng.below(1600) as usize;
                d = (0..len).map(|_| rng.next_u64() as u8).collect();
            }
        }
    }
    d
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = match args.first().map(|s| s.parse()) {
        None => 30.0,
        Some(Ok(x)) if x > 0.0 => x,
        _ => {
            eprintln!("usage: fuzz_datagram [SECONDS > 0] [SEED]");
            std::process::exit(2);
        }
    };
    let seed: u64 = match args.get(1).map(|s| s.parse()) {
        None => 1,
        Some(Ok(x)) => x,
        Some(Err(_)) => {
            eprintln!("usage: fuzz_datagram [SECONDS > 0] [SEED]");
            std::process::exit(2);
        }
    };
    let corpus = fuzz::seed_corpus();
    let mut rng = Rng::new(seed);
    let start = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    let mut runs = 0u64;
    for d in &corpus {
        fuzz::datagram(d);
        runs += 1;
    }
    while start.elapsed() < limit {
        let d = mutate(&mut rng, &corpus);
        fuzz::datagram(&d);
        runs += 1;
    }
    let t = start.elapsed().as_secs_f64();
    println!(
        "fuzz_datagram: {runs} runs in {t:.1} s ({:.0}/s), seed {seed}, corpus {} datagrams, no panic",
        runs as f64 / t,
        corpus.len()
    );
}
