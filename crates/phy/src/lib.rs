//! # approxnet-phy: channel models
//!
//! Pure functions and seeded injectors for the link layer (seed 004): bit
//! error rates of modulation schemes and their inverse, symbol mappings that
//! trade bandwidth for BER ([`channel`]), approximate data types with
//! per-bit protection and the byte-plane layout that puts the protected bits
//! first ([`approx_types`]), and the one bit-error injector ([`inject`]).
//! No I/O, no global randomness: every injector takes a seed or a source.

pub mod approx_types;
pub mod ber;
pub mod channel;
pub mod inject;
