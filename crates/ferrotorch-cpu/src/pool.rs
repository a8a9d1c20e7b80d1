//! Pooling kernels over contiguous `(planes, *spatial)` buffers: max pooling
//! with indices, average pooling, adaptive average and adaptive max pooling,
//! and their backwards, for 1, 2 and 3 spatial dims.
//!
//! Every kernel works on three spatial dims `(D, H, W)`: a 1-d or 2-d pooling
//! is the 3-d one with leading unit dims (size 1, kernel 1, stride 1, no
//! padding), so there is one loop nest, not one per rank. Planes (the
//! flattened batch and channel dims) run in parallel. Indices are flat
//! positions `d·H·W + h·W + w` within a plane, as PyTorch's.
//!
//! Arithmetic follows PyTorch's CPU kernels: comparisons and sums run in the
//! element's compute type ([`PoolElem::Acc`]: f32 for f32/f16/bf16, f64 for
//! f64, the integer itself for integers) and round once; a NaN wins a max
//! window (`val > max || isnan(val)`, so the last NaN of a window is taken).

use crate::elementwise::Num;
pub use ferrotorch_core::op::pool::{pool_out_len, pool_out_size, PoolGeom};
use half::{bf16, f16};

/// Below this much work (outputs × window taps) a call runs on one thread.
const SERIAL_WORK: usize = 1 << 15;

/// The compute type of a pooling: comparisons, sums and divisions.
pub trait PoolAcc: Copy + PartialOrd + Send + Sync {
    /// 0.
    const ZERO: Self;
    /// The start of a max window: -inf for floats, the lowest value for integers.
    const LOWEST: Self;
    /// Whether this is a NaN (never for integers).
    fn is_nan(self) -> bool;
    /// `self + o` (integers wrap).
    fn add(self, o: Self) -> Self;
    /// `self / n` (integers truncate toward zero, as C++'s `/`).
    fn div(self, n: i64) -> Self;
}

macro_rules! float_acc {
    ($($t:ty),*) => {$(
        impl PoolAcc for $t {
            const ZERO: $t = 0.0;
            const LOWEST: $t = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                self + o
            }
            #[inline(always)]
            fn div(self, n: i64) -> $t {
                self / n as $t
            }
        }
    )*};
}
float_acc!(f32, f64);

macro_rules! int_acc {
    ($($t:ty),*) => {$(
        impl PoolAcc for $t {
            const ZERO: $t = 0;
            const LOWEST: $t = <$t>::MIN;
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn div(self, n: i64) -> $t {
                // Only int64 average pooling exists (the op layer rejects
                // the other integer dtypes), so the narrowing never loses.
                (self as i64).wrapping_div(n) as $t
            }
        }
    )*};
}
int_acc!(u8, i8, i16, i32, i64);

/// An element type the pooling kernels take, with its compute type.
pub trait PoolElem: Num {
    /// Compute type (PyTorch's `opmath_type`).
    type Acc: PoolAcc;
    /// Widens to the compute type (exact).
    fn widen(self) -> Self::Acc;
    /// Rounds from the compute type.
    fn narrow(a: Self::Acc) -> Self;
}

macro_rules! same_elem {
    ($($t:ty),*) => {$(
        impl PoolElem for $t {
            type Acc = $t;
            #[inline(always)]
            fn widen(self) -> $t {
                self
            }
            #[inline(always)]
            fn narrow(a: $t) -> $t {
                a
            }
        }
    )*};
}
same_elem!(f32, f64, u8, i8, i16, i32, i64);

