//! On-off keying over AWGN (seed 004 eq. 2).

use super::{check_ebn0, ChannelError};
use crate::ber::erfc;

/// OOK bit error rate, seed 004 eq. 2: `P_b = 1/2 erfc(sqrt(Eb / 2N0))`,
/// for a linear `ebn0 >= 0`.
pub fn ook_ber(ebn0: f64) -> Result<f64, ChannelError> {
    let ebn0 = check_ebn0(ebn0)?;
    Ok(0.5 * erfc((ebn0 / 2.0).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_points_and_bad_input() {
        assert!((ook_ber(0.0).unwrap() - 0.5).abs() < 1e-7);
        // erfc(2) / 2 at Eb/N0 = 8
        assert!((ook_ber(8.0).unwrap() - 0.002_338_867_5).abs() < 1e-9);
        assert!(matches!(ook_ber(-1.0), Err(ChannelError::EbN0 { .. })));
        assert!(ook_ber(f64::NAN).is_err());
        assert!(ook_ber(f64::INFINITY).is_err());
    }
}
