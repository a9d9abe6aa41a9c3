//! The receiving half of a connection: announced jobs, message reassembly,
//! in-order delivery for reliable groups, tensor assembly, and the sequence
//! ranges ACKs report. Everything a peer can make it hold is counted against
//! [`crate::Limits`].
//!
//! The parts: [`jobs`] (announced jobs, from JOB to FIN),
//! [`reassembly`] (DATA packets into messages, delivered in order where the
//! group is reliable, or into a tensor), [`bundle`] (BUNDLE packets) and
//! [`seq_tracker`] (the sequence ranges ACKs report); here, the state they
//! share: jobs, groups, partial and held messages.

mod bundle;
mod jobs;
mod reassembly;
mod seq_tracker;

pub(crate) use seq_tracker::SeqTracker;

use crate::bitset::BitSet;
use crate::stats::DropReason;
use crate::tensor::TensorAssembly;
use crate::time::Instant;
use std::collections::{BTreeMap, VecDeque};

/// Book-keeping bytes charged per stored packet on top of its payload.
const PER_PACKET_OVERHEAD: usize = 64;
/// An epoch this far behind the newest seen is stale.
pub(crate) const STALE_EPOCHS: u16 = 64;

#[derive(Debug, Default)]
struct Partial {
    /// The packets arrived, by index.
    arrived: crate::bitset::BitSet,
    /// Their payloads, by index, where payloads are kept; empty otherwise
    /// (a vector of empty slots per message was allocated, filled and
    /// dropped for nothing: issue 19).
    got: Vec<Vec<u8>>,
    got_count: u16,
    /// Per packet: (precise bytes, body bytes).
    shares: Vec<(u32, u32)>,
    damaged: bool,
    unchecked: bool,
    charged: usize,
}

/// A complete message of a reliable group waiting for its predecessors.
#[derive(Debug)]
struct Held {
    payload: Vec<u8>,
    precise: usize,
    damaged: bool,
    unchecked: bool,
}

#[derive(Debug)]
struct RecvGroup {
    id: u16,
    messages: u32,
    must: u32,
    delivered: u32,
    done: BitSet,
    partial: BTreeMap<u32, Partial>,
    next_in_order: u32,
    held: BTreeMap<u32, Held>,
}

impl RecvGroup {
    fn reliable(&self) -> bool {
        self.must == self.messages
    }
}

#[derive(Debug)]
struct RecvJob {
    id: u32,
    groups: Vec<RecvGroup>,
    tensor: Option<TensorAssembly>,
    tensor_ready: bool,
    /// Every group holds `ceil(MSR * N)` (told to the sender in ACKs).
    satisfied: bool,
    started: Instant,
    /// When its JOB or a DATA packet last arrived: a job silent for the
    /// idle timeout is dropped (state a peer made us hold is bounded in time).
    last_seen: Instant,
    packets: u64,
    bytes: u64,
}

/// The receiving side of one connection.
#[derive(Debug, Default)]
pub(crate) struct RecvSide {
    jobs: Vec<RecvJob>,
    recent_done: VecDeque<u32>,
    buffered: usize,
    pub(crate) seqs: SeqTracker,
    pub(crate) ce_count: u32,
    pub(crate) recv_count: u32,
    newest_epoch: Option<u16>,
}

/// What the connection should do after a DATA packet was handled.
pub(crate) enum DataVerdict {
    /// Accepted (possibly a duplicate): acknowledge it.
    Ack,
    /// Belongs to a job already finished: acknowledge, nothing else.
    Late,
    /// Refused: count the reason, send nothing.
    Drop(DropReason),
}

impl RecvSide {
    /// Checks the epoch against the newest seen (wrapping arithmetic).
    pub(crate) fn epoch_ok(&mut self, e: u16) -> bool {
        match self.newest_epoch {
            None => {
                self.newest_epoch = Some(e);
                true
            }
            Some(n) => {
                let behind = n.wrapping_sub(e);
                if behind == 0 || behind >= 1 << 15 {
                    self.newest_epoch = Some(e);
                    true
                } else {
                    behind <= STALE_EPOCHS
                }
            }
        }
    }

    /// Bytes currently charged against the buffer cap.
    pub(crate) fn buffered(&self) -> usize {
        self.buffered
    }

    /// Whether a peer's job is open here (state held for it).
    pub(crate) fn has_jobs(&self) -> bool {
        !self.jobs.is_empty()
    }

    /// Fails every open job (connection gone).
    pub(crate) fn fail_all(&mut self) -> Vec<u32> {
        let ids = self.jobs.iter().map(|j| j.id).collect();
        self.jobs.clear();
        self.buffered = 0;
        ids
    }
}