macro_rules! half_elem {
    ($($t:ty),*) => {$(
        impl PoolElem for $t {
            type Acc = f32;
            #[inline(always)]
            fn widen(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn narrow(a: f32) -> $t {
                <$t>::from_f32(a)
            }
        }
    )*};
}
half_elem!(f16, bf16);

/// Runs `f(plane_index, out_chunk)` over `out` cut into `chunk`-long planes,
/// in parallel when the work (`work` per plane) is large enough.
fn for_planes<T: Send, F>(out: &mut [T], chunk: usize, work: usize, f: F)
where
    F: Fn(usize, &mut [T]) + Sync + Send,
{
    if chunk == 0 {
        return;
    }
    if work.saturating_mul(out.len() / chunk) < SERIAL_WORK || crate::parallel::threads() <= 1 {
        out.chunks_mut(chunk).enumerate().for_each(|(p, o)| f(p, o));
    } else {
        crate::parallel::for_each_chunk_mut(out, chunk, f);
    }
}

/// As [`for_planes`] over two outputs cut alike.
fn for_planes2<A: Send, B: Send, F>(a: &mut [A], b: &mut [B], chunk: usize, work: usize, f: F)
where
    F: Fn(usize, &mut [A], &mut [B]) + Sync + Send,
{
    if chunk == 0 {
        return;
    }
    if work.saturating_mul(a.len() / chunk) < SERIAL_WORK || crate::parallel::threads() <= 1 {
        a.chunks_mut(chunk).zip(b.chunks_mut(chunk)).enumerate().for_each(|(p, (x, y))| f(p, x, y));
    } else {
        let (a_len, b_len) = (a.len(), b.len());
        let (pa, pb) = (crate::parallel::SendPtr(a.as_mut_ptr()), crate::parallel::SendPtr(b.as_mut_ptr()));
        crate::parallel::parallel_for(a_len.div_ceil(chunk).min(b_len.div_ceil(chunk)), |p| {
            let lo = p * chunk;
            // SAFETY: plane `p` of each output is a disjoint piece inside it,
            // and both are exclusively borrowed for the whole region.
            let (x, y) = unsafe {
                (
                    std::slice::from_raw_parts_mut(pa.get().add(lo), chunk.min(a_len - lo)),
                    std::slice::from_raw_parts_mut(pb.get().add(lo), chunk.min(b_len - lo)),
                )
            };
            f(p, x, y)
        });
    }
}

/// First tap, end (exclusive) of the taps of window `o` along one dim of a
/// dilated max pooling: taps before the input are skipped a dilation at a time.
#[inline(always)]
fn max_span(o: usize, g: &PoolGeom, dim: usize) -> (isize, isize) {
    let (s, p, k, d, n) = (g.stride[dim] as isize, g.padding[dim] as isize, g.kernel[dim] as isize, g.dilation[dim] as isize, g.input[dim] as isize);
    let mut lo = o as isize * s - p;
    let hi = (lo + (k - 1) * d + 1).min(n);
    while lo < 0 {
        lo += d;
    }
    (lo, hi)
}

/// Max pooling of `x` (`planes × in_plane`, contiguous) into `out` and,
/// when given, `indices` (`planes × out_plane`; a forward that needs no
/// backward skips them). A window's index starts at its first tap, so a
/// window of -inf (or of the integer minimum) points there.
///
/// float32 windows that lie wholly inside the input along the width run
/// eight outputs at a time (`max_simd`); each lane scans its window in
/// the same order as the scalar loop, so values and indices are the same.
pub fn max_pool_forward<T: PoolElem>(x: &[T], g: &PoolGeom, out: &mut [T], indices: Option<&mut [i64]>) {
    let (ip, op) = (g.in_plane(), g.out_plane());
    let [h, w] = [g.input[1], g.input[2]];
    let [od_n, oh_n, ow_n] = g.output;
    let [dd, dh, dw] = g.dilation.map(|v| v as isize);
    let taps: usize = g.kernel.iter().product();
    let lanes = max_simd::lanes::<T>(g);
    // Outputs `[ow_lo, ow_hi)` have their whole width span inside the input.
    let (sw, pw, kw) = (g.stride[2], g.padding[2], g.kernel[2]);
    let ow_lo = pw.div_ceil(sw.max(1)).min(ow_n);
    let reach = (kw.max(1) - 1) * g.dilation[2] + 1;
    let ow_hi = if w + pw >= reach { ((w + pw - reach) / sw.max(1) + 1).clamp(ow_lo, ow_n) } else { ow_lo };
    // The pooling of nearly every CNN (2×2 windows, stride 2, inside the
    // input), when no indices are wanted: a plain loop over the two rows.
    let halves = g.input[0] == 1
        && g.output[0] == 1
        && g.kernel == [1, 2, 2]
        && g.stride[1..] == [2, 2]
        && g.padding == [0; 3]
        && g.dilation[1..] == [1, 1]
        && 2 * oh_n <= h
        && 2 * ow_n <= w
        && ow_n > 0;
    let plane = |pl: usize, y: &mut [T], mut ind: Option<&mut [i64]>| {
        let xp = &x[pl * ip..(pl + 1) * ip];
        if halves && ind.is_none() {
            return max_pool_2x2(xp, w, oh_n, ow_n, y);
        }
        // The window's taps relative to a lane's first column, in scan order.
        let mut rel: Vec<i32> = Vec::new();
        let mut i = 0;
        for od in 0..od_n {
            let (d0, d1) = max_span(od, g, 0);
            for oh in 0..oh_n {
                let (h0, h1) = max_span(oh, g, 1);
                let first = (d0 * h as isize + h0) * w as isize;
                let simd = lanes > 0 && ow_hi - ow_lo >= lanes;
                if simd {
                    rel.clear();
                    let mut d = d0;
                    while d < d1 {
                        let mut hh = h0;
                        while hh < h1 {
                            let row = (d * h as isize + hh) * w as isize;
                            rel.extend((0..kw as isize).map(|kj| (row + kj * dw) as i32));
                            hh += dh;
                        }
                        d += dd;
                    }
                }
                let mut ow = 0;
                while ow < ow_n {
                    if simd && ow >= ow_lo && ow + lanes <= ow_hi {
                        let col0 = (ow * sw) as isize - pw as isize;
                        max_simd::windows(xp, col0, sw, first, &rel, &mut y[i..i + lanes], ind.as_deref_mut().map(|d| &mut d[i..i + lanes]));
                        i += lanes;
                        ow += lanes;
                        continue;
                    }
                    let (w0, w1) = max_span(ow, g, 2);
                    let mut best = T::Acc::LOWEST;
                    let mut at = first + w0;
                    let mut d = d0;
                    while d < d1 {
                        let mut hh = h0;
                        while hh < h1 {
                            let row = (d * h as isize + hh) * w as isize;
                            if w0 < w1 {
                                // One bounds check per row; the taps step by the dilation.
                                let taps = &xp[(row + w0) as usize..(row + w1) as usize];
                                for (j, v) in taps.iter().enumerate().step_by(dw as usize) {
                                    let v = v.widen();
                                    if v > best || v.is_nan() {
                                        best = v;
                                        at = row + w0 + j as isize;
                                    }
                                }
                            }
                            hh += dh;
                        }
                        d += dd;
                    }
                    y[i] = T::narrow(best);
                    if let Some(ind) = ind.as_deref_mut() {
                        ind[i] = at as i64;
                    }
                    i += 1;
                    ow += 1;
                }
            }
        }
    };
    match indices {
        Some(ind) => for_planes2(out, ind, op, op * taps, |pl, y, i| plane(pl, y, Some(i))),
        None => for_planes(out, op, op * taps, |pl, y| plane(pl, y, None)),
    }
}

/// [`max_pool_forward`] of one plane (rows of `w`) with 2×2 windows at
/// stride 2 into `y` (`oh_n × ow_n`): the taps in the general path's scan
/// order and with its rule (a NaN wins, ties keep the first), so the results
/// are the same.
fn max_pool_2x2<T: PoolElem>(xp: &[T], w: usize, oh_n: usize, ow_n: usize, y: &mut [T]) {
    let step = |best: T::Acc, v: T| {
        let v = v.widen();
        if v > best || v.is_nan() {
            v
        } else {
            best
        }
    };
    for (oh, yr) in y.chunks_exact_mut(ow_n).take(oh_n).enumerate() {
        let (r0, r1) = (&xp[2 * oh * w..][..2 * ow_n], &xp[(2 * oh + 1) * w..][..2 * ow_n]);
        for ((o, a), b) in yr.iter_mut().zip(r0.chunks_exact(2)).zip(r1.chunks_exact(2)) {
            let m = step(step(step(a[0].widen(), a[1]), b[0]), b[1]);
            *o = T::narrow(m);
        }
    }
}

/// The vector path of [`max_pool_forward`]: eight float32 windows at once,
/// one AVX2 gather per tap.
mod max_simd {
    use super::{PoolElem, PoolGeom};
    use ferrotorch_core::DType;

    /// Windows per vector call for this element type and geometry; 0 when
    /// the vector path does not apply (not float32, no AVX2, or plane
    /// offsets beyond `i32`).
    pub(super) fn lanes<T: PoolElem>(g: &PoolGeom) -> usize {
        #[cfg(target_arch = "x86_64")]
        if T::DTYPE == DType::Float32 && crate::simd::isa() >= crate::simd::Isa::Avx2 && g.in_plane() <= i32::MAX as usize && g.stride[2] <= 1 << 20 {
            return 8;
        }
        let _ = g;
        0
    }

    /// Eight windows whose first columns are `col0 + l·sw` (all taps inside
    /// the plane `xp`): `rel` holds each tap's offset from its lane's first
    /// column and `first` the offset of the window's first row (the index
    /// of a window no tap beats); writes the maxima into `y` and, when
    /// given, their flat indices.
    /// Only called when [`lanes`] returned 8 for `T`.
    #[allow(unused_variables)]
    pub(super) fn windows<T: PoolElem>(xp: &[T], col0: isize, sw: usize, first: isize, rel: &[i32], y: &mut [T], ind: Option<&mut [i64]>) {
        #[cfg(target_arch = "x86_64")]
        {
            assert!(T::DTYPE == DType::Float32 && y.len() == 8 && ind.as_ref().is_none_or(|i| i.len() == 8));
            // SAFETY: T is f32 (asserted; one Rust type per dtype), so the
            // slices reinterpret as f32 slices of the same lengths; AVX2 was
            // checked by `lanes`; every gathered offset `col0 + l·sw + rel[t]`
            // is a tap of a window the caller placed inside the plane.
            unsafe {
                let xf = std::slice::from_raw_parts(xp.as_ptr() as *const f32, xp.len());
                let yf = std::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut f32, 8);
                avx2(xf, col0 as i32, first as i32, sw as i32, rel, yf, ind);
            }
        }
    }

    /// # Safety
    /// AVX2 present; `col0 + l·sw + rel[t]` lies inside `xp` for every lane
    /// `l < 8` and tap `t`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2(xp: &[f32], col0: i32, first: i32, sw: i32, rel: &[i32], y: &mut [f32], ind: Option<&mut [i64]>) {
        use std::arch::x86_64::*;
        let lane = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(sw));
        let cols = _mm256_add_epi32(lane, _mm256_set1_epi32(col0));
        let mut best = _mm256_set1_ps(f32::NEG_INFINITY);
        let mut at = _mm256_add_epi32(cols, _mm256_set1_epi32(first));
        for &r in rel {
            let idx = _mm256_add_epi32(cols, _mm256_set1_epi32(r));
            let v = _mm256_i32gather_ps::<4>(xp.as_ptr(), idx);
            // `v > best || isnan(v)`, lane by lane, as the scalar scan.
            let take = _mm256_or_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, best), _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
            best = _mm256_blendv_ps(best, v, take);
            at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(idx), take));
        }
        _mm256_storeu_ps(y.as_mut_ptr(), best);
        if let Some(ind) = ind {
            let lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(at));
            let hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(at));
            _mm256_storeu_si256(ind.as_mut_ptr() as *mut __m256i, lo);
            _mm256_storeu_si256(ind.as_mut_ptr().add(4) as *mut __m256i, hi);
        }
    }
}

