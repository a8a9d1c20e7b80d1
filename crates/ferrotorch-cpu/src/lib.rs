//! CPU kernels. Every kernel works on raw storage pointers described by a
//! [`ferrotorch_core::Layout`]; dtype dispatch happens once per call, and the
//! loops underneath are generic.
//!
//! The single [`iter`] module drives every elementwise loop: it broadcasts,
//! drops unit dims, merges dims contiguous across all operands, and hands the
//! inner loops runs of `(offsets, length, strides)`.

pub mod backend;
pub mod binary;
pub mod cascade;
pub mod complex;
pub mod copy;
pub mod dense;
pub mod elementwise;
pub mod fft;
pub mod index;
pub mod iter;
pub mod linalg;
pub mod matmul;
pub mod nn;
pub mod norm;
pub mod optim;
pub mod parallel;
pub mod pointwise;
pub mod pool;
pub mod rnn;
pub mod real;
pub mod reduction;
pub mod simd;
pub mod sort;
pub mod special;
pub mod stl_sort;
pub mod unary;

pub use ferrotorch_core::backend::{Dst, Src};
pub use ferrotorch_core::random;
pub use backend::Cpu;

/// Element pointer at an element offset from `base`.
///
/// # Safety
/// `base + off * size_of::<T>()` must stay inside the storage allocation.
#[inline(always)]
pub(crate) unsafe fn at<T>(base: *const u8, off: isize) -> *const T {
    (base as *const T).offset(off)
}

/// Mutable element pointer at an element offset from `base`.
///
/// # Safety
/// As for [`at`].
#[inline(always)]
pub(crate) unsafe fn at_mut<T>(base: *mut u8, off: isize) -> *mut T {
    (base as *mut T).offset(off)
}

#[cfg(test)]
mod unary_tests;
#[cfg(test)]
mod reduction_tests;
