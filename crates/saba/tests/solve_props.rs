//! Properties of the eq. 2 solver on random seeded instances: the
//! constraints hold, no feasible exchange improves a convex answer, and the
//! certified bound holds against random feasible points.

use approxnet_saba::{solve, Method, Model, SolveError};
use proptest::prelude::*;

/// `D(b) = 1 + s x + q x^2 + r x^3` with `x = 1 - b`, expanded into
/// powers of `b`.
fn shape(s: f64, q: f64, r: f64) -> Model {
    let c0 = 1.0 + s + q + r;
    let c1 = -s - 2.0 * q - 3.0 * r;
    let c2 = q + 3.0 * r;
    let c3 = -r;
    Model::new(&[c0, c1, c2, c3]).unwrap()
}

fn convex_model() -> impl Strategy<Value = Model> {
    (0.0..4.0f64, 0.0..6.0f64, 0.0..6.0f64).prop_map(|(s, q, r)| shape(s, q, r))
}

fn any_model() -> impl Strategy<Value = Model> {
    (0.0..4.0f64, -3.0..6.0f64, -6.0..6.0f64).prop_map(|(s, q, r)| shape(s, q, r))
}

fn objective(models: &[Model], w: &[f64]) -> f64 {
    models.iter().zip(w).map(|(m, &x)| m.value(x)).sum()
}

fn check_constraints(w: &[f64], floors: &[f64], cap: f64) {
    let sum: f64 = w.iter().sum();
    assert!((sum - cap).abs() < 1e-9, "sum {sum} != {cap}");
    for (x, f) in w.iter().zip(floors) {
        assert!(*x >= f - 1e-12, "weight {x} under floor {f}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn convex_is_optimal(models in prop::collection::vec(convex_model(), 1..20), cap in 0.3..1.0f64, fl in 0.0..0.02f64) {
        let floors = vec![fl * cap; models.len()];
        let a = solve(&models, &floors, cap).unwrap();
        prop_assert_eq!(a.method, Method::Kkt);
        check_constraints(&a.weights, &floors, cap);
        prop_assert!((a.objective - a.lower_bound).abs() < 1e-9);
        // no pairwise exchange of any size improves it
        for i in 0..models.len() {
            for j in 0..models.len() {
                if i == j { continue; }
                for frac in [1e-4, 1e-2, 0.1, 0.5, 1.0] {
                    let d = (a.weights[i] - floors[i]) * frac;
                    let mut w = a.weights.clone();
                    w[i] -= d;
                    w[j] += d;
                    prop_assert!(objective(&models, &w) >= a.objective - 1e-9);
                }
            }
        }
    }

    #[test]
    fn nonconvex_bound_holds(models in prop::collection::vec(any_model(), 1..12), cap in 0.3..1.0f64, seed in 0u64..1000) {
        let floors = vec![0.01; models.len()];
        let a = solve(&models, &floors, cap).unwrap();
        check_constraints(&a.weights, &floors, cap);
        prop_assert!(a.lower_bound <= a.objective + 1e-9);
        // the lower bound is below every feasible point we try
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        for _ in 0..50 {
            let mut raw: Vec<f64> = (0..models.len()).map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64 + 1e-9
            }).collect();
            let t: f64 = raw.iter().sum();
            let spare = cap - 0.01 * models.len() as f64;
            for r in raw.iter_mut() { *r = 0.01 + spare * *r / t; }
            prop_assert!(a.lower_bound <= objective(&models, &raw) + 1e-9);
        }
    }
}

#[test]
fn linear_models_go_to_the_steepest() {
    let steep = Model::new(&[3.0, -2.0]).unwrap();
    let flat = Model::new(&[1.5, -0.5]).unwrap();
    let a = solve(&[flat, steep], &[0.05, 0.05], 1.0).unwrap();
    assert!((a.weights[0] - 0.05).abs() < 1e-12);
    assert!((a.weights[1] - 0.95).abs() < 1e-12);
}

#[test]
fn equal_models_split_equally() {
    let m = Model::new(&[4.0, -6.0, 3.0]).unwrap();
    let a = solve(&[m, m, m, m], &[0.0; 4], 1.0).unwrap();
    for w in a.weights {
        assert!((w - 0.25).abs() < 1e-9);
    }
}

#[test]
fn bad_instances_are_named() {
    let m = Model::new(&[2.0, -1.0]).unwrap();
    assert_eq!(
        solve(&[m], &[0.0], f64::NAN).unwrap_err().to_string(),
        "capacity must be a finite number above 0, got NaN"
    );
    assert!(matches!(
        solve(&[m], &[], 1.0),
        Err(SolveError::FloorCount {
            models: 1,
            floors: 0
        })
    ));
    assert!(matches!(
        solve(&[m], &[-0.1], 1.0),
        Err(SolveError::Floor { index: 0, .. })
    ));
    assert!(matches!(
        solve(&[m, m], &[0.6, 0.6], 1.0),
        Err(SolveError::Infeasible { .. })
    ));
    assert!(solve(&[], &[], 1.0).unwrap().weights.is_empty());
}
