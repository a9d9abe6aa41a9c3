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

/// The per-queue buffer limits of one switch egress port under seed 000
/// §5.2: queue `q` in `1..queues` holds `queues - q` frames (the lowest
/// priority one frame, so an approximate queue never builds a standing
/// backlog); queue 0, for non-approximate traffic, holds the rest of
/// `port_buffer`. The one rule the simulator's `netapprox` buffer preset,
/// the testbed's bfifo leaves and the analytics virtual network use.
/// Errors (with the smallest buffer that works) when queue 0 would hold
/// less than one frame.
pub fn netapprox_queue_limits(
    queues: u8,
    frame: u64,
    port_buffer: u64,
) -> Result<Vec<u64>, String> {
    if queues == 0 || frame == 0 {
        return Err(format!("need at least one queue and a frame of at least 1 byte (queues {queues}, frame {frame})"));
    }
    let n = u64::from(queues);
    let approximate: Vec<u64> = (1..n).map(|q| (n - q) * frame).collect();
    let small: u64 = approximate.iter().sum();
    match port_buffer.checked_sub(small) {
        Some(rest) if rest >= frame => Ok(std::iter::once(rest).chain(approximate).collect()),
        _ => Err(format!(
            "{port_buffer} bytes is too small for {queues} queues; need at least {}",
            small + frame
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_limits_of_seed_000() {
        // 8 queues, 1514-byte frames: queues 1..7 hold 7..1 frames.
        let l = netapprox_queue_limits(8, 1514, 200_000).unwrap();
        assert_eq!(l[1..], [7, 6, 5, 4, 3, 2, 1].map(|k| k * 1514));
        assert_eq!(l[0], 200_000 - 28 * 1514);
        assert_eq!(netapprox_queue_limits(1, 1500, 1500).unwrap(), vec![1500]);
        let e = netapprox_queue_limits(8, 1514, 29 * 1514 - 1).unwrap_err();
        assert!(e.contains(&format!("need at least {}", 29 * 1514)), "{e}");
        assert!(netapprox_queue_limits(0, 1514, 1 << 20).is_err());
    }

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
