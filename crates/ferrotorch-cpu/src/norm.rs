//! Normalisation kernels: PyTorch's CPU `RowwiseMoments` (the mean and biased
//! variance behind layer_norm and group_norm) and the layer_norm forward and
//! backward over contiguous rows.
//!
//! Statistics and arithmetic run in the compute type `F`: f32 for
//! f32/f16/bf16 inputs, f64 for f64 (PyTorch's opmath types); reduced inputs
//! are widened row by row and the result rounded once.

use crate::parallel::SendPtr;
use crate::simd::{isa, Isa};
use ferrotorch_core::{DType, Element};
use std::marker::PhantomData;

/// Float arithmetic the moments kernel needs, done in the type itself (not
/// widened), so overflow happens exactly where PyTorch's kernel overflows.
pub trait MomentFloat:
    Element
    + Default
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// `v` converted (rounded) to this type.
    fn from_usize(v: usize) -> Self;
    /// `self * a + b` rounded once (the compiler contracts these in PyTorch's build).
    fn fma(self, a: Self, b: Self) -> Self;
}
macro_rules! moment_float {
    ($($t:ty),*) => {$(
        impl MomentFloat for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            #[inline(always)]
            fn from_usize(v: usize) -> $t {
                v as $t
            }
            #[inline(always)]
            fn fma(self, a: $t, b: $t) -> $t {
                self.mul_add(a, b)
            }
        }
    )*};
}
moment_float!(f32, f64);

/// `AddMoments`/`AddMomentsVec` for one lane: merges (m0_add, m1_add, m2_add)
/// into (m0, m1, m2). Note `delta * delta * c * m0` is evaluated even when
/// `m0 == 0`, so a mean whose square overflows turns m2 into NaN, as in PyTorch.
#[inline(always)]
fn add_moments<T: MomentFloat>(m0_add: usize, m1_add: T, m2_add: T, m0: &mut usize, m1: &mut T, m2: &mut T) {
    let n = *m0 + m0_add;
    let c = if n == 0 { T::ZERO } else { T::from_usize(m0_add) / T::from_usize(n) };
    let delta = m1_add - *m1;
    *m1 = *m1 + delta * c;
    *m2 = *m2 + (m2_add + delta * delta * c * T::from_usize(*m0));
    *m0 = n;
}

/// The vectorised merge (`AddMomentsVec`) of `L` lanes that share their
/// count, written over arrays so that it compiles to vector instructions.
/// Measured against PyTorch's build it never turns a finite lane into NaN
/// when merging into an empty (m0 == 0) slot, which
/// `delta * (delta * (c * m0))` reproduces.
#[inline(always)]
fn add_moments_lanes<T: MomentFloat, const L: usize>(m0_add: usize, m1_add: &[T; L], m2_add: &[T; L], m0: &mut usize, m1: &mut [T; L], m2: &mut [T; L]) {
    let n = *m0 + m0_add;
    let c = if n == 0 { T::ZERO } else { T::from_usize(m0_add) / T::from_usize(n) };
    let cm = c * T::from_usize(*m0);
    for l in 0..L {
        let delta = m1_add[l] - m1[l];
        m1[l] = m1[l] + delta * c;
        m2[l] = m2[l] + (m2_add[l] + delta * (delta * cm));
    }
    *m0 = n;
}

/// The cascade stack of [`rowwise_moments`], kept between rows so that a
/// row costs no allocation.
pub struct MomentStack<T, const L: usize> {
    m0: Vec<usize>,
    m1: Vec<[T; L]>,
    m2: Vec<[T; L]>,
}

impl<T: MomentFloat, const L: usize> Default for MomentStack<T, L> {
    fn default() -> Self {
        MomentStack { m0: Vec::new(), m1: Vec::new(), m2: Vec::new() }
    }
}

/// PyTorch's CPU `RowwiseMomentsImpl` (ATen/native/cpu/moments_utils.h):
/// `(mean, biased variance)` of `x`, by per-lane Welford over chunks of 16
/// vectors of `L` lanes, chunks merged in a binary cascade, then a scalar
/// Welford tail merged with the lanes. Reproducing the order (not just the
/// maths) is what gives PyTorch's results for values whose squares overflow.
/// `L` is the vector width of the reference build's kernels (8 floats, 4
/// doubles); `split` is 2 for rows that were float16/bfloat16 (a vector of
/// 2L reduced values is widened to two float vectors, accumulated in turn).
#[inline(always)]
pub fn rowwise_moments<T: MomentFloat, const L: usize>(x: &[T], split: usize, stk: &mut MomentStack<T, L>) -> (T, T) {
    const CHUNK: usize = 16;
    let big_n = x.len();
    let width = L * split;
    let n = big_n / width;
    let m = n.div_ceil(CHUNK);
    // utils::CeilLog2: 1 for m <= 2, else ceil(log2(m)).
    let depth = if m <= 2 { 1 } else { (usize::BITS - (m - 1).leading_zeros()) as usize };
    stk.m0.clear();
    stk.m0.resize(depth, 0);
    stk.m1.clear();
    stk.m1.resize(depth, [T::ZERO; L]);
    stk.m2.clear();
    stk.m2.resize(depth, [T::ZERO; L]);
    let (m0_stk, m1_stk, m2_stk) = (&mut stk.m0[..], &mut stk.m1[..], &mut stk.m2[..]);
    let mut c_vecs = [T::ZERO; CHUNK];
    for (i, c) in c_vecs.iter_mut().enumerate() {
        *c = T::ONE / T::from_usize(i + 1);
    }
    // Welford results of the chains (chunk `k / split`, half `k % split`)
    // after the current one, computed with it: up to four independent chains
    // in one loop hide the latency of each chain's dependent fused
    // multiply-adds; each chain's arithmetic is unchanged.
    const AHEAD: usize = 4;
    let mut group = [[[T::ZERO; L]; 2]; AHEAD];
    let (mut group_len, mut group_pos) = (0usize, 0usize);
    for i in 0..m {
        let base = i * CHUNK * width;
        let m0 = CHUNK.min(n - i * CHUNK);
        // UpdateMomentsVec
        for h in 0..split {
            let start = base + h * L;
            let (m1v, m2v) = if group_pos < group_len {
                group_pos += 1;
                (group[group_pos - 1][0], group[group_pos - 1][1])
            } else {
                let (mut m1v, mut m2v) = ([T::ZERO; L], [T::ZERO; L]);
                #[cfg(target_arch = "x86_64")]
                let done = if T::DTYPE == DType::Float32 && L == 8 && fma_ok() {
                    // The chains with the same count `m0` that follow: all
                    // full chunks, or the halves of the last chunk.
                    let k = i * split + h;
                    let same = if m0 == CHUNK { (n / CHUNK) * split } else { m * split };
                    let len = (same - k).min(AHEAD);
                    let mut starts = [0usize; AHEAD];
                    for (q, st) in starts.iter_mut().enumerate().take(len) {
                        *st = ((k + q) / split) * CHUNK * width + ((k + q) % split) * L;
                    }
                    let xp = x.as_ptr() as *const f32;
                    let cp = c_vecs.as_ptr() as *const f32;
                    let out = group.as_mut_ptr() as *mut f32;
                    // SAFETY: f32 lanes (checked dtype, L == 8, so `group`
                    // is `AHEAD` (m1, m2) pairs of 8 floats, contiguous);
                    // each chain's `m0` vectors, `width` apart from its start,
                    // lie inside the first `n * width` elements of `x`; the
                    // CPU has AVX2+FMA.
                    unsafe {
                        let p = |q: usize| xp.add(starts[q]);
                        match len {
                            1 => avx::welford8xk::<1>([p(0)], width, m0, cp, out),
                            2 => avx::welford8xk::<2>([p(0), p(1)], width, m0, cp, out),
                            3 => avx::welford8xk::<3>([p(0), p(1), p(2)], width, m0, cp, out),
                            _ => avx::welford8xk::<4>([p(0), p(1), p(2), p(3)], width, m0, cp, out),
                        }
                    };
                    (m1v, m2v) = (group[0][0], group[0][1]);
                    (group_len, group_pos) = (len, 1);
                    true
                } else {
                    false
                };
                #[cfg(not(target_arch = "x86_64"))]
                let done = false;
                if !done {
                    for (j, &c) in c_vecs.iter().enumerate().take(m0) {
                        let v = &x[start + j * width..][..L];
                        for l in 0..L {
                            let xv = v[l];
                            let delta = xv - m1v[l];
                            m1v[l] = delta.fma(c, m1v[l]);
                            m2v[l] = delta.fma(xv - m1v[l], m2v[l]);
                        }
                    }
                }
                (m1v, m2v)
            };
            add_moments_lanes(m0, &m1v, &m2v, &mut m0_stk[0], &mut m1_stk[0], &mut m2_stk[0]);
        }
        let mut mask = i + 1;
        let mut j = 1;
        while j < depth && mask & 1 == 0 {
            let (lo, hi) = m0_stk.split_at_mut(j);
            let (l1, h1) = m1_stk.split_at_mut(j);
            let (l2, h2) = m2_stk.split_at_mut(j);
            add_moments_lanes(lo[j - 1], &l1[j - 1], &l2[j - 1], &mut hi[0], &mut h1[0], &mut h2[0]);
            lo[j - 1] = 0;
            l1[j - 1] = [T::ZERO; L];
            l2[j - 1] = [T::ZERO; L];
            mask >>= 1;
            j += 1;
        }
    }
    for i in 1..depth {
        let (lo, hi) = m0_stk.split_at_mut(i);
        let (l1, h1) = m1_stk.split_at_mut(i);
        let (l2, h2) = m2_stk.split_at_mut(i);
        add_moments_lanes(hi[0], &h1[0], &h2[0], &mut lo[0], &mut l1[0], &mut l2[0]);
    }
    let (mut m0, mut m1, mut m2) = (0usize, T::ZERO, T::ZERO);
    for &xv in &x[n * width..] {
        let delta = xv - m1;
        m0 += 1;
        m1 = m1 + delta / T::from_usize(m0);
        m2 = delta.fma(xv - m1, m2);
    }
    for l in 0..L {
        add_moments(n * split, m1_stk[0][l], m2_stk[0][l], &mut m0, &mut m1, &mut m2);
    }
    (m1, m2 / T::from_usize(big_n))
}

/// [`rowwise_moments`] with the lane count of `T` (8 for f32, 4 for f64).
#[inline(always)]
fn moments<F: MomentFloat>(x: &[F], split: usize, s8: &mut MomentStack<F, 8>, s4: &mut MomentStack<F, 4>) -> (F, F) {
    if F::DTYPE == DType::Float64 {
        rowwise_moments::<F, 4>(x, 1, s4)
    } else {
        rowwise_moments::<F, 8>(x, split, s8)
    }
}

