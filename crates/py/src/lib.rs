//! # approxnet-py: the Python module `approxnet._native`
//!
//! A thin PyO3 layer over the Rust crates: the sans-IO [`approxnet_proto`]
//! endpoint, jobs and events as Python objects, the real UDP runtime
//! (`SocketEndpoint`, over [`approxnet_net`]), the two-endpoint harness
//! (`transfer`) and the simulator (`sim_run`). The Rust crates know nothing
//! of Python; the package `python/approxnet` re-exports this module with an
//! explicit `__all__` and typed stubs (`_native.pyi`).
//!
//! ## I/O contract
//! The endpoint is driven exactly as in Rust, with time as an integer number
//! of nanoseconds chosen by the caller. `transfer`, `sim_run` and every
//! waiting call of `SocketEndpoint` release the GIL while they run (the
//! latter in short slices, so that timeouts and Ctrl-C end them); `sim_run` writes its record files to a directory the
//! caller names. Every Rust error becomes an `approxnet.ApproxnetError`
//! subclass in one place ([`errors`]).

mod approx_types;
mod config;
mod endpoint;
mod errors;
mod event;
mod harness;
mod job;
mod net;
mod sim;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    event::register(m)?;
    m.add_class::<config::PyConfig>()?;
    m.add_class::<config::PyLinkConfig>()?;
    m.add_class::<job::PyGroup>()?;
    m.add_class::<job::PyJob>()?;
    m.add_class::<endpoint::PyEndpoint>()?;
    m.add_class::<endpoint::PyTransmit>()?;
    m.add_class::<net::PySocketEndpoint>()?;
    m.add_class::<harness::PyTransfer>()?;
    m.add_function(wrap_pyfunction!(job::must_deliver, m)?)?;
    m.add_function(wrap_pyfunction!(job::queue_limits, m)?)?;
    m.add_function(wrap_pyfunction!(harness::transfer, m)?)?;
    m.add_function(wrap_pyfunction!(net::perf_main, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_run, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_schemes, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_sizes, m)?)?;
    approx_types::register(m)?;
    Ok(())
}
