//! Reductions. An input is folded into an accumulator buffer whose layout has
//! stride 0 along reduced dims, so one loop serves "sum over dim 1", "over
//! dims (0, 2)" and "over everything" alike.

use crate::iter::Plan;
use crate::{at, Src};
use ferrotorch_core::Element;
use rayon::prelude::*;

/// Folds every element of `a` into `acc[acc_off]`, where `acc_strides` maps the
/// input's index space onto the accumulator (0 along reduced dims).
pub fn fold<T: Element, A: Copy + Send + Sync>(
    a: Src,
    acc: &mut [A],
    acc_strides: &[isize],
    f: impl Fn(A, T) -> A + Sync,
) {
    let plan = Plan::<2>::new(&a.layout.shape, [&a.layout.strides, acc_strides], [a.layout.offset, 0]);
    let base = a.base;
    plan.for_each(|off, n, st| {
        // SAFETY: the plan yields offsets inside `a`'s layout and inside `acc`
        // (acc_strides describe a dense buffer of acc.len() elements).
        unsafe {
            let x = at::<T>(base, off[0]);
            let mut o = off[1];
            if st[1] == 0 {
                let mut v = *acc.get_unchecked(o as usize);
                for i in 0..n as isize {
                    v = f(v, *x.offset(i * st[0]));
                }
                *acc.get_unchecked_mut(o as usize) = v;
            } else {
                for i in 0..n as isize {
                    let slot = acc.get_unchecked_mut(o as usize);
                    *slot = f(*slot, *x.offset(i * st[0]));
                    o += st[1];
                }
            }
        }
    });
}

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