/// `x` as a slice of `F` when `T` is `F` itself.
#[inline(always)]
fn same<T: Element, F: Element>(x: &[T]) -> Option<&[F]> {
    // SAFETY: equal dtypes mean equal Rust types (one type per dtype).
    (T::DTYPE == F::DTYPE).then(|| unsafe { std::slice::from_raw_parts(x.as_ptr() as *const F, x.len()) })
}

#[inline(always)]
fn same_mut<T: Element, F: Element>(x: &mut [T]) -> Option<&mut [F]> {
    // SAFETY: as in `same`.
    (T::DTYPE == F::DTYPE).then(|| unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr() as *mut F, x.len()) })
}

#[inline(always)]
fn widen<T: Element, F: Element>(x: &[T], buf: &mut [F]) {
    for (b, &v) in buf.iter_mut().zip(x) {
        *b = F::from_f64(v.to_f64());
    }
}

#[inline(always)]
fn narrow<T: Element, F: Element>(y: &[F], out: &mut [T]) {
    for (o, &v) in out.iter_mut().zip(y) {
        *o = T::from_f64(v.to_f64());
    }
}

/// Per-row statistics shared by layer norm and group norm: a row widened to
/// `F` when needed, its mean and `1/sqrt(var + eps)` (C++'s `std::max(var,
/// 0)`: a NaN variance stays NaN), with the moment stacks and widening buffer
/// reused across a task's rows.
struct RowStats<F: MomentFloat> {
    s8: MomentStack<F, 8>,
    s4: MomentStack<F, 4>,
    xb: Vec<F>,
    split: usize,
    eps: f64,
}

impl<F: MomentFloat> RowStats<F> {
    #[inline(always)]
    fn new<T: Element>(n: usize, split: usize, eps: f64) -> Self {
        let xb = if T::DTYPE == F::DTYPE { Vec::new() } else { vec![F::ZERO; n] };
        RowStats { s8: MomentStack::default(), s4: MomentStack::default(), xb, split, eps }
    }

    /// `(row as F, mean, rstd)`.
    #[inline(always)]
    fn of<'a, T: Element>(&'a mut self, xr: &'a [T]) -> (&'a [F], F, F) {
        let xf: &[F] = match same::<T, F>(xr) {
            Some(s) => s,
            None => {
                widen(xr, &mut self.xb);
                &self.xb
            }
        };
        let (mu, var) = moments(xf, self.split, &mut self.s8, &mut self.s4);
        let v = var.to_f64();
        let rs = F::from_f64(1.0 / ((if v < 0.0 { 0.0 } else { v }) + self.eps).sqrt());
        (xf, mu, rs)
    }
}

/// Rows per parallel task: at least a grain of elements, and at most about
/// four tasks per thread (the backward keeps one weight-gradient partial per task).
fn rows_per_task(rows: usize, n: usize) -> usize {
    let by_grain = (crate::iter::GRAIN / n.max(1)).max(1);
    let by_threads = rows.div_ceil(4 * crate::parallel::threads()).max(1);
    by_grain.max(by_threads)
}

/// Whether the row kernels can run their AVX2+FMA instantiation, where the
/// moments' `mul_add` is one instruction instead of a libm call.
fn fma_ok() -> bool {
    cfg!(target_arch = "x86_64") && !matches!(isa(), Isa::Scalar)
}

/// One parallel task of a kernel: its work is a named `#[inline(always)]`
/// method rather than a closure, so that [`run_tasks`] compiles it inside
/// the AVX2+FMA instantiation ([`run_fma`]) and every `mul_add` in it is one
/// instruction. A closure passed to a `#[target_feature]` function is
/// compiled as a function of its own without the feature, so its `mul_add`s
/// became calls to libm's `fmaf` (46% of group norm's forward time).
trait Task: Sync {
    /// What one task returns.
    type Out: Send;
    /// Runs task `t`; implementations are `#[inline(always)]`.
    fn run(&self, t: usize) -> Self::Out;
}

/// [`Task::run`] compiled for AVX2+FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_fma<K: Task>(k: &K, t: usize) -> K::Out {
    k.run(t)
}

/// Runs tasks `0..tasks` of `k` on [`crate::parallel`] (the calling thread
/// takes part; `torch.set_num_threads` caps the threads), each in its
/// AVX2+FMA instantiation when the CPU has one; returns the results in task
/// order.
fn run_tasks<K: Task>(tasks: usize, k: &K) -> Vec<K::Out> {
    crate::parallel::parallel_map(tasks, |t| {
        #[cfg(target_arch = "x86_64")]
        if fma_ok() {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { run_fma(k, t) };
        }
        k.run(t)
    })
}

/// Piece `t` of `x` cut into consecutive pieces of `per` elements (the last
/// may be shorter; past the end, empty).
#[inline(always)]
fn piece<T>(x: &[T], t: usize, per: usize) -> &[T] {
    let lo = (t * per).min(x.len());
    &x[lo..(lo + per).min(x.len())]
}

/// A mutable slice that parallel tasks cut into consecutive pieces of `per`
/// elements, as [`piece`] does, each task taking only its own piece.
struct Pieces<'a, T> {
    ptr: SendPtr<T>,
    len: usize,
    per: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> Pieces<'a, T> {
    fn new(x: &'a mut [T], per: usize) -> Self {
        Pieces { ptr: SendPtr(x.as_mut_ptr()), len: x.len(), per, _borrow: PhantomData }
    }

    /// Piece `t`.
    ///
    /// # Safety
    /// Only one reference to a piece may be live at a time: a task takes
    /// only its own piece, once.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, t: usize) -> &'a mut [T] {
        let lo = (t * self.per).min(self.len);
        let hi = (lo + self.per).min(self.len);
        // SAFETY: `[lo, hi)` lies inside the exclusively borrowed slice; the
        // caller guarantees no other reference to it is live.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.get().add(lo), hi - lo) }
    }
}

/// How many rows of `row_bytes` ahead a row pass prefetches its input
/// (the `ahead` of the row kernels), 0 for none: at least 8 KiB ahead, so
/// that a line has a whole row's time to arrive (one row ahead left layer
/// norm's 4 KiB rows waiting, two did not), and only for rows of up to
/// 64 KiB, past which the pass re-reads its own row from L2 and a
/// prefetched next one would only evict it.
fn rows_ahead(row_bytes: usize) -> usize {
    const LEAD: usize = 8 << 10;
    const MAX_ROW: usize = 64 << 10;
    if row_bytes == 0 || row_bytes > MAX_ROW {
        0
    } else {
        LEAD.div_ceil(row_bytes)
    }
}

/// Forward of one task's rows; see [`layer_norm_forward`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn forward_rows<T: Element, F: MomentFloat>(
    x: &[T],
    out: &mut [T],
    mean: &mut [F],
    rstd: &mut [F],
    n: usize,
    w: Option<&[F]>,
    b: Option<&[F]>,
    eps: f64,
    split: usize,
    stream: bool,
) {
    let mut stats = RowStats::<F>::new::<T>(n, split, eps);
    let direct = T::DTYPE == F::DTYPE;
    let mut yb = if direct { Vec::new() } else { vec![F::ZERO; n] };
    let stream = direct && stream;
    let (rows, lead) = (mean.len(), rows_ahead(n * std::mem::size_of::<T>()));
    for (r, (xr, yr)) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)).enumerate() {
        let (xf, mu, rs) = stats.of(xr);
        mean[r] = mu;
        rstd[r] = rs;
        let direct_out = direct;
        {
            let yf: &mut [F] = if direct_out { same_mut::<T, F>(yr).unwrap_or(&mut yb[..]) } else { &mut yb };
            #[cfg(target_arch = "x86_64")]
            if F::DTYPE == DType::Float32 && fma_ok() {
                // SAFETY: F is f32 (checked); every slice holds `n` elements; AVX2 present.
                unsafe {
                    let f = |s: &[F]| s.as_ptr() as *const f32;
                    let (xp, yp, mu, rs) = (f(xf), yf.as_mut_ptr() as *mut f32, mu.to_f64() as f32, rs.to_f64() as f32);
                    // The row `lead` ahead, when it is read as f32 too.
                    let ahead = if direct && lead > 0 && r + lead < rows { xp.wrapping_add(lead * n) } else { std::ptr::null() };
                    match (isa() == Isa::Avx512, stream) {
                        (true, true) => avx::affine16::<true>(xp, mu, rs, w.map(f), b.map(f), yp, n, ahead),
                        (true, false) => avx::affine16::<false>(xp, mu, rs, w.map(f), b.map(f), yp, n, ahead),
                        (false, true) => avx::affine8::<true>(xp, mu, rs, w.map(f), b.map(f), yp, n, ahead),
                        (false, false) => avx::affine8::<false>(xp, mu, rs, w.map(f), b.map(f), yp, n, ahead),
                    }
                }
                if !direct_out {
                    narrow(&yb, yr);
                }
                continue;
            }
            // PyTorch's roundings per parameter combination (see `avx::affine1`).
            match (w, b) {
                (Some(w), Some(b)) => {
                    for j in 0..n {
                        yf[j] = ((xf[j] - mu) * rs).fma(w[j], b[j]);
                    }
                }
                (Some(w), None) => {
                    for j in 0..n {
                        yf[j] = (xf[j] - mu) * rs * w[j];
                    }
                }
                (None, Some(b)) => {
                    for j in 0..n {
                        yf[j] = (xf[j] - mu).fma(rs, b[j]);
                    }
                }
                (None, None) => {
                    for j in 0..n {
                        yf[j] = (xf[j] - mu) * rs;
                    }
                }
            }
        }
        if !direct_out {
            narrow(&yb, yr);
        }
    }
    if stream {
        crate::simd::stream::fence();
    }
}

/// `layer_norm` over rows of `n` contiguous elements: `out = (x - mean) * rstd
/// * w + b` per row, with `mean`/`rstd` (one per row, `rows = mean.len()`)
/// written too. `rstd = 1 / sqrt(max(var, 0) + eps)` is taken in f64 and
/// rounded to `F`, as PyTorch does. `split` is 2 when `T` is float16/bfloat16.
/// Rows run in parallel.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_forward<T: Element, F: MomentFloat>(
    x: &[T],
    n: usize,
    w: Option<&[F]>,
    b: Option<&[F]>,
    eps: f64,
    out: &mut [T],
    mean: &mut [F],
    rstd: &mut [F],
) {
    let rows = mean.len();
    if n == 0 || rows == 0 {
        return;
    }
    let split = if matches!(T::DTYPE, DType::Float16 | DType::BFloat16) { 2 } else { 1 };
    let per = rows_per_task(rows, n);
    let stream = crate::simd::stream::streams(std::mem::size_of_val(out));
    let task = LayerRows { x, n, per, w, b, eps, split, stream, out: Pieces::new(out, per * n), mean: Pieces::new(mean, per), rstd: Pieces::new(rstd, per) };
    run_tasks(rows.div_ceil(per), &task);
}

