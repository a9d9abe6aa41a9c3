//! End-to-end BER over several error-prone links (seed 004 §3.2).

use super::ChannelError;

/// `1 - (1 - P_b)^n` for per-link BER `pb` (in [0, 1]) over `hops` links,
/// computed as `-expm1(n ln1p(-P_b))` so that it stays exact for tiny `pb`
/// (the naive form returns 0 for `pb` below ~1e-17).
pub fn end_to_end_ber(pb: f64, hops: u32) -> Result<f64, ChannelError> {
    if !(0.0..=1.0).contains(&pb) {
        return Err(ChannelError::Probability {
            field: "per_link_ber",
            value: pb,
        });
    }
    if hops == 0 || pb == 0.0 {
        return Ok(0.0);
    }
    if pb == 1.0 {
        return Ok(1.0);
    }
    Ok(-(f64::from(hops) * (-pb).ln_1p()).exp_m1())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_example_and_tiny_rates() {
        // §3.2: Pb = 1e-5 and n > 10 gives more than 1e-4
        assert!(end_to_end_ber(1e-5, 11).unwrap() > 1e-4);
        assert!(end_to_end_ber(1e-5, 10).unwrap() < 1e-4);
        // tiny rates: n Pb to full precision, where 1 - (1-p)^n gives 0
        let e = end_to_end_ber(1.52e-16, 6).unwrap();
        assert!((e / (6.0 * 1.52e-16) - 1.0).abs() < 1e-12, "{e}");
        assert!((1.0 - (1.0 - 1e-18f64).powi(3)) == 0.0);
        assert!(end_to_end_ber(1e-18, 3).unwrap() > 2.9e-18);
        assert_eq!(end_to_end_ber(0.3, 0).unwrap(), 0.0);
        assert_eq!(end_to_end_ber(1.0, 2).unwrap(), 1.0);
        assert!((end_to_end_ber(0.5, 2).unwrap() - 0.75).abs() < 1e-15);
        assert!(end_to_end_ber(-0.1, 2).is_err());
        assert!(end_to_end_ber(f64::NAN, 2).is_err());
    }
}
