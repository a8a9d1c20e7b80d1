//! Reductions over any set of dims (sum, mean, prod, max/min, var/std,
//! logsumexp, norms, all/any, count_nonzero, argmax/argmin), softmax and
//! log_softmax, and cumulative sums/products.
//!
//! # Layouts
//! The input is any strided layout. The output (`out`, or `indices`/`values`)
//! has the *keepdim* shape: the input's shape with every reduced dim set to 1
//! (the op layer squeezes it by a view); any strides. A 0-d or 1-element output
//! is also accepted when every dim is reduced.
//!
//! # Traversal
//! Two plans of the one strided iterator: one over the kept dims (input and
//! output offsets) and one over the reduced dims (input offsets). Per run of
//! kept outputs:
//! - *inner mode* (reduced elements contiguous, or the kept run strided): each
//!   output folds its reduced runs; contiguous f32/f64 sums are vectorised;
//! - *column mode* (kept run contiguous, reduced dim strided, e.g. sum over
//!   dim 0 of a row-major matrix): blocks of up to 4096 adjacent outputs are
//!   folded together row by row (vectorised for f32/f64 sums and extremes), so
//!   every input row is read sequentially.
//!
//! Threads: outputs are split across threads when there are many; otherwise the
//! reduced range is split into pieces whose partial results are combined in
//! order (deterministic, and the index order argmax/argmin's tie rule needs).
//! Column mode splits the reduced rows unless every task would still get a
//! full-width block of outputs.
//!
//! Floating reductions accumulate in f64 (like PyTorch's CPU `acc_type`),
//! except the product, which PyTorch keeps in the input's dtype; integer sums
//! and products in wrapping i64.

use crate::iter::{Plan, GRAIN};
use crate::simd::{fold, isa, sum as vsum, Isa};
use crate::unary::FastFloat;
use ferrotorch_core::UnaryOp;
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result};
pub use ferrotorch_core::op::{ArgKind, CumKind, ReduceKind};



/// A finished value on its way to the output dtype.
#[derive(Clone, Copy, Debug)]
enum Val {
    F(f64),
    I(i64),
}

/// Writes `v` as element `off` of a storage of `dtype`.
///
/// # Safety
/// `off` must address an element of the storage at `base`.
#[inline]
unsafe fn store(dtype: DType, base: usize, off: isize, v: Val) {
    dispatch_dtype!(dtype, O => {
        let p = at_mut::<O>(base as *mut u8, off);
        *p = match v {
            // The trait's conversion, not half's inherent `from_f64` (see `Element::from_f64`).
            Val::F(f) => <O as Element>::from_f64(f),
            Val::I(i) => O::from_i64(i),
        };
    })
}

#[inline]
fn val_of<T: Element>(x: T) -> Val {
    if T::DTYPE.is_floating_point() {
        Val::F(x.to_f64())
    } else {
        Val::I(x.to_i64())
    }
}

