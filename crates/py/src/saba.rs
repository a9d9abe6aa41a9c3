//! Saba's fast solver (crates/saba) from Python: eq. 2 of seed 003 for one
//! port (`saba_solve`) or for many ports at once with the GIL released
//! (`saba_solve_ports`, what the controller calls at each reallocation).
//! Errors become `approxnet.SabaError` (a subclass of `ApproxnetError`,
//! raised with the model's or the instance's own message).

use crate::errors::exc::ApproxnetError;
use approxnet_saba::{solve, Allocation, Method, Model};
use pyo3::create_exception;
use pyo3::prelude::*;

create_exception!(
    approxnet,
    SabaError,
    ApproxnetError,
    "A Saba sensitivity model or allocation instance was refused."
);

/// The models from rows of coefficients (lowest power first).
fn models(coeffs: &[Vec<f64>]) -> PyResult<Vec<Model>> {
    coeffs
        .iter()
        .enumerate()
        .map(|(i, c)| Model::new(c).map_err(|e| SabaError::new_err(format!("model {i}: {e}"))))
        .collect()
}

fn method_name(a: &Allocation) -> &'static str {
    match a.method {
        Method::Kkt => "kkt",
        _ => "convex-envelope",
    }
}

/// Eq. 2 for one port: returns `(weights, objective, lower_bound, method)`.
#[pyfunction]
pub(crate) fn saba_solve(
    coeffs: Vec<Vec<f64>>,
    floors: Vec<f64>,
    capacity: f64,
) -> PyResult<(Vec<f64>, f64, f64, &'static str)> {
    let ms = models(&coeffs)?;
    let a = solve(&ms, &floors, capacity).map_err(|e| SabaError::new_err(e.to_string()))?;
    let name = method_name(&a);
    Ok((a.weights, a.objective, a.lower_bound, name))
}

/// Eq. 2 for many ports: `coeffs` holds every app's model once; each port
/// is `(app indices, floors)`. Returns each port's weights, in order.
#[pyfunction]
pub(crate) fn saba_solve_ports(
    py: Python<'_>,
    coeffs: Vec<Vec<f64>>,
    ports: Vec<(Vec<usize>, Vec<f64>)>,
    capacity: f64,
) -> PyResult<Vec<Vec<f64>>> {
    let ms = models(&coeffs)?;
    for (p, (apps, _)) in ports.iter().enumerate() {
        if let Some(&bad) = apps.iter().find(|&&a| a >= ms.len()) {
            return Err(SabaError::new_err(format!(
                "port {p}: app index {bad} out of range ({} models)",
                ms.len()
            )));
        }
    }
    py.allow_threads(|| {
        let mut buf = Vec::new();
        ports
            .iter()
            .enumerate()
            .map(|(p, (apps, floors))| {
                buf.clear();
                buf.extend(apps.iter().map(|&a| ms[a]));
                solve(&buf, floors, capacity)
                    .map(|a| a.weights)
                    .map_err(|e| format!("port {p}: {e}"))
            })
            .collect::<Result<Vec<_>, String>>()
    })
    .map_err(SabaError::new_err)
}

/// Adds Saba's functions and exception to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SabaError", m.py().get_type::<SabaError>())?;
    m.add_function(wrap_pyfunction!(saba_solve, m)?)?;
    m.add_function(wrap_pyfunction!(saba_solve_ports, m)?)?;
    Ok(())
}
