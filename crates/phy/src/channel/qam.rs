//! Square M-QAM over AWGN (seed 004 eq. 3-4).

use super::{check_ebn0, two_components, ChannelError};
use crate::ber::erfc;

/// A square M-QAM constellation: `M` a power of 4 (4, 16, ..., 1024, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qam {
    m: u32,
}

impl Qam {
    /// A validated square M-QAM order.
    pub fn new(m: u32) -> Result<Qam, ChannelError> {
        if m >= 4 && m.is_power_of_two() && m.trailing_zeros().is_multiple_of(2) {
            Ok(Qam { m })
        } else {
            Err(ChannelError::QamOrder { m })
        }
    }

    /// The order M.
    pub fn order(&self) -> u32 {
        self.m
    }

    /// Bits carried per symbol, `log2 M`.
    pub fn bits_per_symbol(&self) -> u32 {
        self.m.trailing_zeros()
    }

    /// The argument of erfc in eq. 3, `sqrt(6 log2(M) Eb / (M - 1) / (4 N0))`:
    /// half the minimum symbol distance over the noise scale.
    pub fn erfc_arg(&self, ebn0: f64) -> Result<f64, ChannelError> {
        let ebn0 = check_ebn0(ebn0)?;
        let m = f64::from(self.m);
        Ok((6.0 * m.log2() * ebn0 / (m - 1.0) / 4.0).sqrt())
    }

    /// Symbol error rate of one component (I or Q) for a given erfc
    /// argument: `2 (1 - 1/sqrt(M)) erfc(arg)` (eq. 3), at most 1 (the
    /// formula is an approximation that exceeds 1 near Eb/N0 = 0).
    pub(crate) fn ser_component_at(&self, arg: f64) -> f64 {
        let m = f64::from(self.m);
        (2.0 * (1.0 - 1.0 / m.sqrt()) * erfc(arg)).min(1.0)
    }

    /// `P_sc`, the per-component symbol error rate of eq. 3.
    pub fn ser_component(&self, ebn0: f64) -> Result<f64, ChannelError> {
        Ok(self.ser_component_at(self.erfc_arg(ebn0)?))
    }

    /// `P_bc = P_sc / log2 M`, eq. 3 (Gray coding: one wrong bit per symbol
    /// error).
    pub fn ber_component(&self, ebn0: f64) -> Result<f64, ChannelError> {
        Ok(self.ser_component(ebn0)? / f64::from(self.bits_per_symbol()))
    }

    /// The M-QAM bit error rate of eq. 4, `1 - (1 - P_bc)^2` (I and Q as
    /// two independent probability spaces).
    pub fn ber(&self, ebn0: f64) -> Result<f64, ChannelError> {
        Ok(two_components(self.ber_component(ebn0)?))
    }
}

impl std::fmt::Display for Qam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-QAM", self.m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        for m in [4, 16, 64, 256, 1024, 4096] {
            assert_eq!(Qam::new(m).unwrap().order(), m);
        }
        assert_eq!(Qam::new(1024).unwrap().bits_per_symbol(), 10);
        for m in [0, 1, 2, 8, 32, 100, 512, 2048] {
            assert_eq!(Qam::new(m), Err(ChannelError::QamOrder { m }));
        }
    }

    #[test]
    fn eq4_from_eq3_and_monotone() {
        let q = Qam::new(16).unwrap();
        let ebn0 = 20.0;
        let pbc = q.ber_component(ebn0).unwrap();
        let pb = q.ber(ebn0).unwrap();
        assert!((pb - (1.0 - (1.0 - pbc).powi(2))).abs() < 1e-15);
        let mut last = 1.0;
        for i in 0..60 {
            let b = q.ber(f64::from(i)).unwrap();
            assert!(b <= last, "BER rose at Eb/N0 {i}");
            last = b;
        }
        // a denser constellation needs more energy per bit
        let big = Qam::new(1024).unwrap();
        assert!(big.ber(ebn0).unwrap() > pb);
        assert!(q.ber(-0.5).is_err());
    }
}
