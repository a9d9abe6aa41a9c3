//! What the endpoint tells the application.

use crate::time::Duration;
use crate::units::Rate;
use std::collections::VecDeque;
use thiserror::Error;

/// Where the receive path puts the events it raises: a connection's own
/// queue, or, on the endpoint's DATA path, the endpoint's queue with the
/// connection's handle, written in place (the 112-byte event is then not
/// moved from the one queue to the other: two copies per delivered message).
pub(crate) trait EventSink {
    /// Queues `e` after the events already queued.
    fn push_back(&mut self, e: Event);
    /// Room for `additional` more events (a burst: one growth, not a
    /// doubling per event).
    fn reserve(&mut self, additional: usize);
}

impl EventSink for VecDeque<Event> {
    #[inline]
    fn push_back(&mut self, e: Event) {
        VecDeque::push_back(self, e);
    }
    fn reserve(&mut self, additional: usize) {
        VecDeque::reserve(self, additional);
    }
}

/// One group's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupReport {
    /// Group id.
    pub id: u16,
    /// Messages in the group.
    pub messages: u32,
    /// Messages that had to arrive: `ceil(MSR * N)`.
    pub must_deliver: u32,
    /// Messages delivered whole.
    pub delivered: u32,
    /// Messages given up on.
    pub abandoned: u32,
}

/// Figures for a finished job (sender or receiver view).
#[derive(Clone, Debug, PartialEq)]
pub struct JobReport {
    /// Job id.
    pub job: u32,
    /// Per-group outcome.
    pub groups: Vec<GroupReport>,
    /// Time from `send_job` (sender) or the JOB packet (receiver) to completion.
    pub jct: Duration,
    /// DATA packets sent (sender) or received (receiver), retransmissions included.
    pub packets: u64,
    /// Retransmitted DATA packets (sender view).
    pub retransmissions: u64,
    /// DATA packets declared lost (sender view).
    pub lost_packets: u64,
    /// Of `lost_packets`, those declared by the retransmission timer (the
    /// rest by reordering-threshold fast detection).
    pub lost_by_timer: u64,
    /// Packets declared lost whose acknowledgement arrived afterwards: the
    /// network delivered them, the sender gave up too early.
    pub spurious_losses: u64,
    /// Tail loss probes sent (sender view; each also counts as a
    /// retransmission).
    pub tail_probes: u64,
    /// Payload bytes of the messages handed to the job (for a streaming
    /// job: those produced before it completed).
    pub bytes: u64,
    /// Sender view: payload bytes of handed-over messages that never left,
    /// because the receiver held `ceil(MSR * N)` of every group first.
    pub unsent_bytes: u64,
}

impl JobReport {
    /// Whether every group met `ceil(MSR * N)`.
    pub fn guarantee_held(&self) -> bool {
        self.groups.iter().all(|g| g.delivered >= g.must_deliver)
    }
    /// Fraction of packets declared lost, `lost / sent`.
    pub fn loss_rate(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.lost_packets as f64 / self.packets as f64
        }
    }
}

/// Why a job could not complete.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum JobFailure {
    /// No packet from the peer within the idle timeout while work was outstanding.
    #[error("peer silent for longer than the idle timeout; gave up")]
    PeerUnresponsive,
    /// The peer reset the connection.
    #[error("peer reset the connection")]
    Reset,
    /// The receiver refused the job before taking it (over one of its
    /// caps: jobs per connection, messages per job, buffered bytes). Only
    /// this job fails; the connection and its other jobs go on.
    #[error("the receiver refused the job (over its limits)")]
    Refused,
    /// The endpoint's connection table was full and this connection, which
    /// had not yet received any DATA, made room for a new one.
    #[error(
        "evicted to make room: the connection table was full and this connection was unproven"
    )]
    Evicted,
    /// The receiver saw FIN before the guarantee was met (a sender bug or attack).
    #[error("job ended with group {group} at {delivered}/{must} messages")]
    GuaranteeMissed {
        /// Group id.
        group: u16,
        /// Delivered.
        delivered: u32,
        /// Required.
        must: u32,
    },
}

/// Whether a job finished with its guarantee.
pub type JobOutcome = Result<JobReport, JobFailure>;

/// Which side of a job an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// This endpoint sent the job.
    Sender,
    /// This endpoint received it.
    Receiver,
}

/// Per-epoch controller state (seed 000 Fig. 10's timeline).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochStats {
    /// Epoch number.
    pub epoch: u64,
    /// Connection TLR used this epoch.
    pub tlr: f64,
    /// Measured loss `rho` of the epoch just ended (0 when `resolved` is 0:
    /// no packet's fate became known, the rate was left as it was).
    pub rho: f64,
    /// Packets whose fate (acknowledged or declared lost) became known
    /// during the epoch: the sample `rho` was measured on.
    pub resolved: u64,
    /// Sending rate for the next epoch.
    pub rate: Rate,
    /// Queue of the first active approximate group (0 if none).
    pub queue: u8,
    /// Epoch length (the smoothed RTT).
    pub length: Duration,
}

/// Something the application should know.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// Client: the handshake finished.
    Connected,
    /// Server: a new peer connection was accepted.
    Accepted,
    /// Receiver: a peer announced a job.
    JobAnnounced {
        /// Job id.
        job: u32,
        /// Total messages.
        messages: u64,
    },
    /// Receiver: a message arrived whole.
    MessageDelivered {
        /// Job id.
        job: u32,
        /// Group id.
        group: u16,
        /// Message id within the group.
        msg: u32,
        /// The bytes (empty when payloads are not kept).
        payload: Vec<u8>,
        /// Length of the checked precise prefix.
        precise_len: usize,
        /// Bytes past the precise prefix failed their approximate checksum.
        damaged: bool,
        /// Bytes past the precise prefix were covered by no checksum at all.
        unchecked: bool,
    },
    /// Receiver: every group of the job holds `ceil(MSR * N)` messages
    /// (sent once); the sender is told in the ACKs and stops.
    JobSatisfied {
        /// Job id.
        job: u32,
    },
    /// Receiver: the sender finished without this message.
    MessageAbandoned {
        /// Job id.
        job: u32,
        /// Group id.
        group: u16,
        /// Message id within the group.
        msg: u32,
    },
    /// Receiver: a tensor job reached its fraction `p` (sent once).
    TensorReady {
        /// Job id.
        job: u32,
        /// Element type of `data`.
        dtype: crate::wire::Dtype,
        /// Little-endian elements, missing ranges zero-filled.
        data: Vec<u8>,
        /// Missing element ranges `[start, end)`.
        missing: Vec<(u32, u32)>,
        /// Fraction of elements received.
        fraction: f64,
    },
    /// A job ended, on either side.
    JobComplete {
        /// Job id.
        job: u32,
        /// Sender or receiver view.
        role: Role,
        /// Figures, or why it failed.
        outcome: JobOutcome,
    },
    /// End of a rate-control epoch (sender).
    Epoch(EpochStats),
    /// The connection is gone.
    ConnectionLost {
        /// Why.
        reason: JobFailure,
    },
}
