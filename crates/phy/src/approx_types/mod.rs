//! Approximate data types (seed 004 §4.2.2, §5.1.2): which bits of an
//! element are protected, and a byte-plane layout that puts the protected
//! bits of every element first, so that a message's precise prefix (and the
//! UDP-Lite checksum coverage) is exactly its protected bits.
//!
//! The *protection level* is the number of most significant bits protected
//! per scalar word (the paper's "bit rank"): 12 on an f64 covers its sign
//! and 11 exponent bits. A complex element is two words (real, imaginary)
//! and the level applies to each, as in seed 004 Table 2 ("16+16").
//! Buffers are in the machine's native byte order (NumPy's default).

mod dtype;
mod error;
mod layout;
mod mask;
mod transmit;

pub use dtype::DType;
pub use error::ApproxTypeError;
pub use layout::PlaneLayout;
pub use mask::{element_mask, protected_fraction, word_mask};
pub use transmit::{transmit, TransmitStats, MESSAGE_BYTES};
