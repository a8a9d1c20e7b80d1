//! Copies with dtype conversion (`contiguous`, `to(dtype)`, `copy_`) and fills.

use crate::iter::Plan;
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::element::cast;
use ferrotorch_core::{dispatch_dtype, DType, Element, Scalar};

/// Copies `src` into `dst` element by element, converting dtypes.
/// `src.layout` must already be broadcast to `dst.layout.shape`.
pub fn copy_cast(dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) {
    // PyTorch converts a 0-d float32 tensor to bfloat16 through its scalar
    // path (NaN -> 0x7FC0), any other through its vectorised one (NaN ->
    // 0xFFFF, see `Element::from_f32_cast`).
    if dst.layout.shape.is_empty() && src_dtype == DType::Float32 && dst_dtype == DType::BFloat16 {
        let plan = Plan::<2>::new(&[], [&[], &[]], [dst.layout.offset, src.layout.offset]);
        let (db, sb) = (dst.base as usize, src.base as usize);
        plan.for_each(|off, _, _| {
            // SAFETY: a 0-d layout addresses one element inside each storage.
            unsafe {
                let v = *at::<f32>(sb as *const u8, off[1]);
                *at_mut::<ferrotorch_core::half::bf16>(db as *mut u8, off[0]) = Element::from_f64(v as f64);
            }
        });
        return;
    }
    dispatch_dtype!(dst_dtype, D => dispatch_dtype!(src_dtype, S => copy_typed::<S, D>(dst, src)))
}

