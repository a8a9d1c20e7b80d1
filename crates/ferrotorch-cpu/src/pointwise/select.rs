//! `where`: the elementwise choice between two operands by a bool condition.

use crate::iter::Plan;
use crate::{Dst, Src};
use ferrotorch_core::{dispatch_dtype, DType, Element, Result};

/// `out = cond ? x : y` elementwise: `cond` is bool, `x`, `y` and `out` are
/// of `dtype`, all broadcast to `out`'s shape.
pub fn select(dtype: DType, out: Dst, cond: Src, x: Src, y: Src) -> Result<()> {
    let (ol, lc, lx, ly) = (out.layout, cond.layout, x.layout, y.layout);
    let plan = Plan::<4>::new(&ol.shape, [&ol.strides, &lc.strides, &lx.strides, &ly.strides], [ol.offset, lc.offset, lx.offset, ly.offset]);
    dispatch_dtype!(dtype, T => select_loop::<T>(&plan, out, cond, x, y));
    Ok(())
}

fn select_loop<T: Element>(plan: &Plan<4>, out: Dst, cond: Src, x: Src, y: Src) {
    // Addresses as integers so the closure can be shared across threads; each
    // run writes only its own elements of `out`.
    let (ou, cu) = (out.base as usize, cond.base as usize);
    let (xu, yu) = (x.base as usize, y.base as usize);
    plan.for_each_par(|off, n, st| {
        let (o, cb) = (ou as *mut T, cu as *const bool);
        let (xb, yb) = (xu as *const T, yu as *const T);
        for i in 0..n as isize {
            // SAFETY: the plan walks layouts that fit their storages, and the
            // op layer gives a fresh `out` that overlaps no input.
            unsafe {
                let pick = *cb.offset(off[1] + i * st[1]);
                *o.offset(off[0] + i * st[0]) = if pick { *xb.offset(off[2] + i * st[2]) } else { *yb.offset(off[3] + i * st[3]) };
            }
        }
    });
}
