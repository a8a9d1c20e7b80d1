//! Elementwise ops of three operands ([`TernaryOp`]).

use crate::iter::Plan;
use crate::{Dst, Src};
use ferrotorch_core::op::TernaryOp;
use ferrotorch_core::{DType, Element, Error, Result};

/// `out = op(a, b, c)` elementwise, every operand of `dtype` and broadcast
/// to `out`'s shape.
pub fn ternary(op: TernaryOp, dtype: DType, out: Dst, a: Src, b: Src, c: Src) -> Result<()> {
    let (ol, la, lb, lc) = (out.layout, a.layout, b.layout, c.layout);
    let plan = Plan::<4>::new(&ol.shape, [&ol.strides, &la.strides, &lb.strides, &lc.strides], [ol.offset, la.offset, lb.offset, lc.offset]);
    match (op, dtype) {
        (TernaryOp::MulAdd, DType::Float32) => ternary_loop::<f32>(&plan, out, a, b, c, f32::mul_add),
        (TernaryOp::MulAdd, DType::Float64) => ternary_loop::<f64>(&plan, out, a, b, c, f64::mul_add),
        (op, d) => return Err(Error::runtime(format!("{op:?}: no CPU kernel for {d:?}"))),
    }
    Ok(())
}

fn ternary_loop<T: Element>(plan: &Plan<4>, out: Dst, a: Src, b: Src, c: Src, f: fn(T, T, T) -> T) {
    // Addresses as integers so the closure can be shared across threads; each
    // run writes only its own elements of `out`.
    let ou = out.base as usize;
    let (au, bu, cu) = (a.base as usize, b.base as usize, c.base as usize);
    plan.for_each_par(|off, n, st| {
        let o = ou as *mut T;
        let (ap, bp, cp) = (au as *const T, bu as *const T, cu as *const T);
        for i in 0..n as isize {
            // SAFETY: the plan walks layouts that fit their storages, and the
            // op layer gives a fresh `out` that overlaps no input.
            unsafe {
                *o.offset(off[0] + i * st[0]) = f(*ap.offset(off[1] + i * st[1]), *bp.offset(off[2] + i * st[2]), *cp.offset(off[3] + i * st[3]));
            }
        }
    });
}
