//! Bodies of the handshake and teardown packets.
//!
//! HELLO and HELLO_ACK carry one 64-bit nonce (the client's, echoed).
//! FIN and FIN_ACK have an empty body. RESET carries one reason byte.

use super::{get_u64, put_u64, WireError};

/// HELLO / HELLO_ACK body: the client's nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelloRepr {
    /// Random value chosen by the client; the server echoes it so the
    /// client accepts only an answer to its own HELLO.
    pub nonce: u64,
}

impl HelloRepr {
    /// Body length.
    pub const LEN: usize = 8;
    /// Parses the body.
    pub fn parse(body: &[u8]) -> Result<HelloRepr, WireError> {
        if body.len() != Self::LEN {
            return Err(WireError::LengthMismatch {
                claimed: Self::LEN,
                actual: body.len(),
            });
        }
        Ok(HelloRepr {
            nonce: get_u64(body, 0),
        })
    }
    /// Writes the body.
    pub fn emit(&self, buf: &mut [u8]) {
        put_u64(buf, 0, self.nonce);
    }
}

/// FIN / FIN_ACK body (empty); the job id and close flag live in the header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FinRepr;

impl FinRepr {
    /// Parses the (empty) body.
    pub fn parse(body: &[u8]) -> Result<FinRepr, WireError> {
        if !body.is_empty() {
            return Err(WireError::Malformed("FIN carries no body"));
        }
        Ok(FinRepr)
    }
}

/// Why a RESET was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetReason {
    /// The peer closed or forgot the connection.
    NoConnection,
    /// The peer refused a job (caps exceeded or malformed).
    JobRefused,
    /// The application aborted.
    Aborted,
    /// A code this version does not know.
    Unknown(u8),
}

impl ResetReason {
    /// Body length.
    pub const LEN: usize = 1;
    /// Parses the body.
    pub fn parse(body: &[u8]) -> Result<ResetReason, WireError> {
        if body.len() != Self::LEN {
            return Err(WireError::LengthMismatch {
                claimed: Self::LEN,
                actual: body.len(),
            });
        }
        Ok(match body[0] {
            1 => ResetReason::NoConnection,
            2 => ResetReason::JobRefused,
            3 => ResetReason::Aborted,
            x => ResetReason::Unknown(x),
        })
    }
    /// The code byte.
    pub fn code(self) -> u8 {
        match self {
            ResetReason::NoConnection => 1,
            ResetReason::JobRefused => 2,
            ResetReason::Aborted => 3,
            ResetReason::Unknown(x) => x,
        }
    }
}
