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
        // SAFETY: the plan walks layouts that fit their storages, and the
        // op layer gives a fresh `out` that overlaps no input.
        unsafe {
            if st[0] == 1 && st[1] == 1 && (st[2] | st[3]) & !1 == 0 {
                // `out` and `cond` contiguous, each value operand contiguous
                // or one broadcast scalar (`where(mask, g, 0)` of a gradient):
                // a branch-free loop over slices that vectorises.
                let out = std::slice::from_raw_parts_mut(o.offset(off[0]), n);
                let pick = std::slice::from_raw_parts(cb.offset(off[1]), n);
                let (xp, yp) = (xb.offset(off[2]), yb.offset(off[3]));
                // Zipped iterators: every operand is read unconditionally,
                // so the choice compiles to a blend, not a branch.
                match (st[2], st[3]) {
                    (1, 1) => {
                        let (x, y) = (std::slice::from_raw_parts(xp, n), std::slice::from_raw_parts(yp, n));
                        for (((o, &c), &x), &y) in out.iter_mut().zip(pick).zip(x).zip(y) {
                            *o = if c { x } else { y };
                        }
                    }
                    (1, _) => {
                        let (x, y) = (std::slice::from_raw_parts(xp, n), *yp);
                        for ((o, &c), &x) in out.iter_mut().zip(pick).zip(x) {
                            *o = if c { x } else { y };
                        }
                    }
                    (_, 1) => {
                        let (x, y) = (*xp, std::slice::from_raw_parts(yp, n));
                        for ((o, &c), &y) in out.iter_mut().zip(pick).zip(y) {
                            *o = if c { x } else { y };
                        }
                    }
                    _ => {
                        let (x, y) = (*xp, *yp);
                        for (o, &c) in out.iter_mut().zip(pick) {
                            *o = if c { x } else { y };
                        }
                    }
                }
                return;
            }
            for i in 0..n as isize {
                let pick = *cb.offset(off[1] + i * st[1]);
                *o.offset(off[0] + i * st[0]) = if pick { *xb.offset(off[2] + i * st[2]) } else { *yb.offset(off[3] + i * st[3]) };
            }
        }
    });
}
