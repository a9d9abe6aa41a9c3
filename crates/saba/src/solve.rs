//! Eq. 2 of seed 003 §5.1 for one switch output port: minimise
//! `Σ D_i(w_i)` subject to `Σ w_i = C` and `w_i >= floor_i`.
//!
//! **Exact when every model is convex on its domain** (KKT): at the optimum
//! there is a multiplier `τ` with `D_i'(w_i) = τ` for every app strictly
//! inside its domain, `D_i'(w_i) >= τ` at the floor and `<= τ` at the top.
//! Each `w_i(τ)` is non-decreasing in `τ`, so `Σ w_i(τ) = C` is found by
//! bisection on `τ`; `D_i'` is a quadratic, so `w_i(τ)` is closed form.
//! Apps whose `w_i` is not pinned by `τ` (flat stretches: linear models with
//! equal slopes) share what is left of `C` in proportion to their slack.
//!
//! **Fallback where a model is not convex** (a cubic whose inflection
//! point lies inside its domain, or a concave one): every model is replaced
//! by its convex envelope on its domain (the model where it is convex, a
//! tangent chord over the concave stretch), the relaxed problem is solved as
//! above, and apps on a chord are moved to the chord's ends — all but at
//! most one, whose weight is then set by a 1-D search (`settle_partial`).
//! Not exact in general (the true optimum may sit inside several chords);
//! the relaxed optimum is a lower bound
//! on the true one; [`Allocation::lower_bound`] reports it, so the gap
//! `objective - lower_bound` certifies how far from optimal the answer can
//! be (zero in the convex case, up to rounding).

use crate::model::Model;
use thiserror::Error;

/// An instance refused by [`solve`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SolveError {
    /// `capacity` (C_Saba) is not a finite number above zero.
    #[error("capacity must be a finite number above 0, got {0}")]
    Capacity(f64),
    /// One floor per model is needed.
    #[error("{floors} floors given for {models} models (one per model)")]
    FloorCount {
        /// Number of models.
        models: usize,
        /// Number of floors.
        floors: usize,
    },
    /// A floor is negative or not finite.
    #[error("floor of app {index} must be a finite number >= 0, got {value}")]
    Floor {
        /// Position of the app.
        index: usize,
        /// The floor given.
        value: f64,
    },
    /// The floors add up to more than the capacity.
    #[error("the floors add up to {sum}, more than the capacity {capacity}")]
    Infeasible {
        /// Sum of the floors.
        sum: f64,
        /// The capacity.
        capacity: f64,
    },
}

/// How an [`Allocation`] was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// Every model convex on its domain: the KKT solution, exact.
    Kkt,
    /// Some model not convex: convex-envelope relaxation, gap certified by
    /// [`Allocation::lower_bound`].
    ConvexEnvelope,
}

/// The weights of one port.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// `w_i`, in the order of the models; they add up to the capacity.
    pub weights: Vec<f64>,
    /// `Σ D_i(w_i)`.
    pub objective: f64,
    /// A lower bound on the optimal objective (the relaxed optimum; equal to
    /// `objective` up to rounding when `method` is `Kkt`).
    pub lower_bound: f64,
    /// How the weights were found.
    pub method: Method,
}

/// One app's (convexified) curve on its domain `[lo, hi]`: the model, and
/// where the envelope is a chord instead.
#[derive(Debug, Clone, Copy)]
struct Curve {
    model: Model,
    lo: f64,
    hi: f64,
    /// `[a, b]` on which the envelope is the chord of the model; `a == lo`
    /// or `b == hi`.
    chord: Option<(f64, f64)>,
}

impl Curve {
    fn new(model: Model, lo: f64, hi: f64) -> Curve {
        let chord = if hi <= lo || model.convex_on(lo, hi) {
            None
        } else {
            Some(chord_of(&model, lo, hi))
        };
        Curve {
            model,
            lo,
            hi,
            chord,
        }
    }

    fn chord_slope(&self, a: f64, b: f64) -> f64 {
        (self.model.value(b) - self.model.value(a)) / (b - a)
    }

    /// The envelope's value at `x`.
    fn envelope(&self, x: f64) -> f64 {
        match self.chord {
            Some((a, b)) if x > a && x < b => {
                self.model.value(a) + self.chord_slope(a, b) * (x - a)
            }
            _ => self.model.value(x),
        }
    }

    /// Where the envelope's slope crosses `tau`: the smallest minimiser of
    /// `env(w) - tau w` on `[lo, hi]`. Non-decreasing in `tau`.
    fn at(&self, tau: f64) -> f64 {
        let (lo, hi) = (self.lo, self.hi);
        if hi <= lo {
            return lo;
        }
        match self.chord {
            None => self.on_model(tau, lo, hi),
            Some((a, b)) => {
                let s = self.chord_slope(a, b);
                if a <= lo {
                    // chord first, then the model on [b, hi]
                    if s >= tau {
                        lo
                    } else {
                        self.on_model(tau, b, hi)
                    }
                } else {
                    // the model on [lo, a], then the chord
                    let x = self.on_model(tau, lo, a);
                    if x < a {
                        x
                    } else if s >= tau {
                        a
                    } else {
                        hi
                    }
                }
            }
        }
    }

