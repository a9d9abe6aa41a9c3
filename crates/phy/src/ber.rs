//! erfc and the unchecked (plain `f64`) forms of the BER formulas; the
//! checked models live in [`crate::channel`] (seed 004 §4.1).

/// Complementary error function (Numerical Recipes `erfcc`, fractional
/// error below 1.2e-7 everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// OOK bit error rate, seed 004 eq. 2 (unchecked form of
/// [`crate::channel::ook_ber`]: NaN for a negative or non-finite `ebn0`).
pub fn ook_ber(ebn0: f64) -> f64 {
    crate::channel::ook_ber(ebn0).unwrap_or(f64::NAN)
}

/// M-QAM per-component symbol error rate, seed 004 eq. 3 (unchecked form of
/// [`crate::channel::Qam::ser_component`]: NaN for an `m` that is not a
/// power of 4 or a bad `ebn0`).
pub fn mqam_ser(m: u32, ebn0: f64) -> f64 {
    crate::channel::Qam::new(m)
        .and_then(|q| q.ser_component(ebn0))
        .unwrap_or(f64::NAN)
}

/// M-QAM per-component bit error rate with Gray coding, `P_s / log2(M)`
/// (eq. 3; see [`crate::channel::Qam::ber`] for eq. 4). NaN on bad input.
pub fn mqam_ber(m: u32, ebn0: f64) -> f64 {
    crate::channel::Qam::new(m)
        .and_then(|q| q.ber_component(ebn0))
        .unwrap_or(f64::NAN)
}

/// End-to-end BER over `hops` links of per-link BER `pb`, seed 004 §3:
/// `1 - (1 - P_b)^n` (unchecked form of [`crate::channel::end_to_end_ber`]:
/// NaN for `pb` outside [0, 1]).
pub fn end_to_end(pb: f64, hops: u32) -> f64 {
    crate::channel::end_to_end_ber(pb, hops).unwrap_or(f64::NAN)
}

/// Converts decibels to a linear ratio.
pub fn db_to_linear(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
    }

    #[test]
    fn ber_falls_with_snr_and_qam_needs_more() {
        let a = ook_ber(db_to_linear(10.0));
        let b = ook_ber(db_to_linear(14.0));
        assert!(b < a && a < 0.5);
        assert!(mqam_ber(1024, db_to_linear(14.0)) > mqam_ber(4, db_to_linear(14.0)));
    }

    #[test]
    fn end_to_end_matches_seed_004_example() {
        // seed 004 §3: Pb = 1e-5 and n > 10 hops gives more than 1e-4
        assert!(end_to_end(1e-5, 11) > 1e-4);
        assert!(end_to_end(1e-5, 10) < 1e-4 + 1e-9);
    }
}
