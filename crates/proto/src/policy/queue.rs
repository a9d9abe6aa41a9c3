//! Queue selectors: which switch priority queue a group's packets use
//! (seed 000 §5.2). Queue 0 is the highest priority and is reserved for
//! non-approximate (MSR = 1) traffic.

/// Picks a switch queue from a group's TLR.
pub trait QueueSelector: Send {
    /// Queue for a group whose initial TLR was `tlr0` and current TLR is `tlr`,
    /// with `queues` queues in total. `reliable` groups (MSR = 1) get 0.
    fn queue(&self, reliable: bool, tlr0: f64, tlr: f64, queues: u8) -> u8;
}

/// Slack-based priority: `k = clamp(floor(TLR * Q), 1, Q - 1)` from the
/// current TLR, thresholds evenly spread over [0, 1) (seed 000 §5.2:
/// with 8 queues, ThreshTLR_k = k / 8).
#[derive(Clone, Copy, Debug, Default)]
pub struct SlackQueue;

pub(crate) fn slack_queue(tlr: f64, queues: u8) -> u8 {
    if queues <= 1 {
        return 0;
    }
    let k = (tlr * queues as f64).floor();
    (k.max(1.0) as u64).min(queues as u64 - 1) as u8
}

impl QueueSelector for SlackQueue {
    fn queue(&self, reliable: bool, _tlr0: f64, tlr: f64, queues: u8) -> u8 {
        if reliable {
            0
        } else {
            slack_queue(tlr, queues)
        }
    }
}

/// ATP FixPrio: the queue chosen from the initial TLR (`1 - MSR`) never moves.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedQueue;

impl QueueSelector for FixedQueue {
    fn queue(&self, reliable: bool, tlr0: f64, _tlr: f64, queues: u8) -> u8 {
        if reliable {
            0
        } else {
            slack_queue(tlr0, queues)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_of_seed_000() {
        let q = SlackQueue;
        assert_eq!(q.queue(true, 0.5, 0.5, 8), 0);
        assert_eq!(q.queue(false, 0.5, 0.5, 8), 4); // Fig. 10: TLR 0.5 -> queue 4
        assert_eq!(q.queue(false, 0.5, 0.4, 8), 3);
        assert_eq!(q.queue(false, 0.5, 0.01, 8), 1); // approximate never in queue 0
        assert_eq!(q.queue(false, 0.5, 1.0, 8), 7);
        assert_eq!(FixedQueue.queue(false, 0.5, 0.01, 8), 4);
    }
}