/// Backward of a max pooling (plain or adaptive): `gx` (`planes ×
/// in_plane`, overwritten) receives each output gradient at its index;
/// indices outside the plane are skipped.
pub fn max_pool_backward<T: PoolElem>(g: &[T], indices: &[i64], in_plane: usize, out_plane: usize, gx: &mut [T]) {
    for_planes(gx, in_plane, out_plane.max(in_plane), |pl, gxp| {
        // Zeroed plane by plane, in parallel with the rest of the work.
        gxp.fill(T::zero());
        let (gp, ip) = (&g[pl * out_plane..(pl + 1) * out_plane], &indices[pl * out_plane..(pl + 1) * out_plane]);
        for (&gv, &at) in gp.iter().zip(ip) {
            if at >= 0 && (at as usize) < in_plane {
                let t = &mut gxp[at as usize];
                *t = t.add(gv);
            }
        }
    });
}

/// Clipped window of average pooling output `o` along one dim: (start, end,
/// extent clipped only to the padded input), PyTorch's divisor rules.
#[inline(always)]
fn avg_span(o: usize, g: &PoolGeom, dim: usize) -> (usize, usize, usize) {
    let (s, p, k, n) = (g.stride[dim] as isize, g.padding[dim] as isize, g.kernel[dim] as isize, g.input[dim] as isize);
    let lo = o as isize * s - p;
    let hi = (lo + k).min(n + p);
    let padded = (hi - lo).max(0) as usize;
    (lo.max(0) as usize, hi.min(n).max(0) as usize, padded)
}

