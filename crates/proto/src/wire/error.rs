use thiserror::Error;

/// Why a datagram could not be parsed. Every variant is a counted drop reason
/// at the receiver, never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WireError {
    /// Fewer bytes than the fixed header or the declared body needs.
    #[error("datagram truncated: {have} bytes, need {need}")]
    Truncated {
        /// Bytes present.
        have: usize,
        /// Bytes required.
        need: usize,
    },
    /// The header's body-length field disagrees with the datagram length.
    #[error("length field says {claimed} body bytes, datagram carries {actual}")]
    LengthMismatch {
        /// Body length in the header.
        claimed: usize,
        /// Body bytes actually present.
        actual: usize,
    },
    /// A version this implementation does not speak.
    #[error("unsupported wire version {0}")]
    BadVersion(u8),
    /// The CRC32C over header and precise prefix did not match.
    #[error("checksum mismatch over header and precise prefix")]
    BadChecksum,
    /// A field holds a value the format forbids (named in the message).
    #[error("malformed field: {0}")]
    Malformed(&'static str),
}
