//! Sensitivity models, eq. 1 of seed 003 §4.1: `D(b) = Σ c_i b^i`, the
//! slowdown of an application given the share `b` of link bandwidth.

use thiserror::Error;

/// Highest polynomial degree a model may have (the paper profiles 1-3).
pub const MAX_DEGREE: usize = 3;

/// A model refused by [`Model::new`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No coefficients, or more than `MAX_DEGREE + 1`.
    #[error("a sensitivity model needs 1 to {} coefficients (degree 0-{MAX_DEGREE}), got {0}", MAX_DEGREE + 1)]
    Degree(usize),
    /// A coefficient is NaN or infinite.
    #[error("coefficient c{index} is not a finite number ({value})")]
    NotFinite {
        /// Position of the coefficient (power of `b`).
        index: usize,
        /// Its value.
        value: f64,
    },
}

/// A polynomial sensitivity model with finite coefficients, `c[i]` the
/// coefficient of `b^i`; missing high coefficients are zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    c: [f64; MAX_DEGREE + 1],
}

impl Model {
    /// A model from its coefficients, lowest power first.
    pub fn new(coeffs: &[f64]) -> Result<Model, ModelError> {
        if coeffs.is_empty() || coeffs.len() > MAX_DEGREE + 1 {
            return Err(ModelError::Degree(coeffs.len()));
        }
        let mut c = [0.0; MAX_DEGREE + 1];
        for (i, &v) in coeffs.iter().enumerate() {
            if !v.is_finite() {
                return Err(ModelError::NotFinite { index: i, value: v });
            }
            c[i] = v;
        }
        Ok(Model { c })
    }

    /// The coefficients, lowest power first (always `MAX_DEGREE + 1`).
    pub fn coeffs(&self) -> &[f64; MAX_DEGREE + 1] {
        &self.c
    }

    /// `D(b)`.
    pub fn value(&self, b: f64) -> f64 {
        let c = &self.c;
        ((c[3] * b + c[2]) * b + c[1]) * b + c[0]
    }

    /// `D'(b)`.
    pub fn slope(&self, b: f64) -> f64 {
        let c = &self.c;
        (3.0 * c[3] * b + 2.0 * c[2]) * b + c[1]
    }

    /// `D''(b)` (linear in `b` for a cubic).
    pub fn curvature(&self, b: f64) -> f64 {
        6.0 * self.c[3] * b + 2.0 * self.c[2]
    }

    /// Whether `D` is convex on `[lo, hi]`: `D''` is linear, so checking the
    /// two ends is exact.
    pub fn convex_on(&self, lo: f64, hi: f64) -> bool {
        self.curvature(lo) >= 0.0 && self.curvature(hi) >= 0.0
    }

    /// The `b` in `[lo, hi]` where `D'(b) = target`, for a model convex on
    /// `[lo, hi]` (so `D'` is non-decreasing there), given
    /// `D'(lo) < target < D'(hi)`. Closed form for degree <= 2, the stable
    /// quadratic formula for degree 3, clamped to `[lo, hi]` against
    /// rounding.
    pub(crate) fn slope_inverse(&self, target: f64, lo: f64, hi: f64) -> f64 {
        let [_, c1, c2, c3] = self.c;
        // 3 c3 b^2 + 2 c2 b + (c1 - target) = 0
        let (a, b, c) = (3.0 * c3, 2.0 * c2, c1 - target);
        let root = if a == 0.0 {
            if b == 0.0 {
                lo
            } else {
                -c / b
            }
        } else {
            let disc = (b * b - 4.0 * a * c).max(0.0);
            let q = -0.5 * (b + b.signum_nonzero() * disc.sqrt());
            let r1 = q / a;
            let r2 = if q != 0.0 { c / q } else { r1 };
            // The root where D' is increasing: D''(r) = 2a r + b >= 0.
            if 2.0 * a * r1 + b >= 0.0 && (r1 >= lo - 1e-12 && r1 <= hi + 1e-12) {
                r1
            } else if r2 >= lo - 1e-12 && r2 <= hi + 1e-12 {
                r2
            } else if (r1 - lo).abs().min((r1 - hi).abs()) < (r2 - lo).abs().min((r2 - hi).abs()) {
                r1
            } else {
                r2
            }
        };
        if root.is_nan() {
            return self.slope_inverse_bisect(target, lo, hi);
        }
        root.clamp(lo, hi)
    }

    /// Bisection fallback of [`Model::slope_inverse`] (never reached with
    /// finite coefficients in practice; kept so a rounding corner cannot
    /// produce NaN).
    fn slope_inverse_bisect(&self, target: f64, mut lo: f64, mut hi: f64) -> f64 {
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.slope(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

/// `signum` that is 1 at zero (the stable quadratic formula needs a sign).
trait SignumNonzero {
    fn signum_nonzero(self) -> f64;
}

impl SignumNonzero for f64 {
    fn signum_nonzero(self) -> f64 {
        if self < 0.0 {
            -1.0
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_nan_and_bad_degree() {
        assert!(matches!(
            Model::new(&[1.0, f64::NAN]),
            Err(ModelError::NotFinite { index: 1, .. })
        ));
        assert!(matches!(
            Model::new(&[1.0, 0.0, f64::INFINITY]),
            Err(ModelError::NotFinite { index: 2, .. })
        ));
        assert_eq!(Model::new(&[]), Err(ModelError::Degree(0)));
        assert_eq!(Model::new(&[1.0; 5]), Err(ModelError::Degree(5)));
    }

    #[test]
    fn value_slope_curvature() {
        let m = Model::new(&[4.0, -6.0, 3.0, -0.5]).unwrap();
        let b = 0.3;
        assert!((m.value(b) - (4.0 - 1.8 + 0.27 - 0.0135)).abs() < 1e-12);
        assert!((m.slope(b) - (-6.0 + 1.8 - 0.135)).abs() < 1e-12);
        assert!((m.curvature(b) - (6.0 - 0.9)).abs() < 1e-12);
    }

    #[test]
    fn slope_inverse_finds_the_increasing_root() {
        for coeffs in [
            &[3.0, -4.0, 1.5][..],
            &[5.0, -9.0, 6.0, -1.0],
            &[5.0, -9.0, 6.0, 1.0],
        ] {
            let m = Model::new(coeffs).unwrap();
            assert!(m.convex_on(0.05, 1.0));
            let (lo, hi) = (0.05, 1.0);
            for k in 1..10 {
                let t = m.slope(lo) + (m.slope(hi) - m.slope(lo)) * k as f64 / 10.0;
                let b = m.slope_inverse(t, lo, hi);
                assert!((m.slope(b) - t).abs() < 1e-9, "{coeffs:?} {t} {b}");
            }
        }
    }
}