/// The divisor of one average window: `divisor_override`, else the window
/// clipped to the padded input (`count_include_pad`) or to the input.
#[inline(always)]
fn avg_divisor(spans: &[(usize, usize, usize); 3], count_include_pad: bool, divisor_override: Option<i64>) -> i64 {
    match divisor_override {
        Some(d) => d,
        None if count_include_pad => spans.iter().map(|s| s.2 as i64).product(),
        None => spans.iter().map(|s| s.1.saturating_sub(s.0) as i64).product(),
    }
}

/// Average pooling of `x` into `out` (`dilation` is ignored). A window
/// entirely in the padding gives 0.
pub fn avg_pool_forward<T: PoolElem>(x: &[T], g: &PoolGeom, count_include_pad: bool, divisor_override: Option<i64>, out: &mut [T]) {
    let (ip, op) = (g.in_plane(), g.out_plane());
    let [h, w] = [g.input[1], g.input[2]];
    let [od_n, oh_n, ow_n] = g.output;
    let taps: usize = g.kernel.iter().product();
    for_planes(out, op, op * taps, |pl, y| {
        let xp = &x[pl * ip..(pl + 1) * ip];
        let mut i = 0;
        for od in 0..od_n {
            let sd = avg_span(od, g, 0);
            for oh in 0..oh_n {
                let sh = avg_span(oh, g, 1);
                for ow in 0..ow_n {
                    let sw = avg_span(ow, g, 2);
                    let spans = [sd, sh, sw];
                    y[i] = if sd.0 >= sd.1 || sh.0 >= sh.1 || sw.0 >= sw.1 {
                        T::zero()
                    } else {
                        let mut sum = T::Acc::ZERO;
                        for d in sd.0..sd.1 {
                            for hh in sh.0..sh.1 {
                                let row = (d * h + hh) * w;
                                for v in &xp[row + sw.0..row + sw.1] {
                                    sum = sum.add(v.widen());
                                }
                            }
                        }
                        T::narrow(sum.div(avg_divisor(&spans, count_include_pad, divisor_override)))
                    };
                    i += 1;
                }
            }
        }
    });
}

