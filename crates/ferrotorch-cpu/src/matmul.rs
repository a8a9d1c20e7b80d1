//! Matrix multiply: the `gemm` crate for floats, a plain loop for integers.
//!
//! `gemm` computes `dst = alpha * dst + beta * lhs @ rhs` (note: alpha scales the
//! old destination, beta the product, the reverse of BLAS), with strides in
//! elements given as (column stride, row stride).

use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::{dispatch_dtype, DType, Element, Layout, Result};
use gemm::Parallelism;

/// One matrix operand: pointer to element [0, 0] and its row/column strides.
#[derive(Clone, Copy)]
pub struct Mat {
    /// Address of element [0, 0].
    pub ptr: *mut u8,
    /// Stride between rows, in elements.
    pub rs: isize,
    /// Stride between columns, in elements.
    pub cs: isize,
}

impl Mat {
    /// The operand starting `rows` rows and `cols` columns further in.
    fn at<T>(self, rows: usize, cols: usize) -> Mat {
        // SAFETY (for callers): the offset stays inside the operand as long
        // as `rows`/`cols` are within its sizes.
        let off = rows as isize * self.rs + cols as isize * self.cs;
        Mat { ptr: self.ptr.wrapping_offset(off * std::mem::size_of::<T>() as isize), ..self }
    }
}

/// Products below this many multiply-adds stay on the calling thread (a few
/// microseconds of work: less than handing a task to another thread).
const SERIAL_MACS: usize = 64 * 64 * 64;
/// No thread gets a block narrower than this many rows or columns.
const MIN_BLOCK: usize = 32;

/// The largest `m x n` output computed through the column-major scratch of
/// [`gemm_blocks`] (2 MiB of float32).
const SCRATCH_MAX_ELEMS: usize = 1 << 19;