/// One task of [`layer_norm_forward`]: `per` rows.
struct LayerRows<'a, T, F> {
    x: &'a [T],
    n: usize,
    per: usize,
    w: Option<&'a [F]>,
    b: Option<&'a [F]>,
    eps: f64,
    split: usize,
    /// Whether the output is written with streaming stores ([`crate::simd::stream`]).
    stream: bool,
    out: Pieces<'a, T>,
    mean: Pieces<'a, F>,
    rstd: Pieces<'a, F>,
}

impl<T: Element, F: MomentFloat> Task for LayerRows<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(&self, t: usize) {
        // SAFETY: task `t` takes only its own pieces.
        let (o, m, r) = unsafe { (self.out.get(t), self.mean.get(t), self.rstd.get(t)) };
        forward_rows(piece(self.x, t, self.per * self.n), o, m, r, self.n, self.w, self.b, self.eps, self.split, self.stream)
    }
}

/// Backward of one task's rows; returns its (dw, db) partial sums when wanted.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn backward_rows<T: Element, F: MomentFloat>(
    g: &[T],
    x: &[T],
    mean: &[F],
    rstd: &[F],
    n: usize,
    w: Option<&[F]>,
    mut gx: Option<&mut [T]>,
    want_wb: bool,
) -> (Vec<F>, Vec<F>) {
    const LANES: usize = 8;
    let direct = T::DTYPE == F::DTYPE;
    let (mut xb, mut gb_, mut ob) = if direct { (Vec::new(), Vec::new(), Vec::new()) } else { (vec![F::ZERO; n], vec![F::ZERO; n], vec![F::ZERO; n]) };
    let (mut dw, mut db) = if want_wb { (vec![F::ZERO; n], vec![F::ZERO; n]) } else { (Vec::new(), Vec::new()) };
    let scale = F::ONE / F::from_usize(n);
    for (r, (gr, xr)) in g.chunks_exact(n).zip(x.chunks_exact(n)).enumerate() {
        let xf: &[F] = match same::<T, F>(xr) {
            Some(s) => s,
            None => {
                widen(xr, &mut xb);
                &xb
            }
        };
        let gf: &[F] = match same::<T, F>(gr) {
            Some(s) => s,
            None => {
                widen(gr, &mut gb_);
                &gb_
            }
        };
        let (mu, a) = (mean[r], rstd[r]);
        #[cfg(target_arch = "x86_64")]
        if F::DTYPE == DType::Float32 && fma_ok() {
            let f = |s: &[F]| s.as_ptr() as *const f32;
            // SAFETY: F is f32 (checked); all slices hold `n` elements; AVX2 present.
            unsafe {
                if want_wb {
                    avx::acc_wb8(f(gf), f(xf), mu.to_f64() as f32, a.to_f64() as f32, dw.as_mut_ptr() as *mut f32, db.as_mut_ptr() as *mut f32, n);
                }
                let Some(gx) = gx.as_deref_mut() else { continue };
                let (s, bsum) = avx::sums8(f(gf), f(xf), w.map(f), n);
                let (s, bsum) = (F::from_f64(s as f64), F::from_f64(bsum as f64));
                let scale = F::ONE / F::from_usize(n);
                let bb = (bsum * mu - s) * a * a * a * scale;
                let c = -bb * mu - bsum * a * scale;
                let gxr = &mut gx[r * n..(r + 1) * n];
                let of: &mut [F] = if direct { same_mut::<T, F>(gxr).unwrap_or(&mut ob[..]) } else { &mut ob };
                avx::gx8(a.to_f64() as f32, f(gf), w.map(f), bb.to_f64() as f32, f(xf), c.to_f64() as f32, of.as_mut_ptr() as *mut f32, n);
                if !direct {
                    narrow(&ob, gxr);
                }
            }
            continue;
        }
        if want_wb {
            for j in 0..n {
                dw[j] += gf[j] * (xf[j] - mu) * a;
                db[j] += gf[j];
            }
        }
        let Some(gx) = gx.as_deref_mut() else { continue };
        // Lane-wise partial sums, so that the reductions vectorise.
        let (mut ds, mut dbs) = ([F::ZERO; LANES], [F::ZERO; LANES]);
        let full = n / LANES * LANES;
        match w {
            Some(w) => {
                for j in (0..full).step_by(LANES) {
                    for l in 0..LANES {
                        let dyg = gf[j + l] * w[j + l];
                        ds[l] += dyg * xf[j + l];
                        dbs[l] += dyg;
                    }
                }
                for j in full..n {
                    let dyg = gf[j] * w[j];
                    ds[0] += dyg * xf[j];
                    dbs[0] += dyg;
                }
            }
            None => {
                for j in (0..full).step_by(LANES) {
                    for l in 0..LANES {
                        ds[l] += gf[j + l] * xf[j + l];
                        dbs[l] += gf[j + l];
                    }
                }
                for j in full..n {
                    ds[0] += gf[j] * xf[j];
                    dbs[0] += gf[j];
                }
            }
        }
        let (mut s, mut bsum) = (F::ZERO, F::ZERO);
        for l in 0..LANES {
            s += ds[l];
            bsum += dbs[l];
        }
        let bb = (bsum * mu - s) * a * a * a * scale;
        let c = -bb * mu - bsum * a * scale;
        let gxr = &mut gx[r * n..(r + 1) * n];
        let of: &mut [F] = if direct { same_mut::<T, F>(gxr).unwrap_or(&mut ob[..]) } else { &mut ob };
        match w {
            Some(w) => {
                for j in 0..n {
                    of[j] = a * gf[j] * w[j] + bb * xf[j] + c;
                }
            }
            None => {
                for j in 0..n {
                    of[j] = a * gf[j] + bb * xf[j] + c;
                }
            }
        }
        if !direct {
            narrow(&ob, gxr);
        }
    }
    (dw, db)
}

/// Backward of [`layer_norm_forward`] (PyTorch's CPU formulas): with
/// `ds = Σ g·w·x`, `db = Σ g·w` over a row, `a = rstd`,
/// `b = (db·mean − ds)·a³/n`, `c = −b·mean − db·a/n`, the input gradient is
/// `a·g·w + b·x + c`; the weight and bias gradients (`Σ_rows g·(x−mean)·rstd`
/// and `Σ_rows g`) are written to `dw`/`db` when `want_wb` (each of length
/// `n`). `gx` (when given) has the shape of `x`. Rows run in parallel; the
/// weight/bias partials are summed in a fixed order, so results are
/// deterministic.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward<T: Element, F: MomentFloat>(
    g: &[T],
    x: &[T],
    n: usize,
    mean: &[F],
    rstd: &[F],
    w: Option<&[F]>,
    gx: Option<&mut [T]>,
    dw: &mut [F],
    db: &mut [F],
    want_wb: bool,
) {
    let rows = mean.len();
    if n == 0 || rows == 0 {
        return;
    }
    let per = rows_per_task(rows, n);
    let task = LayerBackRows { g, x, mean, rstd, n, per, w, want_wb, gx: gx.map(|gx| Pieces::new(gx, per * n)) };
    let parts = run_tasks(rows.div_ceil(per), &task);
    if want_wb {
        dw.fill(F::ZERO);
        db.fill(F::ZERO);
        for (pw, pb) in &parts {
            for j in 0..n {
                dw[j] += pw[j];
                db[j] += pb[j];
            }
        }
    }
}

/// One task of [`layer_norm_backward`]: `per` rows, returning its (dw, db)
/// partial sums when wanted.
struct LayerBackRows<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    mean: &'a [F],
    rstd: &'a [F],
    n: usize,
    per: usize,
    w: Option<&'a [F]>,
    want_wb: bool,
    gx: Option<Pieces<'a, T>>,
}

impl<T: Element, F: MomentFloat> Task for LayerBackRows<'_, T, F> {
    type Out = (Vec<F>, Vec<F>);
    #[inline(always)]
    fn run(&self, t: usize) -> (Vec<F>, Vec<F>) {
        let (per, n) = (self.per, self.n);
        // SAFETY: task `t` takes only its own piece.
        let gx = self.gx.as_ref().map(|p| unsafe { p.get(t) });
        let (m, r) = (piece(self.mean, t, per), piece(self.rstd, t, per));
        backward_rows(piece(self.g, t, per * n), piece(self.x, t, per * n), m, r, n, self.w, gx, self.want_wb)
    }
}