/// Backward of [`avg_pool_forward`]: `gx` (overwritten) receives each output
/// gradient divided by its window's divisor, added over the window's taps
/// in output order (rounding after each addition, as PyTorch's kernel).
pub fn avg_pool_backward<T: PoolElem>(g: &[T], geom: &PoolGeom, count_include_pad: bool, divisor_override: Option<i64>, gx: &mut [T]) {
    let (ip, op) = (geom.in_plane(), geom.out_plane());
    let [h, w] = [geom.input[1], geom.input[2]];
    let [od_n, oh_n, ow_n] = geom.output;
    let taps: usize = geom.kernel.iter().product();
    for_planes(gx, ip, (op * taps).max(ip), |pl, gxp| {
        gxp.fill(T::zero());
        let gp = &g[pl * op..(pl + 1) * op];
        let mut i = 0;
        for od in 0..od_n {
            let sd = avg_span(od, geom, 0);
            for oh in 0..oh_n {
                let sh = avg_span(oh, geom, 1);
                for ow in 0..ow_n {
                    let sw = avg_span(ow, geom, 2);
                    let div = avg_divisor(&[sd, sh, sw], count_include_pad, divisor_override);
                    let delta = T::narrow(gp[i].widen().div(div));
                    i += 1;
                    for d in sd.0..sd.1 {
                        for hh in sh.0..sh.1 {
                            let row = (d * h + hh) * w;
                            for t in &mut gxp[row + sw.0..row + sw.1] {
                                *t = t.add(delta);
                            }
                        }
                    }
                }
            }
        }
    });
}

