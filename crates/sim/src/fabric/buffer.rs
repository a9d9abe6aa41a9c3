//! A switch's shared packet buffer: how much of it one queue may take.
//!
//! Switch ASICs share one memory between all queues of all ports and keep
//! one queue from taking all of it in two ways, both modelled here:
//!
//! * a **reserved minimum** per queue: its first `reserved_bytes` come from
//!   a private carve-out that never counts against the shared pool (the
//!   pool is the switch's buffer minus every queue's reservation);
//! * a **dynamic threshold** (Choudhury & Hahne, "Dynamic queue length
//!   thresholds for shared-memory packet switches", IEEE/ACM ToN 1998):
//!   a queue may take more of the pool only while its share of it is below
//!   `alpha` times the pool still free. With one queue congested it
//!   settles at `alpha / (1 + alpha)` of the pool; the rest stays free for
//!   queues that become busy later.
//!
//! Without a threshold (`alpha` = `None`) the pool is completely shared,
//! first come first served: a queue that is never served (a low-priority
//! queue under strict priority) can fill it and lock every other queue out.

/// How queues draw on a switch's shared buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharingConfig {
    /// Dynamic threshold factor; `None` = complete sharing.
    pub alpha: Option<f64>,
    /// Bytes reserved for each queue of each port, outside the pool.
    pub reserved_bytes: u64,
}

impl Default for SharingConfig {
    /// Complete sharing, nothing reserved (an unlimited host NIC needs
    /// neither).
    fn default() -> Self {
        SharingConfig {
            alpha: None,
            reserved_bytes: 0,
        }
    }
}

/// The shared buffer of one switch.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedBuffer {
    /// Sharing rules.
    pub cfg: SharingConfig,
    /// Bytes of the whole buffer.
    pub total: u64,
    /// Bytes reserved over all queues.
    pub reserved: u64,
    /// Bytes of the pool (the buffer minus every reservation).
    pub pool: u64,
    /// Bytes of the pool in use.
    pub used: u64,
}

impl SharedBuffer {
    /// A buffer of `total` bytes of which `queues` reservations are carved
    /// out (see [`SharedBuffer::overbooked`]).
    pub fn new(total: u64, queues: u64, cfg: SharingConfig) -> SharedBuffer {
        let reserved = queues.saturating_mul(cfg.reserved_bytes);
        SharedBuffer {
            cfg,
            total,
            reserved,
            pool: total.saturating_sub(reserved),
            used: 0,
        }
    }

    /// The reservations alone exceed the buffer.
    pub fn overbooked(&self) -> bool {
        self.reserved > self.total
    }

    /// Part of a queue holding `bytes` that lies in the pool.
    fn in_pool(&self, bytes: u64) -> u64 {
        bytes.saturating_sub(self.cfg.reserved_bytes)
    }

    /// Bytes a queue now holding `queue_bytes` may add: what is left of its
    /// reservation, plus the free pool if its threshold allows.
    pub fn room(&self, queue_bytes: u64) -> u64 {
        let reserve_left = self.cfg.reserved_bytes.saturating_sub(queue_bytes);
        let free = self.pool.saturating_sub(self.used);
        let below_threshold = match self.cfg.alpha {
            None => true,
            Some(a) => (self.in_pool(queue_bytes) as f64) < a * free as f64,
        };
        reserve_left + if below_threshold { free } else { 0 }
    }

    /// A queue went from `before` to `after` bytes.
    pub fn update(&mut self, before: u64, after: u64) {
        self.used = self.used + self.in_pool(after) - self.in_pool(before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;

    #[test]
    fn complete_sharing_lets_one_queue_take_everything() {
        let mut b = SharedBuffer::new(10 * MTU, 2, SharingConfig::default());
        b.update(0, 10 * MTU);
        assert_eq!(b.room(0), 0);
    }

    #[test]
    fn dynamic_threshold_keeps_a_share_free() {
        let cfg = SharingConfig {
            alpha: Some(1.0),
            reserved_bytes: 0,
        };
        let mut b = SharedBuffer::new(100 * MTU, 2, cfg);
        // one queue grows while it is below alpha x free: stops at half
        let mut q = 0;
        while b.room(q) >= MTU {
            b.update(q, q + MTU);
            q += MTU;
        }
        assert_eq!(q, 50 * MTU);
        // an empty queue still gets in
        assert!(b.room(0) >= MTU);
        // draining gives room back
        b.update(q, 0);
        assert_eq!(b.used, 0);
    }

    #[test]
    fn reservation_admits_when_the_pool_is_full() {
        let cfg = SharingConfig {
            alpha: None,
            reserved_bytes: MTU,
        };
        let mut b = SharedBuffer::new(10 * MTU, 4, cfg);
        assert_eq!(b.pool, 6 * MTU);
        // the first queue fills its reserve and the whole pool
        b.update(0, 7 * MTU);
        assert_eq!(b.used, 6 * MTU);
        assert_eq!(b.room(7 * MTU), 0);
        // another queue still has its reserved packet
        assert_eq!(b.room(0), MTU);
        assert!(SharedBuffer::new(10 * MTU, 11, cfg).overbooked());
        assert!(!b.overbooked());
    }
}
