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

/// Sum of a contiguous slice in `f64` (floats) using per-thread blocks, so a full
/// reduction of 16M elements uses every core and keeps rounding error small.
pub fn sum_contiguous_f64<T: Element>(data: &[T]) -> f64 {
    const BLOCK: usize = 1 << 14;
    if data.len() < crate::iter::GRAIN {
        return data.iter().fold(0.0, |s, &v| s + v.to_f64());
    }
    data.par_chunks(BLOCK).map(|c| c.iter().fold(0.0, |s, &v| s + v.to_f64())).sum()
}
