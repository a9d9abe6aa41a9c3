//! Feeds arbitrary bytes to every parser and to a live endpoint (one with an
//! established connection and a job in progress): nothing may panic.
//!
//! Run: `cd crates/proto/fuzz && cargo +nightly fuzz run datagram -- -max_total_time=60`
#![no_main]

use approxnet_proto::harness::{LinkConfig, Pair, CLIENT_ADDR, SERVER_ADDR};
use approxnet_proto::time::Duration;
use approxnet_proto::wire::{AckRepr, HeaderRepr, JobRepr, Packet};
use approxnet_proto::{Config, JobSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = AckRepr::parse(data);
    let _ = JobRepr::parse(data);
    if let Ok(p) = Packet::new_checked(data) {
        let _ = HeaderRepr::parse(&p);
    }
    let mut pair = Pair::symmetric(Config::default(), LinkConfig::default(), 1);
    let h = pair.client.connect(pair.now, SERVER_ADDR).unwrap();
    pair.client
        .send_job(pair.now, h, JobSpec::uniform(0.5, &[3000; 4]).unwrap())
        .unwrap();
    pair.run_until(Duration::from_micros(60), |_| false);
    // Raw bytes, and the same bytes with a valid checksum so they reach the state machine.
    pair.server.handle_datagram(pair.now, CLIENT_ADDR, data);
    let mut fixed = data.to_vec();
    if let Ok(mut p) = Packet::new_checked(&mut fixed[..]) {
        p.fill_checksum();
    }
    pair.server.handle_datagram(pair.now, CLIENT_ADDR, &fixed);
    pair.client.handle_datagram(pair.now, SERVER_ADDR, &fixed);
    pair.run_until(Duration::from_millis(2), |_| false);
});
