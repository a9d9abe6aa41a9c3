//! Python face of `approxnet_phy::channel` (seed 004 §4, §5.1.2).

use crate::errors::Error;
use approxnet_phy::channel::{self as ch, Modulation, Qam, SymbolMapping};
use pyo3::prelude::*;

/// Parses "ook", "16qam", "1024-qam" (any case).
fn modulation(name: &str) -> Result<Modulation, Error> {
    let n = name.trim().to_ascii_lowercase();
    if n == "ook" {
        return Ok(Modulation::Ook);
    }
    let digits = n
        .strip_suffix("qam")
        .map(|d| d.trim_end_matches('-'))
        .and_then(|d| d.parse::<u32>().ok())
        .ok_or_else(|| {
            Error::ConfigValue(format!(
                "modulation must be 'ook' or '<M>qam' (e.g. '1024qam'), got '{name}'"
            ))
        })?;
    Ok(Modulation::qam(digits)?)
}

/// Parses "full" / "half" / "quarter" (or "M", "M/2", "M/4").
fn mapping(name: &str) -> Result<SymbolMapping, Error> {
    match name.trim().to_ascii_lowercase().as_str() {
        "full" | "m" => Ok(SymbolMapping::Full),
        "half" | "m/2" => Ok(SymbolMapping::Half),
        "quarter" | "m/4" => Ok(SymbolMapping::Quarter),
        _ => Err(Error::ConfigValue(format!(
            "mapping must be 'full', 'half' or 'quarter' (M, M/2, M/4), got '{name}'"
        ))),
    }
}

/// Bit error rate of `modulation` at linear Eb/N0 `ebn0` (eq. 2-4).
#[pyfunction]
fn channel_ber(modulation_name: &str, ebn0: f64) -> Result<f64, Error> {
    Ok(modulation(modulation_name)?.ber(ebn0)?)
}

/// The linear Eb/N0 at which `modulation` has BER `target_ber`.
#[pyfunction]
fn channel_required_ebn0(modulation_name: &str, target_ber: f64) -> Result<f64, Error> {
    Ok(ch::required_ebn0(modulation(modulation_name)?, target_ber)?)
}

/// §4.2.1 for `m`-QAM at `nominal_ber`: `(ebn0, ser_component, diagonal,
/// two_hop)`.
#[pyfunction]
fn channel_symbol_errors(m: u32, nominal_ber: f64) -> Result<(f64, f64, f64, f64), Error> {
    let s = ch::symbol_errors(Qam::new(m)?, nominal_ber)?;
    Ok((s.ebn0, s.ser_component, s.diagonal, s.two_hop))
}

/// `(BER, bandwidth factor)` of a symbol mapping on `m`-QAM at `nominal_ber`.
#[pyfunction]
fn channel_mapping(mapping_name: &str, m: u32, nominal_ber: f64) -> Result<(f64, f64), Error> {
    let s = mapping(mapping_name)?;
    Ok((s.ber(Qam::new(m)?, nominal_ber)?, s.bandwidth_factor()))
}

/// `1 - (1 - pb)^hops`, computed stably.
#[pyfunction]
fn channel_end_to_end_ber(pb: f64, hops: u32) -> Result<f64, Error> {
    Ok(ch::end_to_end_ber(pb, hops)?)
}

/// `f_p / (t_p + f_p - t_p f_p)` (§5.1.2).
#[pyfunction]
fn channel_average_bandwidth_factor(t_p: f64, f_p: f64) -> Result<f64, Error> {
    Ok(ch::average_bandwidth_factor(t_p, f_p)?)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(channel_ber, m)?)?;
    m.add_function(wrap_pyfunction!(channel_required_ebn0, m)?)?;
    m.add_function(wrap_pyfunction!(channel_symbol_errors, m)?)?;
    m.add_function(wrap_pyfunction!(channel_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(channel_end_to_end_ber, m)?)?;
    m.add_function(wrap_pyfunction!(channel_average_bandwidth_factor, m)?)?;
    Ok(())
}
