//! Per-direction counters, written as JSON for tests and experiments.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What one direction of the link did (monotonic counters).
#[derive(Default)]
pub(crate) struct LinkStats {
    /// Frames read from the sending device.
    pub(crate) frames: AtomicU64,
    /// Their bytes.
    pub(crate) bytes: AtomicU64,
    /// Transmissions on the air (first tries and retries).
    pub(crate) tries: AtomicU64,
    /// Frames that needed at least one retry (integrity mode).
    pub(crate) retried: AtomicU64,
    /// Frames delivered exactly as sent.
    pub(crate) intact: AtomicU64,
    /// Frames delivered with flipped bits (approximate mode).
    pub(crate) damaged: AtomicU64,
    /// Integrity mode: frames dropped after the last retry.
    pub(crate) dropped_retries: AtomicU64,
    /// Approximate mode: frames lost because their IP header was hit.
    pub(crate) dropped_header: AtomicU64,
    /// Frames the receiving device refused (write error).
    pub(crate) dropped_write: AtomicU64,
    /// Bits after the IP header in delivered frames.
    pub(crate) payload_bits: AtomicU64,
    /// Of those, bits delivered flipped.
    pub(crate) flipped_bits: AtomicU64,
    /// Air time booked, nanoseconds.
    pub(crate) airtime_ns: AtomicU64,
}

impl LinkStats {
    /// Adds `n` to `counter`.
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// One JSON object.
    pub(crate) fn json(&self) -> String {
        let fields = [
            ("frames", &self.frames),
            ("bytes", &self.bytes),
            ("tries", &self.tries),
            ("retried", &self.retried),
            ("intact", &self.intact),
            ("damaged", &self.damaged),
            ("dropped_retries", &self.dropped_retries),
            ("dropped_header", &self.dropped_header),
            ("dropped_write", &self.dropped_write),
            ("payload_bits", &self.payload_bits),
            ("flipped_bits", &self.flipped_bits),
            ("airtime_ns", &self.airtime_ns),
        ];
        let map: serde_json::Map<String, serde_json::Value> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.load(Relaxed).into()))
            .collect();
        serde_json::Value::Object(map).to_string()
    }
}
