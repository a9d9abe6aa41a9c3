//! Schedulers: pick which queue of a port sends next. Nothing else.

use super::queue::Queue;

/// A port's queue scheduler.
#[derive(Clone, Debug, PartialEq)]
pub enum Scheduler {
    /// Lowest-numbered non-empty queue first (queue 0 = highest priority).
    Strict,
    /// Deficit round robin (a WFQ approximation): queue `i` gets
    /// `quantum[i]` bytes of credit per round (boxed: a port's scheduler
    /// sits on its hot cache line, and strict priority needs only the tag).
    Drr(Box<Drr>),
}

/// Deficit round robin state.
#[derive(Clone, Debug, PartialEq)]
pub struct Drr {
    quantum: Vec<u64>,
    deficit: Vec<u64>,
    cur: usize,
    fresh: bool,
}

impl Drr {
    /// DRR with per-queue weights; one unit of weight is `base_quantum` bytes
    /// per round (use at least one MTU so every round sends something).
    pub fn new(weights: &[f64], base_quantum: u64) -> Drr {
        let quantum = weights
            .iter()
            .map(|w| ((w * base_quantum as f64).round() as u64).max(1))
            .collect::<Vec<_>>();
        Drr {
            deficit: vec![0; quantum.len()],
            quantum,
            cur: 0,
            fresh: true,
        }
    }
}

impl Scheduler {
    /// The queue to serve next, or `None` when all are empty.
    pub fn pick(&mut self, queues: &[Queue]) -> Option<usize> {
        match self {
            Scheduler::Strict => queues.iter().position(|q| !q.is_empty()),
            Scheduler::Drr(d) => {
                if queues.iter().all(|q| q.is_empty()) {
                    return None;
                }
                let n = queues.len().min(d.quantum.len());
                loop {
                    let q = d.cur;
                    let Some(head) = queues[q].head_size() else {
                        d.deficit[q] = 0;
                        d.cur = (q + 1) % n;
                        d.fresh = true;
                        continue;
                    };
                    if d.fresh {
                        d.deficit[q] += d.quantum[q];
                        d.fresh = false;
                    }
                    if d.deficit[q] >= head as u64 {
                        d.deficit[q] -= head as u64;
                        return Some(q);
                    }
                    d.cur = (q + 1) % n;
                    d.fresh = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::queue::{Entry, QueueConfig};

    fn filled(n: usize) -> Vec<Queue> {
        let mut qs: Vec<Queue> = (0..n).map(|_| Queue::new(QueueConfig::default())).collect();
        for (qi, q) in qs.iter_mut().enumerate() {
            for i in 0..1000 {
                let id = (qi * 1000 + i) as u32;
                q.admit(
                    Entry {
                        id,
                        size: 1500,
                        rank: 0,
                        flow: qi as u32,
                        droppable: false,
                        queue: qi as u8,
                    },
                    u64::MAX,
                );
            }
        }
        qs
    }

    #[test]
    fn strict_priority_serves_queue_zero_first() {
        let mut qs = filled(3);
        let mut s = Scheduler::Strict;
        for _ in 0..1000 {
            let q = s.pick(&qs).unwrap();
            assert_eq!(q, 0);
            qs[q].pop();
        }
        assert_eq!(s.pick(&qs), Some(1));
    }

    #[test]
    fn drr_shares_by_weight() {
        let mut qs = filled(3);
        let mut s = Scheduler::Drr(Box::new(Drr::new(&[1.0, 2.0, 1.0], 1500)));
        let mut served = [0u32; 3];
        for _ in 0..400 {
            let q = s.pick(&qs).unwrap();
            qs[q].pop();
            served[q] += 1;
        }
        assert_eq!(served, [100, 200, 100]);
    }
}
