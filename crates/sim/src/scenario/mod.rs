//! Scenario files: read a TOML file, apply `--set key=value` overrides,
//! check every value, and build a ready-to-run [`Simulator`].

mod build;
mod classes;
mod fluid;
pub mod schema;
mod switch;
mod topology;
pub use topology::topology_report;

use approxnet_proto::time::Duration;
pub use build::{build, Built};
pub use fluid::{build_fluid, FluidBuilt};
pub use schema::ScenarioFile;
use std::path::Path;
use thiserror::Error;

/// Why a scenario could not be loaded or built.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown keys / wrong types.
    #[error("scenario: {0}")]
    Parse(String),
    /// A value is out of range or not one of the allowed names.
    #[error("scenario key `{key}`: {msg} (allowed: {allowed})")]
    Invalid {
        /// Dotted key.
        key: String,
        /// What is wrong.
        msg: String,
        /// What would be accepted.
        allowed: String,
    },
    /// A `--set` override is not `key=value`.
    #[error("override {0:?}: expected key.path=value, e.g. jobs.0.msr=0.5")]
    Override(String),
}

/// Shorthand for an [`ScenarioError::Invalid`].
pub(crate) fn invalid(
    key: impl Into<String>,
    msg: impl Into<String>,
    allowed: impl Into<String>,
) -> ScenarioError {
    ScenarioError::Invalid {
        key: key.into(),
        msg: msg.into(),
        allowed: allowed.into(),
    }
}

/// Microseconds as a [`Duration`].
pub(crate) fn us(x: f64) -> Duration {
    Duration::from_nanos((x * 1e3).round() as u64)
}

/// `v` if it is a finite number above 0, else an error naming `key`.
pub(crate) fn positive(key: &str, v: f64) -> Result<f64, ScenarioError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(invalid(key, format!("{v} is not a positive number"), "> 0"))
    }
}

/// Reads a scenario file and applies overrides.
pub fn load(path: &Path, overrides: &[String]) -> Result<ScenarioFile, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    parse(&text, overrides)
}

/// Parses scenario text and applies `key.path=value` overrides (array
/// elements by index: `jobs.0.scheme=udp`).
pub fn parse(text: &str, overrides: &[String]) -> Result<ScenarioFile, ScenarioError> {
    if overrides.is_empty() {
        return toml::from_str(text).map_err(|e| ScenarioError::Parse(e.to_string()));
    }
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| ScenarioError::Parse(e.to_string()))?;
    for o in overrides {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| ScenarioError::Override(o.clone()))?;
        let value = toml::from_str::<toml::Table>(&format!("x = {v}"))
            .ok()
            .and_then(|mut t| t.remove("x"))
            .unwrap_or_else(|| toml::Value::String(v.to_string()));
        set_path(&mut table, k.trim(), value).ok_or_else(|| ScenarioError::Override(o.clone()))?;
    }
    let text = toml::to_string(&table).map_err(|e| ScenarioError::Parse(e.to_string()))?;
    toml::from_str(&text).map_err(|e| ScenarioError::Parse(e.to_string()))
}

fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Option<()> {
    let mut parts = key.split('.');
    let first = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    if rest.is_empty() {
        table.insert(first.to_string(), value);
        return Some(());
    }
    let mut cur = table
        .entry(first.to_string())
        .or_insert_with(|| toml::Value::Table(Default::default()));
    for (i, p) in rest.iter().enumerate() {
        let is_last = i + 1 == rest.len();
        match cur {
            toml::Value::Table(t) => {
                if is_last {
                    t.insert(p.to_string(), value);
                    return Some(());
                }
                cur = t
                    .entry(p.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()));
            }
            toml::Value::Array(a) => {
                let idx: usize = p.parse().ok()?;
                let slot = a.get_mut(idx)?;
                if is_last {
                    *slot = value;
                    return Some(());
                }
                cur = slot;
            }
            _ => return None,
        }
    }
    None
}
