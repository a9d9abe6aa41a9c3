//! Packet schedulers: which message the next packet comes from.
//!
//! A scheduler maps a message's state to a sort key; the sender always sends
//! from the message with the smallest key (ties broken by announcement order).

/// What a scheduler knows about a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedKey {
    /// Bytes of the message not yet acknowledged.
    pub remaining_bytes: u64,
    /// Whether the message still has never-sent packets.
    pub has_new: bool,
}

/// Orders sendable messages.
pub trait Scheduler: Send {
    /// Smaller sends first.
    fn key(&self, m: &SchedKey) -> u64;
    /// When a packet is lost and its group may still give a message up,
    /// whether the message given up is the group's open one with the most
    /// packets left unacknowledged (if it has more than the lost packet's
    /// message) rather than the message that lost the packet, whose packet
    /// is then sent again. Default: the message that lost the packet.
    fn gives_up_largest(&self) -> bool {
        false
    }
}

/// Minimal-remaining-data-first (seed 000 §4.3): the message with the least
/// undelivered data goes next, whether its next packet is new or a
/// retransmission.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mrdf;

impl Scheduler for Mrdf {
    fn key(&self, m: &SchedKey) -> u64 {
        m.remaining_bytes
    }
    /// MRDF sends the message with the least data left first and the one
    /// with the most last, so slack that lets one message go is spent on
    /// the latter: a lost packet of a nearly delivered message is sent
    /// again (§4.3: "ATP can choose both un-acknowledged packets and new
    /// packets") instead of throwing away what already arrived.
    fn gives_up_largest(&self) -> bool {
        true
    }
}

/// Announcement order: every new packet before any retransmission (ATP Base:
/// "after sending out all packets, retransmit lost packets"); also the
/// choice for applications that need order.
#[derive(Clone, Copy, Debug, Default)]
pub struct NewFirst;

impl Scheduler for NewFirst {
    fn key(&self, m: &SchedKey) -> u64 {
        u64::from(!m.has_new)
    }
}
