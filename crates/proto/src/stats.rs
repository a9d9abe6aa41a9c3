//! Counters of dropped input, by reason: the receiver's record of what it
//! refused to trust.

/// Why an incoming datagram was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// Failed to parse (short, lying length, bad version, bad field).
    Malformed,
    /// CRC over header + precise prefix mismatched.
    BadChecksum,
    /// Approximate region damaged and the receiver is strict.
    DamagedApproximate,
    /// Connection id not known here (and not a valid cookie).
    UnknownConnection,
    /// Came from an address other than the connection's peer.
    WrongPeer,
    /// An answer nobody asked for (e.g. HELLO_ACK with a foreign nonce).
    Unexpected,
    /// DATA for a job never announced (or already finished long ago).
    UnknownJob,
    /// Group, message, packet or element index outside what the job announced.
    OutOfRange,
    /// Disagrees with what earlier packets of the same message said.
    Inconsistent,
    /// Epoch far behind the newest seen from this peer.
    StaleEpoch,
    /// Accepting it would exceed a cap.
    CapExceeded,
    /// A packet type this endpoint does not handle.
    UnknownType,
}

impl DropReason {
    /// Every reason, for reports.
    pub const ALL: [DropReason; 12] = [
        DropReason::Malformed,
        DropReason::BadChecksum,
        DropReason::DamagedApproximate,
        DropReason::UnknownConnection,
        DropReason::WrongPeer,
        DropReason::Unexpected,
        DropReason::UnknownJob,
        DropReason::OutOfRange,
        DropReason::Inconsistent,
        DropReason::StaleEpoch,
        DropReason::CapExceeded,
        DropReason::UnknownType,
    ];
    fn index(self) -> usize {
        DropReason::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }
}

/// Endpoint-wide counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    drops: [u64; 12],
    /// The sum of `drops`, kept as they count: the endpoint compares it
    /// around every datagram it hands a connection.
    drops_total: u64,
    /// Datagrams accepted.
    pub accepted: u64,
    /// Datagrams emitted.
    pub transmitted: u64,
    /// Unproven connections evicted to make room for new ones (the table
    /// was full).
    pub evicted: u64,
}

impl EndpointStats {
    /// Counts one drop.
    pub fn drop(&mut self, r: DropReason) {
        self.drops[r.index()] += 1;
        self.drops_total += 1;
    }
    /// Drops counted for `r`.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.drops[r.index()]
    }
    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.drops_total
    }
}