/// The hot loops for f32 rows with explicit AVX2 vectors (the dev profile
/// builds at opt-level 1, which does not auto-vectorise). Each computes what
/// the scalar loop beside its call computes, in the same order per lane.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    /// The per-lane Welford update of 8 lanes over `m0` vectors `width`
    /// apart, for `K` independent chains starting at `x[q]`, each computed
    /// exactly as alone (interleaving them hides the latency of each chain's
    /// dependent instructions); chain `q`'s (m1, m2) go to
    /// `out[16q..16q + 8]` and `out[16q + 8..16q + 16]`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn welford8xk<const K: usize>(x: [*const f32; K], width: usize, m0: usize, c: *const f32, out: *mut f32) {
        let (mut a, mut b) = ([_mm256_setzero_ps(); K], [_mm256_setzero_ps(); K]);
        for j in 0..m0 {
            let cv = _mm256_set1_ps(*c.add(j));
            for q in 0..K {
                let xv = _mm256_loadu_ps(x[q].add(j * width));
                let delta = _mm256_sub_ps(xv, a[q]);
                a[q] = _mm256_fmadd_ps(delta, cv, a[q]);
                b[q] = _mm256_fmadd_ps(delta, _mm256_sub_ps(xv, a[q]), b[q]);
            }
        }
        for q in 0..K {
            _mm256_storeu_ps(out.add(16 * q), a[q]);
            _mm256_storeu_ps(out.add(16 * q + 8), b[q]);
        }
    }

    /// The scalar head before `y`'s first `bytes`-aligned element when
    /// streaming (streaming stores need aligned addresses), else none.
    #[inline(always)]
    fn head<const NT: bool>(y: *const f32, bytes: usize, n: usize) -> usize {
        if NT {
            ((bytes - (y as usize) % bytes) % bytes / 4).min(n)
        } else {
            0
        }
    }

    /// `y = (x - mu) * rs * w + b` (w, b optional) for one element, rounded
    /// as PyTorch's kernel rounds it: `fma((x - mu) * rs, w, b)` with both
    /// parameters, `fma(x - mu, rs, b)` with only `b`, plain products
    /// otherwise (measured bit for bit against PyTorch 2.13). Subtracting
    /// the mean first keeps rows whose mean dwarfs their spread accurate.
    #[inline(always)]
    unsafe fn affine1(x: *const f32, mu: f32, rs: f32, w: Option<*const f32>, b: Option<*const f32>, y: *mut f32, j: usize) {
        let d = *x.add(j) - mu;
        *y.add(j) = match (w, b) {
            (Some(w), Some(b)) => (d * rs).mul_add(*w.add(j), *b.add(j)),
            (Some(w), None) => d * rs * *w.add(j),
            (None, Some(b)) => d.mul_add(rs, *b.add(j)),
            (None, None) => d * rs,
        };
    }

    /// Stores `$v` at `$y + $j`: streamed when `$nt`, else an ordinary store.
    macro_rules! put {
        ($nt:expr, $stream:ident, $storeu:ident, $y:expr, $j:expr, $v:expr) => {
            if $nt {
                $stream($y.add($j), $v)
            } else {
                $storeu($y.add($j), $v)
            }
        };
    }

    /// Prefetches the line of `$ahead + $j` unless `$ahead` is null.
    macro_rules! fetch {
        ($ahead:expr, $j:expr) => {
            if !$ahead.is_null() {
                _mm_prefetch::<_MM_HINT_T0>($ahead.wrapping_add($j) as *const i8)
            }
        };
    }

    /// Defines the row kernels of one vector width (the intrinsics passed
    /// in; macros rather than closures so that everything shares the
    /// function's target feature):
    /// - `$affine`: `y = (x - mu) * rs * w + b` (w, b optional) as
    ///   [`affine1`] rounds it, one loop per parameter combination, no
    ///   tests inside a loop;
    /// - `$fma`: `y = fma(x, scale, bias)`, one rounding as `f32::mul_add`.
    ///
    /// With `NT` the stores stream from `y`'s first `4 * $lanes`-byte
    /// boundary (streaming stores need aligned addresses); the elements
    /// before it and the tail are computed one at a time by the same formula.
    ///
    /// `ahead` (null for none) is the input this pass's caller reads next,
    /// prefetched element for element alongside `x`: this pass reads `x`
    /// from cache, so without it no read from memory is in flight while it
    /// runs, and the next statistics pass would start on cold lines.
    macro_rules! row_kernels {
        ($feature:literal, $lanes:literal, $set1:ident, $load:ident, $mul:ident, $sub:ident, $fmadd:ident, $stream:ident, $storeu:ident, $affine:ident, $fma:ident) => {
            #[target_feature(enable = $feature)]
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn $affine<const NT: bool>(x: *const f32, mu: f32, rs: f32, w: Option<*const f32>, b: Option<*const f32>, y: *mut f32, n: usize, ahead: *const f32) {
                let (mv, rv) = ($set1(mu), $set1(rs));
                let lo = head::<NT>(y, 4 * $lanes, n);
                let full = lo + (n - lo) / $lanes * $lanes;
                for j in 0..lo {
                    affine1(x, mu, rs, w, b, y, j);
                }
                let mut j = lo;
                match (w, b) {
                    (Some(w), Some(b)) => {
                        while j < full {
                            fetch!(ahead, j);
                            let v = $fmadd($mul($sub($load(x.add(j)), mv), rv), $load(w.add(j)), $load(b.add(j)));
                            put!(NT, $stream, $storeu, y, j, v);
                            j += $lanes;
                        }
                    }
                    (Some(w), None) => {
                        while j < full {
                            fetch!(ahead, j);
                            put!(NT, $stream, $storeu, y, j, $mul($mul($sub($load(x.add(j)), mv), rv), $load(w.add(j))));
                            j += $lanes;
                        }
                    }
                    (None, Some(b)) => {
                        while j < full {
                            fetch!(ahead, j);
                            put!(NT, $stream, $storeu, y, j, $fmadd($sub($load(x.add(j)), mv), rv, $load(b.add(j))));
                            j += $lanes;
                        }
                    }
                    (None, None) => {
                        while j < full {
                            fetch!(ahead, j);
                            put!(NT, $stream, $storeu, y, j, $mul($sub($load(x.add(j)), mv), rv));
                            j += $lanes;
                        }
                    }
                }
                for j in full..n {
                    affine1(x, mu, rs, w, b, y, j);
                }
            }

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $fma<const NT: bool>(x: *const f32, scale: f32, bias: f32, y: *mut f32, n: usize, ahead: *const f32) {
                let (sv, bv) = ($set1(scale), $set1(bias));
                let lo = head::<NT>(y, 4 * $lanes, n);
                let full = lo + (n - lo) / $lanes * $lanes;
                for j in (0..lo).chain(full..n) {
                    *y.add(j) = scale.mul_add(*x.add(j), bias);
                }
                let mut j = lo;
                while j < full {
                    fetch!(ahead, j);
                    put!(NT, $stream, $storeu, y, j, $fmadd($load(x.add(j)), sv, bv));
                    j += $lanes;
                }
            }
        };
    }

    row_kernels!("avx2,fma", 8, _mm256_set1_ps, _mm256_loadu_ps, _mm256_mul_ps, _mm256_sub_ps, _mm256_fmadd_ps, _mm256_stream_ps, _mm256_storeu_ps, affine8, fma8);
    row_kernels!("avx512f,fma", 16, _mm512_set1_ps, _mm512_loadu_ps, _mm512_mul_ps, _mm512_sub_ps, _mm512_fmadd_ps, _mm512_stream_ps, _mm512_storeu_ps, affine16, fma16);

    /// `dw += g * (x - mu) * a`, `db += g`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn acc_wb8(g: *const f32, x: *const f32, mu: f32, a: f32, dw: *mut f32, db: *mut f32, n: usize) {
        let (mv, av) = (_mm256_set1_ps(mu), _mm256_set1_ps(a));
        let full = n / 8 * 8;
        let mut j = 0;
        while j < full {
            let gv = _mm256_loadu_ps(g.add(j));
            let t = _mm256_mul_ps(_mm256_mul_ps(gv, _mm256_sub_ps(_mm256_loadu_ps(x.add(j)), mv)), av);
            _mm256_storeu_ps(dw.add(j), _mm256_add_ps(_mm256_loadu_ps(dw.add(j)), t));
            _mm256_storeu_ps(db.add(j), _mm256_add_ps(_mm256_loadu_ps(db.add(j)), gv));
            j += 8;
        }
        for j in full..n {
            *dw.add(j) += *g.add(j) * (*x.add(j) - mu) * a;
            *db.add(j) += *g.add(j);
        }
    }

    /// `(Σ g·w·x, Σ g·w)` with 8 lane partials added lane by lane at the end.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sums8(g: *const f32, x: *const f32, w: Option<*const f32>, n: usize) -> (f32, f32) {
        let (mut ds, mut db) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let full = n / 8 * 8;
        let mut j = 0;
        while j < full {
            let mut dyg = _mm256_loadu_ps(g.add(j));
            if let Some(w) = w {
                dyg = _mm256_mul_ps(dyg, _mm256_loadu_ps(w.add(j)));
            }
            ds = _mm256_add_ps(ds, _mm256_mul_ps(dyg, _mm256_loadu_ps(x.add(j))));
            db = _mm256_add_ps(db, dyg);
            j += 8;
        }
        let (mut a, mut b) = ([0f32; 8], [0f32; 8]);
        _mm256_storeu_ps(a.as_mut_ptr(), ds);
        _mm256_storeu_ps(b.as_mut_ptr(), db);
        for j in full..n {
            let dyg = *g.add(j) * w.map_or(1.0, |w| *w.add(j));
            a[0] += dyg * *x.add(j);
            b[0] += dyg;
        }
        (a.iter().sum(), b.iter().sum())
    }

    /// `out = a * g * w + bb * x + c`.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn gx8(a: f32, g: *const f32, w: Option<*const f32>, bb: f32, x: *const f32, c: f32, out: *mut f32, n: usize) {
        let (av, bv, cv) = (_mm256_set1_ps(a), _mm256_set1_ps(bb), _mm256_set1_ps(c));
        let full = n / 8 * 8;
        let mut j = 0;
        while j < full {
            let mut t = _mm256_mul_ps(av, _mm256_loadu_ps(g.add(j)));
            if let Some(w) = w {
                t = _mm256_mul_ps(t, _mm256_loadu_ps(w.add(j)));
            }
            let v = _mm256_add_ps(_mm256_add_ps(t, _mm256_mul_ps(bv, _mm256_loadu_ps(x.add(j)))), cv);
            _mm256_storeu_ps(out.add(j), v);
            j += 8;
        }
        for j in full..n {
            let mut t = a * *g.add(j);
            if let Some(w) = w {
                t *= *w.add(j);
            }
            *out.add(j) = t + bb * *x.add(j) + c;
        }
    }
}

// ---------------------------------------------------------------------------
// Batch and group normalisation.
//
// PyTorch's CPU kernels (ATen/native/cpu/batch_norm_kernel.cpp and
// group_norm_kernel.cpp) over an input viewed as (N, C, S): batch, channels
// and the product of the spatial dims. Batch statistics of float32 inputs
// accumulate in float64 (`acc_type`) and are rounded to float32 where PyTorch
// stores them; float16/bfloat16 inputs compute in float32 (`opmath_type`) and
// store their mean and 1/std in the parameters' dtype (the `round`
// argument: the input's dtype unless a parameter is float32).

pub use ferrotorch_core::op::norm::Ncs;

/// `v` rounded to `T` and back: how a statistic stored in a float16/bfloat16
/// tensor reads back. Identity for float32/float64 `T` with `F == T`.
pub fn round_through<T: Element, F: Element>(v: F) -> F {
    F::from_f64(T::from_f64(v.to_f64()).to_f64())
}

/// `1 / sqrt(var + eps)` in float64 as PyTorch's `InvStd` (0 when both are 0).
#[inline]
fn inv_std(var: f64, eps: f64) -> f64 {
    if var != 0.0 || eps != 0.0 {
        1.0 / (var + eps).sqrt()
    } else {
        0.0
    }
}

/// A vectorised reduction over `L` lanes as PyTorch's `vec::reduce_all` /
/// `map2_reduce_all`: the first vector is `map`, later vectors and the tail
/// (into the first lanes) fold in with `step(acc, j)`, then the lanes fold in
/// a halving tree; fewer than `L` values add their `map`s in order.
#[inline(always)]
fn lanes_reduce<F: MomentFloat, const L: usize>(n: usize, map: impl Fn(usize) -> F, step: impl Fn(F, usize) -> F) -> F {
    if n < L {
        let mut acc = F::ZERO;
        for j in 0..n {
            acc = if j == 0 { map(0) } else { acc + map(j) };
        }
        return acc;
    }
    let mut acc = [F::ZERO; L];
    for (l, a) in acc.iter_mut().enumerate() {
        *a = map(l);
    }
    let full = n / L * L;
    let mut j = L;
    while j < full {
        for (l, a) in acc.iter_mut().enumerate() {
            *a = step(*a, j + l);
        }
        j += L;
    }
    for (l, a) in acc.iter_mut().enumerate().take(n - full) {
        *a = step(*a, full + l);
    }
    let mut w = L / 2;
    while w >= 1 {
        for l in 0..w {
            acc[l] += acc[l + w];
        }
        w /= 2;
    }
    acc[0]
}