    /// The crossing of `D' = tau` on a convex stretch `[a, b]`.
    fn on_model(&self, tau: f64, a: f64, b: f64) -> f64 {
        if b <= a || self.model.slope(a) >= tau {
            a
        } else if self.model.slope(b) <= tau {
            b
        } else {
            self.model.slope_inverse(tau, a, b)
        }
    }

    /// `dw/dtau` at a point `w = at(tau)`: `1 / D''(w)` strictly inside the
    /// domain on the model, 0 at a bound or on a chord (Newton's slope).
    fn rate(&self, w: f64) -> f64 {
        if w <= self.lo || w >= self.hi || self.in_chord(w) {
            return 0.0;
        }
        let k = self.model.curvature(w);
        if k > 0.0 {
            1.0 / k
        } else {
            0.0
        }
    }

    /// The interior of the chord, if `x` lies in it.
    fn in_chord(&self, x: f64) -> bool {
        matches!(self.chord, Some((a, b)) if x > a + 1e-12 && x < b - 1e-12)
    }
}

/// The chord of the convex envelope of a cubic that is not convex on
/// `[lo, hi]` (`D''` is linear: one inflection point at most).
fn chord_of(m: &Model, lo: f64, hi: f64) -> (f64, f64) {
    let (k_lo, k_hi) = (m.curvature(lo), m.curvature(hi));
    if k_lo <= 0.0 && k_hi <= 0.0 {
        return (lo, hi); // concave throughout
    }
    let p = {
        // inflection: curvature(p) = 0, between lo and hi
        let c = m.coeffs();
        (-2.0 * c[2] / (6.0 * c[3])).clamp(lo, hi)
    };
    if k_lo >= 0.0 {
        // convex on [lo, p], concave on [p, hi]: tangent point t in [lo, p]
        // with D'(t) (hi - t) = D(hi) - D(t); h is non-decreasing there.
        let h = |t: f64| m.slope(t) * (hi - t) - (m.value(hi) - m.value(t));
        if h(lo) >= 0.0 {
            return (lo, hi);
        }
        (bisect(h, lo, p), hi)
    } else {
        // concave on [lo, p], convex on [p, hi]: tangent point t in [p, hi]
        // with D'(t) (t - lo) = D(t) - D(lo); k is non-decreasing there.
        let k = |t: f64| m.slope(t) * (t - lo) - (m.value(t) - m.value(lo));
        if k(hi) <= 0.0 {
            return (lo, hi);
        }
        (lo, bisect(k, p, hi))
    }
}

/// The root of a non-decreasing `f` on `[a, b]` with `f(a) <= 0 <= f(b)`.
fn bisect(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (a + b);
        if mid <= a || mid >= b {
            break;
        }
        if f(mid) < 0.0 {
            a = mid;
        } else {
            b = mid;
        }
    }
    0.5 * (a + b)
}

/// Solves eq. 2 for one port: the models of the apps whose flows cross it,
/// their floors (each `>= 0`) and the capacity `C_Saba` (the share of the
/// link Saba manages, e.g. 1.0). Weights are shares of the link, in the
/// models' own unit of bandwidth.
pub fn solve(models: &[Model], floors: &[f64], capacity: f64) -> Result<Allocation, SolveError> {
    if !capacity.is_finite() || capacity <= 0.0 {
        return Err(SolveError::Capacity(capacity));
    }
    if floors.len() != models.len() {
        return Err(SolveError::FloorCount {
            models: models.len(),
            floors: floors.len(),
        });
    }
    if let Some((index, &value)) = floors
        .iter()
        .enumerate()
        .find(|(_, f)| !f.is_finite() || **f < 0.0)
    {
        return Err(SolveError::Floor { index, value });
    }
    let sum_floor: f64 = floors.iter().sum();
    if sum_floor > capacity * (1.0 + 1e-12) {
        return Err(SolveError::Infeasible {
            sum: sum_floor,
            capacity,
        });
    }
    if models.is_empty() {
        return Ok(Allocation {
            weights: Vec::new(),
            objective: 0.0,
            lower_bound: 0.0,
            method: Method::Kkt,
        });
    }
    let spare = (capacity - sum_floor).max(0.0);
    let curves: Vec<Curve> = models
        .iter()
        .zip(floors)
        .map(|(m, &lo)| Curve::new(*m, lo, lo + spare))
        .collect();
    let method = if curves.iter().all(|c| c.chord.is_none()) {
        Method::Kkt
    } else {
        Method::ConvexEnvelope
    };
    let mut weights = kkt(&curves, capacity);
    let lower_bound = curves
        .iter()
        .zip(&weights)
        .map(|(c, &w)| c.envelope(w))
        .sum();
    if method == Method::ConvexEnvelope {
        weights = settle_partial(&curves, weights, capacity);
    }
    let objective = models.iter().zip(&weights).map(|(m, &w)| m.value(w)).sum();
    Ok(Allocation {
        weights,
        objective,
        lower_bound,
        method,
    })
}

