//! Feeds arbitrary bytes to every parser and to a live endpoint (one with an
//! established connection and a job in progress): nothing may panic.
//!
//! Run: `cd crates/proto/fuzz && cargo +nightly fuzz run datagram -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;

// The body lives in the crate (`harness::fuzz::datagram`) so that a stable
// toolchain can run it too (`examples/fuzz_datagram.rs`).
fuzz_target!(|data: &[u8]| approxnet_proto::harness::fuzz::datagram(data));