/// `Σ f(j)` as [`lanes_reduce`] with the lane count of `F`.
#[inline(always)]
fn vec_sum<F: MomentFloat>(n: usize, f: impl Fn(usize) -> F) -> F {
    if F::DTYPE == DType::Float64 {
        lanes_reduce::<F, 4>(n, &f, |a, j| a + f(j))
    } else {
        lanes_reduce::<F, 8>(n, &f, |a, j| a + f(j))
    }
}

/// `Σ a(j)·b(j)` as [`lanes_reduce`], each step one fused multiply-add (the
/// reference build contracts `acc + a * b`).
#[inline(always)]
fn vec_dot<F: MomentFloat>(n: usize, a: impl Fn(usize) -> F, b: impl Fn(usize) -> F) -> F {
    if F::DTYPE == DType::Float64 {
        lanes_reduce::<F, 4>(n, |j| a(j) * b(j), |acc, j| a(j).fma(b(j), acc))
    } else {
        lanes_reduce::<F, 8>(n, |j| a(j) * b(j), |acc, j| a(j).fma(b(j), acc))
    }
}

/// `Σ a(j)·b(j)` as PyTorch's group-norm kernels sum: vector lanes
/// accumulate fused multiply-adds, the lanes add up in order from 0, then the
/// tail adds on with fused multiply-adds.
#[inline(always)]
fn lane_dot<F: MomentFloat>(n: usize, a: impl Fn(usize) -> F, b: impl Fn(usize) -> F) -> F {
    // Inlined like its caller, so that it is compiled inside a task's
    // AVX2+FMA instantiation (see [`Task`]).
    #[inline(always)]
    fn go<F: MomentFloat, const L: usize>(n: usize, a: impl Fn(usize) -> F, b: impl Fn(usize) -> F) -> F {
        let full = n / L * L;
        let mut acc = [F::ZERO; L];
        let mut j = 0;
        while j < full {
            for (l, v) in acc.iter_mut().enumerate() {
                *v = a(j + l).fma(b(j + l), *v);
            }
            j += L;
        }
        let mut s = F::ZERO;
        for v in acc {
            s += v;
        }
        for j in full..n {
            s = a(j).fma(b(j), s);
        }
        s
    }
    if F::DTYPE == DType::Float64 {
        go::<F, 4>(n, a, b)
    } else {
        go::<F, 8>(n, a, b)
    }
}

/// `Σ f(x[j])` in float64 over 8 independent lanes (the order does not
/// reach the float32 statistics rounded from it in practice).
#[inline(always)]
fn sum_f64<T: Copy>(x: &[T], f: impl Fn(T) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut it = x.chunks_exact(8);
    for ch in &mut it {
        for (a, &v) in acc.iter_mut().zip(ch) {
            *a += f(v);
        }
    }
    for &v in it.remainder() {
        acc[0] += f(v);
    }
    acc.iter().sum()
}

/// `Σ f(x[j], y[j])` in float64 over 8 independent lanes.
#[inline(always)]
fn sum2_f64<T: Copy>(x: &[T], y: &[T], f: impl Fn(T, T) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let (mut ix, mut iy) = (x.chunks_exact(8), y.chunks_exact(8));
    for (cx, cy) in (&mut ix).zip(&mut iy) {
        for l in 0..8 {
            acc[l] += f(cx[l], cy[l]);
        }
    }
    for (&a, &b) in ix.remainder().iter().zip(iy.remainder()) {
        acc[0] += f(a, b);
    }
    acc.iter().sum()
}

/// One channel's (stored mean, biased variance, unbiased variance).
#[inline(always)]
fn channel_moments<T: Element, F: MomentFloat>(x: &[T], shp: Ncs, c: usize, strided_mean: Option<F>, round: fn(F) -> F) -> (F, f64, f64) {
    let cnt = shp.per_channel();
    let blocks = (0..shp.n).map(move |i| &x[(i * shp.c + c) * shp.s..][..shp.s]);
    let fv = |v: T| F::from_f64(v.to_f64());
    if T::DTYPE == F::DTYPE {
        if let Some(m) = strided_mean {
            // The TensorIterator path: the mean came from `at::mean`; the
            // squares accumulate in the accumulate type around that mean.
            let md = m.to_f64();
            let vs: f64 = blocks.map(|b| sum_f64(b, |v| (v.to_f64() - md) * (v.to_f64() - md))).sum();
            return (m, vs / cnt as f64, vs / (cnt as f64 - 1.0));
        }
        let (mean, vs) = if shp.s == 1 {
            // An (N, C) input is channels-last for PyTorch (NC11), and its
            // kernel sums in the input's type (a float32 sum of rows can
            // overflow to inf): with more rows than threads, each thread a
            // block of rows, then the blocks in thread order; the squares
            // around the mean (rounded to the input's type) likewise.
            let threads = crate::parallel::threads().max(1);
            let rows = if shp.n > threads { shp.n.div_ceil(threads) } else { shp.n };
            let block_sums = |f: &dyn Fn(F) -> F| -> F {
                (0..shp.n).step_by(rows.max(1)).fold(F::ZERO, |total, r0| {
                    total + (r0..(r0 + rows).min(shp.n)).fold(F::ZERO, |acc, i| acc + f(fv(x[i * shp.c + c])))
                })
            };
            let mean = block_sums(&|v| v) / F::from_usize(cnt);
            (mean, block_sums(&|v| (v - mean) * (v - mean)).to_f64())
        } else {
            let sum: f64 = blocks.clone().map(|b| sum_f64(b, |v| v.to_f64())).sum();
            let mean = F::from_f64(sum / cnt as f64);
            // (x - mean)^2 in the input's type, summed in float64, stored in the input's type.
            (mean, blocks.map(|b| sum_f64(b, |v| ((fv(v) - mean) * (fv(v) - mean)).to_f64())).sum())
        };
        let vs = F::from_f64(vs);
        let var = (vs / F::from_usize(cnt)).to_f64();
        let unb = (vs / F::from_usize(cnt - 1)).to_f64();
        return (mean, var, unb);
    }
    // float16/bfloat16 in float32.
    let (var_sum, mean) = match strided_mean {
        Some(m) => {
            let mut vs = F::ZERO;
            for b in blocks {
                for &v in b {
                    let d = fv(v) - m;
                    vs += d * d;
                }
            }
            (vs, m)
        }
        None if shp.s == 1 => {
            // An (N, C) input is also channels-last (NC11), and PyTorch takes
            // its channels-last kernel: the sums run down the batch in float,
            // and the squares are taken around the mean already stored
            // (rounded) in the statistics' dtype; their sum stays in float.
            let mut sum = F::ZERO;
            for b in blocks.clone() {
                sum += fv(b[0]);
            }
            let mean = round(sum / F::from_usize(cnt));
            let mut vs = F::ZERO;
            for b in blocks {
                let d = fv(b[0]) - mean;
                vs += d * d;
            }
            (vs, mean)
        }
        None => {
            // Vectors of 16 reduced values widen to two float vectors that
            // accumulate into the same 8 lanes; remainders go to a scalar.
            const L: usize = 8;
            let full = shp.s / (2 * L) * (2 * L);
            let (mut lanes, mut tail) = ([F::ZERO; L], F::ZERO);
            for b in blocks.clone() {
                for ch in b[..full].chunks_exact(2 * L) {
                    for l in 0..L {
                        lanes[l] += fv(ch[l]);
                    }
                    for l in 0..L {
                        lanes[l] += fv(ch[L + l]);
                    }
                }
                for &v in &b[full..] {
                    tail += fv(v);
                }
            }
            let mut acc = lanes[0];
            for &v in &lanes[1..] {
                acc += v;
            }
            let mean_val = (tail + acc) / F::from_usize(cnt);
            let (mut lanes, mut tail) = ([F::ZERO; L], F::ZERO);
            for b in blocks {
                for ch in b[..full].chunks_exact(2 * L) {
                    for l in 0..L {
                        let d = fv(ch[l]) - mean_val;
                        lanes[l] = d.fma(d, lanes[l]);
                    }
                    for l in 0..L {
                        let d = fv(ch[L + l]) - mean_val;
                        lanes[l] = d.fma(d, lanes[l]);
                    }
                }
                for &v in &b[full..] {
                    let d = fv(v) - mean_val;
                    tail = d.fma(d, tail);
                }
            }
            let mut acc = lanes[0];
            for &v in &lanes[1..] {
                acc += v;
            }
            (tail + acc, round(mean_val))
        }
    };
    // The sum of squares stays in float32 (a float16 one would overflow
    // where PyTorch's output is finite).
    let var = (var_sum / F::from_usize(cnt)).to_f64();
    let unb = (var_sum / F::from_usize(cnt - 1)).to_f64();
    (mean, var, unb)
}

/// Batch statistics per channel (PyTorch's `batch_norm_cpu_update_stats_template`):
/// writes `save_mean` and `save_invstd = 1/sqrt(var + eps)` (biased variance),
/// and moves `running_mean`/`running_var` towards the batch mean and unbiased
/// variance by `momentum`, in place. `strided_mean` is `Some(mean)` to
/// reproduce the path PyTorch takes for inputs that are not contiguous (the
/// mean taken by `at::mean`, given here; `x` is still a contiguous copy).
/// `round` rounds a statistic to the dtype it is stored in ([`round_through`]).
/// Channels run in parallel.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_stats<T: Element, F: MomentFloat>(
    x: &[T],
    shp: Ncs,
    strided_mean: Option<&[F]>,
    eps: f64,
    momentum: f64,
    running_mean: Option<&mut [F]>,
    running_var: Option<&mut [F]>,
    round: fn(F) -> F,
    save_mean: &mut [F],
    save_invstd: &mut [F],
) {
    if shp.per_channel() == 0 {
        return;
    }
    let per = rows_per_task(shp.c, shp.per_channel());
    let stats: Vec<(F, f64, f64)> = run_tasks(shp.c.div_ceil(per), &ChannelStats { x, shp, per, strided_mean, round }).into_iter().flatten().collect();
    let m = F::from_f64(momentum);
    let keep = F::ONE - m;
    let (mut rm, mut rv) = (running_mean, running_var);
    for (c, &(mean, var, unb)) in stats.iter().enumerate() {
        save_mean[c] = mean;
        save_invstd[c] = round(F::from_f64(inv_std(var, eps)));
        if let Some(rm) = rm.as_deref_mut() {
            rm[c] = round(m * mean + keep * rm[c]);
        }
        if let Some(rv) = rv.as_deref_mut() {
            rv[c] = round(F::from_f64(m.to_f64() * unb + (keep * rv[c]).to_f64()));
        }
    }
}

