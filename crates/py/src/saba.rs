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
/// is `(app indices, floors)`. Returns each port's weights, in order. The
/// ports are shared out over `threads` threads (0: one per CPU).
#[pyfunction]
#[pyo3(signature = (coeffs, ports, capacity, threads = 0))]
pub(crate) fn saba_solve_ports(
    py: Python<'_>,
    coeffs: Vec<Vec<f64>>,
    ports: Vec<(Vec<usize>, Vec<f64>)>,
    capacity: f64,
    threads: usize,
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
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let chunk = ports.len().div_ceil(threads.max(1)).max(1);
    py.allow_threads(|| {
        let solve_chunk = |offset: usize, part: &[(Vec<usize>, Vec<f64>)]| {
            let mut buf = Vec::new();
            part.iter()
                .enumerate()
                .map(|(i, (apps, floors))| {
                    buf.clear();
                    buf.extend(apps.iter().map(|&a| ms[a]));
                    solve(&buf, floors, capacity)
                        .map(|a| a.weights)
                        .map_err(|e| format!("port {}: {e}", offset + i))
                })
                .collect::<Result<Vec<_>, String>>()
        };
        if threads <= 1 || ports.len() < 64 {
            return solve_chunk(0, &ports);
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = ports
                .chunks(chunk)
                .enumerate()
                .map(|(k, part)| scope.spawn(move || solve_chunk(k * chunk, part)))
                .collect();
            let mut out = Vec::with_capacity(ports.len());
            for h in handles {
                out.extend(
                    h.join()
                        .map_err(|_| "a solver thread panicked".to_string())??,
                );
            }
            Ok(out)
        })
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
