//! Runs a loaded scenario in the mode it names and writes its records:
//! the one entry point of the `approxnet-sim` binary and the Python layer.

use crate::fluid::output::{write_fluid, FluidSummary};
use crate::output::{write_all, Summary};
use crate::scenario::{self, ScenarioError, ScenarioFile};
use std::path::Path;
use thiserror::Error;

/// Why a run produced no records.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The scenario could not be built.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The records could not be written.
    #[error("writing {path}: {source}")]
    Output {
        /// The directory.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// What a finished run reports.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// The one-screen summary.
    pub text: String,
    /// summary.json.
    pub json: String,
}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Write flows.csv.
    pub flows: bool,
    /// A start line and the packet mode's progress on stderr.
    pub progress: bool,
    /// The process exits right after: skip freeing the simulation (millions
    /// of packets, flows and states freed one by one only cost time).
    pub exiting: bool,
}

/// Builds, runs and records `file` under `out`.
pub fn run_scenario(
    file: &ScenarioFile,
    name: &str,
    out: &Path,
    opts: RunOptions,
) -> Result<RunReport, RunError> {
    let RunOptions {
        flows,
        progress,
        exiting,
    } = opts;
    let io_err = |e| RunError::Output {
        path: out.display().to_string(),
        source: e,
    };
    if file.mode == "flow" {
        if file.output.trace_packets.unwrap_or(0) > 0 {
            return Err(scenario::invalid(
                "output.trace_packets",
                "the flow mode has no packets",
                "0 in mode = \"flow\"",
            )
            .into());
        }
        let mut b = scenario::build_fluid(file)?;
        if progress {
            eprintln!(
                "[approxnet-sim] {}: flow mode, {} hosts, {} links, {} flows, {} jobs, {} staged jobs, {} ms",
                name,
                b.sim.net.hosts(),
                b.sim.net.graph.links.len(),
                b.sim.flows.len(),
                b.sim.jobs.len(),
                b.sim.staged.len(),
                file.duration_ms
            );
        }
        let t0 = std::time::Instant::now();
        b.sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let s = FluidSummary::compute(name, &b.sim, &b.classes, wall);
        write_fluid(
            out,
            &b.sim,
            &b.classes,
            &b.staged_names,
            &s,
            flows,
            file.fluid.record_paths,
        )
        .map_err(io_err)?;
        if exiting {
            std::mem::forget(b);
        }
        return Ok(RunReport {
            text: s.text(),
            json: s.json(),
        });
    }
    let mut built = scenario::build(file)?;
    if progress {
        built.sim.show_progress();
        eprintln!(
            "[approxnet-sim] {}: {} hosts, {} ports, {} jobs, {} ms",
            name,
            built.sim.net.host_count(),
            built.sim.net.ports.len(),
            built.sim.job_count(),
            file.duration_ms
        );
    }
    // only the records are read after the run
    built.sim.reuse_flow_slots(flows);
    let t0 = std::time::Instant::now();
    built.sim.run();
    let wall = t0.elapsed().as_secs_f64();
    built.sim.finalize();
    let summary = Summary::compute(name, &built.sim, &built.classes, wall);
    write_all(out, &built.sim, &built.classes, &summary, flows).map_err(io_err)?;
    let report = RunReport {
        text: summary.text(),
        json: summary.json(),
    };
    if exiting {
        std::mem::forget(built);
    }
    Ok(report)
}
