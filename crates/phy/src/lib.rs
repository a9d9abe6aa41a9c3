//! # approxnet-phy: channel models
//!
//! Pure functions and seeded injectors for the link layer: bit error rates
//! of modulation schemes and bit-error injection into byte buffers. No I/O.

pub mod ber;
pub mod inject;
