//! The CPU's kernels for the elementwise ops of the core vocabulary
//! ([`ferrotorch_core::op`]): one match per op kind, dispatching on dtype
//! once per call.

mod binary;
mod select;
mod ternary;
mod unary;

pub use binary::{binary, floor_div};
pub use select::select;
pub use ternary::ternary;
pub use unary::{rint, unary};
