//! The two data movers behind every indexing op: read elements at a list of
//! storage offsets, and write (or reduce) values at a list of offsets.
//!
//! Index arithmetic happens once, dtype-free, in `isize` offsets; only the final
//! read/write is generic over the element type. Each indexed position `b`
//! contributes `offs[b] + rel[r]` for every `r` in a (possibly one-element)
//! block of relative offsets, so "pick rows" and "pick elements" share one loop.

use crate::ops::broadcast_layout;
use crate::Tensor;
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Layout, Result};
use ferrotorch_cpu::elementwise::Num;
use ferrotorch_cpu::iter::Plan;

/// How values combine with what is already stored at a written position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reduce {
    /// Overwrite.
    Assign,
    /// `dst += v`.
    Add,
    /// `dst = fma(v, alpha, dst)` with one rounding (float32/float64 only):
    /// multi-dim `index_add_` with `alpha`, which PyTorch runs as `add_`'s
    /// fused `fmadd(source, alpha, self)` per index.
    AddScaled(f64),
    /// `dst *= v`.
    Mul,
    /// `dst = max(dst, v)`, NaN-propagating.
    Max,
    /// `dst = min(dst, v)`, NaN-propagating.
    Min,
}

/// Storage offsets of every element of `layout`, in row-major order.
pub(crate) fn element_offsets(layout: &Layout) -> Vec<isize> {
    let mut v = Vec::with_capacity(layout.numel());
    let plan = Plan::<1>::new(&layout.shape, [&layout.strides], [layout.offset]);
    plan.for_each(|off, n, st| v.extend((0..n as isize).map(|i| off[0] + i * st[0])));
    v
}

/// What an out-of-range index means for one op (PyTorch words it per op).
pub(crate) struct Bounds<'a> {
    /// Size of the indexed dimension.
    pub size: usize,
    /// Do negative indices count from the end?
    pub negative: bool,
    /// The error for a bad index value.
    pub err: &'a dyn Fn(i64) -> Error,
}

/// Adds `index[p] * stride` to `offs[p]` for each position `p` (row-major over
/// `shape`), with `index` broadcast to `shape` and checked against `bounds`.
pub(crate) fn add_index_offsets(offs: &mut [isize], shape: &[usize], index: &Tensor, stride: isize, bounds: &Bounds) -> Result<()> {
    let idx = index.to_dtype(DType::Int64)?;
    let l = broadcast_layout(&idx, shape)?;
    debug_assert_eq!(offs.len(), l.numel());
    let base = idx.storage().as_ptr() as *const i64;
    let size = bounds.size as i64;
    let mut p = 0usize;
    let mut bad: Option<i64> = None;
    let plan = Plan::<1>::new(shape, [&l.strides], [l.offset]);
    plan.for_each(|off, n, st| {
        for i in 0..n as isize {
            // SAFETY: the plan walks `l`, a broadcast of `idx`'s own layout.
            let v = unsafe { *base.offset(off[0] + i * st[0]) };
            let w = if v < 0 && bounds.negative { v + size } else { v };
            if w < 0 || w >= size {
                bad.get_or_insert(v);
            } else {
                offs[p] += w as isize * stride;
            }
            p += 1;
        }
    });
    match bad {
        Some(v) => Err((bounds.err)(v)),
        None => Ok(()),
    }
}

/// A contiguous tensor of `shape` with element `b * R + r` read from `src`'s
/// storage at `offs[b] + rel[r]`. Every offset must lie inside `src`'s layout.
pub(crate) fn read_at(src: &Tensor, offs: &[isize], rel: &[isize], shape: &[usize]) -> Result<Tensor> {
    let out = Tensor::empty(shape, src.dtype(), src.device())?;
    if offs.len() * rel.len() != out.numel() {
        return Err(Error::runtime("internal error: read_at offsets do not match the output shape"));
    }
    dispatch_dtype!(src.dtype(), T => read_typed::<T>(src, &out, offs, rel));
    Ok(out)
}

fn read_typed<T: Element>(src: &Tensor, out: &Tensor, offs: &[isize], rel: &[isize]) {
    let s = src.storage().as_ptr() as *const T;
    let o = out.data_ptr_mut() as *mut T;
    let mut k = 0;
    for &b in offs {
        for &r in rel {
            // SAFETY: callers build offsets from `src`'s layout with checked
            // indices; `out` is fresh with offs.len() * rel.len() elements.
            unsafe { *o.add(k) = *s.offset(b + r) };
            k += 1;
        }
    }
}

/// Writes `vals` (any layout of `offs.len() * rel.len()` elements, row-major)
/// into `dst`'s storage at `offs[b] + rel[r]`, combining by `mode`. Serial, so
/// repeated offsets combine deterministically (the last write wins for Assign).
pub(crate) fn write_at(dst: &Tensor, offs: &[isize], rel: &[isize], vals: &Tensor, mode: Reduce) -> Result<()> {
    if offs.len() * rel.len() != vals.numel() {
        return Err(Error::runtime("internal error: write_at values do not match the offsets"));
    }
    let v = vals.to_dtype(dst.dtype())?;
    // Values that alias the destination are read from a private copy.
    let v = if std::sync::Arc::ptr_eq(v.storage(), dst.storage()) || !v.is_contiguous() { v.clone_data()? } else { v };
    dispatch_dtype!(dst.dtype(), T => write_typed::<T>(dst, offs, rel, &v, mode));
    dst.bump_version();
    Ok(())
}

fn write_typed<T: Element + Num>(dst: &Tensor, offs: &[isize], rel: &[isize], vals: &Tensor, mode: Reduce) {
    let d = dst.storage().as_mut_ptr() as *mut T;
    let v = vals.data_ptr() as *const T;
    let mut k = 0;
    for &b in offs {
        for &r in rel {
            // SAFETY: offsets lie inside `dst`'s layout (checked indices);
            // `vals` is contiguous with offs.len() * rel.len() elements.
            unsafe {
                let p = d.offset(b + r);
                let x = *v.add(k);
                *p = match mode {
                    Reduce::Assign => x,
                    Reduce::Add => (*p).add(x),
                    Reduce::AddScaled(alpha) => fused_add(*p, x, alpha),
                    Reduce::Mul => (*p).mul(x),
                    Reduce::Max => pick(*p, x, true),
                    Reduce::Min => pick(*p, x, false),
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

/// Row-major positions of the non-zero elements of `t`, as an `[n, ndim]` int64 tensor.
pub(crate) fn nonzero_raw(t: &Tensor) -> Result<Tensor> {
    let shape = t.shape().to_vec();
    let offs = element_offsets(t.layout());
    let nz: Vec<usize> = dispatch_dtype!(t.dtype(), T => {
        let s = t.storage().as_ptr() as *const T;
        // SAFETY: offsets come from t's own layout.
        offs.iter().enumerate().filter(|(_, &o)| unsafe { *s.offset(o) } != T::zero()).map(|(i, _)| i).collect()
    });
    let nd = shape.len();
    let mut out = Vec::with_capacity(nz.len() * nd);
    for &flat in &nz {
        let start = out.len();
        out.resize(start + nd, 0i64);
        let mut rem = flat;
        for d in (0..nd).rev() {
            out[start + d] = (rem % shape[d]) as i64;
            rem /= shape[d];
        }
    }
    Tensor::from_vec(out, &[nz.len(), nd])
}
