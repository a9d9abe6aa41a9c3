//! The simulator from Python: load a scenario (file or TOML text), apply
//! `key.path=value` overrides, run it with the GIL released, and write the
//! simulator's own record files (jobs.csv, flows.csv, queues.csv,
//! summary.json, ...) to a directory that the Python side reads as frames.

use crate::errors::{Error, Result};
use approxnet_sim::output::{write_all, Summary};
use approxnet_sim::scenario;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Runs one scenario and writes its records under `out_dir`; returns the
/// summary as a JSON string. `scenario` is a path when `is_path`, else TOML
/// text.
#[pyfunction]
#[pyo3(signature = (scenario, is_path, out_dir, overrides = Vec::new(), flows = true))]
pub(crate) fn sim_run(
    py: Python<'_>,
    scenario: String,
    is_path: bool,
    out_dir: PathBuf,
    overrides: Vec<String>,
    flows: bool,
) -> Result<String> {
    py.allow_threads(move || {
        let (file, stem) = if is_path {
            let path = PathBuf::from(&scenario);
            let stem = path
                .file_stem()
                .map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
            (scenario::load(&path, &overrides)?, stem)
        } else {
            (scenario::parse(&scenario, &overrides)?, "scenario".into())
        };
        let name = if file.name.is_empty() {
            stem
        } else {
            file.name.clone()
        };
        let mut built = scenario::build(&file)?;
        let t0 = std::time::Instant::now();
        built.sim.run();
        let wall = t0.elapsed().as_secs_f64();
        built.sim.finalize();
        let summary = Summary::compute(&name, &built.sim, &built.classes, wall);
        write_all(&out_dir, &built.sim, &built.classes, &summary, flows)
            .map_err(|e| Error::Output(format!("writing {}: {e}", out_dir.display())))?;
        Ok(summary.json())
    })
}

/// Names of the transports / schemes a scenario may use.
#[pyfunction]
pub(crate) fn sim_schemes() -> Vec<&'static str> {
    approxnet_sim::scheme::NAMES.to_vec()
}

/// Names of the message-size distributions a scenario may use.
#[pyfunction]
pub(crate) fn sim_sizes() -> Vec<&'static str> {
    approxnet_sim::workload::cdf::NAMES.to_vec()
}