/// One `gemm` call, split into row or column blocks over the threads.
///
/// `gemm`'s own threading splits only along `m` in wide row panels, so the
/// short-and-wide products of a training step (batch 32 x hidden 1024) ran on
/// one thread; here the longer side is cut into blocks, each a serial `gemm`
/// call (each packs its own share of the other operand, a small cost).
///
/// `gemm` runs fastest with everything column-major (it transposes a
/// row-major `dst` into that frame itself). A row-major `dst` times a
/// column-major `rhs` (the `x @ W.T` of a linear layer) puts the big weight
/// on its slow, transposing packing path: 1090 µs against 625 µs for
/// 128 x 512 x 512 on one core, several times for a small batch (527 µs
/// against 78 µs at 4 x 512 x 512). Those products, when `m <= n` or `lhs`
/// is already column-major, are computed into a column-major scratch block
/// from a column-major copy of `lhs` (an `m x k` copy) and copied back (an
/// `m x n` copy), both small next to the product when `k` is not small.
///
/// With `exact`, each block also finds and recomputes its own exceptional
/// entries ([`Exceptional`]), so the bound scan of the operand being cut runs
/// inside the blocks, in parallel with the products; the operand every block
/// shares is scanned once, before.
///
/// # Safety
/// As for [`matmul`].
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_blocks<T>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool, threads: bool, exact: bool)
where
    T: GemmFloat,
{
    let one = T::one();
    let scratch = m > 1
        && n > 1
        && dst.cs.abs() == 1
        && dst.rs.abs() != 1
        && rhs.rs.abs() == 1
        && rhs.cs.abs() != 1
        && (lhs.rs.abs() == 1 || m <= n)
        // the copies must stay small next to the product, and the scratch
        // block cache-sized: a 2048 x 4096 output (cdist's product) ran at a
        // third of the direct path's speed through it
        && k >= 64
        && m * n <= SCRATCH_MAX_ELEMS;
    // The column-major copy of `lhs` is made once, before the blocks (which
    // then all share it: with m <= n they are column blocks).
    let mut lhs_copy: Vec<T> = Vec::new();
    let lhs = if scratch && lhs.rs.abs() != 1 {
        lhs_copy.reserve_exact(m * k);
        let to = Mat { ptr: lhs_copy.as_mut_ptr() as *mut u8, rs: 1, cs: m as isize };
        // SAFETY: `lhs` addresses m x k elements (the caller's contract) and
        // `to` the m * k reserved ones, each written once here.
        copy_tiles::<T, false>(m, k, lhs, to);
        to
    } else {
        lhs
    };
    // `known` is the bound of the operand shared by all blocks, when scanned.
    let call = |m: usize, n: usize, dst: Mat, lhs: Mat, rhs: Mat, known: Known| {
        // SAFETY: the caller's operands cover these sizes (blocks are parts of them).
        unsafe {
            let redo = exact.then(|| Exceptional::<T>::find(m, n, k, dst, lhs, rhs, accumulate, known));
            if scratch {
                // Every element is written by `gemm` (read_dst false) before
                // the copy reads it, so the block starts uninitialised.
                let mut tmp: Vec<T> = Vec::with_capacity(m * n);
                let block = Mat { ptr: tmp.as_mut_ptr() as *mut u8, rs: 1, cs: m as isize };
                gemm::gemm::<T>(
                    m, n, k,
                    tmp.as_mut_ptr(), m as isize, 1,
                    false,
                    lhs.ptr as *const T, lhs.cs, lhs.rs,
                    rhs.ptr as *const T, rhs.cs, rhs.rs,
                    T::default(), one,
                    false, false, false,
                    Parallelism::None,
                );
                // gemm rounds `dst + product` once, as this sum of the
                // product and the old value does.
                if accumulate {
                    copy_tiles::<T, true>(m, n, block, dst);
                } else {
                    copy_tiles::<T, false>(m, n, block, dst);
                }
            } else {
                gemm::gemm::<T>(
                    m, n, k,
                    dst.ptr as *mut T, dst.cs, dst.rs,
                    accumulate,
                    lhs.ptr as *const T, lhs.cs, lhs.rs,
                    rhs.ptr as *const T, rhs.cs, rhs.rs,
                    if accumulate { one } else { T::default() }, one,
                    false, false, false,
                    Parallelism::None,
                )
            }
            if let Some(redo) = redo {
                redo.apply(k, dst, lhs, rhs);
            }
        }
    };
    let work = m.saturating_mul(n).saturating_mul(k);
    let nthreads = crate::parallel::threads();
    let long = m.max(n);
    if !threads || nthreads <= 1 || work < SERIAL_MACS || long < 2 * MIN_BLOCK {
        return call(m, n, dst, lhs, rhs, Known::default());
    }
    // About four blocks per thread (dynamic claiming balances them), none
    // narrower than MIN_BLOCK nor lighter than SERIAL_MACS.
    let tasks = (4 * nthreads).min(long / MIN_BLOCK).min(work / SERIAL_MACS).max(1);
    let block = long.div_ceil(tasks).next_multiple_of(16);
    // Column blocks share lhs, row blocks share rhs.
    let known = match (exact, n >= m) {
        (false, _) => Known::default(),
        (true, true) => Known { lhs: Some(max_abs::<T>(lhs, m, k)), rhs: None },
        (true, false) => Known { lhs: None, rhs: Some(max_abs::<T>(rhs, k, n)) },
    };
    let (dst_s, lhs_s, rhs_s) = (crate::parallel::SendPtr(dst.ptr), crate::parallel::SendPtr(lhs.ptr), crate::parallel::SendPtr(rhs.ptr));
    crate::parallel::parallel_for(long.div_ceil(block), |b| {
        let lo = b * block;
        let len = block.min(long - lo);
        let (dst, lhs, rhs) = (Mat { ptr: dst_s.get(), ..dst }, Mat { ptr: lhs_s.get(), ..lhs }, Mat { ptr: rhs_s.get(), ..rhs });
        // Blocks write disjoint rows (or columns) of dst, and each recomputes
        // only its own exceptional entries.
        if n >= m {
            call(m, len, dst.at::<T>(0, lo), lhs, rhs.at::<T>(0, lo), known);
        } else {
            call(len, n, dst.at::<T>(lo, 0), lhs.at::<T>(lo, 0), rhs, known);
        }
    });
}

