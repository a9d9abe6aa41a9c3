//! A modulation format: OOK or square M-QAM.

use super::{ook_ber, ChannelError, Qam};

/// The modulation of a link (seed 004 §3.1, Fig. 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modulation {
    /// On-off keying, one bit per symbol (eq. 2).
    Ook,
    /// Square M-QAM (eq. 3-4).
    Qam(Qam),
}

impl Modulation {
    /// `M`-QAM after validating `m`.
    pub fn qam(m: u32) -> Result<Modulation, ChannelError> {
        Ok(Modulation::Qam(Qam::new(m)?))
    }

    /// Bit error rate at a linear Eb/N0.
    pub fn ber(&self, ebn0: f64) -> Result<f64, ChannelError> {
        match self {
            Modulation::Ook => ook_ber(ebn0),
            Modulation::Qam(q) => q.ber(ebn0),
        }
    }

    /// Bits carried per symbol.
    pub fn bits_per_symbol(&self) -> u32 {
        match self {
            Modulation::Ook => 1,
            Modulation::Qam(q) => q.bits_per_symbol(),
        }
    }
}

impl std::fmt::Display for Modulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Modulation::Ook => f.write_str("OOK"),
            Modulation::Qam(q) => q.fmt(f),
        }
    }
}
