//! The backward of every "pick elements" view (select, slice, diagonal,
//! unfold, as_strided): scatter-add the view's gradient into zeros shaped like
//! the input, through the same geometry. Overlapping views (unfold) add up.

use super::arith_grad::g0;
use crate::autograd::{record, rule};
use crate::Tensor;
use ferrotorch_core::{Element, Layout, Result};
use ferrotorch_cpu::elementwise::Num;
use ferrotorch_cpu::iter::Plan;

/// `zeros(shape)` with `g` added at the positions `rel` (a layout over a
/// contiguous tensor of `shape`) addresses. Differentiable in `g`.
pub fn view_scatter_add(g: &Tensor, shape: &[usize], rel: &Layout) -> Result<Tensor> {
    let out = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let out = Tensor::zeros(shape, g.dtype(), g.device())?;
        let gc = g.contiguous()?;
        let gl = Layout::contiguous(rel.shape.as_slice());
        ferrotorch_core::dispatch_dtype!(g.dtype(), T => add_through::<T>(&out, rel, &gc, &gl));
        out
    };
    let rel = rel.clone();
    record("AsStridedScatterBackward0", &[Some(g)], &[&out], move || {
        rule(move |_, gg| Ok(vec![g0(gg).map(|gg| gg.contiguous().and_then(|c| c.make_view(Layout { offset: rel.offset + c.storage_offset(), ..rel.clone() }))).transpose()?]))
    });
    Ok(out)
}

fn add_through<T: Element + Num>(out: &Tensor, rel: &Layout, g: &Tensor, gl: &Layout) {
    let plan = Plan::<2>::new(&rel.shape, [&rel.strides, &gl.strides], [rel.offset, g.storage_offset()]);
    let (ob, gb) = (out.data_ptr_mut() as *mut T, g.storage().as_ptr() as *const T);
    // Serial on purpose: overlapping views write the same element from several runs.
    plan.for_each(|off, n, st| {
        for i in 0..n as isize {
            // SAFETY: `rel` lies inside `out` (built from a contiguous layout of
            // `out`'s shape) and `gl` describes `g`'s contiguous buffer.
            unsafe {
                let o = ob.offset(off[0] + i * st[0]);
                *o = (*o).add(*gb.offset(off[1] + i * st[1]));
            }
        }
    });
}
