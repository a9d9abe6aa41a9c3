//! Aeolus / ExpressPass, the receiver's credit pacer (simplified).
//!
//! Each receiving host paces credits for its active Aeolus flows: one
//! credit per MTU-sized data packet its link can take, i.e. one credit per
//! serialisation time of a full data packet at the host's link rate,
//! handed round-robin to the flows that want credits. ExpressPass instead
//! sends credits per flow at a rate its credit feedback control adapts to
//! credit losses in the network, with switches rate-limiting credits; here
//! only the receiver's own link is protected (say so where results depend
//! on core congestion).

use std::collections::VecDeque;

/// The credit pacer of one receiving host.
#[derive(Clone, Debug, Default)]
pub struct CreditPacer {
    /// Flows in round-robin order.
    active: VecDeque<u32>,
    /// A credit event is scheduled.
    pub armed: bool,
}

impl CreditPacer {
    /// Flow `flow` wants credits; true if it was not in the round already.
    pub fn activate(&mut self, flow: u32) -> bool {
        if self.active.contains(&flow) {
            return false;
        }
        self.active.push_back(flow);
        true
    }

    /// The next flow to credit, round-robin, among those for which
    /// `wants` still holds (the others leave the round).
    pub fn next(&mut self, mut wants: impl FnMut(u32) -> bool) -> Option<u32> {
        while let Some(f) = self.active.pop_front() {
            if wants(f) {
                self.active.push_back(f);
                return Some(f);
            }
        }
        None
    }

    /// Flows in the round.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// No flow in the round.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_over_flows_that_still_want_credits() {
        let mut p = CreditPacer::default();
        assert!(p.activate(1));
        assert!(p.activate(2));
        assert!(!p.activate(1));
        let order: Vec<u32> = (0..4).filter_map(|_| p.next(|_| true)).collect();
        assert_eq!(order, vec![1, 2, 1, 2]);
        assert_eq!(p.next(|f| f == 2), Some(2));
        assert_eq!(p.len(), 1);
        assert_eq!(p.next(|_| false), None);
        assert!(p.is_empty());
    }
}
