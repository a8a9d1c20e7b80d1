//! The CPU's indexing kernels: the two data movers behind every indexed op
//! (read elements at computed storage offsets; write or reduce values at
//! them) and the mask kernels.
//!
//! Index arithmetic happens once, dtype-free, in `isize` offsets; only the
//! final read/write is generic over the element type. Each position `p`
//! contributes `offs[p] + rel[r]` for every `r` in a (possibly one-element)
//! block of relative offsets, so "pick rows" and "pick elements" share one
//! loop. Every index is checked before any element moves.

use crate::elementwise::Num;
use crate::iter::Plan;
use crate::{Dst, Src};
use ferrotorch_core::backend::IndexTerm;
use ferrotorch_core::op::index::IndexReduce;
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Layout, Result};

/// Storage offsets of every element of `layout`, in row-major order.
pub fn element_offsets(layout: &Layout) -> Vec<isize> {
    let mut v = Vec::with_capacity(layout.numel());
    let plan = Plan::<1>::new(&layout.shape, [&layout.strides], [layout.offset]);
    plan.for_each(|off, n, st| v.extend((0..n as isize).map(|i| off[0] + i * st[0])));
    v
}

/// The storage offset of every position of `pos` plus its index terms,
/// every index value checked first (the first bad one is the error).
fn indexed_offsets(pos: &Layout, terms: &[IndexTerm]) -> Result<Vec<isize>> {
    let mut offs = element_offsets(pos);
    for t in terms {
        let l = t.index.layout;
        if l.shape != pos.shape {
            return Err(Error::runtime("internal error: an index operand does not match the indexed positions"));
        }
        let base = t.index.base as *const i64;
        let mut p = 0usize;
        let mut bad: Option<i64> = None;
        Plan::<1>::new(&pos.shape, [&l.strides], [l.offset]).for_each(|off, n, st| {
            for i in 0..n as isize {
                // SAFETY: the plan walks the index operand's own (broadcast)
                // layout, which the op layer built from a live int64 tensor.
                let v = unsafe { *base.offset(off[0] + i * st[0]) };
                match t.bounds.wrap(v) {
                    Some(w) => offs[p] += w as isize * t.stride,
                    None => {
                        bad.get_or_insert(v);
                    }
                }
                p += 1;
            }
        });
        if let Some(v) = bad {
            return Err(t.bounds.error(v));
        }
    }
    Ok(offs)
}

/// See [`IndexKernels::index_read`](ferrotorch_core::backend::IndexKernels::index_read).
pub fn index_read(dtype: DType, src: Src, terms: &[IndexTerm], block: &Layout, out: Dst) -> Result<()> {
    let offs = indexed_offsets(src.layout, terms)?;
    let rel = element_offsets(block);
    let dst = element_offsets(out.layout);
    if offs.len() * rel.len() != dst.len() {
        return Err(Error::runtime("internal error: index_read offsets do not match the output shape"));
    }
    dispatch_dtype!(dtype, T => {
        let s = src.base as *const T;
        let o = out.base as *mut T;
        let mut k = 0;
        for &b in &offs {
            for &r in &rel {
                // SAFETY: the offsets come from `src`'s positions layout and
                // checked indices; `dst` holds `out`'s own offsets.
                unsafe { *o.offset(dst[k]) = *s.offset(b + r) };
                k += 1;
            }
        }
    });
    Ok(())
}

/// See [`IndexKernels::index_write`](ferrotorch_core::backend::IndexKernels::index_write).
pub fn index_write(dtype: DType, dst: Dst, terms: &[IndexTerm], block: &Layout, vals: Src, mode: IndexReduce) -> Result<()> {
    let offs = indexed_offsets(dst.layout, terms)?;
    let rel = element_offsets(block);
    let voffs = element_offsets(vals.layout);
    if offs.len() * rel.len() != voffs.len() {
        return Err(Error::runtime("internal error: index_write values do not match the offsets"));
    }
    dispatch_dtype!(dtype, T => write_typed::<T>(dst.base, &offs, &rel, vals.base, &voffs, mode));
    Ok(())
}

fn write_typed<T: Element + Num>(dst: *mut u8, offs: &[isize], rel: &[isize], vals: *const u8, voffs: &[isize], mode: IndexReduce) {
    let d = dst as *mut T;
    let v = vals as *const T;
    let mut k = 0;
    for &b in offs {
        for &r in rel {
            // SAFETY: offsets lie inside `dst`'s layout (checked indices);
            // `voffs` are `vals`' own offsets; the two do not alias.
            unsafe {
                let p = d.offset(b + r);
                let x = *v.offset(voffs[k]);
                *p = match mode {
                    IndexReduce::Assign => x,
                    IndexReduce::Add => (*p).add(x),
                    IndexReduce::AddScaled(alpha) => fused_add(*p, x, alpha),
                    IndexReduce::Mul => (*p).mul(x),
                    IndexReduce::Max => pick(*p, x, true),
                    IndexReduce::Min => pick(*p, x, false),
                };
            }
            k += 1;
        }
    }
}