/// The relaxed answer may leave one app `p` inside its chord (where the
/// model lies above its envelope). Its weight is then chosen by a 1-D
/// search of `D_p(x) + V(C - x)`, `V` the re-solved optimum of the others
/// (a 65-point scan of `p`'s domain plus both chord ends, refined by golden
/// section around the best), keeping the relaxed answer if nothing beats it.
fn settle_partial(curves: &[Curve], weights: Vec<f64>, capacity: f64) -> Vec<f64> {
    let true_obj =
        |w: &[f64]| -> f64 { curves.iter().zip(w).map(|(c, &x)| c.model.value(x)).sum() };
    let Some(p) = (0..curves.len()).find(|&i| curves[i].in_chord(weights[i])) else {
        return weights;
    };
    let Some((a, b)) = curves[p].chord else {
        return weights;
    };
    let floor_rest: f64 = (0..curves.len())
        .filter(|&i| i != p)
        .map(|i| curves[i].lo)
        .sum();
    let with_p_at = |x: f64| -> Option<(f64, Vec<f64>)> {
        let left = capacity - x;
        if left < floor_rest - 1e-12 {
            return None;
        }
        let spare = (left - floor_rest).max(0.0);
        let rest: Vec<Curve> = (0..curves.len())
            .filter(|&i| i != p)
            .map(|i| Curve::new(curves[i].model, curves[i].lo, curves[i].lo + spare))
            .collect();
        let mut w = if rest.is_empty() {
            Vec::new()
        } else {
            kkt(&rest, left)
        };
        w.insert(p, x);
        Some((true_obj(&w), w))
    };
    let (lo, hi) = (curves[p].lo, curves[p].hi);
    let mut best_obj = true_obj(&weights);
    let mut best = weights;
    let mut best_x = None;
    let consider = |x: f64, best_obj: &mut f64, best: &mut Vec<f64>| {
        if let Some((obj, w)) = with_p_at(x) {
            if obj < *best_obj {
                *best_obj = obj;
                *best = w;
                return true;
            }
        }
        false
    };
    const SCAN: usize = 64;
    let step = (hi - lo) / SCAN as f64;
    for k in 0..=SCAN {
        let x = lo + step * k as f64;
        if consider(x, &mut best_obj, &mut best) {
            best_x = Some(x);
        }
    }
    for x in [a, b] {
        if consider(x, &mut best_obj, &mut best) {
            best_x = None; // a chord end: nothing to refine
        }
    }
    if let Some(x0) = best_x {
        // golden section on [x0 - step, x0 + step]
        let f = |x: f64| with_p_at(x).map_or(f64::INFINITY, |(o, _)| o);
        let (mut l, mut r) = ((x0 - step).max(lo), (x0 + step).min(hi));
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut x1, mut x2) = (r - g * (r - l), l + g * (r - l));
        let (mut f1, mut f2) = (f(x1), f(x2));
        for _ in 0..60 {
            if f1 < f2 {
                r = x2;
                x2 = x1;
                f2 = f1;
                x1 = r - g * (r - l);
                f1 = f(x1);
            } else {
                l = x1;
                x1 = x2;
                f1 = f2;
                x2 = l + g * (r - l);
                f2 = f(x2);
            }
        }
        consider(0.5 * (l + r), &mut best_obj, &mut best);
    }
    best
}

/// The weights at a multiplier whose sum is within rounding of the
/// capacity; the residue goes to the apps strictly inside their domain in
/// proportion to `1 / D''` (a last Newton step), else to the largest.
fn settle_exact(curves: &[Curve], tau: f64, capacity: f64) -> Vec<f64> {
    let mut w: Vec<f64> = curves.iter().map(|c| c.at(tau)).collect();
    let rates: Vec<f64> = curves.iter().zip(&w).map(|(c, &x)| c.rate(x)).collect();
    let total: f64 = rates.iter().sum();
    let residue = capacity - w.iter().sum::<f64>();
    if total > 0.0 {
        for (x, r) in w.iter_mut().zip(&rates) {
            *x += residue * r / total;
        }
    }
    fix_sum(curves, &mut w, capacity);
    w
}