/// One task of [`batch_norm_stats`]: `per` channels' [`channel_moments`].
struct ChannelStats<'a, T, F> {
    x: &'a [T],
    shp: Ncs,
    per: usize,
    strided_mean: Option<&'a [F]>,
    round: fn(F) -> F,
}

impl<T: Element, F: MomentFloat> Task for ChannelStats<'_, T, F> {
    type Out = Vec<(F, f64, f64)>;
    #[inline(always)]
    fn run(&self, t: usize) -> Vec<(F, f64, f64)> {
        let mut out = Vec::with_capacity(self.per);
        // A loop, not a closure, so that the moments stay in this body (see [`Task`]).
        for c in t * self.per..((t + 1) * self.per).min(self.shp.c) {
            let m = self.strided_mean.map(|m| m[c]);
            out.push(channel_moments(self.x, self.shp, c, m, self.round));
        }
        out
    }
}

/// `1 / sqrt(running_var + eps)` per channel as PyTorch's evaluation-mode
/// kernels take it: the forward adds `eps` in the compute type, the backward
/// in float64.
pub fn batch_norm_eval_invstd<F: MomentFloat>(running_var: &[F], eps: f64, backward: bool) -> Vec<F> {
    running_var
        .iter()
        .map(|&v| {
            if backward {
                F::from_f64(1.0 / (v.to_f64() + eps).sqrt())
            } else {
                F::ONE / F::from_f64((v + F::from_f64(eps)).to_f64().sqrt())
            }
        })
        .collect()
}

/// Blocks of `s` elements per parallel task.
fn blocks_per_task(blocks: usize, s: usize) -> usize {
    rows_per_task(blocks, s)
}

/// The batch-norm output `(x - mean) * invstd * w + b` per channel. The
/// contiguous form (`strided == false`) is PyTorch's fast path
/// `x * alpha + beta` with `alpha = invstd * w`, `beta = b - mean * alpha`;
/// the strided form evaluates `((x - mean) * invstd) * w + b` as its
/// TensorIterator path does. `mean`/`invstd` are the batch statistics in
/// training and the running mean and [`batch_norm_eval_invstd`] in evaluation.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_apply<T: Element, F: MomentFloat>(x: &[T], shp: Ncs, mean: &[F], invstd: &[F], w: Option<&[F]>, b: Option<&[F]>, strided: bool, out: &mut [T]) {
    let (nc, s) = (shp.n * shp.c, shp.s);
    if nc == 0 || s == 0 {
        return;
    }
    let wv = |c: usize| w.map_or(F::ONE, |w| w[c]);
    let bv = |c: usize| b.map_or(F::ZERO, |b| b[c]);
    let coef: Vec<(F, F)> = (0..shp.c)
        .map(|c| {
            if strided {
                (F::ZERO, F::ZERO)
            } else {
                let alpha = invstd[c] * wv(c);
                (alpha, bv(c) - mean[c] * alpha)
            }
        })
        .collect();
    let per = blocks_per_task(nc, s);
    run_tasks(nc.div_ceil(per), &BnApply { x, shp, per, mean, invstd, w, b, strided, coef, out: Pieces::new(out, per * s) });
}

/// One task of [`batch_norm_apply`]: `per` blocks of `s` elements.
struct BnApply<'a, T, F> {
    x: &'a [T],
    shp: Ncs,
    per: usize,
    mean: &'a [F],
    invstd: &'a [F],
    w: Option<&'a [F]>,
    b: Option<&'a [F]>,
    strided: bool,
    /// `(alpha, beta)` per channel for the contiguous form.
    coef: Vec<(F, F)>,
    out: Pieces<'a, T>,
}

impl<T: Element, F: MomentFloat> Task for BnApply<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(&self, t: usize) {
        let (s, per) = (self.shp.s, self.per);
        // SAFETY: task `t` takes only its own piece.
        let os = unsafe { self.out.get(t) };
        for (k, (xb, ob)) in piece(self.x, t, per * s).chunks_exact(s).zip(os.chunks_exact_mut(s)).enumerate() {
            let c = (t * per + k) % self.shp.c;
            if self.strided {
                let (m, r) = (self.mean[c], self.invstd[c]);
                let wc = self.w.map_or(F::ONE, |w| w[c]);
                let bc = self.b.map_or(F::ZERO, |b| b[c]);
                for (o, &v) in ob.iter_mut().zip(xb) {
                    *o = T::from_f64((((F::from_f64(v.to_f64()) - m) * r) * wc + bc).to_f64());
                }
            } else {
                let (a, be) = self.coef[c];
                apply_affine(xb, a, be, ob);
            }
        }
    }
}

/// `out = x * a + b` (one rounding, as the reference build contracts it).
#[inline(always)]
fn apply_affine<T: Element, F: MomentFloat>(x: &[T], a: F, b: F, out: &mut [T]) {
    if let Some(xf) = same::<T, F>(x) {
        if let Some(of) = same_mut::<T, F>(out) {
            for (o, &v) in of.iter_mut().zip(xf) {
                *o = v.fma(a, b);
            }
            return;
        }
    }
    for (o, &v) in out.iter_mut().zip(x) {
        *o = T::from_f64(F::from_f64(v.to_f64()).fma(a, b).to_f64());
    }
}

/// Backward of batch norm (PyTorch's `batch_norm_cpu_backward` kernels): per
/// channel `sum = Σ g` and `dotp = Σ (x - mean)·g`; the input gradient is, in
/// training, `(g - sum/n - (x - mean)·k)·invstd·w` with
/// `k = dotp·invstd²/n`, and in evaluation `g·invstd·w`; `gw = dotp·invstd`,
/// `gb = sum`. `mean`/`invstd` as for [`batch_norm_apply`] (evaluation takes
/// the backward form of [`batch_norm_eval_invstd`]). `strided_gsum` is
/// `Some(Σ g)` (from `at::sum`) to reproduce PyTorch's path for inputs that
/// are not contiguous. Channels run in parallel, then the input gradient.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward<T: Element, F: MomentFloat>(
    g: &[T],
    x: &[T],
    shp: Ncs,
    mean: &[F],
    invstd: &[F],
    w: Option<&[F]>,
    train: bool,
    strided_gsum: Option<&[F]>,
    gx: Option<&mut [T]>,
    gw: Option<&mut [F]>,
    gb: Option<&mut [F]>,
) {
    let cnt = shp.per_channel();
    let per = rows_per_task(shp.c, cnt);
    let sums: Vec<(f64, f64)> = run_tasks(shp.c.div_ceil(per), &BnSums { g, x, shp, per, mean, strided_gsum }).into_iter().flatten().collect();
    if let Some(gw) = gw {
        for c in 0..shp.c {
            gw[c] = F::from_f64(sums[c].1 * invstd[c].to_f64());
        }
    }
    if let Some(gb) = gb {
        for c in 0..shp.c {
            gb[c] = F::from_f64(sums[c].0);
        }
    }
    let Some(gx) = gx else { return };
    let (nc, s) = (shp.n * shp.c, shp.s);
    if nc == 0 || s == 0 {
        return;
    }
    // Per channel: (mean, k, grad_mean).
    let coef: Vec<(F, F, F)> = (0..shp.c)
        .map(|c| {
            let (sum, dotp) = sums[c];
            let k = F::from_f64(dotp) * invstd[c] * invstd[c] / F::from_usize(cnt);
            let gm = if strided_gsum.is_some() { F::from_f64(sum) / F::from_usize(cnt) } else { F::from_f64(sum / cnt as f64) };
            (mean[c], k, gm)
        })
        .collect();
    let per = blocks_per_task(nc, s);
    run_tasks(nc.div_ceil(per), &BnGradInput { g, x, shp, per, invstd, w, train, coef, gx: Pieces::new(gx, per * s) });
}

/// One task of [`batch_norm_backward`]'s reductions: `(Σ g, Σ (x - mean)·g)`
/// for `per` channels.
struct BnSums<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    shp: Ncs,
    per: usize,
    mean: &'a [F],
    strided_gsum: Option<&'a [F]>,
}

impl<T: Element, F: MomentFloat> Task for BnSums<'_, T, F> {
    type Out = Vec<(f64, f64)>;
    #[inline(always)]
    fn run(&self, t: usize) -> Vec<(f64, f64)> {
        let (g, x, shp) = (self.g, self.x, self.shp);
        let fv = |v: T| F::from_f64(v.to_f64());
        let mut out = Vec::with_capacity(self.per);
        for c in t * self.per..((t + 1) * self.per).min(shp.c) {
            let m = self.mean[c];
            let blocks = (0..shp.n).map(|i| (&g[(i * shp.c + c) * shp.s..][..shp.s], &x[(i * shp.c + c) * shp.s..][..shp.s]));
            if let Some(gs) = self.strided_gsum {
                let dotp: f64 = blocks.map(|(gb_, xb)| sum2_f64(xb, gb_, |xv, gv| ((fv(xv) - m) * fv(gv)).to_f64())).sum();
                out.push((gs[c].to_f64(), dotp));
                continue;
            }
            let (mut sum, mut dotp) = (0.0f64, 0.0f64);
            for (gb_, xb) in blocks {
                let s1 = vec_sum(shp.s, |j| fv(gb_[j]));
                let s2 = vec_dot(shp.s, |j| fv(xb[j]) - m, |j| fv(gb_[j]));
                if T::DTYPE == F::DTYPE {
                    sum += s1.to_f64();
                    dotp += s2.to_f64();
                } else {
                    // float16/bfloat16: float32 accumulators.
                    sum = (F::from_f64(sum) + s1).to_f64();
                    dotp = (F::from_f64(dotp) + s2).to_f64();
                }
            }
            out.push((sum, dotp));
        }
        out
    }
}

/// One task of [`batch_norm_backward`]'s input gradient: `per` blocks of `s`
/// elements.
struct BnGradInput<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    shp: Ncs,
    per: usize,
    invstd: &'a [F],
    w: Option<&'a [F]>,
    train: bool,
    /// `(mean, k, grad_mean)` per channel.
    coef: Vec<(F, F, F)>,
    gx: Pieces<'a, T>,
}

impl<T: Element, F: MomentFloat> Task for BnGradInput<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(&self, t: usize) {
        let (s, per) = (self.shp.s, self.per);
        let fv = |v: T| F::from_f64(v.to_f64());
        // SAFETY: task `t` takes only its own piece.
        let os = unsafe { self.gx.get(t) };
        for (k, ob) in os.chunks_exact_mut(s).enumerate() {
            let blk = t * per + k;
            let c = blk % self.shp.c;
            let (gb_, xb) = (&self.g[blk * s..][..s], &self.x[blk * s..][..s]);
            let (r, wc) = (self.invstd[c], self.w.map_or(F::ONE, |w| w[c]));
            if self.train {
                let (m, kk, gm) = self.coef[c];
                for j in 0..s {
                    let dx = (fv(xb[j]) - m) * kk;
                    ob[j] = T::from_f64(((fv(gb_[j]) - gm - dx) * r * wc).to_f64());
                }
            } else {
                for j in 0..s {
                    ob[j] = T::from_f64((fv(gb_[j]) * r * wc).to_f64());
                }
            }
        }
    }
}