/// Window `[start, end)` of adaptive output `o` of `out` over an input of
/// `size`: `floor(o·size/out)` to `ceil((o+1)·size/out)`.
#[inline(always)]
pub fn adaptive_span(o: usize, out: usize, size: usize) -> (usize, usize) {
    (o * size / out, ((o + 1) * size).div_ceil(out))
}

/// `a` rounded to the element type and widened again when `each` (PyTorch's
/// 3-d adaptive average kernel computes in the element type itself).
#[inline(always)]
fn step<T: PoolElem>(a: T::Acc, each: bool) -> T::Acc {
    if each {
        T::narrow(a).widen()
    } else {
        a
    }
}

/// Visits one plane's adaptive windows in output order: `f(i, [d, h, w])`
/// with `i` the output's flat index and each span `[start, end)`.
#[inline(always)]
fn adaptive_windows(input: [usize; 3], output: [usize; 3], mut f: impl FnMut(usize, [(usize, usize); 3])) {
    let mut i = 0;
    for od in 0..output[0] {
        let d = adaptive_span(od, output[0], input[0]);
        for oh in 0..output[1] {
            let hs = adaptive_span(oh, output[1], input[1]);
            for ow in 0..output[2] {
                f(i, [d, hs, adaptive_span(ow, output[2], input[2])]);
                i += 1;
            }
        }
    }
}

/// Flat offsets (within a plane of `input`) where the window's contiguous
/// rows along w start.
#[inline(always)]
fn window_rows(input: [usize; 3], [(d0, d1), (h0, h1), _]: [(usize, usize); 3]) -> impl Iterator<Item = usize> {
    let [_, h, w] = input;
    (d0..d1).flat_map(move |d| (h0..h1).map(move |hh| (d * h + hh) * w))
}

/// `v` divided by the window's extent along each dim in turn, rounding after
/// each division when `round_each` (the adaptive average and its gradient).
#[inline(always)]
fn per_window<T: PoolElem>(v: T::Acc, [(d0, d1), (h0, h1), (w0, w1)]: [(usize, usize); 3], round_each: bool) -> T {
    let q = step::<T>(step::<T>(v.div((d1 - d0) as i64), round_each).div((h1 - h0) as i64), round_each);
    T::narrow(q.div((w1 - w0) as i64))
}

