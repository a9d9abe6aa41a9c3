//! The M/2 and M/4 symbol mappings (seed 004 §4.2.1, Fig. 4): using only a
//! subset of the constellation keeps the used symbols further apart, which
//! lowers the BER and the bandwidth.

use super::{symbol_errors, two_components, ChannelError, Qam};

/// Which symbols of the M-QAM constellation carry data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolMapping {
    /// All M symbols (Gray coded): the nominal BER at full bandwidth.
    Full,
    /// M/2 symbols in a checkerboard (Fig. 4a): nearest used neighbours are
    /// diagonal, so the BER is the diagonal error `P_ed`; half the bandwidth.
    Half,
    /// M/4 symbols (Fig. 4b): the distance between used symbols doubles, so
    /// eq. 3 is taken at twice its erfc argument; a quarter of the bandwidth.
    Quarter,
}

impl SymbolMapping {
    /// Every mapping, from fastest to most reliable.
    pub const ALL: [SymbolMapping; 3] = [
        SymbolMapping::Full,
        SymbolMapping::Half,
        SymbolMapping::Quarter,
    ];

    /// The bandwidth relative to the full constellation (seed 004 §4.2.1:
    /// "reduced by a factor 2 and 4").
    pub fn bandwidth_factor(&self) -> f64 {
        match self {
            SymbolMapping::Full => 1.0,
            SymbolMapping::Half => 0.5,
            SymbolMapping::Quarter => 0.25,
        }
    }

    /// The BER of this mapping on a `qam` link whose full constellation has
    /// bit error rate `nominal_ber` (in (0, 0.5)).
    pub fn ber(&self, qam: Qam, nominal_ber: f64) -> Result<f64, ChannelError> {
        let s = symbol_errors(qam, nominal_ber)?;
        Ok(match self {
            SymbolMapping::Full => nominal_ber,
            SymbolMapping::Half => s.diagonal,
            SymbolMapping::Quarter => two_components(qam.ser_component_at(2.0 * s.erfc_arg)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_seed_004_mappings() {
        // seed 004 §4.2.1: nominal 1e-5 -> M/2 6.25e-10, M/4 1.52e-16
        let q = Qam::new(1024).unwrap();
        let half = SymbolMapping::Half.ber(q, 1e-5).unwrap();
        let quarter = SymbolMapping::Quarter.ber(q, 1e-5).unwrap();
        assert!((half / 6.25e-10 - 1.0).abs() < 1e-3, "{half}");
        assert!((quarter / 1.52e-16 - 1.0).abs() < 5e-3, "{quarter}");
        assert_eq!(SymbolMapping::Full.ber(q, 1e-5).unwrap(), 1e-5);
        assert_eq!(SymbolMapping::Quarter.bandwidth_factor(), 0.25);
    }

    #[test]
    fn more_reliable_and_slower_in_order() {
        for m in [16, 64, 256, 1024] {
            let q = Qam::new(m).unwrap();
            let bers: Vec<f64> = SymbolMapping::ALL
                .iter()
                .map(|s| s.ber(q, 1e-4).unwrap())
                .collect();
            assert!(bers[0] > bers[1] && bers[1] > bers[2], "{m}: {bers:?}");
        }
        assert!(SymbolMapping::Half.ber(Qam::new(4).unwrap(), 0.5).is_err());
    }
}