/// `to[i, j] = from[i, j]` (`+=` with `ACC`) for a `rows x cols` block
/// whose two layouts differ (one row-major, the other column-major): 16 x 16
/// tiles keep the strided side of each tile within a few cache lines.
///
/// # Safety
/// `from` and `to` address `rows x cols` valid elements of `T` (`to`'s may
/// be uninitialised without `ACC`) and do not overlap.
unsafe fn copy_tiles<T: GemmFloat, const ACC: bool>(rows: usize, cols: usize, from: Mat, to: Mat) {
    const TILE: usize = 16;
    let (src, dst) = (from.ptr as *const T, to.ptr as *mut T);
    for i0 in (0..rows).step_by(TILE) {
        for j0 in (0..cols).step_by(TILE) {
            for i in i0..(i0 + TILE).min(rows) {
                let (s, d) = (src.offset(i as isize * from.rs), dst.offset(i as isize * to.rs));
                for j in j0..(j0 + TILE).min(cols) {
                    let v = *s.offset(j as isize * from.cs);
                    let d = d.offset(j as isize * to.cs);
                    if ACC {
                        *d = *d + v;
                    } else {
                        d.write(v);
                    }
                }
            }
        }
    }
}

/// `dst (m×n) = lhs (m×k) @ rhs (k×n)`, overwriting dst.
///
/// # Safety
/// Each `Mat` must address valid memory of type `T` for every index its
/// strides produce within the given sizes, and dst must not overlap the inputs.
pub unsafe fn matmul<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat) {
    matmul_threads::<T>(m, n, k, dst, lhs, rhs, true)
}

/// [`matmul`] that stays on the calling thread unless `threads`: batched
/// callers parallelise over the batch instead.
///
/// # Safety
/// As for [`matmul`].
pub unsafe fn matmul_threads<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, threads: bool) {
    matmul_acc::<T>(m, n, k, dst, lhs, rhs, false, threads)
}

/// `out[i] (+)= a[i] @ b[i]` for every index `i` of the batch dims (all but
/// the last two) that the three layouts share: `a` is (.., m, k), `b`
/// (.., k, p), `out` (.., m, p), all of `dtype`. Many small products run one
/// per thread; big ones thread inside GEMM. With `accumulate` the products
/// add onto `out`'s values ([`matmul_acc`]). `out` must not overlap the inputs.
pub fn batched(dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool) -> Result<()> {
    let n = out.layout.ndim();
    let (m, p) = (out.layout.shape[n - 2], out.layout.shape[n - 1]);
    let k = a.layout.shape[n - 1];
    let batch = &out.layout.shape[..n - 2];
    let nb: usize = batch.iter().product();
    let item = dtype.itemsize() as isize;
    let mat = |base: *const u8, l: &Layout, off: isize| Mat {
        ptr: base.wrapping_offset((l.offset as isize + off) * item) as *mut u8,
        rs: l.strides[n - 2],
        cs: l.strides[n - 1],
    };
    let (ob, ab, bb) = (out.base as usize, a.base as usize, b.base as usize);
    let per_batch = m.saturating_mul(p).saturating_mul(k);
    let across_batch = nb >= 2 && per_batch <= 256 * 256 * 256 && crate::parallel::threads() > 1;
    dispatch_dtype!(dtype, T => {
        let one = |bi: usize, threads: bool| {
            let [oa, obo, oo] = batch_offsets(bi, batch, [a.layout, b.layout, out.layout]);
            // SAFETY: the three matrices lie inside their layouts, which fit
            // their storages; each batch index writes its own output matrix.
            unsafe {
                matmul_acc::<T>(m, p, k, mat(ob as *const u8, out.layout, oo), mat(ab as *const u8, a.layout, oa), mat(bb as *const u8, b.layout, obo), accumulate, threads)
            }
        };
        if across_batch {
            crate::parallel::parallel_for(nb, |bi| one(bi, false));
        } else {
            for bi in 0..nb {
                one(bi, true);
            }
        }
    });
    Ok(())
}

