//! The full sum of a contiguous buffer (the fast path of `x.sum()`); every
//! other reduction goes through [`crate::reduction`].

use ferrotorch_core::Element;
use rayon::prelude::*;

/// Sum of a contiguous slice in `f64`, in blocks spread over the threads (a
/// full reduction of 16M elements runs at memory bandwidth); f32/f64 blocks are
/// summed with the vectorised multi-accumulator kernels. Blocks are combined in
/// order, so the result does not depend on the thread count.
pub fn sum_contiguous_f64<T: Element>(data: &[T]) -> f64 {
    const BLOCK: usize = 1 << 16;
    let isa = crate::simd::isa();
    let block = |c: &[T]| -> f64 {
        use crate::simd::sum::{sum_f32, sum_f64};
        use ferrotorch_core::DType;
        match T::DTYPE {
            // SAFETY: T is f32 (resp. f64) when its dtype says so.
            DType::Float32 => sum_f32(isa, unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f32, c.len()) }),
            // SAFETY: as above.
            DType::Float64 => sum_f64(isa, unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f64, c.len()) }),
            _ => c.iter().fold(0.0, |s, &v| s + v.to_f64()),
        }
    };
    if data.len() <= BLOCK {
        return block(data);
    }
    let parts: Vec<f64> = data.par_chunks(BLOCK).map(block).collect();
    parts.iter().sum()
}