/// `cur + x * alpha` rounded once, in the element's own float type.
#[inline]
fn fused_add<T: Element>(cur: T, x: T, alpha: f64) -> T {
    if T::DTYPE == DType::Float64 {
        T::from_f64(x.to_f64().mul_add(alpha, cur.to_f64()))
    } else {
        // float32 values (and alpha, already rounded to the dtype) are exact
        // in f64 and back, so this is float32's own fused multiply-add.
        T::from_f64((x.to_f64() as f32).mul_add(alpha as f32, cur.to_f64() as f32) as f64)
    }
}

/// max/min that propagates NaN from either side (`x != x` only for NaN).
#[inline]
#[allow(clippy::eq_op)]
fn pick<T: Element>(cur: T, x: T, max: bool) -> T {
    if cur != cur {
        cur
    } else if x != x || (x > cur) == max && x != cur {
        x
    } else {
        cur
    }
}

/// Row-major positions (flat) of the non-zero elements of `x`.
fn nonzero_flat(x: Src, dtype: DType) -> Vec<usize> {
    let offs = element_offsets(x.layout);
    dispatch_dtype!(dtype, T => {
        let s = x.base as *const T;
        // SAFETY: the offsets come from `x`'s own layout.
        offs.iter().enumerate().filter(|(_, &o)| unsafe { *s.offset(o) } != T::zero()).map(|(i, _)| i).collect()
    })
}

/// See [`IndexKernels::count_nonzero`](ferrotorch_core::backend::IndexKernels::count_nonzero).
pub fn count_nonzero(x: Src, dtype: DType) -> usize {
    nonzero_flat(x, dtype).len()
}

/// See [`IndexKernels::nonzero`](ferrotorch_core::backend::IndexKernels::nonzero).
pub fn nonzero(x: Src, dtype: DType, out: Dst) -> Result<()> {
    let shape = &x.layout.shape;
    let nz = nonzero_flat(x, dtype);
    let nd = shape.len();
    if out.layout.shape.as_ref() != [nz.len(), nd] {
        return Err(Error::runtime("internal error: nonzero's output does not match the count"));
    }
    let dst = element_offsets(out.layout);
    let o = out.base as *mut i64;
    for (j, &flat) in nz.iter().enumerate() {
        let mut rem = flat;
        for d in (0..nd).rev() {
            // SAFETY: `dst` holds the offsets of `out`'s `[n, nd]` elements.
            unsafe { *o.offset(dst[j * nd + d]) = (rem % shape[d]) as i64 };
            rem /= shape[d];
        }
    }
    Ok(())
}

/// See [`IndexKernels::masked_fill`](ferrotorch_core::backend::IndexKernels::masked_fill).
pub fn masked_fill(dtype: DType, dst: Dst, mask: Src, value: Src) -> Result<()> {
    let l = dst.layout;
    let m = mask.base as *const bool;
    dispatch_dtype!(dtype, T => {
        // SAFETY: `value` is one live element of `dtype`.
        let v = unsafe { *(value.base as *const T).add(value.layout.offset) };
        let d = dst.base as *mut T;
        Plan::<2>::new(&l.shape, [&l.strides, &mask.layout.strides], [l.offset, mask.layout.offset]).for_each(|off, n, st| {
            for i in 0..n as isize {
                // SAFETY: the plan walks both operands' own layouts.
                unsafe {
                    if *m.offset(off[1] + i * st[1]) {
                        *d.offset(off[0] + i * st[0]) = v;
                    }
                }
            }
        });
    });
    Ok(())
}

/// See [`IndexKernels::masked_scatter`](ferrotorch_core::backend::IndexKernels::masked_scatter).
pub fn masked_scatter(dtype: DType, dst: Dst, mask: Src, source: Src) -> Result<()> {
    let doffs = element_offsets(dst.layout);
    let moffs = element_offsets(mask.layout);
    let m = mask.base as *const bool;
    // SAFETY: `moffs` are the mask's own offsets.
    let hits: Vec<isize> = doffs.iter().zip(&moffs).filter(|(_, &mo)| unsafe { *m.offset(mo) }).map(|(&d, _)| d).collect();
    let soffs = element_offsets(source.layout);
    if soffs.len() < hits.len() {
        return Err(Error::runtime("Number of elements of source < number of ones in mask"));
    }
    dispatch_dtype!(dtype, T => {
        let (d, s) = (dst.base as *mut T, source.base as *const T);
        for (&h, &so) in hits.iter().zip(&soffs) {
            // SAFETY: both offsets come from their operands' own layouts.
            unsafe { *d.offset(h) = *s.offset(so) };
        }
    });
    Ok(())
}
