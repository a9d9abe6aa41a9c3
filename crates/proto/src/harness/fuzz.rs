//! The fuzzing entry point, shared by the libFuzzer target
//! (`crates/proto/fuzz`, nightly) and the stable-toolchain mutation run
//! (`examples/fuzz_datagram.rs`, `benches/fuzz/run.sh`): arbitrary bytes go
//! to every parser and to a live endpoint pair (an established connection
//! with a job in progress), raw and with a valid checksum so that they
//! reach the state machines. Nothing may panic.

use super::{LinkConfig, Pair, CLIENT_ADDR, SERVER_ADDR};
use crate::config::Config;
use crate::endpoint::Endpoint;
use crate::job::JobSpec;
use crate::time::{Duration, Instant};
use crate::wire::{AckRepr, HeaderRepr, JobRepr, Packet};

/// Feeds `data` to the parsers and to a live pair; panics only on a bug.
pub fn datagram(data: &[u8]) {
    let _ = AckRepr::parse(data);
    let _ = JobRepr::parse(data);
    if let Ok(p) = Packet::new_checked(data) {
        let _ = HeaderRepr::parse(&p);
    }
    let mut pair = Pair::symmetric(Config::default(), LinkConfig::default(), 1);
    let Ok(h) = pair.client.connect(pair.now, SERVER_ADDR) else {
        return;
    };
    if let Ok(spec) = JobSpec::uniform(0.5, &[3000; 4]) {
        let _ = pair.client.send_job(pair.now, h, spec);
    }
    pair.run_until(Duration::from_micros(60), |_| false);
    pair.server.handle_datagram(pair.now, CLIENT_ADDR, data);
    let mut fixed = data.to_vec();
    if let Ok(mut p) = Packet::new_checked(&mut fixed[..]) {
        p.fill_checksum();
    }
    pair.server.handle_datagram(pair.now, CLIENT_ADDR, &fixed);
    pair.client.handle_datagram(pair.now, SERVER_ADDR, &fixed);
    pair.run_until(Duration::from_millis(2), |_| false);
}

/// Valid datagrams of a real exchange (HELLO, HELLO_ACK, JOB, DATA, ACK,
/// FIN, FIN_ACK, ...): the seeds a mutation run starts from.
pub fn seed_corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let cfg = Config::default();
    let (Ok(mut a), Ok(mut b)) = (Endpoint::new(cfg, 1), Endpoint::new(cfg, 2)) else {
        return out;
    };
    let mut now = Instant::ZERO;
    let Ok(h) = a.connect(now, SERVER_ADDR) else {
        return out;
    };
    let spec = JobSpec::uniform(0.5, &[100, 3000, 50, 2000, 20, 20, 20]).expect("valid MSR");
    let _ = a.send_job(now, h, spec);
    let mut buf = vec![0u8; 2048];
    for _ in 0..64 {
        while let Some(t) = a.poll_transmit(now, &mut buf) {
            out.push(buf[..t.len].to_vec());
            b.handle_datagram(now, CLIENT_ADDR, &buf[..t.len]);
        }
        while let Some(t) = b.poll_transmit(now, &mut buf) {
            out.push(buf[..t.len].to_vec());
            a.handle_datagram(now, SERVER_ADDR, &buf[..t.len]);
        }
        match [a.poll_timeout(), b.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
        {
            Some(t) => now = now.max(t),
            None => break,
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    out.truncate(256);
    out
}

#[cfg(test)]
mod tests {
    use crate::wire::{Packet, PacketType};

    #[test]
    fn the_seed_corpus_spans_the_exchange_and_feeds_cleanly() {
        let c = super::seed_corpus();
        let mut types: Vec<PacketType> = c
            .iter()
            .filter_map(|d| Packet::new_checked(&d[..]).ok().map(|p| p.packet_type()))
            .collect();
        types.dedup();
        for t in [
            PacketType::Hello,
            PacketType::HelloAck,
            PacketType::Job,
            PacketType::Data,
            PacketType::Ack,
        ] {
            assert!(types.contains(&t), "{t:?} missing from {types:?}");
        }
        for d in &c {
            super::datagram(d);
        }
    }
}
