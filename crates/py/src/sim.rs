//! The simulator from Python: load a scenario (file or TOML text), apply
//! `key.path=value` overrides, run it with the GIL released, and write the
//! simulator's own record files (jobs.csv, flows.csv, queues.csv,
//! summary.json, ...) to a directory that the Python side reads as frames.

use crate::errors::{Error, Result};
use approxnet_sim::run::{run_scenario, RunError, RunOptions};
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
        let opts = RunOptions {
            flows,
            progress: false,
            exiting: false,
        };
        let report = run_scenario(&file, &name, &out_dir, opts).map_err(|e| match e {
            RunError::Scenario(e) => Error::from(e),
            e => Error::Output(e.to_string()),
        })?;
        Ok(report.json)
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
