//! The event kinds and their 64-bit packing ([`Ev`], [`Packed`]): a 4-bit
//! tag and two fields, so that one cache line of the wheel holds seven
//! events.

use crate::packet::PktId;

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// An egress port finished serialising its current packet.
    TxDone {
        /// Port index.
        port: u32,
    },
    /// A packet reached the far end of a link.
    Arrive {
        /// Node it arrives at.
        node: u32,
        /// The packet.
        pkt: PktId,
    },
    /// A native flow's timer (RTO) may have expired.
    FlowTimer {
        /// Flow slot.
        flow: u32,
        /// The slot's generation when it was scheduled (28 bits; see
        /// `engine::slots`): a timer of a flow whose slot was freed since
        /// is stale.
        gen: u32,
    },
    /// A host's sans-IO endpoint asked to be woken.
    EndpointTimer {
        /// Host index.
        host: u32,
    },
    /// A job's messages become ready at its sender.
    JobStart {
        /// Job index.
        job: u32,
    },
    /// The application produces a job's next messages (those due by now).
    Produce {
        /// Job index.
        job: u32,
    },
    /// A receiving host's Aeolus credit pacer sends its next credit.
    Credit {
        /// Host index.
        host: u32,
    },
    /// Take a queue-length sample.
    Sample,
    /// A training job's compute phase ends.
    TrainingCompute {
        /// Training index.
        id: u32,
    },
    /// A follower class changes its switch queue (see `engine::follow`).
    QueueShift {
        /// Index of the follow rule.
        follow: u32,
        /// One queue up (true) or join the leader's queue (false).
        up: bool,
    },
}

/// Largest node id an [`Ev::Arrive`] can carry (28 bits; the scenario caps
/// networks at 2^20 hosts and 2^14 switches).
pub const MAX_NODE: u32 = (1 << 28) - 1;

impl Ev {
    /// The event in 64 bits: a 4-bit tag, a 32-bit and a 28-bit field, so
    /// that a cache line of the wheel holds seven events.
    #[inline(always)]
    pub(super) fn pack(self) -> u64 {
        let (tag, a, b): (u64, u32, u32) = match self {
            Ev::TxDone { port } => (0, port, 0),
            Ev::Arrive { node, pkt } => {
                // the simulator checks its ports' peers once when it is
                // built (`Simulator::new`), not on every hop
                debug_assert!(node <= MAX_NODE, "node id {node} over {MAX_NODE}");
                (1, pkt, node)
            }
            Ev::FlowTimer { flow, gen } => (2, flow, gen & MAX_NODE),
            Ev::EndpointTimer { host } => (3, host, 0),
            Ev::JobStart { job } => (4, job, 0),
            Ev::Produce { job } => (5, job, 0),
            Ev::Credit { host } => (6, host, 0),
            Ev::Sample => (7, 0, 0),
            Ev::TrainingCompute { id } => (8, id, 0),
            Ev::QueueShift { follow, up } => (9, follow, u32::from(up)),
        };
        tag | (a as u64) << 4 | (b as u64) << 36
    }

    /// The inverse of [`Ev::pack`].
    #[inline]
    pub(super) fn unpack(x: u64) -> Ev {
        let a = (x >> 4) as u32;
        let b = (x >> 36) as u32;
        match x & 15 {
            0 => Ev::TxDone { port: a },
            1 => Ev::Arrive { node: b, pkt: a },
            2 => Ev::FlowTimer { flow: a, gen: b },
            3 => Ev::EndpointTimer { host: a },
            4 => Ev::JobStart { job: a },
            5 => Ev::Produce { job: a },
            6 => Ev::Credit { host: a },
            7 => Ev::Sample,
            8 => Ev::TrainingCompute { id: a },
            _ => Ev::QueueShift {
                follow: a,
                up: b != 0,
            },
        }
    }
}

/// An event as the list keeps it ([`Ev`] in 64 bits): the loop decodes
/// the two kinds of every hop ([`Ev::TxDone`], [`Ev::Arrive`]) straight
/// from it with one branch on the tag, where unpacking into an [`Ev`] and
/// then matching it cost two (~13 instructions an event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed(pub(super) u64);

impl Packed {
    /// Tag of [`Ev::TxDone`]; [`Packed::a`] is the port.
    pub const TX_DONE: u64 = 0;
    /// Tag of [`Ev::Arrive`]; [`Packed::a`] is the packet, [`Packed::b`]
    /// the node.
    pub const ARRIVE: u64 = 1;

    /// The event's kind (one of the constants above, or another kind).
    #[inline(always)]
    pub fn tag(self) -> u64 {
        self.0 & 15
    }

    /// The 32-bit field.
    #[inline(always)]
    pub fn a(self) -> u32 {
        (self.0 >> 4) as u32
    }

    /// The 28-bit field.
    #[inline(always)]
    pub fn b(self) -> u32 {
        (self.0 >> 36) as u32
    }

    /// The event.
    #[inline(always)]
    pub fn ev(self) -> Ev {
        Ev::unpack(self.0)
    }
}