/// Group norm forward (PyTorch's `GroupNormKernelImpl`): each sample's
/// `c / groups` consecutive channels form one contiguous row of
/// `(c / groups)·s` elements whose mean and biased variance come from
/// [`rowwise_moments`], `rstd = 1/sqrt(max(var, 0) + eps)` in float64; the
/// output is `(x - mean)·rstd` without parameters, else `scale·x + bias` per
/// channel with `scale = rstd·w`, `bias = -scale·mean + b`. `mean`/`rstd`
/// (`n·groups` each) are written unrounded; rows run in parallel.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_forward<T: Element, F: MomentFloat>(
    x: &[T],
    shp: Ncs,
    groups: usize,
    w: Option<&[F]>,
    b: Option<&[F]>,
    eps: f64,
    out: &mut [T],
    mean: &mut [F],
    rstd: &mut [F],
) {
    let d = shp.c / groups.max(1);
    let row = d * shp.s;
    let rows = shp.n * groups;
    if row == 0 || rows == 0 {
        return;
    }
    let split = if matches!(T::DTYPE, DType::Float16 | DType::BFloat16) { 2 } else { 1 };
    let per = rows_per_task(rows, row);
    let stream = T::DTYPE == F::DTYPE && crate::simd::stream::streams(std::mem::size_of_val(out));
    let task = GroupRows { x, row, d, s: shp.s, groups, per, split, eps, w, b, stream, out: Pieces::new(out, per * row), mean: Pieces::new(mean, per), rstd: Pieces::new(rstd, per) };
    run_tasks(rows.div_ceil(per), &task);
}

/// One task of [`group_norm_forward`]: `per` rows (one per sample and group).
struct GroupRows<'a, T, F> {
    x: &'a [T],
    row: usize,
    d: usize,
    s: usize,
    groups: usize,
    per: usize,
    split: usize,
    eps: f64,
    w: Option<&'a [F]>,
    b: Option<&'a [F]>,
    /// Whether the affine output is written with streaming stores ([`crate::simd::stream`]).
    stream: bool,
    out: Pieces<'a, T>,
    mean: Pieces<'a, F>,
    rstd: Pieces<'a, F>,
}

impl<T: Element, F: MomentFloat> Task for GroupRows<'_, T, F> {
    type Out = ();
    /// Normalises the task's rows, storing each row's mean and 1/std.
    #[inline(always)]
    fn run(&self, t: usize) {
        let (row, d, groups, w, b) = (self.row, self.d, self.groups, self.w, self.b);
        // SAFETY: task `t` takes only its own pieces.
        let (os, ms, rs) = unsafe { (self.out.get(t), self.mean.get(t), self.rstd.get(t)) };
        let first = t * self.per;
        let mut stats = RowStats::<F>::new::<T>(row, self.split, self.eps);
        let lead = rows_ahead(row * std::mem::size_of::<T>());
        for (k, (xr, or)) in piece(self.x, t, self.per * row).chunks_exact(row).zip(os.chunks_exact_mut(row)).enumerate() {
            let (xf, mu, r) = stats.of(xr);
            ms[k] = mu;
            rs[k] = r;
            let g = (first + k) % groups;
            if w.is_none() && b.is_none() {
                for (o, &v) in or.iter_mut().zip(xf) {
                    *o = T::from_f64(((v - mu) * r).to_f64());
                }
            } else {
                for j in 0..d {
                    let c = g * d + j;
                    let scale = r * w.map_or(F::ONE, |w| w[c]);
                    let bias = (-scale).fma(mu, b.map_or(F::ZERO, |b| b[c]));
                    let (xc, oc) = (&xf[j * self.s..][..self.s], &mut or[j * self.s..][..self.s]);
                    #[cfg(target_arch = "x86_64")]
                    if T::DTYPE == DType::Float32 && F::DTYPE == DType::Float32 && fma_ok() {
                        let (xp, yp, n) = (xc.as_ptr() as *const f32, oc.as_mut_ptr() as *mut f32, self.s);
                        let (sc, bi, wide) = (scale.to_f64() as f32, bias.to_f64() as f32, isa() == Isa::Avx512);
                        // The same channel of the row `lead` ahead in this task.
                        let ahead = if lead > 0 && k + lead < ms.len() { xp.wrapping_add(lead * row) } else { std::ptr::null() };
                        // SAFETY: T and F are f32 (checked), both slices hold
                        // `s` elements; the CPU has AVX2+FMA (and AVX-512F when `wide`).
                        unsafe {
                            match (wide, self.stream) {
                                (true, true) => avx::fma16::<true>(xp, sc, bi, yp, n, ahead),
                                (true, false) => avx::fma16::<false>(xp, sc, bi, yp, n, ahead),
                                (false, true) => avx::fma8::<true>(xp, sc, bi, yp, n, ahead),
                                (false, false) => avx::fma8::<false>(xp, sc, bi, yp, n, ahead),
                            }
                        }
                        continue;
                    }
                    for (o, &v) in oc.iter_mut().zip(xc) {
                        *o = T::from_f64(scale.fma(v, bias).to_f64());
                    }
                }
            }
        }
        if self.stream {
            crate::simd::stream::fence();
        }
    }
}

/// Group norm backward (PyTorch's `GroupNormBackwardKernelImpl`): per
/// (sample, channel) `ds = Σ g·x`, `db = Σ g`; per (sample, group), with
/// `ds' = Σ ds·w`, `db' = Σ db·w` over its channels,
/// `c2 = (db'·mean − ds')·rstd³/(d·s)`, `c3 = −c2·mean − db'·rstd/(d·s)`, the
/// input gradient is `rstd·w·g + c2·x + c3`; `gw = Σ_n (ds − db·mean)·rstd`
/// and `gb = Σ_n db` per channel. Work runs in parallel over rows.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_backward<T: Element, F: MomentFloat>(
    g: &[T],
    x: &[T],
    shp: Ncs,
    groups: usize,
    mean: &[F],
    rstd: &[F],
    w: Option<&[F]>,
    gx: Option<&mut [T]>,
    gw: Option<&mut [F]>,
    gb: Option<&mut [F]>,
) {
    let (nc, s) = (shp.n * shp.c, shp.s);
    let d = shp.c / groups.max(1);
    // ds, db per (sample, channel).
    let per = rows_per_task(nc, s);
    let dsdb: Vec<(F, F)> = run_tasks(nc.div_ceil(per), &GnSums { g, x, s, per, nc, _f: PhantomData }).into_iter().flatten().collect();
    if let Some(gw) = gw {
        run_tasks(1, &GnWeightGrad { shp, groups, d, mean, rstd, dsdb: &dsdb, gw: Pieces::new(gw, shp.c) });
    }
    if let Some(gb) = gb {
        for c in 0..shp.c {
            let mut acc = F::ZERO;
            for i in 0..shp.n {
                acc += dsdb[i * shp.c + c].1;
            }
            gb[c] = acc;
        }
    }
    let Some(gx) = gx else { return };
    let row = d * s;
    let rows = shp.n * groups;
    if row == 0 || rows == 0 {
        return;
    }
    let scale = F::ONE / F::from_usize(row);
    let per = rows_per_task(rows, row);
    let task = GnGradInput { g, x, shp, groups, d, per, mean, rstd, w, dsdb: &dsdb, scale, gx: Pieces::new(gx, per * row) };
    run_tasks(rows.div_ceil(per), &task);
}

/// One task of [`group_norm_backward`]'s reductions: `(Σ g·x, Σ g)` for `per`
/// blocks of `s` elements.
struct GnSums<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    s: usize,
    per: usize,
    nc: usize,
    _f: PhantomData<F>,
}

impl<T: Element, F: MomentFloat> Task for GnSums<'_, T, F> {
    type Out = Vec<(F, F)>;
    #[inline(always)]
    fn run(&self, t: usize) -> Vec<(F, F)> {
        let s = self.s;
        let fv = |v: T| F::from_f64(v.to_f64());
        let mut out = Vec::with_capacity(self.per);
        for blk in t * self.per..((t + 1) * self.per).min(self.nc) {
            let (gb_, xb) = (&self.g[blk * s..][..s], &self.x[blk * s..][..s]);
            out.push((lane_dot(s, |j| fv(gb_[j]), |j| fv(xb[j])), lane_dot(s, |j| fv(gb_[j]), |_| F::ONE)));
        }
        out
    }
}

/// [`group_norm_backward`]'s weight gradient `Σ_n (ds − db·mean)·rstd` per
/// channel, as one task (so that its fused multiply-adds are instructions).
struct GnWeightGrad<'a, F> {
    shp: Ncs,
    groups: usize,
    d: usize,
    mean: &'a [F],
    rstd: &'a [F],
    dsdb: &'a [(F, F)],
    gw: Pieces<'a, F>,
}

impl<F: MomentFloat> Task for GnWeightGrad<'_, F> {
    type Out = ();
    #[inline(always)]
    fn run(&self, t: usize) {
        let shp = self.shp;
        // SAFETY: task `t` (the only one) takes only its own piece.
        let gw = unsafe { self.gw.get(t) };
        for (c, gwc) in gw.iter_mut().enumerate() {
            let mut acc = F::ZERO;
            for i in 0..shp.n {
                let (ds, db) = self.dsdb[i * shp.c + c];
                let ng = i * self.groups + c / self.d.max(1);
                acc = (-db).fma(self.mean[ng], ds).fma(self.rstd[ng], acc);
            }
            *gwc = acc;
        }
    }
}

/// One task of [`group_norm_backward`]'s input gradient: `per` rows (one per
/// sample and group).
struct GnGradInput<'a, T, F> {
    g: &'a [T],
    x: &'a [T],
    shp: Ncs,
    groups: usize,
    d: usize,
    per: usize,
    mean: &'a [F],
    rstd: &'a [F],
    w: Option<&'a [F]>,
    dsdb: &'a [(F, F)],
    scale: F,
    gx: Pieces<'a, T>,
}

