//! The backward of every "pick elements" view (select, slice, diagonal,
//! unfold, as_strided): scatter-add the view's gradient into zeros shaped like
//! the input, through the same geometry. Overlapping views (unfold) add up.

use super::arith_grad::g0;
use crate::autograd::{record, rule};
use crate::Tensor;
use ferrotorch_core::{Dst, Layout, Result};

/// `zeros(shape)` with `g` added at the positions `rel` (a layout over a
/// contiguous tensor of `shape`) addresses. Differentiable in `g`.
pub fn view_scatter_add(g: &Tensor, shape: &[usize], rel: &Layout) -> Result<Tensor> {
    let out = {
        let _no_grad = crate::autograd::GradModeGuard::new(false);
        let out = Tensor::zeros(shape, g.dtype(), g.device())?;
        out.backend()?.accumulate(g.dtype(), Dst { base: out.storage().raw_ptr(), layout: rel }, g.operand()?.src(), false)?;
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
        let rel = Layout { shape: sizes.as_slice().into(), strides: strides.as_slice().into(), offset: rel.offset };
        out.backend()?.accumulate(g.dtype(), Dst { base: out.storage().raw_ptr(), layout: &rel }, g.operand()?.src(), true)?;
        out
    };
    let rel = Layout { shape: sizes.as_slice().into(), strides: strides.as_slice().into(), offset: rel.offset };
    record("AsStridedScatterBackward0", &[Some(&g)], &[&out], move || {
        rule(move |_, gg| Ok(vec![g0(gg).map(|gg| gg.contiguous().and_then(|c| c.make_view(Layout { offset: rel.offset + c.storage_offset(), ..rel.clone() }))).transpose()?]))
    });
    Ok(out)
}