/// Adaptive average pooling of `x` (`planes × input`) into `out` (`planes ×
/// output`): each output is its window's sum divided by the window's
/// extent along each dim in turn. With `round_each`, every addition and
/// division rounds to the element type (PyTorch's 3-d kernel, which has no
/// float32 accumulation for float16/bfloat16); otherwise they run in the
/// compute type and round once (its 2-d kernel).
pub fn adaptive_avg_forward<T: PoolElem>(x: &[T], input: [usize; 3], output: [usize; 3], round_each: bool, out: &mut [T]) {
    let ip: usize = input.iter().product();
    let op: usize = output.iter().product();
    for_planes(out, op, op.max(ip), |pl, y| {
        let xp = &x[pl * ip..(pl + 1) * ip];
        adaptive_windows(input, output, |i, win| {
            let (w0, w1) = win[2];
            let mut sum = T::Acc::ZERO;
            for row in window_rows(input, win) {
                for v in &xp[row + w0..row + w1] {
                    sum = step::<T>(sum.add(v.widen()), round_each);
                }
            }
            y[i] = per_window::<T>(sum, win, round_each);
        });
    });
}

/// Backward of [`adaptive_avg_forward`]: `gx` (overwritten) receives each
/// output gradient divided by its window extents (rounding after each
/// division when `round_each`), added over the window.
pub fn adaptive_avg_backward<T: PoolElem>(g: &[T], input: [usize; 3], output: [usize; 3], round_each: bool, gx: &mut [T]) {
    let ip: usize = input.iter().product();
    let op: usize = output.iter().product();
    for_planes(gx, ip, op.max(ip), |pl, gxp| {
        gxp.fill(T::zero());
        let gp = &g[pl * op..(pl + 1) * op];
        adaptive_windows(input, output, |i, win| {
            let (w0, w1) = win[2];
            let delta = per_window::<T>(gp[i].widen(), win, round_each);
            for row in window_rows(input, win) {
                for t in &mut gxp[row + w0..row + w1] {
                    *t = t.add(delta);
                }
            }
        });
    });
}