impl<T: Element, F: MomentFloat> Task for GnGradInput<'_, T, F> {
    type Out = ();
    #[inline(always)]
    fn run(&self, t: usize) {
        let (shp, groups, d, s, scale, dsdb) = (self.shp, self.groups, self.d, self.shp.s, self.scale, self.dsdb);
        let fv = |v: T| F::from_f64(v.to_f64());
        let wv = |c: usize| self.w.map_or(F::ONE, |w| w[c]);
        // SAFETY: task `t` takes only its own piece.
        let os = unsafe { self.gx.get(t) };
        for (k, or) in os.chunks_exact_mut(d * s).enumerate() {
            let ng = t * self.per + k;
            let (i, gi) = (ng / groups, ng % groups);
            let base = i * shp.c + gi * d;
            let dsv = lane_dot(d, |j| dsdb[base + j].0, |j| wv(gi * d + j));
            let dbv = lane_dot(d, |j| dsdb[base + j].1, |j| wv(gi * d + j));
            let (mu, r) = (self.mean[ng], self.rstd[ng]);
            // The reference build contracts `db * mean - ds` (and the
            // products below) into fused multiply-adds; with one element
            // per group that decides the residue the gradient keeps.
            let c2 = dbv.fma(mu, -dsv) * r * r * r * scale;
            let c3 = -c2 * mu - dbv * r * scale;
            for j in 0..d {
                let c = gi * d + j;
                let c1 = r * wv(c);
                let off = (i * shp.c + c) * s;
                let (gb_, xb) = (&self.g[off..][..s], &self.x[off..][..s]);
                let oc = &mut or[j * s..][..s];
                for q in 0..s {
                    oc[q] = T::from_f64((c1.fma(fv(gb_[q]), c2 * fv(xb[q])) + c3).to_f64());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f64], n: usize, w: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
        x.chunks(n)
            .flat_map(|r| {
                let m = r.iter().sum::<f64>() / n as f64;
                let v = r.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
                let rs = 1.0 / (v + eps).sqrt();
                r.iter().enumerate().map(move |(j, v)| (v - m) * rs * w[j] + b[j]).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn layer_norm_matches_naive_and_its_gradient_sums_to_zero() {
        let (rows, n) = (37, 19);
        let x: Vec<f64> = (0..rows * n).map(|i| ((i * 7919) % 97) as f64 / 13.0 - 3.0).collect();
        let w: Vec<f64> = (0..n).map(|j| 0.5 + j as f64 / 10.0).collect();
        let b: Vec<f64> = (0..n).map(|j| j as f64 / 7.0 - 1.0).collect();
        let (mut out, mut mean, mut rstd) = (vec![0.0; rows * n], vec![0.0; rows], vec![0.0; rows]);
        layer_norm_forward(&x, n, Some(&w), Some(&b), 1e-5, &mut out, &mut mean, &mut rstd);
        for (a, e) in out.iter().zip(naive(&x, n, &w, &b, 1e-5)) {
            assert!((a - e).abs() < 1e-10, "{a} vs {e}");
        }
        let g: Vec<f64> = (0..rows * n).map(|i| ((i * 31) % 11) as f64 - 5.0).collect();
        let (mut gx, mut dw, mut db) = (vec![0.0; rows * n], vec![0.0; n], vec![0.0; n]);
        layer_norm_backward(&g, &x, n, &mean, &rstd, Some(&w), Some(&mut gx), &mut dw, &mut db, true);
        // A row's input gradient is orthogonal to constants (the mean is removed).
        for r in gx.chunks(n) {
            assert!(r.iter().sum::<f64>().abs() < 1e-9);
        }
        for j in 0..n {
            let e: f64 = (0..rows).map(|r| g[r * n + j]).sum();
            assert!((db[j] - e).abs() < 1e-9);
        }
    }

    #[test]
    fn layer_norm_f32_output_rounds_per_parameter_combination() {
        // Rows near 1000 with a spread of about 1 (where `x·rstd − mean·rstd`
        // cancels digits away), row lengths off every vector width, enough
        // rows to stream the output and prefetch ahead: every element,
        // vector or head/tail, is rounded as PyTorch rounds it, from the
        // row's own statistics, and lies near the float64 result.
        for n in [3usize, 1031] {
            let rows = (4 << 20) / (4 * n) + 5;
            let x: Vec<f32> = (0..rows * n).map(|i| 1000.0 + ((i * 7919) % 1009) as f32 / 317.0 - 1.5).collect();
            let w: Vec<f32> = (0..n).map(|j| 0.5 + (j % 17) as f32 / 10.0).collect();
            let b: Vec<f32> = (0..n).map(|j| (j % 13) as f32 / 7.0 - 1.0).collect();
            let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            for (wo, bo) in [(None, None), (Some(&w[..]), None), (None, Some(&b[..])), (Some(&w[..]), Some(&b[..]))] {
                let (mut out, mut mean, mut rstd) = (vec![0f32; rows * n], vec![0f32; rows], vec![0f32; rows]);
                layer_norm_forward::<f32, f32>(&x, n, wo, bo, 1e-5, &mut out, &mut mean, &mut rstd);
                let ones = vec![1.0; n];
                let zeros = vec![0.0; n];
                let w64: Vec<f64> = wo.map_or(ones, |w| w.iter().map(|&v| v as f64).collect());
                let b64: Vec<f64> = bo.map_or(zeros, |b| b.iter().map(|&v| v as f64).collect());
                let exact = naive(&x64, n, &w64, &b64, 1e-5);
                for (i, (&y, e)) in out.iter().zip(exact).enumerate() {
                    let (r, j) = (i / n, i % n);
                    let d = x[i] - mean[r];
                    let want = match (wo, bo) {
                        (Some(w), Some(b)) => (d * rstd[r]).mul_add(w[j], b[j]),
                        (Some(w), None) => d * rstd[r] * w[j],
                        (None, Some(b)) => d.mul_add(rstd[r], b[j]),
                        (None, None) => d * rstd[r],
                    };
                    assert_eq!(y.to_bits(), want.to_bits(), "n {n} w {} b {} at {i}: {y} vs {want}", wo.is_some(), bo.is_some());
                    // The rounding of the mean (a few ulps of 1000 at most),
                    // scaled by 1/std and the weight, bounds the error.
                    let tol = 2.0 * 1000f64 * f64::from(f32::EPSILON) * rstd[r] as f64 * w64[j].abs() + 1e-6 * (1.0 + e.abs());
                    assert!((y as f64 - e).abs() < tol, "n {n} at {i}: {y} vs {e}");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn interleaved_welford_chains_match_single_chains() {
        if !fma_ok() {
            return;
        }
        let x: Vec<f32> = (0..16 * 8 * 4).map(|i| ((i * 7919) % 101) as f32 * 0.37 - 11.0).collect();
        let c: Vec<f32> = (0..16).map(|i| 1.0 / (i + 1) as f32).collect();
        let p = |q: usize| x[q * 128..].as_ptr();
        let (mut four, mut one) = ([0f32; 64], [0f32; 16]);
        // SAFETY: each chain reads 16 vectors of 8 floats inside `x`; AVX2+FMA checked.
        unsafe { avx::welford8xk::<4>([p(0), p(1), p(2), p(3)], 8, 16, c.as_ptr(), four.as_mut_ptr()) };
        for q in 0..4 {
            // SAFETY: as above.
            unsafe { avx::welford8xk::<1>([p(q)], 8, 16, c.as_ptr(), one.as_mut_ptr()) };
            assert_eq!(four[16 * q..16 * q + 16].iter().map(|v| v.to_bits()).collect::<Vec<_>>(), one.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn rowwise_moments_of_many_chunks() {
        // 5 full chunks of 16 vectors, a partial one and a scalar tail, as
        // float32 and as widened float16 (two halves per vector).
        for (len, split) in [(16 * 8 * 5 + 8 * 3 + 5, 1), (16 * 16 * 5 + 16 * 3 + 5, 2)] {
            let x: Vec<f32> = (0..len).map(|i| ((i * 7919) % 97) as f32 / 13.0 - 3.0).collect();
            let (mu, var) = rowwise_moments::<f32, 8>(&x, split, &mut MomentStack::default());
            let m = x.iter().map(|&v| v as f64).sum::<f64>() / len as f64;
            let v = x.iter().map(|&a| (a as f64 - m).powi(2)).sum::<f64>() / len as f64;
            assert!((mu as f64 - m).abs() < 1e-5 && (var as f64 - v).abs() < 1e-4, "{mu} {m} {var} {v}");
        }
    }

    #[test]
    fn batch_norm_matches_naive_and_updates_running_stats() {
        let shp = Ncs { n: 3, c: 2, s: 5 };
        let x: Vec<f64> = (0..30).map(|i| ((i * 37) % 23) as f64 / 7.0 - 1.0).collect();
        let (mut mean, mut invstd) = (vec![0.0; 2], vec![0.0; 2]);
        let (mut rm, mut rv) = (vec![0.0; 2], vec![1.0; 2]);
        batch_norm_stats::<f64, f64>(&x, shp, None, 1e-5, 0.1, Some(&mut rm), Some(&mut rv), |v| v, &mut mean, &mut invstd);
        for c in 0..2 {
            let vals: Vec<f64> = (0..3).flat_map(|i| x[(i * 2 + c) * 5..][..5].to_vec()).collect();
            let m = vals.iter().sum::<f64>() / 15.0;
            let v = vals.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / 15.0;
            assert!((mean[c] - m).abs() < 1e-12 && (invstd[c] - 1.0 / (v + 1e-5).sqrt()).abs() < 1e-9);
            assert!((rm[c] - 0.1 * m).abs() < 1e-12 && (rv[c] - (0.9 + 0.1 * v * 15.0 / 14.0)).abs() < 1e-12);
        }
        let mut out = vec![0.0; 30];
        batch_norm_apply::<f64, f64>(&x, shp, &mean, &invstd, None, None, false, &mut out);
        // The input gradient of sum(y * y) / 2 is orthogonal to constants per channel.
        let mut gx = vec![0.0; 30];
        batch_norm_backward::<f64, f64>(&out, &x, shp, &mean, &invstd, None, true, None, Some(&mut gx), None, None);
        for c in 0..2 {
            let s: f64 = (0..3).map(|i| gx[(i * 2 + c) * 5..][..5].iter().sum::<f64>()).sum();
            assert!(s.abs() < 1e-9);
        }
    }

    #[test]
    fn group_norm_rows_are_normalised() {
        let shp = Ncs { n: 2, c: 4, s: 3 };
        let x: Vec<f32> = (0..24).map(|i| ((i * 13) % 7) as f32 - 2.5).collect();
        let (mut out, mut mean, mut rstd) = (vec![0.0f32; 24], vec![0.0f32; 4], vec![0.0f32; 4]);
        group_norm_forward::<f32, f32>(&x, shp, 2, None, None, 0.0, &mut out, &mut mean, &mut rstd);
        for r in out.chunks(6) {
            let m: f32 = r.iter().sum::<f32>() / 6.0;
            let v: f32 = r.iter().map(|a| (a - m) * (a - m)).sum::<f32>() / 6.0;
            assert!(m.abs() < 1e-5 && (v - 1.0).abs() < 1e-4);
        }
        let mut gx = vec![0.0f32; 24];
        group_norm_backward::<f32, f32>(&out, &x, shp, 2, &mean, &rstd, None, Some(&mut gx), None, None);
        for r in gx.chunks(6) {
            assert!(r.iter().sum::<f32>().abs() < 1e-4);
        }
    }
}
