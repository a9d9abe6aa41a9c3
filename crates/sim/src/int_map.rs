//! A hash map for the simulator's integer keys (jobs, hosts, flows).

use std::collections::HashMap;

/// A fast, deterministic hasher for the simulator's integer keys (SipHash's
/// DoS resistance buys nothing inside a simulator and cost ~8 % of an ATP run).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IntHasher(u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        let z = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z ^ (z >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A hash map over [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IntHasher>>;
