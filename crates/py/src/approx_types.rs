//! Python face of `approxnet_phy` (seed 004): approximate data types
//! (protection masks, the byte-plane layout, transmission through the
//! bit-error channel) here, the channel models in [`channel`]. Arrays cross
//! as flat `uint8` views of the caller's NumPy buffer (no copy on the way
//! in); the work runs with the GIL released. `approxnet.approx_types` and
//! `approxnet.interconnect.channel` wrap these functions.

mod channel;

use crate::errors::Error;
use approxnet_phy::approx_types::{self as at, DType, PlaneLayout};
use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;

fn layout(dtype: &str, level: u32) -> Result<PlaneLayout, Error> {
    Ok(PlaneLayout::new(DType::from_name(dtype)?, level)?)
}

/// The protected bits of one scalar word of `dtype` (top `level` bits).
#[pyfunction]
fn approx_word_mask(dtype: &str, level: u32) -> Result<u64, Error> {
    Ok(at::word_mask(DType::from_name(dtype)?, level)?)
}

/// The fraction of a message's bits that `level` protects.
#[pyfunction]
fn approx_protected_fraction(dtype: &str, level: u32) -> Result<f64, Error> {
    Ok(at::protected_fraction(DType::from_name(dtype)?, level)?)
}

/// Sign and exponent bits per word of a float type; None for integers.
#[pyfunction]
fn approx_header_bits(dtype: &str) -> Result<Option<u32>, Error> {
    Ok(DType::from_name(dtype)?.header_bits())
}

/// `(bits per word, words per element)` of `dtype`.
#[pyfunction]
fn approx_dtype_shape(dtype: &str) -> Result<(u32, usize), Error> {
    let d = DType::from_name(dtype)?;
    Ok((d.word_bits(), d.words_per_element()))
}

/// The precise prefix length of a laid-out buffer of `nbytes` bytes.
#[pyfunction]
fn approx_prefix_len(nbytes: usize, dtype: &str, level: u32) -> Result<usize, Error> {
    Ok(layout(dtype, level)?.prefix_len(nbytes)?)
}

/// The byte planes of `data` (a flat uint8 view of whole elements) and the
/// precise prefix length.
#[pyfunction]
fn approx_to_planes<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
    dtype: &str,
    level: u32,
) -> Result<(Bound<'py, PyArray1<u8>>, usize), Error> {
    let l = layout(dtype, level)?;
    let src = data
        .as_slice()
        .map_err(|e| Error::ConfigValue(e.to_string()))?;
    let (planes, prefix) = py.allow_threads(|| {
        let mut out = vec![0u8; src.len()];
        l.to_planes(src, &mut out).map(|p| (out, p))
    })?;
    Ok((PyArray1::from_vec(py, planes), prefix))
}

/// Writes the elements of the byte planes `planes` into `out` (a flat
/// writable uint8 view of the same length).
#[pyfunction]
fn approx_from_planes(
    py: Python<'_>,
    planes: PyReadonlyArray1<'_, u8>,
    mut out: PyReadwriteArray1<'_, u8>,
    dtype: &str,
    level: u32,
) -> Result<(), Error> {
    let l = layout(dtype, level)?;
    let src = planes
        .as_slice()
        .map_err(|e| Error::ConfigValue(e.to_string()))?;
    let dst = out
        .as_slice_mut()
        .map_err(|e| Error::ConfigValue(e.to_string()))?;
    py.allow_threads(|| l.from_planes(src, dst))?;
    Ok(())
}

/// Sends `data` (a flat writable uint8 view of whole elements) through the
/// bit-error channel in place; returns `(prefix_len, protected_flips,
/// unprotected_flips)`.
#[pyfunction]
#[pyo3(signature = (data, dtype, level, ber, seed, protected_ber = 0.0))]
fn approx_transmit(
    py: Python<'_>,
    mut data: PyReadwriteArray1<'_, u8>,
    dtype: &str,
    level: u32,
    ber: f64,
    seed: u64,
    protected_ber: f64,
) -> Result<(usize, u64, u64), Error> {
    let l = layout(dtype, level)?;
    let buf = data
        .as_slice_mut()
        .map_err(|e| Error::ConfigValue(e.to_string()))?;
    let s = py.allow_threads(|| at::transmit(&l, buf, ber, protected_ber, seed))?;
    Ok((s.prefix_len, s.protected_flips, s.unprotected_flips))
}

/// Adds this module's functions to `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(approx_word_mask, m)?)?;
    m.add_function(wrap_pyfunction!(approx_protected_fraction, m)?)?;
    m.add_function(wrap_pyfunction!(approx_header_bits, m)?)?;
    m.add_function(wrap_pyfunction!(approx_dtype_shape, m)?)?;
    m.add_function(wrap_pyfunction!(approx_prefix_len, m)?)?;
    m.add_function(wrap_pyfunction!(approx_to_planes, m)?)?;
    m.add_function(wrap_pyfunction!(approx_from_planes, m)?)?;
    m.add_function(wrap_pyfunction!(approx_transmit, m)?)?;
    channel::register(m)
}
