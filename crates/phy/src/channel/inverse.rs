//! The inverse of the BER curves: the Eb/N0 a target BER needs (seed 004
//! Fig. 3), by bisection on a monotone function.

use super::{check_target_ber, ChannelError, Modulation};

/// The largest linear Eb/N0 searched (~90 dB): past it erfc underflows for
/// every order this crate accepts.
const EBN0_MAX: f64 = 1e9;

/// The linear Eb/N0 at which `modulation` has bit error rate `target`
/// (`target` in (0, 0.5)). BER falls monotonically with Eb/N0 (erfc is
/// decreasing), so bisection on `ln BER - ln target` converges to the one
/// root; the answer is within a relative 1e-12 of it.
pub fn required_ebn0(modulation: Modulation, target: f64) -> Result<f64, ChannelError> {
    let target = check_target_ber("target_ber", target)?;
    let ber = |x: f64| modulation.ber(x);
    let highest = ber(0.0)?;
    if highest < target {
        return Err(unreachable(modulation, target, ber(EBN0_MAX)?, highest));
    }
    // grow the bracket until the BER falls below the target
    let mut lo = 0.0;
    let mut hi = 1.0;
    while ber(hi)? >= target {
        if hi >= EBN0_MAX {
            return Err(unreachable(modulation, target, ber(hi)?, highest));
        }
        lo = hi;
        hi *= 2.0;
    }
    bisect_decreasing(|x| ber(x).map(f64::ln), target.ln(), lo, hi)
}

/// The `x` in `[lo, hi]` where the decreasing function `f` crosses `level`,
/// given `f(lo) >= level > f(hi)`.
fn bisect_decreasing<F>(f: F, level: f64, mut lo: f64, mut hi: f64) -> Result<f64, ChannelError>
where
    F: Fn(f64) -> Result<f64, ChannelError>,
{
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid)? >= level {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Ok(0.5 * (lo + hi))
}

fn unreachable(m: Modulation, target: f64, lowest: f64, highest: f64) -> ChannelError {
    ChannelError::Unreachable {
        target,
        modulation: m.to_string(),
        lowest,
        highest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::Qam;

    #[test]
    fn inverts_the_ber_curve() {
        for m in [
            Modulation::Ook,
            Modulation::qam(4).unwrap(),
            Modulation::qam(1024).unwrap(),
        ] {
            for target in [1e-3, 1e-5, 1e-9, 1e-12, 1e-16] {
                let x = required_ebn0(m, target).unwrap();
                let back = m.ber(x).unwrap();
                assert!(
                    (back / target - 1.0).abs() < 1e-6,
                    "{m} at {target}: {x} gives {back}"
                );
            }
        }
    }

    #[test]
    fn qam_1024_needs_more_than_ook() {
        // seed 004 §4.1: "1,024-QAM requires better Eb/N0 than OOK"
        let ook = required_ebn0(Modulation::Ook, 1e-5).unwrap();
        let q = required_ebn0(Modulation::Qam(Qam::new(1024).unwrap()), 1e-5).unwrap();
        assert!(q > ook * 5.0, "OOK {ook}, 1024-QAM {q}");
    }

    #[test]
    fn denser_constellations_need_more_energy_per_bit() {
        // Fig. 3: at every target, each step 4 -> 16 -> ... -> 1024 costs Eb/N0
        for target in [1e-3, 1e-5, 1e-9] {
            let need: Vec<f64> = [4, 16, 64, 256, 1024]
                .iter()
                .map(|&m| required_ebn0(Modulation::qam(m).unwrap(), target).unwrap())
                .collect();
            assert!(need.windows(2).all(|w| w[1] > w[0]), "{target}: {need:?}");
        }
    }

    #[test]
    fn bad_targets() {
        for t in [0.0, 0.5, 0.7, -1e-3, f64::NAN] {
            assert!(matches!(
                required_ebn0(Modulation::Ook, t),
                Err(ChannelError::Ber { .. })
            ));
        }
        // 1024-QAM gives only ~0.35 at Eb/N0 = 0 (eq. 3 saturates)
        let e = required_ebn0(Modulation::qam(1024).unwrap(), 0.45).unwrap_err();
        assert!(matches!(e, ChannelError::Unreachable { .. }), "{e}");
    }
}