/// The element offsets (layout offsets not included) of batch entry `bi`,
/// in row-major order over the shared batch dims `batch`, in each of
/// `layouts` (whose leading dims those are; broadcast ones have stride 0).
pub(crate) fn batch_offsets<const N: usize>(bi: usize, batch: &[usize], layouts: [&Layout; N]) -> [isize; N] {
    let mut off = [0isize; N];
    let mut rem = bi;
    for d in (0..batch.len()).rev() {
        let i = (rem % batch[d]) as isize;
        rem /= batch[d];
        for (o, l) in off.iter_mut().zip(&layouts) {
            *o += i * l.strides[d];
        }
    }
    off
}

/// `dst (m×n) = [dst +] lhs (m×k) @ rhs (k×n)`: with `accumulate`, the
/// products are added to dst's old values one at a time, in k order, as
/// PyTorch's BLAS `addmm` does when it starts from `beta * input`.
///
/// Floats go through `gemm` (which fuses multiply-adds and reorders the sum);
/// entries whose result could depend on that (an infinite or NaN operand, or
/// terms large enough to overflow) are then recomputed as PyTorch's CPU
/// kernels compute them: each product rounded to the dtype, summed in k order
/// (so `inf + -inf` terms give NaN even where a fused multiply-add would not
/// have overflowed).
///
/// # Safety
/// As for [`matmul`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn matmul_acc<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool, threads: bool) {
    use ferrotorch_core::DType;
    if m == 0 || n == 0 {
        return;
    }
    match T::DTYPE {
        DType::Float32 => gemm_blocks::<f32>(m, n, k, dst, lhs, rhs, accumulate, threads, true),
        DType::Float64 => gemm_blocks::<f64>(m, n, k, dst, lhs, rhs, accumulate, threads, true),
        _ => naive::<T>(m, n, k, dst, lhs, rhs, accumulate),
    }
}

/// The two float types [`matmul_acc`] sends to `gemm`, with what the
/// exceptional-entry check needs.
pub trait Real: Copy + PartialOrd + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    /// Zero.
    const ZERO: Self;
    /// The largest finite value, in f64.
    const MAX: f64;
    /// The value in f64.
    fn f64(self) -> f64;
    /// The absolute value.
    fn abs(self) -> Self;
}
impl Real for f32 {
    const ZERO: Self = 0.0;
    const MAX: f64 = f32::MAX as f64;
    fn f64(self) -> f64 {
        self as f64
    }
    fn abs(self) -> Self {
        f32::abs(self)
    }
}
impl Real for f64 {
    const ZERO: Self = 0.0;
    const MAX: f64 = f64::MAX;
    fn f64(self) -> f64 {
        self
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
}

/// The largest `|x|` of a slice and whether it holds a NaN, in sixteen
/// independent lanes so the loop vectorises (it runs before every product).
#[inline]
fn slice_max_abs<T: Real>(x: &[T]) -> (T, bool) {
    const L: usize = 16;
    let (mut acc, mut nan) = ([T::ZERO; L], [false; L]);
    let chunks = x.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..L {
            let v = c[i].abs();
            // NaN fails every comparison, including with itself.
            nan[i] |= v != v;
            acc[i] = if v > acc[i] { v } else { acc[i] };
        }
    }
    let (mut m, mut n) = (T::ZERO, nan.iter().any(|&b| b));
    for &v in acc.iter().chain(rest.iter()) {
        let v = v.abs();
        n |= v != v;
        m = if v > m { v } else { m };
    }
    (m, n)
}

/// Bounds ([`max_abs`]) of operands already scanned, so that blocks sharing
/// an operand do not each scan it again.
#[derive(Clone, Copy, Default)]
struct Known {
    lhs: Option<f64>,
    rhs: Option<f64>,
}

/// Entries of a product that `gemm` may get different from PyTorch's kernels,
/// with the dst value each starts from (when accumulating).
struct Exceptional<T> {
    entries: Vec<(isize, isize, T)>,
}