/// Folding rules of one reduction over elements of type `T`.
trait Reducer<T: Element>: Sync {
    type Acc: Copy + Send + Sync;
    /// Each of several outputs must fold its elements in index order (no
    /// split of the reduced range over threads): PyTorch's CPU reductions
    /// only split it for a single output, and the rounding of this fold (the
    /// product in the element type, Welford's recurrence) shows the order.
    const ORDERED: bool = false;
    fn init(&self) -> Self::Acc;
    /// Folds element `x`, whose linear index over the reduced dims is `idx`.
    fn step(&self, acc: Self::Acc, x: T, idx: usize) -> Self::Acc;
    /// Folds `n` elements at `p` spaced `st` apart, the first at index `idx0`.
    ///
    /// # Safety
    /// Every element read must be inside the input storage.
    #[inline]
    unsafe fn run(&self, mut acc: Self::Acc, p: *const T, n: usize, st: isize, idx0: usize) -> Self::Acc {
        for i in 0..n {
            acc = self.step(acc, *p.offset(i as isize * st), idx0 + i);
        }
        acc
    }
    /// Folds `accs.len()` runs of `n` elements (spaced `st`), the run of
    /// output `j` starting at `p + j * ost`, all first at index `idx0`.
    /// Reducers whose fold is a long dependency chain override this to
    /// interleave several runs.
    ///
    /// # Safety
    /// Every element read must be inside the input storage.
    #[inline]
    unsafe fn run_many(&self, accs: &mut [Self::Acc], p: *const T, ost: isize, n: usize, st: isize, idx0: usize) {
        for (j, a) in accs.iter_mut().enumerate() {
            *a = self.run(*a, p.offset(j as isize * ost), n, st, idx0);
        }
    }
    /// Folds one contiguous input row into a block of column accumulators
    /// (column mode): `accs[j]` takes `row[j]`, all at reduced index `idx`.
    ///
    /// # Safety
    /// `row` must be valid for `accs.len()` reads.
    #[inline(always)]
    unsafe fn fold_row(&self, accs: &mut [Self::Acc], row: *const T, idx: usize) {
        step_row(self, accs, row, idx)
    }
    /// Merges two partial results, `a` covering earlier indices than `b`.
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// The scalar form of [`Reducer::fold_row`], which vector overrides fall back to.
///
/// # Safety
/// `row` must be valid for `accs.len()` reads.
#[inline(always)]
unsafe fn step_row<T: Element, R: Reducer<T> + ?Sized>(r: &R, accs: &mut [R::Acc], row: *const T, idx: usize) {
    for (j, a) in accs.iter_mut().enumerate() {
        *a = r.step(*a, *row.add(j), idx);
    }
}

/// The kept/reduced split of an input.
struct Geometry {
    kept: Plan<2>,
    red: Plan<1>,
}

fn geometry(a: Src, dims: &[bool], out_strides: &[isize], out_offset: usize) -> Geometry {
    let shape = &a.layout.shape;
    let nd = shape.len();
    assert_eq!(dims.len(), nd, "reduce: one flag per dim");
    let kshape: Vec<usize> = (0..nd).map(|d| if dims[d] { 1 } else { shape[d] }).collect();
    let ostr: Vec<isize> = if out_strides.len() == nd { out_strides.to_vec() } else { vec![0; nd] };
    let rshape: Vec<usize> = (0..nd).filter(|&d| dims[d]).map(|d| shape[d]).collect();
    let rstr: Vec<isize> = (0..nd).filter(|&d| dims[d]).map(|d| a.layout.strides[d]).collect();
    Geometry {
        kept: Plan::new(&kshape, [&a.layout.strides, &ostr], [a.layout.offset, out_offset]),
        red: Plan::new(&rshape, [&rstr], [0]),
    }
}

/// Width of a column-mode block: wide enough that each input row is read as
/// one long sequential run (narrow blocks turn the sweep into short strided
/// reads the prefetcher handles badly); the accumulators stay in L1/L2.
const COLS: usize = 4096;

/// Folds reduced indices `lo..hi` into `accs` for `accs.len()` kept outputs
/// starting at input offset `off` and spaced `st`.
///
/// # Safety
/// `base` plus the plans' offsets must address the input.
unsafe fn fold_outputs<T: Element, R: Reducer<T>>(
    r: &R,
    base: *const T,
    off: isize,
    st: isize,
    accs: &mut [R::Acc],
    red: &Plan<1>,
    lo: usize,
    hi: usize,
) {
    let len = accs.len();
    if st == 1 && len > 1 && red.inner_strides[0] != 1 {
        column_mode(r, base, off, accs, red, lo, hi);
    } else if red.outer_count() == 1 {
        // One reduced run: fold directly (the common single-dim case).
        let rst = red.inner_strides[0];
        r.run_many(accs, base.offset(off + lo as isize * rst), st, hi - lo, rst, lo);
    } else {
        for (j, a) in accs.iter_mut().enumerate() {
            let o = off + j as isize * st;
            let mut acc = *a;
            red.for_each_linear(lo, hi, |first, roff, n, rst| {
                acc = r.run(acc, base.offset(o + roff[0]), n, rst[0], first);
            });
            *a = acc;
        }
    }
}

/// Column mode of [`fold_outputs`]: blocks of adjacent outputs folded row by
/// row. The loop is compiled twice, the second time with AVX2 enabled, so the
/// reducers' `step`s vectorise with 256-bit lanes where the CPU has them.
///
/// # Safety
/// As for [`fold_outputs`].
unsafe fn column_mode<T: Element, R: Reducer<T>>(r: &R, base: *const T, off: isize, accs: &mut [R::Acc], red: &Plan<1>, lo: usize, hi: usize) {
    #[cfg(target_arch = "x86_64")]
    if isa() >= Isa::Avx2 {
        // SAFETY: AVX2 and FMA were detected on this CPU.
        return column_mode_avx2(r, base, off, accs, red, lo, hi);
    }
    column_body(r, base, off, accs, red, lo, hi)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn column_mode_avx2<T: Element, R: Reducer<T>>(r: &R, base: *const T, off: isize, accs: &mut [R::Acc], red: &Plan<1>, lo: usize, hi: usize) {
    column_body(r, base, off, accs, red, lo, hi)
}

#[inline(always)]
unsafe fn column_body<T: Element, R: Reducer<T>>(r: &R, base: *const T, off: isize, accs: &mut [R::Acc], red: &Plan<1>, lo: usize, hi: usize) {
    let len = accs.len();
    for c0 in (0..len).step_by(COLS) {
        let w = COLS.min(len - c0);
        let acc = &mut accs[c0..c0 + w];
        red.for_each_linear(lo, hi, |first, roff, n, rst| {
            for i in 0..n {
                let row = base.offset(off + c0 as isize + roff[0] + i as isize * rst[0]);
                r.fold_row(acc, row, first + i);
            }
        });
    }
}

/// Runs reducer `r` and hands every output's offset and accumulator to `emit`.
fn engine<T: Element, R: Reducer<T>>(r: &R, a: Src, g: &Geometry, emit: impl Fn(isize, R::Acc) + Sync) {
    let n_out = g.kept.numel;
    let rn = g.red.numel;
    if n_out == 0 {
        return;
    }
    let base = a.base as usize;
    let threads = crate::parallel::threads();
    let task = |off: [isize; 2], n: usize, st: [isize; 2], lo: usize, hi: usize| -> Vec<R::Acc> {
        let mut accs = vec![r.init(); n];
        if hi > lo {
            // SAFETY: offsets come from plans over `a`'s layout, which the
            // caller guarantees fits its storage.
            unsafe { fold_outputs(r, base as *const T, off[0], st[0], &mut accs, &g.red, lo, hi) };
        }
        accs
    };
    let work = n_out.saturating_mul(rn.max(1));
    // Column mode wants blocks of at least COLS adjacent outputs per task, so
    // each input row streams sequentially; when splitting the outputs would
    // cut narrower blocks, split the reduced rows instead.
    let column = g.kept.inner_len > 1 && g.kept.inner_strides[0] == 1 && g.red.inner_strides[0] != 1;
    let split_outputs = if R::ORDERED && n_out > 1 {
        true
    } else if column {
        n_out / (threads * 4) >= COLS || rn < threads * 8
    } else {
        n_out >= threads * 4 || rn < GRAIN / 4
    };
    if work < GRAIN || threads <= 1 || rn == 0 || split_outputs {
        let body = |off: [isize; 2], n: usize, st: [isize; 2]| {
            let accs = task(off, n, st, 0, rn);
            for (j, acc) in accs.into_iter().enumerate() {
                emit(off[1] + j as isize * st[1], acc);
            }
        };
        if work < GRAIN || threads <= 1 {
            g.kept.for_each(body);
        } else {
            // Ordered column mode: one wide band of outputs per thread, so
            // each input row is still read in long sequential runs.
            let grain = if column && R::ORDERED { n_out.div_ceil(threads) } else { (GRAIN / rn.max(1)).max(1) };
            g.kept.for_each_par_grain(grain, body);
        }
        return;
    }
    // Few outputs, long reductions: split the reduced range (column mode:
    // one band of rows per thread, so only `threads` partial blocks exist).
    let piece = if column { rn.div_ceil(threads) } else { (GRAIN / n_out).max(rn.div_ceil(threads * 4)).max(1) };
    let pieces = rn.div_ceil(piece);
    let partials: Vec<Vec<R::Acc>> = crate::parallel::parallel_map(pieces, |p| {
        let (lo, hi) = (p * piece, ((p + 1) * piece).min(rn));
        let mut all = Vec::with_capacity(n_out);
        g.kept.for_each(|off, n, st| all.extend(task(off, n, st, lo, hi)));
        all
    });
    let mut k = 0;
    g.kept.for_each(|off, n, st| {
        for j in 0..n {
            let mut acc = partials[0][k];
            for part in &partials[1..] {
                acc = r.combine(acc, part[k]);
            }
            emit(off[1] + j as isize * st[1], acc);
            k += 1;
        }
    });
}

// ---- reducers -------------------------------------------------------------

/// Float sum in f64; contiguous f32/f64 runs are vectorised.
struct SumF(Isa);
impl<T: Element> Reducer<T> for SumF {
    type Acc = f64;
    fn init(&self) -> f64 {
        0.0
    }
    #[inline(always)]
    fn step(&self, acc: f64, x: T, _: usize) -> f64 {
        acc + x.to_f64()
    }
    unsafe fn run(&self, acc: f64, p: *const T, n: usize, st: isize, _: usize) -> f64 {
        if st == 1 && T::DTYPE == DType::Float32 {
            acc + vsum::sum_f32(self.0, std::slice::from_raw_parts(p as *const f32, n))
        } else if st == 1 && T::DTYPE == DType::Float64 {
            acc + vsum::sum_f64(self.0, std::slice::from_raw_parts(p as *const f64, n))
        } else {
            let mut s = [0f64; 4];
            for i in 0..n {
                s[i & 3] += (*p.offset(i as isize * st)).to_f64();
            }
            acc + ((s[0] + s[1]) + (s[2] + s[3]))
        }
    }
    #[inline(always)]
    unsafe fn fold_row(&self, accs: &mut [f64], row: *const T, idx: usize) {
        match T::DTYPE {
            DType::Float32 => fold::add_row_f32_to_f64(self.0, accs, row as *const f32),
            DType::Float64 => fold::add_row_f64_to_f64(self.0, accs, row as *const f64),
            _ => step_row(self, accs, row, idx),
        }
    }
    fn combine(&self, a: f64, b: f64) -> f64 {
        a + b
    }
}

/// Integer/bool sum, wrapping in i64.
struct SumI;
impl<T: Element> Reducer<T> for SumI {
    type Acc = i64;
    fn init(&self) -> i64 {
        0
    }
    #[inline(always)]
    fn step(&self, acc: i64, x: T, _: usize) -> i64 {
        acc.wrapping_add(x.to_i64())
    }
    fn combine(&self, a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
}

/// `a * b` rounded to `T`, as PyTorch's CPU prod keeps its accumulator in the
/// input's dtype. The f64 product of two f32/f16/bf16 values is exact, so one
/// rounding gives the native multiplication's result.
#[inline(always)]
fn mul_round<T: Element>(a: T, b: T) -> T {
    if T::DTYPE == DType::Float32 {
        // SAFETY: T is f32 (the branch is resolved at compile time).
        unsafe {
            let r = std::mem::transmute_copy::<T, f32>(&a) * std::mem::transmute_copy::<T, f32>(&b);
            std::mem::transmute_copy::<f32, T>(&r)
        }
    } else {
        <T as Element>::from_f64(a.to_f64() * b.to_f64())
    }
}

/// Lanes of PyTorch's `Vectorized<T>` in its prod kernel for a floating
/// dtype: the AVX2 widths, as its reduction kernels have no AVX-512 build
/// (measured against torch 2.13 on an AVX-512 machine: 8 float32 lanes, not 16).
fn prod_lanes(dt: DType) -> usize {
    match dt {
        DType::Float64 => 4,
        DType::Float16 | DType::BFloat16 => 16,
        _ => 8,
    }
}

/// [`ProdF`]'s contiguous-run order for f32 with 8 lanes, as fixed-size
/// blocks the compiler keeps in vector registers (AVX2 where available):
/// `acc` times the run's product.
fn prod_f32_lanes8(acc: f32, x: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if isa() >= Isa::Avx2 {
        // SAFETY: AVX2 was detected on this CPU.
        return unsafe { prod_f32_lanes8_avx2(acc, x) };
    }
    prod_f32_lanes8_body(acc, x)
}

/// [`prod_f32_lanes8_body`] in AVX2 registers: the compiler left the
/// portable form's 32-float block scalar (32 `vmulss` and spills a block).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn prod_f32_lanes8_avx2(acc: f32, x: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let count = x.len() / 32;
    if count == 0 {
        return x.iter().fold(acc, |a, &v| a * v);
    }
    let p = x.as_ptr();
    // SAFETY (every load): 8 floats of a full 32-float block of `x`. A
    // macro, not a closure, so the loads share this function's target feature.
    macro_rules! ld {
        ($i:expr) => {
            _mm256_loadu_ps(p.add($i))
        };
    }
    let (mut a0, mut a1, mut a2, mut a3) = (ld!(0), ld!(8), ld!(16), ld!(24));
    for b in 1..count {
        let o = b * 32;
        a0 = _mm256_mul_ps(a0, ld!(o));
        a1 = _mm256_mul_ps(a1, ld!(o + 8));
        a2 = _mm256_mul_ps(a2, ld!(o + 16));
        a3 = _mm256_mul_ps(a3, ld!(o + 24));
    }
    let v = _mm256_mul_ps(_mm256_mul_ps(a0, a1), _mm256_mul_ps(a2, a3));
    let mut l = [0f32; 8];
    _mm256_storeu_ps(l.as_mut_ptr(), v);
    let b0 = l[1..].iter().fold(l[0], |a, &v| a * v);
    x[count * 32..].iter().fold(acc * b0, |a, &v| a * v)
}

#[inline(always)]
fn prod_f32_lanes8_body(acc: f32, x: &[f32]) -> f32 {
    let mut blocks = x.chunks_exact(32);
    let Some(first) = blocks.next() else {
        return x.iter().fold(acc, |a, &v| a * v);
    };
    let mut a = [0f32; 32];
    a.copy_from_slice(first);
    for b in &mut blocks {
        for k in 0..32 {
            a[k] *= b[k];
        }
    }
    let mut b0 = 1.0f32;
    for l in 0..8 {
        let v = (a[l] * a[8 + l]) * (a[16 + l] * a[24 + l]);
        b0 = if l == 0 { v } else { b0 * v };
    }
    blocks.remainder().iter().fold(acc * b0, |a, &v| a * v)
}

/// Float product in the element type, in the order of PyTorch's CPU
/// `binary_kernel_reduce_vec`: a strided run (and a column-mode row) multiplies
/// one element after another; a contiguous run folds blocks of `4 * lanes`
/// elements into 4 vector accumulators, combined as `(a0 * a1) * (a2 * a3)`
/// and then lane by lane, and multiplies the remaining elements one by one.
/// The order decides where a float32 product overflows to inf or underflows
/// to 0 (and so where `inf * 0` gives NaN) although the exact product is finite.
struct ProdF {
    lanes: usize,
}
impl<T: Element> Reducer<T> for ProdF {
    type Acc = T;
    const ORDERED: bool = true;
    fn init(&self) -> T {
        T::one()
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: usize) -> T {
        mul_round(acc, x)
    }
    unsafe fn run(&self, mut acc: T, p: *const T, n: usize, st: isize, _: usize) -> T {
        let block = 4 * self.lanes;
        if st != 1 || block == 0 || n < block || block > 128 {
            for i in 0..n {
                acc = mul_round(acc, *p.offset(i as isize * st));
            }
            return acc;
        }
        if T::DTYPE == DType::Float32 && block == 32 {
            // SAFETY: T is f32; `p` is valid for `n` reads.
            let acc = std::mem::transmute_copy::<T, f32>(&acc);
            let r = prod_f32_lanes8(acc, std::slice::from_raw_parts(p as *const f32, n));
            return std::mem::transmute_copy::<f32, T>(&r);
        }
        let count = n / block;
        let mut a = [T::one(); 128];
        a[..block].copy_from_slice(std::slice::from_raw_parts(p, block));
        for i in 1..count {
            let src = std::slice::from_raw_parts(p.add(i * block), block);
            for (v, &x) in a[..block].iter_mut().zip(src) {
                *v = mul_round(*v, x);
            }
        }
        let l = self.lanes;
        let mut b0 = T::one();
        for k in 0..l {
            let v = mul_round(mul_round(a[k], a[l + k]), mul_round(a[2 * l + k], a[3 * l + k]));
            b0 = if k == 0 { v } else { mul_round(b0, v) };
        }
        acc = mul_round(acc, b0);
        for i in count * block..n {
            acc = mul_round(acc, *p.add(i));
        }
        acc
    }
    #[inline(always)]
    unsafe fn fold_row(&self, accs: &mut [T], row: *const T, _: usize) {
        let row = std::slice::from_raw_parts(row, accs.len());
        for (a, &x) in accs.iter_mut().zip(row) {
            *a = mul_round(*a, x);
        }
    }
    fn combine(&self, a: T, b: T) -> T {
        mul_round(a, b)
    }
}

struct ProdI;
impl<T: Element> Reducer<T> for ProdI {
    type Acc = i64;
    fn init(&self) -> i64 {
        1
    }
    #[inline(always)]
    fn step(&self, acc: i64, x: T, _: usize) -> i64 {
        acc.wrapping_mul(x.to_i64())
    }
    fn combine(&self, a: i64, b: i64) -> i64 {
        a.wrapping_mul(b)
    }
}

/// Is `x` a better extreme than `cur`? NaN beats everything but an earlier NaN.
#[inline(always)]
#[allow(clippy::eq_op)]
fn better<T: PartialOrd>(max: bool, x: T, cur: T) -> bool {
    let (xn, cn) = (x != x, cur != cur);
    if cn {
        false
    } else if xn {
        true
    } else if max {
        x > cur
    } else {
        x < cur
    }
}

/// Max/min (values kept in `T`), with the index of the first extreme.
struct Extreme {
    max: bool,
}
impl<T: Element> Reducer<T> for Extreme {
    /// (value, index, seen anything)
    type Acc = (T, usize, bool);
    fn init(&self) -> (T, usize, bool) {
        (T::zero(), 0, false)
    }
    #[inline(always)]
    fn step(&self, acc: (T, usize, bool), x: T, idx: usize) -> (T, usize, bool) {
        if !acc.2 || better(self.max, x, acc.0) {
            (x, idx, true)
        } else {
            acc
        }
    }
    fn combine(&self, a: (T, usize, bool), b: (T, usize, bool)) -> (T, usize, bool) {
        if b.2 && (!a.2 || better(self.max, b.0, a.0)) {
            b
        } else {
            a
        }
    }
}

/// NaN-propagating max/min of floats, value only. Starts from -inf (+inf),
/// so it needs at least one element (the op layer rejects empty max/min).
/// Contiguous f32/f64 runs and column rows take the vector folds.
struct ExtremeVal {
    max: bool,
    isa: Isa,
}
impl<T: Element> Reducer<T> for ExtremeVal {
    type Acc = T;
    fn init(&self) -> T {
        T::from_f64(if self.max { f64::NEG_INFINITY } else { f64::INFINITY })
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: usize) -> T {
        // Once the accumulator is NaN no comparison replaces it.
        let take = if self.max { x > acc } else { x < acc };
        if take | (x != x) {
            x
        } else {
            acc
        }
    }
    unsafe fn run(&self, acc: T, p: *const T, n: usize, st: isize, idx0: usize) -> T {
        // SAFETY (both vector arms): T is the matching float type, and the
        // caller guarantees `n` readable elements at `p`.
        let v = match T::DTYPE {
            DType::Float32 if st == 1 && n > 0 => fold::extreme_f32(self.isa, std::slice::from_raw_parts(p as *const f32, n), self.max) as f64,
            DType::Float64 if st == 1 && n > 0 => fold::extreme_f64(self.isa, std::slice::from_raw_parts(p as *const f64, n), self.max),
            _ => return (0..n).fold(acc, |acc, i| self.step(acc, *p.offset(i as isize * st), idx0 + i)),
        };
        self.step(acc, T::from_f64(v), idx0)
    }
    #[inline(always)]
    unsafe fn fold_row(&self, accs: &mut [T], row: *const T, idx: usize) {
        // SAFETY (both vector arms): T is the matching float type, so the
        // casts only rename the element type; `row` is valid for `accs.len()` reads.
        match T::DTYPE {
            DType::Float32 => fold::extreme_row_f32(self.isa, std::slice::from_raw_parts_mut(accs.as_mut_ptr() as *mut f32, accs.len()), row as *const f32, self.max),
            DType::Float64 => fold::extreme_row_f64(self.isa, std::slice::from_raw_parts_mut(accs.as_mut_ptr() as *mut f64, accs.len()), row as *const f64, self.max),
            _ => step_row(self, accs, row, idx),
        }
    }
    fn combine(&self, a: T, b: T) -> T {
        self.step(a, b, 0)
    }
}

/// (count, mean, M2) by PyTorch's `WelfordOps` in f64: one Welford step per
/// element in index order (so an infinity anywhere but last makes the mean
/// NaN, `inf + (x - inf) / k`, and equal elements give their value exactly,
/// hence a variance of exactly 0), partial results merged as its `combine`.
/// Column mode steps many independent outputs per row, so the divisions of
/// neighbouring outputs overlap.
struct Moments;
impl Moments {
    #[inline]
    fn merge(a: (f64, f64, f64), b: (f64, f64, f64)) -> (f64, f64, f64) {
        if a.0 == 0.0 {
            return b;
        }
        if b.0 == 0.0 {
            return a;
        }
        let n = a.0 + b.0;
        let d = b.1 - a.1;
        let nb_over_n = b.0 / n;
        (n, a.1 + d * nb_over_n, a.2 + b.2 + d * d * a.0 * nb_over_n)
    }
}
impl<T: Element> Reducer<T> for Moments {
    type Acc = (f64, f64, f64);
    const ORDERED: bool = true;
    fn init(&self) -> (f64, f64, f64) {
        (0.0, 0.0, 0.0)
    }
    #[inline(always)]
    fn step(&self, (n, mean, m2): (f64, f64, f64), x: T, _: usize) -> (f64, f64, f64) {
        let x = x.to_f64();
        let n = n + 1.0;
        let d = x - mean;
        let mean = mean + d / n;
        (n, mean, m2 + d * (x - mean))
    }
    unsafe fn run_many(&self, accs: &mut [(f64, f64, f64)], p: *const T, ost: isize, n: usize, st: isize, _: usize) {
        // Four rows stepped together: each row's recurrence is unchanged (so
        // are its roundings), but four division chains overlap.
        let mut chunks = accs.chunks_exact_mut(4);
        let mut j = 0isize;
        for c in &mut chunks {
            let mut a = [c[0], c[1], c[2], c[3]];
            let rows = [p.offset(j * ost), p.offset((j + 1) * ost), p.offset((j + 2) * ost), p.offset((j + 3) * ost)];
            for i in 0..n as isize {
                for k in 0..4 {
                    a[k] = <Self as Reducer<T>>::step(self, a[k], *rows[k].offset(i * st), 0);
                }
            }
            c.copy_from_slice(&a);
            j += 4;
        }
        for a in chunks.into_remainder() {
            let q = p.offset(j * ost);
            for i in 0..n as isize {
                *a = <Self as Reducer<T>>::step(self, *a, *q.offset(i * st), 0);
            }
            j += 1;
        }
    }
    fn combine(&self, a: (f64, f64, f64), b: (f64, f64, f64)) -> (f64, f64, f64) {
        Moments::merge(a, b)
    }
}

/// Running `(max, sum of exp(x - max))` for logsumexp (the sum counts the
/// elements while the max is -inf; a NaN max is sticky). Contiguous f32/f64
/// runs take blocks: the block's max, then a vectorised `exp(x - max)` in the
/// element type (as PyTorch's `exp(self - maxes)`) summed in f64. Column mode
/// updates every output of a row at once with one vectorised exp each:
/// `exp(-|x - max|)` either joins the sum or rescales it to a new max.
struct Lse(Isa);
impl Lse {
    #[inline]
    fn merge(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        if a.1 == 0.0 && !a.0.is_nan() {
            return b;
        }
        if b.1 == 0.0 && !b.0.is_nan() {
            return a;
        }
        if a.0.is_nan() || b.0.is_nan() {
            return (f64::NAN, 1.0);
        }
        let m = a.0.max(b.0);
        if m == f64::NEG_INFINITY {
            return (m, a.1 + b.1);
        }
        if m == f64::INFINITY {
            return (m, 1.0);
        }
        (m, a.1 * (a.0 - m).exp() + b.1 * (b.0 - m).exp())
    }

    /// Joins `x` to `(m, s)` given `e = exp(-|x - m|)` (1 when `x == m`).
    #[inline(always)]
    fn update((m, s): (f64, f64), x: f64, e: f64) -> (f64, f64) {
        if x <= m {
            (m, s + e)
        } else if x > m {
            (x, s * e + 1.0)
        } else {
            // x or m is NaN
            (f64::NAN, s)
        }
    }

    /// `-|x - m|` (0 when equal, so two infinities do not give NaN).
    #[inline(always)]
    fn gap(x: f64, m: f64) -> f64 {
        if x == m {
            0.0
        } else {
            -(x - m).abs()
        }
    }

    /// The finished `log(sum(exp(x)))`.
    #[inline]
    fn finish((m, s): (f64, f64)) -> f64 {
        if m.is_nan() || m.is_infinite() {
            m
        } else {
            m + s.ln()
        }
    }

    /// Blocks of a contiguous run of a vector float type.
    ///
    /// # Safety
    /// `p` must be valid for `n` reads.
    unsafe fn run_blocks<F: RowFloat>(isa: Isa, mut acc: (f64, f64), p: *const F, n: usize) -> (f64, f64) {
        const B: usize = 256;
        let mut t = [F::default(); B];
        let mut i = 0;
        while i < n {
            let c = B.min(n - i);
            let x = std::slice::from_raw_parts(p.add(i), c);
            let m = F::row_max(isa, x).to_f64();
            let part = if m.is_nan() {
                (f64::NAN, 1.0)
            } else if m == f64::INFINITY {
                (m, 1.0)
            } else if m == f64::NEG_INFINITY {
                (m, c as f64)
            } else {
                let mf = F::from_f64(m);
                for (o, &v) in t[..c].iter_mut().zip(x) {
                    *o = v.sub(mf);
                }
                F::contiguous_unary(isa, UnaryOp::Exp, t.as_ptr(), t.as_mut_ptr(), c);
                (m, F::row_sum(isa, &t[..c]))
            };
            acc = Lse::merge(acc, part);
            i += c;
        }
        acc
    }

    /// Column step over a contiguous row of a vector float type.
    ///
    /// # Safety
    /// `row` must be valid for `accs.len()` (at most [`COLS`]) reads.
    #[inline(always)]
    unsafe fn fold_row_vec<F: RowFloat>(isa: Isa, accs: &mut [(f64, f64)], row: *const F) {
        let w = accs.len();
        let row = std::slice::from_raw_parts(row, w);
        let mut t = [F::default(); COLS];
        for ((o, &x), a) in t[..w].iter_mut().zip(row).zip(accs.iter()) {
            *o = F::from_f64(Lse::gap(x.to_f64(), a.0));
        }
        F::contiguous_unary(isa, UnaryOp::Exp, t.as_ptr(), t.as_mut_ptr(), w);
        for ((a, &x), &e) in accs.iter_mut().zip(row).zip(&t[..w]) {
            *a = Lse::update(*a, x.to_f64(), e.to_f64());
        }
    }
}
impl<T: Element> Reducer<T> for Lse {
    type Acc = (f64, f64);
    fn init(&self) -> (f64, f64) {
        (f64::NEG_INFINITY, 0.0)
    }
    #[inline]
    fn step(&self, acc: (f64, f64), x: T, _: usize) -> (f64, f64) {
        let x = x.to_f64();
        Lse::update(acc, x, Lse::gap(x, acc.0).exp())
    }
    unsafe fn run(&self, acc: (f64, f64), p: *const T, n: usize, st: isize, idx0: usize) -> (f64, f64) {
        match T::DTYPE {
            DType::Float32 if st == 1 => Lse::run_blocks::<f32>(self.0, acc, p as *const f32, n),
            DType::Float64 if st == 1 => Lse::run_blocks::<f64>(self.0, acc, p as *const f64, n),
            _ => (0..n).fold(acc, |acc, i| self.step(acc, *p.offset(i as isize * st), idx0 + i)),
        }
    }
    #[inline(always)]
    unsafe fn fold_row(&self, accs: &mut [(f64, f64)], row: *const T, idx: usize) {
        match T::DTYPE {
            DType::Float32 => Lse::fold_row_vec::<f32>(self.0, accs, row as *const f32),
            DType::Float64 => Lse::fold_row_vec::<f64>(self.0, accs, row as *const f64),
            _ => step_row(self, accs, row, idx),
        }
    }
    fn combine(&self, a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        Lse::merge(a, b)
    }
}

/// Sum of `|x|^p` (or max/min of `|x|` for `p = ±inf`, count for `p = 0`).
struct NormAcc(f64);
impl<T: Element> Reducer<T> for NormAcc {
    type Acc = f64;
    fn init(&self) -> f64 {
        if self.0 == f64::NEG_INFINITY {
            f64::INFINITY
        } else {
            0.0
        }
    }
    #[inline]
    fn step(&self, acc: f64, x: T, _: usize) -> f64 {
        let a = x.to_f64().abs();
        match self.0 {
            p if p == f64::INFINITY => {
                if acc.is_nan() || a.is_nan() {
                    f64::NAN
                } else {
                    acc.max(a)
                }
            }
            p if p == f64::NEG_INFINITY => {
                if acc.is_nan() || a.is_nan() {
                    f64::NAN
                } else {
                    acc.min(a)
                }
            }
            p if p == 0.0 => acc + (a != 0.0) as i32 as f64,
            p if p == 1.0 => acc + a,
            p if p == 2.0 => acc + a * a,
            p => acc + a.powf(p),
        }
    }
    fn combine(&self, a: f64, b: f64) -> f64 {
        match self.0 {
            p if p == f64::INFINITY => {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            }
            p if p == f64::NEG_INFINITY => {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.min(b)
                }
            }
            _ => a + b,
        }
    }
}

/// `v` rounded to f32 (and widened back).
#[inline(always)]
fn f32r(v: f64) -> f64 {
    v as f32 as f64
}

/// One float32 accumulator of `|x|^p` terms (see [`ReduceKind::NormShortF32`]);
/// a NaN `p` adds each square with one rounding ([`ReduceKind::Norm2FusedF32`]).
struct NormShort {
    p: f64,
}
impl<T: Element> Reducer<T> for NormShort {
    type Acc = f64;
    fn init(&self) -> f64 {
        0.0
    }
    #[inline]
    fn step(&self, acc: f64, x: T, _: usize) -> f64 {
        let a = x.to_f64().abs();
        let t = match self.p {
            p if p.is_nan() => return f32r(acc + a * a),
            p if p == 1.0 => a,
            p if p == 2.0 => f32r(a * a),
            p => f32r(a.powf(p)),
        };
        f32r(acc + t)
    }
    fn combine(&self, a: f64, b: f64) -> f64 {
        f32r(a + b)
    }
}

/// all / any / count_nonzero as a nonzero count with an early answer.
struct Nonzero;
impl<T: Element> Reducer<T> for Nonzero {
    type Acc = i64;
    fn init(&self) -> i64 {
        0
    }
    #[inline(always)]
    fn step(&self, acc: i64, x: T, _: usize) -> i64 {
        acc + (x != T::zero()) as i64
    }
    fn combine(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn out_geometry(a: Src, dims: &[bool], out: &Dst) -> Result<Geometry> {
    let nd = a.layout.shape.len();
    let keep_ok = out.layout.shape.len() == nd
        && (0..nd).all(|d| out.layout.shape[d] == if dims[d] { 1 } else { a.layout.shape[d] });
    let all_ok = dims.iter().all(|&r| r) && out.layout.shape.iter().product::<usize>() == 1;
    if !keep_ok && !all_ok {
        return Err(Error::runtime(format!(
            "reduction output shape {:?} is not the keepdim shape of input {:?}",
            out.layout.shape.as_slice(),
            a.layout.shape.as_slice()
        )));
    }
    let strides: &[isize] = if keep_ok { &out.layout.strides } else { &[] };
    Ok(geometry(a, dims, strides, out.layout.offset))
}

/// Reduces `a` (of `a_dtype`) over the dims flagged in `dims` into `out` (of
/// `out_dtype`, keepdim shape; see the module notes).
///
/// Reducing zero elements gives the identity (sum 0, prod 1, all true, any
/// false, logsumexp -inf, mean/var NaN); max/min of nothing is the caller's
/// error to raise (the kernel writes NaN / 0).
pub fn reduce(kind: ReduceKind, a: Src, a_dtype: DType, dims: &[bool], out: Dst, out_dtype: DType) -> Result<()> {
    let g = out_geometry(a, dims, &out)?;
    let count = g.red.numel;
    let ob = out.base as usize;
    let put = |off: isize, v: Val| {
        // SAFETY: `off` comes from the kept plan over `out`'s layout.
        unsafe { store(out_dtype, ob, off, v) }
    };
    let float = a_dtype.is_floating_point();
    let isa = isa();
    let n = count as f64;
    dispatch_dtype!(a_dtype, T => {
        match kind {
            ReduceKind::Sum | ReduceKind::Mean if float => {
                let mean = kind == ReduceKind::Mean;
                engine::<T, _>(&SumF(isa), a, &g, |o, s| put(o, Val::F(if mean { s / n } else { s })))
            }
            ReduceKind::Mean => engine::<T, _>(&SumI, a, &g, |o, s| put(o, Val::F(s as f64 / n))),
            ReduceKind::Sum => engine::<T, _>(&SumI, a, &g, |o, s| put(o, Val::I(s))),
            ReduceKind::Prod if float => engine::<T, _>(&ProdF { lanes: prod_lanes(a_dtype) }, a, &g, |o, p: T| put(o, val_of(p))),
            ReduceKind::Prod => engine::<T, _>(&ProdI, a, &g, |o, p| put(o, Val::I(p))),
            ReduceKind::ProdAll if float && dims.iter().all(|&d| d) => {
                let p = prod_all_iter_order::<T>(a);
                put(out.layout.offset as isize, Val::F(round_to(a_dtype)(p)))
            }
            ReduceKind::ProdAll => return Err(Error::runtime("prod: the full-reduction product takes a floating tensor and every dim")),
            ReduceKind::Max | ReduceKind::Min if float && count > 0 => {
                // Values only (no index): a lean accumulator the column mode
                // can keep in registers.
                let r = ExtremeVal { max: kind == ReduceKind::Max, isa };
                engine::<T, _>(&r, a, &g, |o, v: T| put(o, val_of(v)))
            }
            ReduceKind::Max | ReduceKind::Min => {
                let r = Extreme { max: kind == ReduceKind::Max };
                engine::<T, _>(&r, a, &g, |o, (v, _, seen): (T, usize, bool)| {
                    put(o, if seen { val_of(v) } else { Val::F(f64::NAN) })
                })
            }
            ReduceKind::Var { correction } | ReduceKind::Std { correction } => {
                let sqrt = matches!(kind, ReduceKind::Std { .. });
                engine::<T, _>(&Moments, a, &g, |o, acc| put(o, Val::F(finish_moments(acc, n, correction, sqrt).0)))
            }
            ReduceKind::LogSumExp => engine::<T, _>(&Lse(isa), a, &g, |o, acc| put(o, Val::F(Lse::finish(acc)))),
            ReduceKind::Norm(p) => {
                let single = matches!(a_dtype, DType::Float32 | DType::Float16 | DType::BFloat16);
                engine::<T, _>(&NormAcc(p), a, &g, |o, s| {
                    let v = if p.is_infinite() || p == 0.0 || p == 1.0 {
                        s
                    } else {
                        let s = if single && s > f32::MAX as f64 { f64::INFINITY } else { s };
                        if p == 2.0 {
                            s.sqrt()
                        } else {
                            s.powf(1.0 / p)
                        }
                    };
                    put(o, Val::F(v))
                })
            }
            ReduceKind::NormShortF32(p) => engine::<T, _>(&NormShort { p }, a, &g, |o, s| {
                let v = if p == 1.0 {
                    s
                } else if p == 2.0 {
                    f32r(s.sqrt())
                } else {
                    f32r(s.powf(f32r(1.0 / p)))
                };
                put(o, Val::F(v))
            }),
            ReduceKind::Norm2FusedF32 => engine::<T, _>(&NormShort { p: f64::NAN }, a, &g, |o, s| put(o, Val::F(f32r(s.sqrt())))),
            ReduceKind::All => engine::<T, _>(&Nonzero, a, &g, |o, c| put(o, Val::I((c == count as i64) as i64))),
            ReduceKind::Any => engine::<T, _>(&Nonzero, a, &g, |o, c| put(o, Val::I((c > 0) as i64))),
            ReduceKind::CountNonzero => engine::<T, _>(&Nonzero, a, &g, |o, c| put(o, Val::I(c))),
        }
    });
    Ok(())
}

/// (variance or its square root, mean) of a Welford accumulator over `n`
/// elements: NaN for both when nothing was reduced; the root is taken in f64
/// (PyTorch's accumulation type), before any rounding to the output dtype.
fn finish_moments((count, mean, m2): (f64, f64, f64), n: f64, correction: f64, sqrt: bool) -> (f64, f64) {
    if count == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let v = m2 / (n - correction).max(0.0);
    (if sqrt { v.sqrt() } else { v }, mean)
}

/// `var`/`std` (with `sqrt`) of every element of a float32/float64 `a` into
/// the one element of `out`, as PyTorch's `std_var_all_cpu`: two passes, the
/// mean as `mean()` forms it (the cascade sum in `a`'s dtype divided by the
/// count in that dtype, so it overflows where that sum does), then the
/// squared deviations from it summed in f64 in row-major order.
pub fn var_all_two_pass(a: Src, a_dtype: DType, correction: f64, sqrt: bool, out: Dst) -> Result<()> {
    fn go<T: Element>(a: Src, correction: f64, sqrt: bool, out: Dst) -> Result<()> {
        let n = a.layout.numel();
        let all = vec![true; a.layout.ndim()];
        let scalar = ferrotorch_core::Layout::contiguous(&[]);
        let mut sum = T::zero();
        crate::cascade::sum(a, T::DTYPE, &all, false, Dst { base: (&mut sum as *mut T).cast(), layout: &scalar })?;
        let mean = T::from_f64(sum.to_f64() / T::from_f64(n as f64).to_f64()).to_f64();
        // The deviations in row-major order, from a contiguous copy.
        let mut buf = vec![T::zero(); n];
        let dense = ferrotorch_core::Layout::contiguous(&a.layout.shape);
        crate::copy::copy_cast(Dst { base: buf.as_mut_ptr().cast(), layout: &dense }, T::DTYPE, a, T::DTYPE);
        let sum_dx2 = buf.iter().fold(0.0, |acc, e| {
            let dx = e.to_f64() - mean;
            acc + dx * dx
        });
        let var = sum_dx2 / (n as f64 - correction).max(0.0);
        // SAFETY: `out` addresses one element of T at its offset.
        unsafe { *at_mut::<T>(out.base, out.layout.offset as isize) = T::from_f64(if sqrt { var.sqrt() } else { var }) };
        Ok(())
    }
    match a_dtype {
        DType::Float32 => go::<f32>(a, correction, sqrt, out),
        DType::Float64 => go::<f64>(a, correction, sqrt, out),
        other => Err(Error::runtime(format!("var_all_two_pass: float32/float64 only, got {other}"))),
    }
}

/// `var`/`std` (with `sqrt`) and, when `mean_out` is given, the mean of float
/// `a` over the flagged dims, by PyTorch's Welford recurrence in f64 (see
/// [`ReduceKind::Var`]); both outputs have `a_dtype` and share one layout
/// (keepdim shape).
pub fn var_mean(a: Src, a_dtype: DType, dims: &[bool], correction: f64, sqrt: bool, var_out: Dst, mean_out: Option<Dst>) -> Result<()> {
    if !a_dtype.is_floating_point() {
        return Err(Error::runtime("std and var only support floating point and complex dtypes"));
    }
    let g = out_geometry(a, dims, &var_out)?;
    if let Some(m) = &mean_out {
        if m.layout.strides != var_out.layout.strides || m.layout.offset != var_out.layout.offset {
            return Err(Error::runtime("var_mean: the two outputs must share a layout"));
        }
    }
    let n = g.red.numel as f64;
    let (vb, mb) = (var_out.base as usize, mean_out.map(|m| m.base as usize));
    dispatch_dtype!(a_dtype, T => engine::<T, _>(&Moments, a, &g, |o, acc| {
        let (v, m) = finish_moments(acc, n, correction, sqrt);
        // SAFETY: `o` comes from the kept plan over the shared output layout.
        unsafe {
            store(a_dtype, vb, o, Val::F(v));
            if let Some(mb) = mb {
                store(a_dtype, mb, o, Val::F(m));
            }
        }
    }));
    Ok(())
}

/// argmax/argmin over the flagged dims (one dim, or all of them for the
/// flattened index): writes int64 `indices` (linear index over the reduced
/// dims, row-major) and, when given, the extreme `values` in `a_dtype`.
/// `values` and `indices` must have the same layout (keepdim shape).
/// The first index wins ties; a NaN counts as the extreme (first NaN wins).
pub fn reduce_arg(kind: ArgKind, a: Src, a_dtype: DType, dims: &[bool], values: Option<Dst>, indices: Dst) -> Result<()> {
    let g = out_geometry(a, dims, &indices)?;
    if let Some(v) = &values {
        if v.layout.strides != indices.layout.strides || v.layout.offset != indices.layout.offset {
            return Err(Error::runtime("reduce_arg: values and indices must share a layout"));
        }
    }
    let ib = indices.base as usize;
    let vb = values.map(|v| v.base as usize);
    let r = Extreme { max: kind == ArgKind::Max };
    dispatch_dtype!(a_dtype, T => engine::<T, _>(&r, a, &g, |o, (v, i, _): (T, usize, bool)| {
        // SAFETY: `o` comes from the kept plan over the shared output layout.
        unsafe {
            *at_mut::<i64>(ib as *mut u8, o) = i as i64;
            if let Some(vb) = vb {
                *at_mut::<T>(vb as *mut u8, o) = v;
            }
        }
    }));
    Ok(())
}

// ---- softmax ----------------------------------------------------------------

/// The compute type of a softmax row: f32 for f32/f16/bf16, f64 for f64.
trait RowFloat: FastFloat + Default {
    fn row_max(isa: Isa, x: &[Self]) -> Self;
    fn row_sum(isa: Isa, x: &[Self]) -> f64;
}
impl RowFloat for f32 {
    fn row_max(isa: Isa, x: &[f32]) -> f32 {
        fold::extreme_f32(isa, x, true)
    }
    fn row_sum(isa: Isa, x: &[f32]) -> f64 {
        vsum::sum_f32(isa, x)
    }
}
impl RowFloat for f64 {
    fn row_max(isa: Isa, x: &[f64]) -> f64 {
        fold::extreme_f64(isa, x, true)
    }
    fn row_sum(isa: Isa, x: &[f64]) -> f64 {
        vsum::sum_f64(isa, x)
    }
}

/// softmax / log_softmax of one contiguous row `x` into `y` (`tmp`: scratch of
/// the same length, used by log_softmax).
fn softmax_row<F: RowFloat>(isa: Isa, x: &[F], y: &mut [F], tmp: &mut [F], log: bool) {
    let m = F::row_max(isa, x);
    let mf = m.to_f64();
    // Keeps PyTorch's results for rows of -inf (NaN) and rows containing +inf.
    for (o, &v) in y.iter_mut().zip(x) {
        *o = F::from_f64(v.to_f64() - mf);
    }
    if log {
        // SAFETY: `y` and `tmp` hold `x.len()` elements each.
        unsafe { F::contiguous_unary(isa, UnaryOp::Exp, y.as_ptr(), tmp.as_mut_ptr(), y.len()) };
        let ls = F::from_f64(F::row_sum(isa, tmp).ln());
        for o in y.iter_mut() {
            *o = o.sub(ls);
        }
    } else {
        // SAFETY: in place over `y`'s own elements.
        unsafe { F::contiguous_unary(isa, UnaryOp::Exp, y.as_ptr(), y.as_mut_ptr(), y.len()) };
        let inv = F::from_f64(1.0 / F::row_sum(isa, y));
        for o in y.iter_mut() {
            *o = o.mul(inv);
        }
    }
}

/// `softmax` (or `log_softmax` when `log`) of `a` along `dim` into `out`
/// (same shape; float `dtype` shared by both; any strides). Rows run in
/// parallel; f16/bf16 compute in f32.
pub fn softmax(a: Src, out: Dst, dtype: DType, dim: usize, log: bool) -> Result<()> {
    let nd = a.layout.shape.len();
    if out.layout.shape != a.layout.shape {
        return Err(Error::runtime("softmax: output shape must equal the input shape"));
    }
    if nd > 0 && dim >= nd {
        return Err(Error::index(format!("softmax: dim {dim} out of range for {nd} dims")));
    }
    match dtype {
        DType::Float32 => softmax_typed::<f32, f32>(a, out, dim, log),
        DType::Float64 => softmax_typed::<f64, f64>(a, out, dim, log),
        DType::Float16 => softmax_typed::<half::f16, f32>(a, out, dim, log),
        DType::BFloat16 => softmax_typed::<half::bf16, f32>(a, out, dim, log),
        _ => return Err(Error::runtime(format!("\"softmax_lastdim_kernel_impl\" not implemented for '{}'", dtype.name()))),
    }
    Ok(())
}

fn softmax_typed<T: Element, F: RowFloat>(a: Src, out: Dst, dim: usize, log: bool) {
    let nd = a.layout.shape.len();
    let (c, sa, so) = if nd == 0 { (1, 1, 1) } else { (a.layout.shape[dim], a.layout.strides[dim], out.layout.strides[dim]) };
    if c == 0 || a.layout.shape.iter().any(|&s| s == 0) {
        return;
    }
    let kshape: Vec<usize> = (0..nd).map(|d| if d == dim { 1 } else { a.layout.shape[d] }).collect();
    let kept = Plan::<2>::new(&kshape, [&a.layout.strides, &out.layout.strides], [a.layout.offset, out.layout.offset]);
    let (ab, ob) = (a.base as usize, out.base as usize);
    let direct = T::DTYPE == F::DTYPE;
    let isa = isa();
    let rows = |off: [isize; 2], n: usize, st: [isize; 2]| {
        let mut xin = vec![F::default(); c];
        let mut yout = vec![F::default(); c];
        let mut tmp = vec![F::default(); if log { c } else { 0 }];
        for j in 0..n {
            let (ao, oo) = (off[0] + j as isize * st[0], off[1] + j as isize * st[1]);
            // SAFETY: row offsets come from the kept plan and `dim`'s stride,
            // inside both layouts; when reading/writing directly the element
            // type is F itself and the row is contiguous.
            unsafe {
                let x: &[F] = if direct && sa == 1 {
                    std::slice::from_raw_parts(at::<F>(ab as *const u8, ao), c)
                } else {
                    for (i, v) in xin.iter_mut().enumerate() {
                        *v = F::from_f64((*at::<T>(ab as *const u8, ao + i as isize * sa)).to_f64());
                    }
                    &xin
                };
                if direct && so == 1 {
                    let y = std::slice::from_raw_parts_mut(at_mut::<F>(ob as *mut u8, oo), c);
                    softmax_row(isa, x, y, &mut tmp, log);
                } else {
                    softmax_row(isa, x, &mut yout, &mut tmp, log);
                    for (i, v) in yout.iter().enumerate() {
                        *at_mut::<T>(ob as *mut u8, oo + i as isize * so) = <T as Element>::from_f64(v.to_f64());
                    }
                }
            }
        }
    };
    kept.for_each_par_grain((GRAIN / c).max(1), rows);
}

// ---- cumulative -------------------------------------------------------------


/// Rows scanned together when the scanned dim is contiguous: independent
/// running values hide the add latency while each row stays one sequential
/// stream for the prefetcher. Otherwise a whole kept run (up to [`COLS`]
/// outputs, e.g. a full row when scanning over dim 0) is carried at once, so
/// every input row is read sequentially.
const CUM_ROWS: usize = 4;

/// Running sum/product of `a` (of `a_dtype`) along `dim` into `out` (same
/// shape, `out_dtype`; PyTorch gives int64 for integer inputs). The running
/// value is PyTorch's CPU accumulator: f64 for f32/f64, f32 for f16/bf16
/// (each output is rounded from it, the running value is not), wrapping i64
/// for integers. Parallel over outputs.
pub fn cumulative(kind: CumKind, a: Src, a_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()> {
    let nd = a.layout.shape.len();
    if out.layout.shape != a.layout.shape {
        return Err(Error::runtime("cumulative: output shape must equal the input shape"));
    }
    if nd > 0 && dim >= nd {
        return Err(Error::index(format!("cumulative: dim {dim} out of range for {nd} dims")));
    }
    let (c, sa, so) = if nd == 0 { (1, 1, 1) } else { (a.layout.shape[dim], a.layout.strides[dim], out.layout.strides[dim]) };
    if a.layout.shape.iter().any(|&s| s == 0) {
        return Ok(());
    }
    let kshape: Vec<usize> = (0..nd).map(|d| if d == dim { 1 } else { a.layout.shape[d] }).collect();
    let kept = Plan::<2>::new(&kshape, [&a.layout.strides, &out.layout.strides], [a.layout.offset, out.layout.offset]);
    let (ab, ob) = (a.base as usize, out.base as usize);
    let float = a_dtype.is_floating_point() || out_dtype.is_floating_point();
    let half = matches!(out_dtype, DType::Float16 | DType::BFloat16);
    let sum = kind == CumKind::Sum;
    dispatch_dtype!(a_dtype, T => {
        let typed = T::DTYPE == out_dtype;
        let block = if sa.unsigned_abs() == 1 { CUM_ROWS } else { COLS };
        kept.for_each_par_grain((GRAIN / c).max(1), |off, n, st| {
            let (mut fa, mut ia) = (vec![0f64; block.min(n)], vec![0i64; block.min(n)]);
            for j0 in (0..n).step_by(block) {
                let w = block.min(n - j0);
                fa[..w].fill(if sum { 0.0 } else { 1.0 });
                ia[..w].fill(if sum { 0 } else { 1 });
                let (a0, o0) = (off[0] + j0 as isize * st[0], off[1] + j0 as isize * st[1]);
                for i in 0..c as isize {
                    for j in 0..w {
                        let (ao, oo) = (a0 + j as isize * st[0] + i * sa, o0 + j as isize * st[1] + i * so);
                        // SAFETY: offsets from the kept plan plus `dim`'s
                        // strides stay inside both layouts.
                        unsafe {
                            let x: T = *at::<T>(ab as *const u8, ao);
                            if float {
                                let v = if sum { fa[j] + x.to_f64() } else { fa[j] * x.to_f64() };
                                fa[j] = if half { v as f32 as f64 } else { v };
                                if typed {
                                    *at_mut::<T>(ob as *mut u8, oo) = <T as Element>::from_f64(fa[j]);
                                } else {
                                    store(out_dtype, ob, oo, Val::F(fa[j]));
                                }
                            } else {
                                let x = x.to_i64();
                                ia[j] = if sum { ia[j].wrapping_add(x) } else { ia[j].wrapping_mul(x) };
                                if out_dtype == DType::Int64 {
                                    *at_mut::<i64>(ob as *mut u8, oo) = ia[j];
                                } else {
                                    store(out_dtype, ob, oo, Val::I(ia[j]));
                                }
                            }
                        }
                    }
                }
            }
        });
    });
    Ok(())
}

/// `cummax` (or `cummin`) of `a` along `dim`: the running extreme into
/// `values` (`a`'s dtype) and the index it was last taken at into the int64
/// `indices`, both of `a`'s shape. Later ties win and a NaN, once met,
/// sticks (PyTorch's `cummax_cummin_helper`).
pub fn cumulative_arg(kind: ArgKind, a: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
    let nd = a.layout.shape.len();
    if values.layout.shape != a.layout.shape || indices.layout.shape != a.layout.shape {
        return Err(Error::runtime("cumulative: output shape must equal the input shape"));
    }
    if nd > 0 && dim >= nd {
        return Err(Error::index(format!("cumulative: dim {dim} out of range for {nd} dims")));
    }
    if a.layout.shape.iter().any(|&s| s == 0) {
        return Ok(());
    }
    let pick = |l: &ferrotorch_core::Layout| if nd == 0 { 1 } else { l.strides[dim] };
    let c = if nd == 0 { 1 } else { a.layout.shape[dim] };
    let (sa, sv, si) = (pick(a.layout), pick(values.layout), pick(indices.layout));
    let kshape: Vec<usize> = (0..nd).map(|d| if d == dim { 1 } else { a.layout.shape[d] }).collect();
    let kept = Plan::<3>::new(
        &kshape,
        [&a.layout.strides, &values.layout.strides, &indices.layout.strides],
        [a.layout.offset, values.layout.offset, indices.layout.offset],
    );
    let (ab, vb, ib) = (a.base as usize, values.base as usize, indices.base as usize);
    let max = kind == ArgKind::Max;
    dispatch_dtype!(dtype, T => {
        kept.for_each_par_grain((GRAIN / c).max(1), |off, n, st| {
            for j in 0..n as isize {
                let (a0, v0, i0) = (off[0] + j * st[0], off[1] + j * st[1], off[2] + j * st[2]);
                let (mut best, mut bi) = (T::zero(), 0i64);
                for k in 0..c as isize {
                    // SAFETY: offsets from the kept plan plus `dim`'s strides
                    // stay inside the three layouts; the outputs are fresh.
                    unsafe {
                        let v: T = *at::<T>(ab as *const u8, a0 + k * sa);
                        #[allow(clippy::eq_op)]
                        let take = k == 0 || v != v || (best == best && if max { v >= best } else { v <= best });
                        if take {
                            best = v;
                            bi = k as i64;
                        }
                        *at_mut::<T>(vb as *mut u8, v0 + k * sv) = best;
                        *at_mut::<i64>(ib as *mut u8, i0 + k * si) = bi;
                    }
                }
            }
        });
    });
    Ok(())
}

/// `v` rounded to the floating `dt`, as PyTorch stores an intermediate
/// tensor of that dtype.
fn round_to(dt: DType) -> fn(f64) -> f64 {
    match dt {
        DType::Float32 => |v| v as f32 as f64,
        DType::Float16 => |v| half::f16::from_f64(v).to_f64(),
        DType::BFloat16 => |v| half::bf16::from_f64(v).to_f64(),
        _ => |v| v,
    }
}

/// `acc` times the product of `xs`, rounded to the dtype (`r`) after every
/// multiplication in the order of PyTorch's CPU `binary_kernel_reduce_vec`:
/// with `lanes > 0` (a contiguous run) blocks of `4 * lanes` elements fold
/// into 4 vector accumulators, which combine as `(a0 * a1) * (a2 * a3)` and
/// then lane by lane; the remaining elements multiply one by one.
fn torch_prod_chunk(acc: f64, xs: &[f64], lanes: usize, r: fn(f64) -> f64) -> f64 {
    let mut dst = acc;
    let block = 4 * lanes;
    let count = if lanes == 0 { 0 } else { xs.len() / block };
    if count > 0 {
        let mut a: Vec<f64> = xs[..block].to_vec();
        for i in 1..count {
            for (k, v) in a.iter_mut().enumerate() {
                *v = r(*v * xs[i * block + k]);
            }
        }
        let mut buf: Vec<f64> = (0..lanes)
            .map(|l| {
                let a01 = r(a[l] * a[lanes + l]);
                let a23 = r(a[2 * lanes + l] * a[3 * lanes + l]);
                r(a01 * a23)
            })
            .collect();
        for l in 1..lanes {
            buf[0] = r(buf[0] * buf[l]);
        }
        dst = r(dst * buf[0]);
    }
    for &v in &xs[count * block..] {
        dst = r(dst * v);
    }
    dst
}

/// [`ReduceKind::ProdAll`]: the product of every element of the floating
/// `a`, in TensorIterator's dim order with its coalescing, runs of the
/// innermost (coalesced) dim folded by [`torch_prod_chunk`].
fn prod_all_iter_order<T: Element>(a: Src) -> f64 {
    let l = a.layout;
    let (shape, strides) = (&l.shape[..], &l.strides[..]);
    // perm[0] is the innermost dim.
    let perm = ferrotorch_core::layout::iteration_order(shape, &[strides]);
    let mut cs: Vec<(usize, isize)> = perm.iter().map(|&d| (shape[d], strides[d])).collect();
    if !cs.is_empty() {
        let mut prev = 0;
        for k in 1..cs.len() {
            let (sp, tp) = cs[prev];
            let (sk, tk) = cs[k];
            if sp == 1 || sk == 1 || tp * sp as isize == tk {
                if sp == 1 {
                    cs[prev].1 = tk;
                }
                cs[prev].0 = sp * sk;
            } else {
                prev += 1;
                cs[prev] = (sk, tk);
            }
        }
        cs.truncate(prev + 1);
    }
    let (inner, inner_stride) = cs.first().copied().unwrap_or((1, 1));
    // The elements in iteration order, the outermost dim first.
    let order: Vec<usize> = perm.iter().rev().copied().collect();
    let (sizes, steps): (Vec<usize>, Vec<isize>) = order.iter().map(|&d| (shape[d], strides[d])).unzip();
    let n = l.numel();
    let mut flat = Vec::with_capacity(n);
    let mut idx = vec![0usize; sizes.len()];
    let mut pos = l.offset as isize;
    for _ in 0..n {
        // SAFETY: the odometer walks the positions of `a`'s own layout.
        flat.push(unsafe { *at::<T>(a.base, pos) }.to_f64());
        for d in (0..sizes.len()).rev() {
            idx[d] += 1;
            pos += steps[d];
            if idx[d] < sizes[d] {
                break;
            }
            pos -= steps[d] * sizes[d] as isize;
            idx[d] = 0;
        }
    }
    let r = round_to(T::DTYPE);
    let lanes = if inner_stride == 1 { prod_lanes(T::DTYPE) } else { 0 };
    let mut acc = 1.0;
    if inner > 0 {
        for chunk in flat.chunks(inner) {
            acc = torch_prod_chunk(acc, chunk, lanes, r);
        }
    }
    acc
}

/// [`Backend::cumprod_backward`](ferrotorch_core::Backend::cumprod_backward):
/// row by row along `dim`, every operand float64.
#[allow(clippy::too_many_arguments)]
pub fn cumprod_backward(x: Src, g: Src, out: Src, dim: usize, exact: bool, w_dtype: DType, x_dtype: DType, grad: Dst) -> Result<()> {
    let l = x.layout;
    let nd = l.shape.len();
    if [g.layout, out.layout, grad.layout].iter().any(|o| o.shape != l.shape) || (nd > 0 && dim >= nd) {
        return Err(Error::runtime("cumprod backward: operands must share the input's shape"));
    }
    if l.numel() == 0 {
        return Ok(());
    }
    let n = if nd == 0 { 1 } else { l.shape[dim] };
    let step = |o: &ferrotorch_core::Layout| if nd == 0 { 0 } else { o.strides[dim] };
    let (rw, rx) = (round_to(w_dtype), round_to(x_dtype));
    let kshape: Vec<usize> = (0..nd).map(|d| if d == dim { 1 } else { l.shape[d] }).collect();
    let kept = Plan::<4>::new(
        &kshape,
        [&l.strides, &g.layout.strides, &out.layout.strides, &grad.layout.strides],
        [l.offset, g.layout.offset, out.layout.offset, grad.layout.offset],
    );
    let steps = [step(l), step(g.layout), step(out.layout), step(grad.layout)];
    let (mut xr, mut gr, mut or, mut dst) = (vec![0f64; n], vec![0f64; n], vec![0f64; n], vec![0f64; n]);
    kept.for_each(|off, count, st| {
        for j in 0..count as isize {
            let base = [off[0] + j * st[0], off[1] + j * st[1], off[2] + j * st[2], off[3] + j * st[3]];
            for k in 0..n {
                let at_k = |i: usize| base[i] + k as isize * steps[i];
                // SAFETY: positions from the kept plan plus `dim`'s strides lie
                // inside each operand's layout.
                unsafe {
                    xr[k] = *at::<f64>(x.base, at_k(0));
                    gr[k] = *at::<f64>(g.base, at_k(1));
                    or[k] = *at::<f64>(out.base, at_k(2));
                }
            }
            cumprod_backward_row(&xr, &gr, &or, exact, rw, rx, &mut dst);
            for (k, &v) in dst.iter().enumerate() {
                // SAFETY: as above; `grad` is fresh and aliases no input.
                unsafe { *at_mut::<f64>(grad.base, base[3] + k as isize * steps[3]) = v };
            }
        }
    });
    Ok(())
}

/// One row of [`cumprod_backward`]: before the first zero `z1` the reversed
/// cumulative sum of `w = out * g` over `x`; at `z1` the sum over `[z1, z2)`
/// of `g_j * prod(x(z1, j])` times `out[z1 - 1]`; after it 0. With `exact`,
/// the exact products of the other factors (PyTorch's O(n^2) branch).
fn cumprod_backward_row(xr: &[f64], gr: &[f64], or: &[f64], exact: bool, rw: fn(f64) -> f64, rx: fn(f64) -> f64, dst: &mut [f64]) {
    let n = xr.len();
    if exact {
        for k in 0..n {
            // d out_j / d x_k = prod_{i<=j, i!=k} x_i for j >= k
            let before: f64 = xr[..k].iter().product();
            let (mut acc, mut after) = (0.0, 1.0);
            for j in k..n {
                if j > k {
                    after *= xr[j];
                }
                acc += gr[j] * before * after;
            }
            dst[k] = acc;
        }
        return;
    }
    dst.fill(0.0);
    let z1 = xr.iter().position(|&v| v == 0.0).unwrap_or(n);
    // [0, z1): reversed cumsum (double accumulator, stored rounded) of w.
    let mut acc = 0.0;
    for k in (0..z1).rev() {
        acc += rw(or[k] * gr[k]);
        dst[k] = rw(rw(acc) / xr[k]);
    }
    if z1 == n {
        return;
    }
    let z2 = xr[z1 + 1..].iter().position(|&v| v == 0.0).map_or(n, |p| z1 + 1 + p);
    // cumprod of x with everything outside (z1, z2) set to 1, times g kept
    // on [z1, z2) and 0 elsewhere, summed over the whole row (an infinite
    // product times a masked 0 is NaN there too).
    let (mut cp, mut sum) = (1.0, 0.0);
    for j in 0..n {
        if j > z1 && j < z2 {
            cp *= xr[j];
        }
        let gm = if j >= z1 && j < z2 { gr[j] } else { 0.0 };
        sum += rx(rx(cp) * gm);
    }
    let before = if z1 == 0 { 1.0 } else { or[z1 - 1] };
    dst[z1] = rx(rx(sum) * before);
}
