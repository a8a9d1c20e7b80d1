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

/// `as_strided`'s backward in PyTorch's order (its `as_strided_backward`):
/// the gradient is first summed over the view's stride-0 dims (the last dim
/// first) and its size-1 dims dropped, then added into zeros through the
/// remaining geometry one element at a time in row-major order (its
/// `index_add_`). Overlapping views thus add their float terms in PyTorch's
/// order, which decides whether a float32 sum near the maximum overflows.
pub fn as_strided_scatter_add(g: &Tensor, shape: &[usize], rel: &Layout) -> Result<Tensor> {
    let mut g = g.clone();
    let (mut sizes, mut strides) = (Vec::new(), Vec::new());
    for i in (0..rel.shape.len()).rev() {
        let (n, st) = (rel.shape[i], rel.strides[i]);
        if n == 0 {
            return Tensor::zeros(shape, g.dtype(), g.device());
        } else if n == 1 {
            g = g.squeeze(Some(&[i as i64]))?;
        } else if st == 0 {
            g = g.sum_dims(Some(&[i as i64]), false, None)?;
        } else {
            sizes.insert(0, n);
            strides.insert(0, st);
        }
    }
    let out = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let out = Tensor::zeros(shape, g.dtype(), g.device())?;
        let gc = g.contiguous()?;
        ferrotorch_core::dispatch_dtype!(gc.dtype(), T => add_row_major::<T>(&out, &sizes, &strides, rel.offset, &gc));
        out
    };
    let rel = Layout { shape: sizes.as_slice().into(), strides: strides.as_slice().into(), offset: rel.offset };
    record("AsStridedScatterBackward0", &[Some(&g)], &[&out], move || {
        rule(move |_, gg| Ok(vec![g0(gg).map(|gg| gg.contiguous().and_then(|c| c.make_view(Layout { offset: rel.offset + c.storage_offset(), ..rel.clone() }))).transpose()?]))
    });
    Ok(out)
}

/// Adds the contiguous `g` (of shape `sizes`) into `out` at `offset + sum(i * strides)`,
/// serially in row-major order of `g`.
fn add_row_major<T: Element + Num>(out: &Tensor, sizes: &[usize], strides: &[isize], offset: usize, g: &Tensor) {
    let (ob, gb) = (out.data_ptr_mut() as *mut T, g.data_ptr() as *const T);
    let mut idx = vec![0usize; sizes.len()];
    let mut pos = offset as isize;
    for k in 0..g.numel() {
        // SAFETY: the geometry addresses elements of `out` (it was checked
        // against the storage when the view was made, relative to a dense
        // input of `out`'s shape); `g` is contiguous with `numel` elements.
        unsafe {
            let o = ob.offset(pos);
            *o = (*o).add(*gb.add(k));
        }
        // odometer step: the last dim fastest
        for d in (0..sizes.len()).rev() {
            idx[d] += 1;
            pos += strides[d];
            if idx[d] < sizes[d] {
                break;
            }
            pos -= strides[d] * sizes[d] as isize;
            idx[d] = 0;
        }
    }
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
