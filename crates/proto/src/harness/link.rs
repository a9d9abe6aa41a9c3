//! A deterministic lossy one-way link in virtual time: a bottleneck with a
//! byte buffer (tail drop, optional ECN marking), propagation delay, random
//! and bursty (Gilbert-Elliott) loss, reordering, duplication and bit flips,
//! all drawn from one seeded generator.

use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::Rate;
use crate::wire::Packet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Impairments of one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConfig {
    /// One-way propagation delay.
    pub delay: Duration,
    /// Bottleneck rate.
    pub rate: Rate,
    /// Bottleneck buffer in bytes (tail drop when full).
    pub buffer: usize,
    /// Mark CE on packets that find more than this many bytes queued (0 = off).
    pub ecn_threshold: usize,
    /// Independent loss probability per packet.
    pub loss: f64,
    /// Gilbert-Elliott: probability of entering the bad state per packet.
    pub burst_enter: f64,
    /// Gilbert-Elliott: probability of leaving the bad state per packet.
    pub burst_exit: f64,
    /// Loss probability while in the bad state.
    pub burst_loss: f64,
    /// Probability a packet is held back by `reorder_delay`.
    pub reorder: f64,
    /// Extra delay of a reordered packet.
    pub reorder_delay: Duration,
    /// Probability a packet is delivered twice.
    pub duplicate: f64,
    /// Probability a packet gets one random bit flipped.
    pub bit_flip: f64,
    /// Flip bits only past this byte offset (e.g. to hit the payload only).
    pub bit_flip_from: usize,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            delay: Duration::from_micros(10),
            rate: Rate::gbps(10.0),
            buffer: 256 * 1024,
            ecn_threshold: 0,
            loss: 0.0,
            burst_enter: 0.0,
            burst_exit: 1.0,
            burst_loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::from_micros(20),
            duplicate: 0.0,
            bit_flip: 0.0,
            bit_flip_from: 0,
        }
    }
}

/// Counters of what the link did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered.
    pub offered: u64,
    /// Dropped by the full buffer.
    pub buffer_drops: u64,
    /// Dropped by random or bursty loss.
    pub random_drops: u64,
    /// Delivered (duplicates count twice).
    pub delivered: u64,
    /// CE marks set.
    pub ce_marks: u64,
    /// Packets with a flipped bit.
    pub flipped: u64,
}

/// One direction of the virtual wire.
#[derive(Debug)]
pub struct Link {
    cfg: LinkConfig,
    rng: Rng,
    bad: bool,
    busy_until: Instant,
    queue_ends: std::collections::VecDeque<(Instant, usize)>,
    queued: usize,
    arrivals: BinaryHeap<Reverse<(Instant, u64, Vec<u8>)>>,
    seq: u64,
    /// What happened so far.
    pub stats: LinkStats,
}

impl Link {
    /// A link with impairments `cfg`, randomness from `seed`.
    pub fn new(cfg: LinkConfig, seed: u64) -> Link {
        Link {
            cfg,
            rng: Rng::new(seed),
            bad: false,
            busy_until: Instant::ZERO,
            queue_ends: Default::default(),
            queued: 0,
            arrivals: BinaryHeap::new(),
            seq: 0,
            stats: LinkStats::default(),
        }
    }

    /// The impairments in force.
    pub fn config(&self) -> LinkConfig {
        self.cfg
    }

    /// Changes the impairments from now on.
    pub fn set_config(&mut self, cfg: LinkConfig) {
        self.cfg = cfg;
    }

    /// Bytes waiting in the bottleneck buffer at `now`.
    pub fn backlog(&mut self, now: Instant) -> usize {
        while let Some(&(end, len)) = self.queue_ends.front() {
            if end > now {
                break;
            }
            self.queued -= len;
            self.queue_ends.pop_front();
        }
        self.queued
    }

    /// Offers a datagram at `now`.
    pub fn send(&mut self, now: Instant, mut bytes: Vec<u8>) {
        self.stats.offered += 1;
        let backlog = self.backlog(now);
        if backlog + bytes.len() > self.cfg.buffer {
            self.stats.buffer_drops += 1;
            return;
        }
        if self.cfg.burst_enter > 0.0 {
            if self.bad {
                if self.rng.chance(self.cfg.burst_exit) {
                    self.bad = false;
                }
            } else if self.rng.chance(self.cfg.burst_enter) {
                self.bad = true;
            }
        }
        let p = if self.bad {
            self.cfg.burst_loss
        } else {
            self.cfg.loss
        };
        if p > 0.0 && self.rng.chance(p) {
            self.stats.random_drops += 1;
            return;
        }
        if self.cfg.ecn_threshold > 0 && backlog > self.cfg.ecn_threshold {
            if let Ok(mut pk) = Packet::new_checked(&mut bytes[..]) {
                pk.set_ce(true);
                self.stats.ce_marks += 1;
            }
        }
        if self.cfg.bit_flip > 0.0
            && self.rng.chance(self.cfg.bit_flip)
            && bytes.len() > self.cfg.bit_flip_from
        {
            let span = (bytes.len() - self.cfg.bit_flip_from) as u64;
            let at = self.cfg.bit_flip_from + self.rng.below(span) as usize;
            bytes[at] ^= 1 << self.rng.below(8);
            self.stats.flipped += 1;
        }
        let start = self.busy_until.max(now);
        let done = start + self.cfg.rate.time_for(bytes.len());
        self.busy_until = done;
        self.queued += bytes.len();
        self.queue_ends.push_back((done, bytes.len()));
        let mut at = done + self.cfg.delay;
        if self.cfg.reorder > 0.0 && self.rng.chance(self.cfg.reorder) {
            at += self.cfg.reorder_delay;
        }
        if self.cfg.duplicate > 0.0 && self.rng.chance(self.cfg.duplicate) {
            self.push(at + Duration::from_nanos(1), bytes.clone());
        }
        self.push(at, bytes);
    }

    fn push(&mut self, at: Instant, bytes: Vec<u8>) {
        self.seq += 1;
        self.arrivals.push(Reverse((at, self.seq, bytes)));
    }

    /// When the next datagram comes out of the far end.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.arrivals.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Takes the next datagram if it has arrived by `now`.
    pub fn receive(&mut self, now: Instant) -> Option<Vec<u8>> {
        match self.arrivals.peek() {
            Some(Reverse((t, _, _))) if *t <= now => {
                self.stats.delivered += 1;
                self.arrivals.pop().map(|Reverse((_, _, b))| b)
            }
            _ => None,
        }
    }
}