fn copy_typed<S: Element, D: Element>(dst: Dst, src: Src) {
    let plan = Plan::<2>::new(
        &dst.layout.shape,
        [&dst.layout.strides, &src.layout.strides],
        [dst.layout.offset, src.layout.offset],
    );
    if plan.numel >= 4096 && transposed_copy::<S, D>(&plan, dst.base as usize, src.base as usize) {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotorch_core::Layout;

    fn run<S: Element, D: Element>(dl: &Layout, sl: &Layout, src: &[S], dst_len: usize) -> Vec<D> {
        let mut out = vec![D::zero(); dst_len];
        copy_cast(Dst { base: out.as_mut_ptr() as *mut u8, layout: dl }, D::DTYPE, Src { base: src.as_ptr() as *const u8, layout: sl }, S::DTYPE);
        out
    }

    /// Element-by-element reference over the logical shape.
    fn naive<S: Element, D: Element>(dl: &Layout, sl: &Layout, src: &[S], out: &mut [D]) {
        let p = Plan::<2>::new(&dl.shape, [&dl.strides, &sl.strides], [dl.offset, sl.offset]);
        p.for_each(|o, n, st| {
            for i in 0..n as isize {
                out[(o[0] + i * st[0]) as usize] = cast::<S, D>(src[(o[1] + i * st[1]) as usize]);
            }
        });
    }

    #[test]
    fn tiled_transpose_matches_elementwise_copy() {
        let cases: Vec<(Vec<usize>, Vec<isize>, Vec<isize>, usize)> = vec![
            // x.t().contiguous() of a 300x257 matrix
            (vec![257, 300], vec![300, 1], vec![1, 257], 0),
            // contiguous source into a transposed destination
            (vec![300, 257], vec![1, 300], vec![257, 1], 0),
            // batched (3, 70, 90) permuted to (3, 90, 70), with an offset
            (vec![3, 90, 70], vec![6300, 70, 1], vec![6300, 1, 90], 5),
            // 4-d permute (2, 40, 3, 50) from a (2, 3, 50, 40)-shaped source
            (vec![2, 40, 3, 50], vec![6000, 150, 50, 1], vec![6000, 1, 2000, 40], 0),
        ];
        for (shape, ds, ss, off) in cases {
            let n: usize = shape.iter().product();
            let src: Vec<f32> = (0..n + off).map(|i| i as f32).collect();
            let dl = Layout { shape: shape.as_slice().into(), strides: ds.as_slice().into(), offset: 0 };
            let sl = Layout { shape: shape.as_slice().into(), strides: ss.as_slice().into(), offset: off };
            let got: Vec<f32> = run(&dl, &sl, &src, n);
            let mut want = vec![0f32; n];
            naive(&dl, &sl, &src, &mut want);
            assert_eq!(got, want, "{shape:?}");
            let got64: Vec<f64> = run(&dl, &sl, &src, n);
            assert!(got64.iter().zip(&want).all(|(a, b)| *a == *b as f64), "cast path {shape:?}");
            let got8: Vec<u8> = run(&dl, &sl, &src, n);
            assert!(got8.iter().zip(&want).all(|(a, b)| *a == (*b as i64) as u8), "u8 tiles {shape:?}");
        }
    }
}

/// Side of a square tile: 32 × 32 elements of 4 bytes read and written stay in L1.
fn tile_side(elem: usize) -> usize {
    if elem <= 2 {
        64
    } else {
        32
    }
}

/// Copies in cache-blocked tiles when one operand is contiguous along the
/// inner dim and the other along a different dim (`x.t().contiguous()` and
/// friends): each tile's source lines and destination lines stay in L1, so
/// neither side is read or written with a full-matrix stride. Returns `false`
/// (doing nothing) when the layouts are not of that kind.
fn transposed_copy<S: Element, D: Element>(plan: &Plan<2>, db: usize, sb: usize) -> bool {
    let dims = plan.dims();
    let Some(&(_, inner)) = dims.last() else { return false };
    // `a`: the dim contiguous for the destination, `b`: the one contiguous for the source.
    let (a, b) = if inner[0] == 1 && inner[1] != 1 {
        match dims.iter().position(|d| d.1[1] == 1) {
            Some(b) => (dims.len() - 1, b),
            None => return false,
        }
    } else if inner[1] == 1 && inner[0] != 1 {
        match dims.iter().position(|d| d.1[0] == 1) {
            Some(a) => (a, dims.len() - 1),
            None => return false,
        }
    } else {
        return false;
    };
    let (na, sa) = dims[a];
    let (nb, sbj) = dims[b];
    if na < 8 || nb < 8 {
        return false;
    }
    // The remaining dims, walked by their own plan.
    let rest: Vec<usize> = (0..dims.len()).filter(|&d| d != a && d != b).collect();
    let rshape: Vec<usize> = rest.iter().map(|&d| dims[d].0).collect();
    let rs0: Vec<isize> = rest.iter().map(|&d| dims[d].1[0]).collect();
    let rs1: Vec<isize> = rest.iter().map(|&d| dims[d].1[1]).collect();
    let rplan = Plan::<2>::new(&rshape, [&rs0, &rs1], [plan.base[0] as usize, plan.base[1] as usize]);
    let t = tile_side(std::mem::size_of::<S>().max(std::mem::size_of::<D>()));
    let (tiles_a, tiles_b) = (na.div_ceil(t), nb.div_ceil(t));
    let per_rest = tiles_a * tiles_b;
    let tiles = rplan.numel.max(1) * per_rest;
    let tile = |k: usize| {
        let (r, k) = (k / per_rest, k % per_rest);
        let (ta, tb) = (k % tiles_a, k / tiles_a);
        let mut base = [0isize; 2];
        rplan.for_each_linear(r, r + 1, |_, off, _, _| base = off);
        let (a0, b0) = (ta * t, tb * t);
        let (a1, b1) = ((a0 + t).min(na), (b0 + t).min(nb));
        for j in b0..b1 {
            let (dj, sj) = (base[0] + j as isize * sbj[0], base[1] + j as isize * sbj[1]);
            for i in a0..a1 {
                // SAFETY: (i, j) and the rest offset index an element of both
                // layouts, which the caller guarantees fit their storages; when
                // the dtypes are equal, S and D are the same type.
                unsafe {
                    let s = at::<S>(sb as *const u8, sj + i as isize * sa[1]);
                    let d = at_mut::<D>(db as *mut u8, dj + i as isize * sa[0]);
                    if S::DTYPE == D::DTYPE {
                        *(d as *mut S) = *s;
                    } else {
                        *d = cast::<S, D>(*s);
                    }
                }
            }
        }
    };
    if plan.numel < crate::iter::GRAIN || crate::parallel::threads() <= 1 {
        (0..tiles).for_each(tile);
    } else {
        // Four tiles per task: a tile alone is too little work to hand out.
        crate::parallel::parallel_for(tiles.div_ceil(4), |c| (4 * c..(4 * c + 4).min(tiles)).for_each(&tile));
    }
    true
}

/// Writes `value` into every element of `dst`.
pub fn fill(dst: Dst, dtype: DType, value: Scalar) {
    dispatch_dtype!(dtype, T => fill_typed::<T>(dst, value.to_element::<T>()))
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

/// `dst += src` elementwise over `dst`'s shape (`src` broadcast to it),
/// serially, so a `dst` layout that addresses one element several times
/// (the gradient of an overlapping view) adds every term. With `row_major`
/// the terms are added in row-major order of the shape, not the iterator's
/// memory order (PyTorch's `as_strided` backward adds in that order, which
/// decides rounding and overflow).
pub fn accumulate(dtype: DType, dst: Dst, src: Src, row_major: bool) {
    dispatch_dtype!(dtype, T => accumulate_loop::<T>(dst, src, row_major));
}

fn accumulate_loop<T: Element + crate::elementwise::Num>(dst: Dst, src: Src, row_major: bool) {
    let (dl, sl) = (dst.layout, src.layout);
    let (ob, sb) = (dst.base as *mut T, src.base as *const T);
    if row_major {
        let sizes = &dl.shape;
        let mut idx = vec![0usize; sizes.len()];
        let (mut po, mut ps) = (dl.offset as isize, sl.offset as isize);
        for _ in 0..dl.numel() {
            // SAFETY: both layouts address elements of their storages (the
            // op layer built `dst` inside a fresh tensor and `src` is a
            // tensor's own layout broadcast to `dst`'s shape).
            unsafe {
                let o = ob.offset(po);
                *o = (*o).add(*sb.offset(ps));
            }
            // odometer step: the last dim fastest
            for d in (0..sizes.len()).rev() {
                idx[d] += 1;
                po += dl.strides[d];
                ps += sl.strides[d];
                if idx[d] < sizes[d] {
                    break;
                }
                po -= dl.strides[d] * sizes[d] as isize;
                ps -= sl.strides[d] * sizes[d] as isize;
                idx[d] = 0;
            }
        }
        return;
    }
    let plan = Plan::<2>::new(&dl.shape, [&dl.strides, &sl.strides], [dl.offset, sl.offset]);
    // Serial on purpose: overlapping layouts write one element from several runs.
    plan.for_each(|off, n, st| {
        for i in 0..n as isize {
            // SAFETY: as above.
            unsafe {
                let o = ob.offset(off[0] + i * st[0]);
                *o = (*o).add(*sb.offset(off[1] + i * st[1]));
            }
        }
    });
}
