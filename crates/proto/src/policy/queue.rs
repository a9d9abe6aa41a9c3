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

/// Slack-based priority from eq. 1's TLR, but never *below* the queue the
/// group's MSR earned (`1 - MSR` under the same thresholds): the queue may
/// rise toward priority when losses eat the slack (Fig. 10's moves), it
/// never sinks because the group lost less than its budget.
///
/// Why (a deviation from seed 000 §5.2, [`QueueRule::MsrBounded`]): eq. 1
/// spreads the unspent slack over the messages still unsent,
/// `((1 - MSR) N - lost) / (N - delivered)`, which tends to 1 for a
/// loss-free group as `delivered` nears `MSR N`. A job that stops at
/// `ceil(MSR N)` (§3.3.2, as ES stops) never sends most of those
/// messages, so that slack is never spent; read as a queue choice it moves
/// a light, loss-free job *down* into the lossy queues of jobs with more
/// slack (Fig. 14's FBKV under FBHD: 8,278 epochs in queue 1, 37,227 in
/// queues 2-7), against §5.1's insight that jobs with little slack get
/// higher priority. Equivalent to choosing the queue from
/// `min(TLR, 1 - MSR)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsrBoundedQueue;

impl QueueSelector for MsrBoundedQueue {
    fn queue(&self, reliable: bool, tlr0: f64, tlr: f64, queues: u8) -> u8 {
        if reliable {
            0
        } else {
            slack_queue(tlr.min(tlr0), queues)
        }
    }
}

/// How the dynamic queue selectors (ATP FixTLR and Full) read the TLR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueRule {
    /// Seed 000 §5.2 as written: the queue follows eq. 1's TLR up and down
    /// ([`SlackQueue`]).
    Eq1,
    /// The default: the queue follows eq. 1's TLR but never sinks below the
    /// MSR's own queue ([`MsrBoundedQueue`]; our deviation, see there).
    #[default]
    MsrBounded,
}

impl QueueRule {
    /// Every rule.
    pub const ALL: [QueueRule; 2] = [QueueRule::Eq1, QueueRule::MsrBounded];

    /// The rule's name in configuration files (`eq1`, `msr-bounded`).
    pub fn name(self) -> &'static str {
        match self {
            QueueRule::Eq1 => "eq1",
            QueueRule::MsrBounded => "msr-bounded",
        }
    }

    /// The rule called `name` exactly, if any.
    pub fn from_name(name: &str) -> Option<QueueRule> {
        QueueRule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The dynamic selector this rule stands for.
    pub(crate) fn selector(self) -> Box<dyn QueueSelector> {
        match self {
            QueueRule::Eq1 => Box::new(SlackQueue),
            QueueRule::MsrBounded => Box::new(MsrBoundedQueue),
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

    #[test]
    fn a_loss_free_group_near_its_msr_keeps_its_queue() {
        use crate::policy::{DynamicTlr, GroupProgress, TlrSource};
        // Fig. 14's FBKV job: N = 50, MSR 0.875 (TLR_0 = 0.125 -> queue 1),
        // 43 of its 44 required messages delivered, nothing lost.
        let g = GroupProgress {
            msr: 0.875,
            messages: 50,
            delivered: 43,
            lost: 0,
        };
        let tlr0 = 1.0 - g.msr;
        let tlr = DynamicTlr.tlr(&g); // 6.25 / 7 ~ 0.89
        assert!(tlr > 0.85, "{tlr}");
        assert_eq!(SlackQueue.queue(false, tlr0, tlr, 8), 7); // eq. 1: the lossiest queue
        assert_eq!(MsrBoundedQueue.queue(false, tlr0, tlr, 8), 1); // stays in queue 1
                                                                   // Losses beyond the budget still move a group up (Fig. 10): MSR 0.5
                                                                   // starts in queue 4 and rises to 2 as eq. 1's TLR falls to 0.3.
        let lossy = GroupProgress {
            msr: 0.5,
            messages: 100,
            delivered: 20,
            lost: 26,
        };
        let t = DynamicTlr.tlr(&lossy); // 24 / 80 = 0.3
        assert_eq!(MsrBoundedQueue.queue(false, 0.5, 0.5, 8), 4);
        assert_eq!(MsrBoundedQueue.queue(false, 0.5, t, 8), 2);
        assert_eq!(MsrBoundedQueue.queue(true, 0.0, 1.0, 8), 0);
        for r in QueueRule::ALL {
            assert_eq!(QueueRule::from_name(r.name()), Some(r));
        }
        assert_eq!(QueueRule::from_name("bounded"), None);
    }
}
