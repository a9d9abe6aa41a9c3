//! Multi-bit symbol errors of M-QAM (seed 004 §4.2.1).
//!
//! The error vector of a received symbol has an I and a Q component, each
//! Gaussian and independent. A symbol goes to its nearest neighbour on one
//! axis when one component passes half the minimum distance `d/2`; that is
//! the per-component symbol error `P_sc` of eq. 3 with erfc argument `a`.
//! Two rarer events flip more than one bit:
//! * the diagonal neighbour: both components err, `P_ed = (P_sc / 2)^2`
//!   (the paper: 6.25e-10 for 1024-QAM at BER 1e-5, i.e. SER 1e-4);
//! * the second neighbour on one axis ("2-hop"): a component passes
//!   `3d/2`, eq. 3 with argument `3a`, combined over I and Q as in eq. 4
//!   (the paper: 6.12e-36).

use super::{check_target_ber, required_ebn0, two_components, ChannelError, Modulation, Qam};

/// The symbol-error probabilities of an M-QAM link at a nominal BER.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymbolErrors {
    /// The linear Eb/N0 at which the link has the nominal BER (eq. 4).
    pub ebn0: f64,
    /// The erfc argument of eq. 3 at that Eb/N0 (`d / sqrt(4 N0)`).
    pub erfc_arg: f64,
    /// `P_sc`, one component's symbol error rate (eq. 3).
    pub ser_component: f64,
    /// `P_ed`, mis-demodulation to the diagonal neighbour.
    pub diagonal: f64,
    /// `P_e2h`, mis-demodulation to the second neighbour on an axis.
    pub two_hop: f64,
}

/// The §4.2.1 probabilities of `qam` at nominal bit error rate
/// `nominal_ber` (in (0, 0.5)).
pub fn symbol_errors(qam: Qam, nominal_ber: f64) -> Result<SymbolErrors, ChannelError> {
    let nominal_ber = check_target_ber("nominal_ber", nominal_ber)?;
    let ebn0 = required_ebn0(Modulation::Qam(qam), nominal_ber)?;
    let a = qam.erfc_arg(ebn0)?;
    let psc = qam.ser_component_at(a);
    Ok(SymbolErrors {
        ebn0,
        erfc_arg: a,
        ser_component: psc,
        diagonal: (psc / 2.0).powi(2),
        two_hop: two_components(qam.ser_component_at(3.0 * a)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, paper: f64, rel: f64) -> bool {
        (got / paper - 1.0).abs() < rel
    }

    #[test]
    fn reproduces_seed_004_section_4_2_1() {
        let s = symbol_errors(Qam::new(1024).unwrap(), 1e-5).unwrap();
        // BER 1e-5 "means SER = 1e-4": both components together
        assert!(close(2.0 * s.ser_component, 1e-4, 1e-3), "{s:?}");
        assert!(close(s.diagonal, 6.25e-10, 1e-3), "{s:?}");
        assert!(close(s.two_hop, 6.12e-36, 5e-3), "{s:?}");
    }

    #[test]
    fn rejects_bad_nominal_ber() {
        let q = Qam::new(64).unwrap();
        assert!(symbol_errors(q, 0.0).is_err());
        assert!(symbol_errors(q, 0.6).is_err());
    }
}
