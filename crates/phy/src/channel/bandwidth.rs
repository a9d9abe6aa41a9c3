//! Average bandwidth of a partly protected message (seed 004 §5.1.2).

use super::ChannelError;

/// The factor `B~ / (f(s) B) = f_p / (t_p + f_p - t_p f_p)` of seed 004
/// §5.1.2: a fraction `t_p` (in [0, 1]) of a message's bits travels on a
/// reliable mapping with bandwidth factor `f_p` (in (0, 1]), the rest at the
/// full rate. Multiply by the link bandwidth (and the simulator's own
/// size-dependent factor `f(s)`) to get the average bandwidth.
pub fn average_bandwidth_factor(t_p: f64, f_p: f64) -> Result<f64, ChannelError> {
    if !(0.0..=1.0).contains(&t_p) {
        return Err(ChannelError::Probability {
            field: "protected_fraction",
            value: t_p,
        });
    }
    if !(f_p > 0.0 && f_p <= 1.0) {
        return Err(ChannelError::Factor {
            field: "protected_bandwidth_factor",
            value: f_p,
        });
    }
    Ok(f_p / (t_p + f_p - t_p * f_p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_time_sum() {
        // s bits: t_p s at f_p B plus (1 - t_p) s at B
        for (t, f) in [(0.25, 0.25), (0.5, 0.5), (16.0 / 64.0, 0.25), (1.0, 0.25)] {
            let time = t / f + (1.0 - t);
            let got = average_bandwidth_factor(t, f).unwrap();
            assert!((got - 1.0 / time).abs() < 1e-15, "{t} {f}");
        }
        assert_eq!(average_bandwidth_factor(0.0, 0.25).unwrap(), 1.0);
        assert_eq!(average_bandwidth_factor(1.0, 0.25).unwrap(), 0.25);
        assert!(average_bandwidth_factor(1.2, 0.25).is_err());
        assert!(average_bandwidth_factor(0.5, 0.0).is_err());
        assert!(average_bandwidth_factor(0.5, f64::NAN).is_err());
    }
}