/// Adaptive max pooling of `x` into `out` and `indices` (flat positions
/// within the plane; the first maximum, or the last NaN, of each window).
pub fn adaptive_max_forward<T: PoolElem>(x: &[T], input: [usize; 3], output: [usize; 3], out: &mut [T], indices: &mut [i64]) {
    let ip: usize = input.iter().product();
    let op: usize = output.iter().product();
    let [_, h, w] = input;
    for_planes2(out, indices, op, op.max(ip), |pl, y, ind| {
        let xp = &x[pl * ip..(pl + 1) * ip];
        adaptive_windows(input, output, |i, win| {
            let [(d0, _), (h0, _), (w0, w1)] = win;
            let mut best = T::Acc::LOWEST;
            let mut at = (d0 * h + h0) * w + w0;
            for row in window_rows(input, win) {
                for ww in w0..w1 {
                    let v = xp[row + ww].widen();
                    if v > best || v.is_nan() {
                        best = v;
                        at = row + ww;
                    }
                }
            }
            y[i] = T::narrow(best);
            ind[i] = at as i64;
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_size_matches_pytorch_rules() {
        assert_eq!(pool_out_size(5, 2, 2, 0, 1, false), Some(2));
        assert_eq!(pool_out_size(5, 2, 2, 0, 1, true), Some(3));
        // ceil_mode: a last window starting in the right padding is dropped.
        assert_eq!(pool_out_size(4, 2, 2, 1, 1, true), Some(3));
        assert_eq!(pool_out_size(1, 3, 1, 0, 1, false), None);
    }

    #[test]
    fn max_pool_nan_wins_and_first_max_ties() {
        let g = PoolGeom::new(&[4], &[2], &[2], &[2], &[0], &[1]);
        let x = [1.0f32, 1.0, f32::NAN, 3.0];
        let (mut y, mut i) = ([0f32; 2], [0i64; 2]);
        max_pool_forward(&x, &g, &mut y, Some(&mut i));
        assert_eq!(y[0], 1.0);
        assert!(y[1].is_nan());
        assert_eq!(i, [0, 2]);
        let mut gx = [9f32; 4];
        max_pool_backward(&[1.0, 2.0], &i, 4, 2, &mut gx);
        assert_eq!(gx, [1.0, 0.0, 2.0, 0.0]);
    }

    /// The 2×2 stride-2 path (taken without indices) against the general
    /// one (taken with them), odd sizes, NaNs, infinities and signed zeros
    /// included, over several planes.
    #[test]
    fn max_pool_2x2_matches_the_general_path() {
        for (h, w) in [(4usize, 4usize), (5, 7), (2, 2), (9, 6)] {
            let (oh, ow) = (h / 2, w / 2);
            let g = PoolGeom::new(&[h, w], &[oh, ow], &[2, 2], &[2, 2], &[0, 0], &[1, 1]);
            let planes = 3;
            let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.5];
            let x: Vec<f32> = (0..planes * h * w).map(|i| if i % 5 == 0 { specials[i / 5 % 6] } else { ((i * 37) % 11) as f32 - 5.0 }).collect();
            let (mut fast, mut general, mut ind) = (vec![0f32; planes * oh * ow], vec![0f32; planes * oh * ow], vec![0i64; planes * oh * ow]);
            max_pool_forward(&x, &g, &mut fast, None);
            max_pool_forward(&x, &g, &mut general, Some(&mut ind));
            for (a, b) in fast.iter().zip(&general) {
                assert_eq!(a.to_bits(), b.to_bits(), "{h}x{w}: {a} vs {b}");
            }
            // The general path itself against a direct reading of the windows.
            for (o, &v) in general.iter().enumerate() {
                let (pl, r, c) = (o / (oh * ow), o / ow % oh, o % ow);
                let win: Vec<f32> = [(0, 0), (0, 1), (1, 0), (1, 1)].iter().map(|&(a, b)| x[pl * h * w + (2 * r + a) * w + 2 * c + b]).collect();
                if win.iter().any(|v| v.is_nan()) {
                    assert!(v.is_nan());
                } else {
                    assert_eq!(v, win.iter().copied().fold(f32::NEG_INFINITY, f32::max));
                }
            }
        }
    }

    #[test]
    fn avg_pool_divisors() {
        // 1-d, size 3, kernel 2, stride 2, padding 1: windows [-1,1) and [1,3).
        let g = PoolGeom::new(&[3], &[2], &[2], &[2], &[1], &[1]);
        let x = [2.0f64, 4.0, 6.0];
        let mut y = [0f64; 2];
        avg_pool_forward(&x, &g, true, None, &mut y);
        assert_eq!(y, [1.0, 5.0]);
        avg_pool_forward(&x, &g, false, None, &mut y);
        assert_eq!(y, [2.0, 5.0]);
        avg_pool_forward(&x, &g, false, Some(4), &mut y);
        assert_eq!(y, [0.5, 2.5]);
        let xi = [3i64, 4, -7];
        let mut yi = [0i64; 2];
        avg_pool_forward(&xi, &g, true, None, &mut yi);
        assert_eq!(yi, [1, -1]);
    }

    #[test]
    fn adaptive_windows_overlap() {
        assert_eq!(adaptive_span(0, 3, 5), (0, 2));
        assert_eq!(adaptive_span(1, 3, 5), (1, 4));
        assert_eq!(adaptive_span(2, 3, 5), (3, 5));
        let x = [1.0f32, 5.0, 2.0, 4.0, 3.0];
        let (mut y, mut i) = ([0f32; 3], [0i64; 3]);
        adaptive_max_forward(&x, [1, 1, 5], [1, 1, 3], &mut y, &mut i);
        assert_eq!((y, i), ([5.0, 5.0, 4.0], [1, 1, 3]));
        adaptive_avg_forward(&x, [1, 1, 5], [1, 1, 3], false, &mut y);
        assert_eq!(y, [3.0, 11.0 / 3.0, 3.5]);
        let mut gx = [0f32; 5];
        adaptive_avg_backward(&[2.0, 3.0, 4.0], [1, 1, 5], [1, 1, 3], false, &mut gx);
        assert_eq!(gx, [1.0, 2.0, 1.0, 3.0, 2.0]);
    }
}
