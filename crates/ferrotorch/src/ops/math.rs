//! The CPU backend's scalar math, re-exported for the op-layer composites
//! that still compute on host values (creation's ranges, the ternary ops).

pub use ferrotorch_cpu::real::{not_impl, Compute, Real};