/// Puts the last rounding error of the sum on the largest weight.
fn fix_sum(curves: &[Curve], w: &mut [f64], capacity: f64) {
    let diff = capacity - w.iter().sum::<f64>();
    if let Some((i, _)) = w.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)) {
        w[i] = (w[i] + diff).max(curves[i].lo);
    }
}

/// The multiplier by safeguarded Newton, then the unpinned remainder
/// shared out.
fn kkt(curves: &[Curve], capacity: f64) -> Vec<f64> {
    let sum_at = |tau: f64| curves.iter().map(|c| c.at(tau)).sum::<f64>();
    let slope_lo = |c: &Curve| {
        c.model
            .slope(c.lo)
            .min(c.chord.map_or(f64::INFINITY, |(a, b)| c.chord_slope(a, b)))
    };
    let slope_hi = |c: &Curve| {
        c.model.slope(c.hi).max(
            c.chord
                .map_or(f64::NEG_INFINITY, |(a, b)| c.chord_slope(a, b)),
        )
    };
    let mut t_lo = curves.iter().map(slope_lo).fold(f64::INFINITY, f64::min);
    let mut t_hi = curves
        .iter()
        .map(slope_hi)
        .fold(f64::NEG_INFINITY, f64::max);
    t_hi += 1.0 + t_hi.abs();
    t_lo -= 1.0 + t_lo.abs();
    // invariant: sum_at(t_lo) <= capacity <= sum_at(t_hi). Safeguarded
    // Newton on tau (S'(tau) = sum of 1 / D_i'' over apps strictly inside
    // their domain); a step leaving the bracket, or no slope (linear
    // models, chords), falls back to bisection. Done when a point meets the
    // capacity within `tol`, or the bracket closes on a jump of S.
    let sum_rate = |tau: f64| -> (f64, f64) {
        curves.iter().fold((0.0, 0.0), |(s, r), c| {
            let w = c.at(tau);
            (s + w, r + c.rate(w))
        })
    };
    let tol = 1e-10 * capacity;
    // Start from the mean marginal slope at the equal split above the
    // floors: near the answer when the models are alike.
    let equal = (capacity - curves.iter().map(|c| c.lo).sum::<f64>()) / curves.len() as f64;
    let start = curves
        .iter()
        .map(|c| c.model.slope(c.lo + equal.max(0.0)))
        .sum::<f64>()
        / curves.len() as f64;
    let (mut t, mut newton) = (start, start > t_lo && start < t_hi);
    let (mut f_lo, mut f_hi) = (sum_at(t_lo) - capacity, sum_at(t_hi) - capacity);
    for step in 0..200 {
        if f_hi - f_lo <= tol || f_lo == 0.0 || f_hi == 0.0 {
            break;
        }
        if !(newton && t > t_lo && t < t_hi) || step % 8 == 7 {
            t = 0.5 * (t_lo + t_hi);
            if t <= t_lo || t >= t_hi {
                break;
            }
        }
        let (s, r) = sum_rate(t);
        let f = s - capacity;
        if f.abs() <= tol {
            return settle_exact(curves, t, capacity);
        }
        if f < 0.0 {
            (t_lo, f_lo) = (t, f);
        } else {
            (t_hi, f_hi) = (t, f);
        }
        newton = r > 0.0;
        if newton {
            t -= f / r;
        }
    }
    let mut w: Vec<f64> = curves.iter().map(|c| c.at(t_lo)).collect();
    let top: Vec<f64> = curves.iter().map(|c| c.at(t_hi)).collect();
    let mut rem = capacity - w.iter().sum::<f64>();
    // Chord jumps whole first (so the answer sits where model = envelope),
    // then the convex slack in proportion, then at most one partial chord.
    let on_chord: Vec<bool> = (0..curves.len())
        .map(|i| curves[i].chord.is_some() && curves[i].in_chord(0.5 * (w[i] + top[i])))
        .collect();
    let mut partial = None;
    for i in 0..curves.len() {
        let gap = top[i] - w[i];
        if gap > 0.0 && on_chord[i] {
            if gap <= rem {
                w[i] = top[i];
                rem -= gap;
            } else if partial.is_none() {
                partial = Some(i);
            }
        }
    }
    let convex_slack: f64 = (0..curves.len())
        .filter(|&i| top[i] > w[i] && !on_chord[i])
        .map(|i| top[i] - w[i])
        .sum();
    if rem > 0.0 && convex_slack > 0.0 {
        let share = (rem / convex_slack).min(1.0);
        for i in 0..curves.len() {
            if top[i] > w[i] && !on_chord[i] {
                let add = (top[i] - w[i]) * share;
                w[i] += add;
                rem -= add;
            }
        }
    }
    if rem > 0.0 {
        if let Some(i) = partial {
            w[i] += rem.min(top[i] - w[i]);
        }
    }
    fix_sum(curves, &mut w, capacity);
    w
}
