//! Copies with dtype conversion (`contiguous`, `to(dtype)`, `copy_`) and fills.

use crate::iter::Plan;
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::element::cast;
use ferrotorch_core::{dispatch_dtype, DType, Element, Scalar};

/// Copies `src` into `dst` element by element, converting dtypes.
/// `src.layout` must already be broadcast to `dst.layout.shape`.
pub fn copy_cast(dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) {
    dispatch_dtype!(dst_dtype, D => dispatch_dtype!(src_dtype, S => copy_typed::<S, D>(dst, src)))
}

fn copy_typed<S: Element, D: Element>(dst: Dst, src: Src) {
    let plan = Plan::<2>::new(
        &dst.layout.shape,
        [&dst.layout.strides, &src.layout.strides],
        [dst.layout.offset, src.layout.offset],
    );
    let (db, sb) = (dst.base as usize, src.base as usize);
    plan.for_each_par(|off, n, st| {
        // SAFETY: the plan only produces offsets inside both layouts, and the
        // caller guarantees both layouts fit their storages.
        unsafe {
            let d = at_mut::<D>(db as *mut u8, off[0]);
            let s = at::<S>(sb as *const u8, off[1]);
            if st == [1, 1] && S::DTYPE == D::DTYPE {
                std::ptr::copy_nonoverlapping(s as *const D, d, n);
            } else if st == [1, 1] {
                for i in 0..n {
                    *d.add(i) = cast::<S, D>(*s.add(i));
                }
            } else {
                for i in 0..n as isize {
                    *d.offset(i * st[0]) = cast::<S, D>(*s.offset(i * st[1]));
                }
            }
        }
    });
}

/// Converts a scalar to element type `T` as PyTorch's `fill_` does.
pub fn scalar_to<T: Element>(v: Scalar) -> T {
    match v {
        Scalar::Bool(b) => cast::<bool, T>(b),
        Scalar::Int(i) => cast::<i64, T>(i),
        Scalar::Float(f) => cast::<f64, T>(f),
    }
}

/// Writes `value` into every element of `dst`.
pub fn fill(dst: Dst, dtype: DType, value: Scalar) {
    dispatch_dtype!(dtype, T => fill_typed::<T>(dst, scalar_to::<T>(value)))
}

fn fill_typed<T: Element>(dst: Dst, v: T) {
    let plan = Plan::<1>::new(&dst.layout.shape, [&dst.layout.strides], [dst.layout.offset]);
    let db = dst.base as usize;
    plan.for_each_par(|off, n, st| {
        // SAFETY: offsets come from the plan over dst's own layout.
        unsafe {
            let d = at_mut::<T>(db as *mut u8, off[0]);
            if st[0] == 1 {
                std::slice::from_raw_parts_mut(d, n).fill(v);
            } else {
                for i in 0..n as isize {
                    *d.offset(i * st[0]) = v;
                }
            }
        }
    });
}

/// Reads element `off` of a storage as an `f64`/`i64`/`bool` scalar of its dtype's kind.
///
/// # Safety
/// `off` must be inside the storage at `base`.
pub unsafe fn read_scalar(base: *const u8, dtype: DType, off: usize) -> Scalar {
    dispatch_dtype!(dtype, T => {
        let v: T = *at::<T>(base, off as isize);
        if dtype.is_floating_point() {
            Scalar::Float(v.to_f64())
        } else if dtype == DType::Bool {
            Scalar::Bool(v.to_i64() != 0)
        } else {
            Scalar::Int(v.to_i64())
        }
    })
}