impl<T: Real> Exceptional<T> {
    /// Finds every (i, j) whose row of lhs or column of rhs is not finite, or
    /// whose sum could overflow: `|start| + k * max|lhs[i, :]| * max|rhs[:, j]|`
    /// (in f64, with a factor 2 of headroom for rounding) past the dtype's range.
    /// Below that bound every product and partial sum is finite whichever way
    /// they are evaluated, so `gemm`'s result differs only by rounding.
    #[allow(clippy::too_many_arguments)]
    unsafe fn find(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool, known: Known) -> Self {
        let limit = T::MAX / 2.0;
        // The bound over whole operands, read in memory order, settles the usual
        // case (finite, moderate values) without the per-row and per-column scans.
        let d_max = if accumulate { max_abs::<T>(dst, m, n) } else { 0.0 };
        let a_max = known.lhs.unwrap_or_else(|| max_abs::<T>(lhs, m, k));
        let b_max = known.rhs.unwrap_or_else(|| max_abs::<T>(rhs, k, n));
        if d_max + k as f64 * a_max * b_max < limit {
            return Exceptional { entries: Vec::new() };
        }
        let row_max: Vec<f64> = (0..m as isize)
            .map(|i| (0..k as isize).map(|p| (*at::<T>(lhs.ptr, i * lhs.rs + p * lhs.cs)).f64().abs()).fold(0.0, nan_max))
            .collect();
        let col_max: Vec<f64> = (0..n as isize)
            .map(|j| (0..k as isize).map(|p| (*at::<T>(rhs.ptr, p * rhs.rs + j * rhs.cs)).f64().abs()).fold(0.0, nan_max))
            .collect();
        let mut entries = Vec::new();
        for (i, &a) in row_max.iter().enumerate() {
            for (j, &b) in col_max.iter().enumerate() {
                let (i, j) = (i as isize, j as isize);
                let start = if accumulate { *at::<T>(dst.ptr, i * dst.rs + j * dst.cs) } else { T::ZERO };
                // NaN compares false: a NaN anywhere is exceptional.
                if !(start.f64().abs() + k as f64 * a * b < limit) {
                    entries.push((i, j, start));
                }
            }
        }
        Exceptional { entries }
    }

    /// Recomputes the entries found, in PyTorch's order and rounding.
    unsafe fn apply(&self, k: usize, dst: Mat, lhs: Mat, rhs: Mat) {
        for &(i, j, start) in &self.entries {
            let mut acc = start;
            for p in 0..k as isize {
                acc = acc + *at::<T>(lhs.ptr, i * lhs.rs + p * lhs.cs) * *at::<T>(rhs.ptr, p * rhs.rs + j * rhs.cs);
            }
            *at_mut::<T>(dst.ptr, i * dst.rs + j * dst.cs) = acc;
        }
    }
}

/// The largest `|x|` of a `rows × cols` operand (NaN if any is NaN), visiting
/// it along its smaller stride.
///
/// # Safety
/// As for [`matmul`]: `a` addresses `rows × cols` valid elements of `T`.
unsafe fn max_abs<T: Real>(a: Mat, rows: usize, cols: usize) -> f64 {
    let (outer, inner, os, is) = if a.cs.abs() <= a.rs.abs() { (rows, cols, a.rs, a.cs) } else { (cols, rows, a.cs, a.rs) };
    // The scan reads a whole weight matrix before every product (a tenth of
    // an LSTM step): big operands are scanned in bands on all threads.
    const BAND: usize = 1 << 16;
    let threads = crate::parallel::threads();
    if threads > 1 && outer > 1 && outer.saturating_mul(inner) >= 2 * BAND {
        let per = BAND.div_ceil(inner.max(1)).max(1);
        let ptr = crate::parallel::SendPtr(a.ptr);
        let parts = crate::parallel::parallel_map(outer.div_ceil(per), |b| {
            let lo = b * per;
            let band = Mat { ptr: ptr.get().wrapping_offset(lo as isize * os * std::mem::size_of::<T>() as isize), ..a };
            let (r, c) = if os == a.rs { (per.min(outer - lo), inner) } else { (inner, per.min(outer - lo)) };
            // SAFETY: lines lo.. (along the outer stride) lie inside the operand.
            unsafe { max_abs::<T>(band, r, c) }
        });
        return parts.into_iter().fold(0.0, nan_max);
    }
    if is == 1 && os == inner as isize {
        // Lines back to back (a contiguous operand): one run, so short lines
        // (an attention head's rows) do not each pay the scan's tail.
        // SAFETY: unit inner stride and an outer stride of `inner` make the
        // operand's `outer × inner` elements one contiguous block.
        let (m, nan) = slice_max_abs(std::slice::from_raw_parts(at::<T>(a.ptr, 0), outer * inner));
        return if nan { f64::NAN } else { m.f64() };
    }
    let (mut m, mut nan) = (T::ZERO, false);
    for o in 0..outer as isize {
        let (rm, rn) = if is == 1 {
            slice_max_abs(std::slice::from_raw_parts(at::<T>(a.ptr, o * os), inner))
        } else {
            let mut r = (T::ZERO, false);
            for i in 0..inner as isize {
                let v = (*at::<T>(a.ptr, o * os + i * is)).abs();
                r.1 |= v != v;
                r.0 = if v > r.0 { v } else { r.0 };
            }
            r
        };
        nan |= rn;
        m = if rm > m { rm } else { m };
    }
    if nan {
        f64::NAN
    } else {
        m.f64()
    }
}

