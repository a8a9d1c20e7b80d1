//! Indexing: advanced `__getitem__`/`__setitem__` (`index`, `index_put_`),
//! gather/scatter and the `index_*` family, masked ops, `where`, `nonzero`.
//!
//! Every op turns its indices into storage offsets once (dtype-free), then
//! moves data with the two generic loops in `kernels`.

pub mod advanced;
pub mod kernels;
pub mod masked;
pub mod scatter;

pub use advanced::TensorIndex;
pub use kernels::Reduce;
pub use masked::where_;
pub use scatter::ScatterReduce;
