//! # approxnet-saba: Saba's per-port bandwidth allocation (seed 003 §4-5)
//!
//! Pure computation, no I/O, no clock, no randomness:
//!
//! * [`Model`]: a validated sensitivity model, eq. 1 of seed 003
//!   (`D(b) = c0 + c1 b + c2 b^2 + c3 b^3`, slowdown as a function of the
//!   bandwidth share `b` in (0, 1]);
//! * [`solve`]: eq. 2 for one switch output port — minimise `Σ D_i(w_i)`
//!   subject to `Σ w_i = C` and `w_i >= floor_i` — exactly, by the KKT
//!   conditions (bisection on the Lagrange multiplier) when every model is
//!   convex on its domain, and by the convex-envelope relaxation with a
//!   certified gap otherwise (see [`solve`]).
//!
//! The Python layer (`approxnet.saba`) holds the profiler, the sensitivity
//! table, the clustering and the service; this crate is its fast solver.

mod model;
mod solve;

pub use model::{Model, ModelError, MAX_DEGREE};
pub use solve::{solve, Allocation, Method, SolveError};