/// `max` that keeps a NaN (so that a NaN row is found exceptional).
fn nan_max(m: f64, v: f64) -> f64 {
    if v.is_nan() || m.is_nan() {
        f64::NAN
    } else {
        m.max(v)
    }
}

/// Float types the GEMM adapter takes directly.
pub trait GemmFloat: Element + crate::elementwise::Float + Real + Default + std::ops::Add<Output = Self> + Send + Sync + 'static {}
impl GemmFloat for f32 {}
impl GemmFloat for f64 {}

/// `dst (m×n) = [dst +] lhs (m×k) @ rhs (k×n)` for f32/f64, accumulating into
/// the old `dst` when `accumulate`, on the calling thread only unless `threads`.
///
/// # Safety
/// As for [`matmul`].
pub unsafe fn gemm_into<T: GemmFloat>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool, threads: bool) {
    gemm_blocks::<T>(m, n, k, dst, lhs, rhs, accumulate, threads, false)
}

/// Integer (and fallback) matmul with an accumulator of the element's own kind.
unsafe fn naive<T: Element>(m: usize, n: usize, k: usize, dst: Mat, lhs: Mat, rhs: Mat, accumulate: bool) {
    let float = T::DTYPE.is_floating_point();
    for i in 0..m as isize {
        for j in 0..n as isize {
            let (mut fi, mut ii) = if accumulate {
                let start = *at::<T>(dst.ptr, i * dst.rs + j * dst.cs);
                (start.to_f64(), start.to_i64())
            } else {
                (0f64, 0i64)
            };
            for p in 0..k as isize {
                let a = *at::<T>(lhs.ptr, i * lhs.rs + p * lhs.cs);
                let b = *at::<T>(rhs.ptr, p * rhs.rs + j * rhs.cs);
                if float {
                    fi += a.to_f64() * b.to_f64();
                } else {
                    ii = ii.wrapping_add(a.to_i64().wrapping_mul(b.to_i64()));
                }
            }
            *at_mut::<T>(dst.ptr, i * dst.rs + j * dst.cs) = if float { T::from_f64(fi) } else { T::from_i64(ii) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{matmul_acc, Mat};

    /// A `rows x cols` operand of `vals` (row-major values) stored row-major,
    /// column-major, or every other row and every third column of a bigger buffer.
    fn stored(vals: &[f64], rows: usize, cols: usize, how: &str) -> (Vec<f64>, isize, isize, usize) {
        match how {
            "row" => (vals.to_vec(), cols as isize, 1, 0),
            "col" => {
                let mut v = vec![0.0; rows * cols];
                for i in 0..rows {
                    for j in 0..cols {
                        v[j * rows + i] = vals[i * cols + j];
                    }
                }
                (v, 1, rows as isize, 0)
            }
            _ => {
                let (rs, cs) = (6 * cols as isize, 3isize);
                let mut v = vec![f64::NAN; 2 * rows * 3 * cols];
                for i in 0..rows {
                    for j in 0..cols {
                        v[1 + i * rs as usize + j * cs as usize] = vals[i * cols + j];
                    }
                }
                (v, rs, cs, 1)
            }
        }
    }

    fn as_mat<T>(buf: &mut [T], rs: isize, cs: isize, off: usize) -> Mat {
        Mat { ptr: buf[off..].as_mut_ptr() as *mut u8, rs, cs }
    }

    /// Products in every layout of the linear layer's `x @ W.T` (the scratch
    /// path with its copied left operand) and around it, f32 and f64, with
    /// and without accumulation, on one and two threads, against sums in
    /// f64 of the same values.
    #[test]
    fn matmul_layouts_match_a_plain_sum() {
        let mut seed = 12345u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f64 / (1u64 << 31) as f64) - 0.5
        };
        for &(m, n, k) in &[(3usize, 97usize, 65usize), (32, 130, 128), (70, 64, 100), (2, 300, 256), (64, 64, 64)] {
            let a: Vec<f64> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f64> = (0..k * n).map(|_| next()).collect();
            let d0: Vec<f64> = (0..m * n).map(|_| next()).collect();
            for how_a in ["row", "col", "strided"] {
                for how_b in ["row", "col", "strided"] {
                    for accumulate in [false, true] {
                        for threads in [1, 2] {
                            let want: Vec<f64> = (0..m * n)
                                .map(|ij| {
                                    let (i, j) = (ij / n, ij % n);
                                    let s: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                                    if accumulate { s + d0[ij] } else { s }
                                })
                                .collect();
                            let (mut ab, ars, acs, aoff) = stored(&a, m, k, how_a);
                            let (mut bb, brs, bcs, boff) = stored(&b, k, n, how_b);
                            let mut got = d0.clone();
                            crate::parallel::with_threads(threads, || unsafe {
                                matmul_acc::<f64>(m, n, k, as_mat(&mut got, n as isize, 1, 0), as_mat(&mut ab, ars, acs, aoff), as_mat(&mut bb, brs, bcs, boff), accumulate, true)
                            });
                            for (g, w) in got.iter().zip(&want) {
                                assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{m}x{n}x{k} {how_a}/{how_b} acc={accumulate}: {g} vs {w}");
                            }
                            // float32: the same values rounded, within float32's rounding.
                            let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                            let (mut af, mut bf, mut gf) = (f(&ab), f(&bb), f(&d0));
                            crate::parallel::with_threads(threads, || unsafe {
                                matmul_acc::<f32>(m, n, k, as_mat(&mut gf, n as isize, 1, 0), as_mat(&mut af, ars, acs, aoff), as_mat(&mut bf, brs, bcs, boff), accumulate, true)
                            });
                            for (g, w) in gf.iter().zip(&want) {
                                assert!((*g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()), "f32 {m}x{n}x{k} {how_a}/{how_b}: {g} vs {w}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// An infinity in a row of the copied left operand, against a zero and
    /// against an opposite infinity: NaN where PyTorch's ordered sum of
    /// rounded products gives NaN, the infinity elsewhere.
    #[test]
    fn non_finite_left_operand_through_the_copy() {
        let (m, n, k) = (4usize, 80usize, 64usize);
        let mut a = vec![1.0f32; m * k];
        a[k + 5] = f32::INFINITY; // row 1
        // rhs column-major (W.T of a row-major W): rhs[p, j] at j * k + p.
        let mut w = vec![0.5f32; n * k];
        w[3 * k + 5] = 0.0; // column 3 meets the infinity with a zero: NaN
        w[7 * k + 6] = f32::NEG_INFINITY; // column 7 gets +inf and -inf: NaN
        let mut d = vec![0f32; m * n];
        unsafe {
            matmul_acc::<f32>(m, n, k, as_mat(&mut d, n as isize, 1, 0), as_mat(&mut a, k as isize, 1, 0), as_mat(&mut w, 1, k as isize, 0), false, true)
        };
        for i in 0..m {
            for j in 0..n {
                let v = d[i * n + j];
                let want = match (i, j) {
                    (1, 3) | (1, 7) => f32::NAN,
                    (1, _) => f32::INFINITY,
                    (_, 7) => f32::NEG_INFINITY,
                    // one of column 3's terms is 1 x 0
                    (_, 3) => 0.5 * (k - 1) as f32,
                    _ => 0.5 * k as f32,
                };
                assert!(v == want || (v.is_nan() && want.is_nan()), "[{i}, {j}]: {v} vs {want}");
            }
        }
    }
}
