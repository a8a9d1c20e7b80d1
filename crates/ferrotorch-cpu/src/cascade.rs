//! Floating-point `sum` in PyTorch's CPU order (its `cascade_sum`).
//!
//! PyTorch sums float32 in float32, float64 in float64, and float16/bfloat16
//! in float32 partial sums that are added into the half-precision output. Its
//! rounding (and where a partial sum overflows: `3e38 + 3e38 = inf`) depends on
//! the order of the additions, so this module reproduces that order rather
//! than an order of its own:
//! - the dims are sorted and merged as TensorIterator does for a reduction
//!   (reduced dims innermost, see `ferrotorch_core::layout::reduction_order`);
//! - every 2-d slice of the iteration is one call of the 2-d kernel, whose
//!   result is added into the output (`*out += partial`, in the output dtype);
//! - the 2-d kernel picks PyTorch's path (contiguous inner reduction,
//!   contiguous outer columns, or scalar) with its vector widths (32-byte
//!   vectors: PyTorch registers no AVX-512 sum kernel) and sums each row in
//!   its cascade of four levels of 16+ element chunks, four rows at a time;
//! - a single-output reduction of at least `GRAIN` elements splits the
//!   elements over the threads as `at::parallel_for` does and adds the
//!   per-thread partial sums in thread order (PyTorch's two-pass reduction).
//!
//! Reductions with several outputs run serially (each output's order is
//! PyTorch's serial order).

use crate::iter::GRAIN;
use crate::{Dst, Src};
use ferrotorch_core::layout::{coalesce_dims, contiguous_strides, reduction_order};
use ferrotorch_core::{DType, Error, Result, Shape, Strides};
use smallvec::SmallVec;
use half::{bf16, f16};

/// An accumulator: a float, or a vector of float lanes added lane by lane.
trait Acc: Copy + Send + Sync {
    fn zero() -> Self;
    fn add(self, o: Self) -> Self;
}
macro_rules! float_acc {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
        }
    )*};
}
float_acc!(f32, f64);

/// `Vectorized<acc_t>`: `W` lanes, each its own running sum.
#[derive(Clone, Copy)]
struct Lanes<A, const W: usize>([A; W]);
impl<A: Acc, const W: usize> Acc for Lanes<A, W> {
    #[inline(always)]
    fn zero() -> Self {
        Lanes([A::zero(); W])
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let mut r = self.0;
        for (x, y) in r.iter_mut().zip(o.0) {
            *x = x.add(y);
        }
        Lanes(r)
    }
}

/// One element type's side of the kernel: its accumulate type and the
/// widths of PyTorch's vectors for it.
trait SumElem: Copy + Send + Sync + 'static {
    /// `acc_type<T, true>`: f32 for f32/f16/bf16, f64 for f64.
    type A: Acc + Into<f64>;
    /// `Vectorized<A>`.
    type V: Acc;
    /// Elements in one `Vectorized<T>` (the inner path's load and threshold).
    const VN: usize;
    /// Lanes in one `Vectorized<A>`.
    const W: usize;
    fn load(self) -> Self::A;
    /// The inner path's vector load of `VN` elements at `p` (for f16/bf16 the
    /// two halves added lane by lane).
    ///
    /// # Safety
    /// `p..p+VN` must be readable.
    unsafe fn vload_inner(p: *const Self) -> Self::V;
    /// The outer path's load of `W` elements at `p`.
    ///
    /// # Safety
    /// `p..p+W` must be readable.
    unsafe fn vload_outer(p: *const Self) -> Self::V;
    fn lane(v: &Self::V, i: usize) -> Self::A;
    /// `*out += v` in the output dtype (`CastStoreAccumulate`).
    fn acc_into(self, v: Self::A) -> Self;
    /// `a + b` in the element type (the not-a-reduction case).
    fn add_same(self, o: Self) -> Self;
    fn zero_elem() -> Self;
}

macro_rules! full_float {
    ($t:ty, $w:expr) => {
        impl SumElem for $t {
            type A = $t;
            type V = Lanes<$t, $w>;
            const VN: usize = $w;
            const W: usize = $w;
            #[inline(always)]
            fn load(self) -> $t {
                self
            }
            #[inline(always)]
            unsafe fn vload_inner(p: *const $t) -> Self::V {
                Lanes(std::ptr::read_unaligned(p as *const [$t; $w]))
            }
            #[inline(always)]
            unsafe fn vload_outer(p: *const $t) -> Self::V {
                Lanes(std::ptr::read_unaligned(p as *const [$t; $w]))
            }
            #[inline(always)]
            fn lane(v: &Self::V, i: usize) -> $t {
                v.0[i]
            }
            #[inline(always)]
            fn acc_into(self, v: $t) -> $t {
                self + v
            }
            #[inline(always)]
            fn add_same(self, o: $t) -> $t {
                self + o
            }
            fn zero_elem() -> $t {
                0.0
            }
        }
    };
}
full_float!(f32, 8);
full_float!(f64, 4);

macro_rules! half_float {
    ($t:ty) => {
        impl SumElem for $t {
            type A = f32;
            type V = Lanes<f32, 8>;
            const VN: usize = 16;
            const W: usize = 8;
            #[inline(always)]
            fn load(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            unsafe fn vload_inner(p: *const $t) -> Self::V {
                let v = std::ptr::read_unaligned(p as *const [$t; 16]);
                Lanes(std::array::from_fn(|i| v[i].to_f32() + v[i + 8].to_f32()))
            }
            #[inline(always)]
            unsafe fn vload_outer(p: *const $t) -> Self::V {
                let v = std::ptr::read_unaligned(p as *const [$t; 8]);
                Lanes(std::array::from_fn(|i| v[i].to_f32()))
            }
            #[inline(always)]
            fn lane(v: &Self::V, i: usize) -> f32 {
                v.0[i]
            }
            #[inline(always)]
            fn acc_into(self, v: f32) -> $t {
                // `Half += float` converts the float to the half type first.
                <$t>::from_f32(self.to_f32() + <$t>::from_f32(v).to_f32())
            }
            #[inline(always)]
            fn add_same(self, o: $t) -> $t {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn zero_elem() -> $t {
                <$t>::ZERO
            }
        }
    };
}
half_float!(f16);
half_float!(bf16);

/// `CeilLog2` of PyTorch's cpu utils (1 for sizes up to 2).
fn ceil_log2(x: usize) -> u32 {
    if x <= 2 {
        1
    } else {
        usize::BITS - (x - 1).leading_zeros()
    }
}

/// Sums `NR` columns of `size` rows at once in four levels of chunks
/// (`multi_row_sum`); `load(i, k)` is row `i`, column `k`.
#[inline(always)]
fn multi_row_sum<V: Acc, const NR: usize>(load: impl Fn(usize, usize) -> V, size: usize) -> [V; NR] {
    const LEVELS: usize = 4;
    let level_power = (ceil_log2(size) / LEVELS as u32).max(4);
    let level_step = 1usize << level_power;
    let level_mask = level_step - 1;
    let mut acc = [[V::zero(); NR]; LEVELS];
    let mut i = 0;
    while i + level_step <= size {
        for _ in 0..level_step {
            for (k, a) in acc[0].iter_mut().enumerate() {
                *a = a.add(load(i, k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            for k in 0..NR {
                acc[j][k] = acc[j][k].add(acc[j - 1][k]);
                acc[j - 1][k] = V::zero();
            }
            if i & (level_mask << (j as u32 * level_power)) != 0 {
                break;
            }
        }
    }
    while i < size {
        for (k, a) in acc[0].iter_mut().enumerate() {
            *a = a.add(load(i, k));
        }
        i += 1;
    }
    for j in 1..LEVELS {
        for k in 0..NR {
            acc[0][k] = acc[0][k].add(acc[j][k]);
        }
    }
    acc[0]
}

/// One row of `size` elements as a (size/4, 4) block plus its tail (`row_sum`).
#[inline(always)]
fn row_sum<V: Acc>(load: impl Fn(usize) -> V, size: usize) -> V {
    let ilp = size / 4;
    let mut p = multi_row_sum::<V, 4>(|i, k| load(i * 4 + k), ilp);
    for i in ilp * 4..size {
        p[0] = p[0].add(load(i));
    }
    p[0].add(p[1]).add(p[2]).add(p[3])
}

/// The output buffer the kernel adds into: a raw pointer so that parallel
/// tasks can each add into their own (possibly interleaved) outputs.
#[derive(Clone, Copy)]
struct OutBuf<T>(*mut T, usize);
// SAFETY: tasks sharing an OutBuf write disjoint elements (see `loop2d_split`).
unsafe impl<T> Send for OutBuf<T> {}
unsafe impl<T> Sync for OutBuf<T> {}

impl<T: SumElem> OutBuf<T> {
    /// `out[o] = f(out[o])`.
    ///
    /// # Safety
    /// No other task touches element `o`.
    #[inline(always)]
    unsafe fn update(self, o: isize, f: impl FnOnce(T) -> T) {
        debug_assert!(o >= 0 && (o as usize) < self.1, "cascade output offset {o} outside {}", self.1);
        let p = self.0.offset(o);
        *p = f(*p);
    }
}

/// One kernel call's view of the output: element `j` of the kept dim.
struct Out<T> {
    buf: OutBuf<T>,
    base: isize,
    stride: isize,
}
impl<T: SumElem> Out<T> {
    #[inline(always)]
    fn store(&mut self, j: usize, v: T::A) {
        // SAFETY: loop2d's contract: every output offset it forms is in the
        // buffer and owned by this call.
        unsafe { self.buf.update(self.base + j as isize * self.stride, |x| x.acc_into(v)) }
    }
}

/// PyTorch's 2-d sum loop over `s0 x s1` elements at `inp` (element strides
/// `is`), adding into `out` at `out_base` (element strides `os`).
///
/// # Safety
/// Every `inp + i*is[0] + j*is[1]` (i < s0, j < s1) must be readable, and
/// every `out_base + i*os[0] + j*os[1]` an index of `out` that no other
/// task writes meanwhile.
unsafe fn loop2d<T: SumElem>(inp: *const T, out: OutBuf<T>, out_base: isize, mut is: [isize; 2], mut os: [isize; 2], mut s0: usize, mut s1: usize) {
    if os[0] != 0 && os[1] == 0 {
        is.swap(0, 1);
        os.swap(0, 1);
        std::mem::swap(&mut s0, &mut s1);
    }
    let at = |i: usize, j: usize| *inp.offset(i as isize * is[0] + j as isize * is[1]);
    if os[0] != 0 && os[1] != 0 {
        // Not a reduction at all: out += in, element by element.
        for j in 0..s1 {
            for i in 0..s0 {
                let x = at(i, j);
                out.update(out_base + i as isize * os[0] + j as isize * os[1], |o| o.add_same(x));
            }
        }
        return;
    }
    let mut out = Out { buf: out, base: out_base, stride: os[1] };
    let (vn, w) = (T::VN, T::W);
    if is[0] == 1 && s0 >= vn {
        // The reduced dim is contiguous: vectors along each row.
        let vec_size = s0 / vn;
        for j in 0..s1 {
            let row = inp.offset(j as isize * is[1]);
            let vacc = row_sum::<T::V>(|i| T::vload_inner(row.add(i * vn)), vec_size);
            let mut fin = T::A::zero();
            for k in vec_size * vn..s0 {
                fin = fin.add((*row.add(k)).load());
            }
            for l in 0..w {
                fin = fin.add(T::lane(&vacc, l));
            }
            out.store(j, fin);
        }
    } else if is[1] == 1 && s1 >= vn {
        // The kept dim is contiguous: vectors across neighbouring outputs.
        let col = |j: usize, i: usize| inp.add(j).offset(i as isize * is[0]);
        let mut j = 0;
        while j + 4 * w <= s1 {
            let sums = multi_row_sum::<T::V, 4>(|i, k| T::vload_outer(col(j + k * w, i)), s0);
            for (k, v) in sums.iter().enumerate() {
                for l in 0..w {
                    out.store(j + k * w + l, T::lane(v, l));
                }
            }
            j += 4 * w;
        }
        while j + w <= s1 {
            let v = row_sum::<T::V>(|i| T::vload_outer(col(j, i)), s0);
            for l in 0..w {
                out.store(j + l, T::lane(&v, l));
            }
            j += w;
        }
        while j < s1 {
            let v = row_sum::<T::A>(|i| (*col(j, i)).load(), s0);
            out.store(j, v);
            j += 1;
        }
    } else if is[0] < is[1] {
        for j in 0..s1 {
            let v = row_sum::<T::A>(|i| at(i, j).load(), s0);
            out.store(j, v);
        }
    } else {
        let mut j = 0;
        while j + 3 < s1 {
            let sums = multi_row_sum::<T::A, 4>(|i, k| at(i, j + k).load(), s0);
            for (k, v) in sums.into_iter().enumerate() {
                out.store(j + k, v);
            }
            j += 4;
        }
        while j < s1 {
            let v = row_sum::<T::A>(|i| at(i, j).load(), s0);
            out.store(j, v);
            j += 1;
        }
    }
}

/// [`loop2d`] with the kept dim split over the threads when the piece is
/// large (as PyTorch's `parallel_dim_reduction` splits outputs). Chunks start
/// at multiples of 32 outputs and none is shorter than 32, so every output is
/// summed by the same path and blocking as in one serial call: the inner
/// paths sum each output alone, and the outer paths group outputs in blocks
/// of 4 vectors (at most 32 elements) counted from the first.
///
/// # Safety
/// As for [`loop2d`].
unsafe fn loop2d_split<T: SumElem>(inp: *const T, out: OutBuf<T>, out_base: isize, mut is: [isize; 2], mut os: [isize; 2], mut s0: usize, mut s1: usize) {
    if os[0] != 0 && os[1] == 0 {
        is.swap(0, 1);
        os.swap(0, 1);
        std::mem::swap(&mut s0, &mut s1);
    }
    const ALIGN: usize = 32;
    let threads = crate::parallel::threads();
    if threads <= 1 || os[0] != 0 || os[1] == 0 || s0.saturating_mul(s1) < GRAIN || s1 < 2 * ALIGN {
        return loop2d(inp, out, out_base, is, os, s0, s1);
    }
    let per = s1.div_ceil(threads).div_ceil(ALIGN) * ALIGN;
    let mut starts: Vec<usize> = (0..s1).step_by(per).collect();
    if starts.len() > 1 && s1 - starts[starts.len() - 1] < ALIGN {
        starts.pop();
    }
    let inp_addr = inp as usize;
    crate::parallel::parallel_for(starts.len(), |c| {
        let j0 = starts[c];
        let j1 = starts.get(c + 1).copied().unwrap_or(s1);
        // SAFETY: each task reads its own columns and writes its own outputs
        // (os[1] != 0, so distinct j are distinct output elements).
        unsafe {
            let p = (inp_addr as *const T).offset(j0 as isize * is[1]);
            loop2d(p, out, out_base + j0 as isize * os[1], is, os, s0, j1 - j0);
        }
    });
}

/// The iteration PyTorch builds: merged shape and the element strides of
/// the output (into the dense kept-dims buffer) and the input.
struct Iter {
    shape: Shape,
    out: Strides,
    inp: Strides,
}

impl Iter {
    fn new(shape: &[usize], in_strides: &[isize], dims: &[bool], keepdim: bool) -> Iter {
        Self::total_of_dense(shape, in_strides, dims).unwrap_or_else(|| Self::general(shape, in_strides, dims, keepdim))
    }

    /// The iteration of a sum of every element of a row-major input (the
    /// common `x.sum()`), without the general ordering and merging work:
    /// it is what [`general`](Self::general) builds then, one dim of all
    /// the elements at stride 1 into a single output (checked in tests).
    fn total_of_dense(shape: &[usize], in_strides: &[isize], dims: &[bool]) -> Option<Iter> {
        let n: usize = shape.iter().product();
        if n < 2 || !dims.iter().all(|&d| d) {
            return None;
        }
        let mut expected = 1isize;
        for (&s, &st) in shape.iter().zip(in_strides).rev() {
            if s != 1 {
                if st != expected {
                    return None;
                }
                expected *= s as isize;
            }
        }
        Some(Iter { shape: [n].into_iter().collect(), out: [0].into_iter().collect(), inp: [1].into_iter().collect() })
    }

    fn general(shape: &[usize], in_strides: &[isize], dims: &[bool], keepdim: bool) -> Iter {
        let nd = shape.len();
        // The output PyTorch allocates: contiguous over the kept dims, stride 0
        // on reduced dims (keepdim=False inserts them as 0; keepdim=True keeps
        // a size-1 reduced input dim's contiguous stride).
        let keep: Shape = (0..nd).map(|d| if dims[d] { 1 } else { shape[d] }).collect();
        let out: Strides = if keepdim {
            let cs = contiguous_strides(&keep);
            (0..nd).map(|d| if dims[d] && shape[d] != 1 { 0 } else { cs[d] }).collect()
        } else {
            let kept: Shape = (0..nd).filter(|&d| !dims[d]).map(|d| shape[d]).collect();
            let cs = contiguous_strides(&kept);
            let mut k = 0;
            (0..nd)
                .map(|d| {
                    if dims[d] {
                        0
                    } else {
                        k += 1;
                        cs[k - 1]
                    }
                })
                .collect()
        };
        let perm = reduction_order(shape, &out, &[in_strides]);
        let pshape: Shape = perm.iter().map(|&d| shape[d]).collect();
        let mut st: [Strides; 2] = [perm.iter().map(|&d| out[d]).collect(), perm.iter().map(|&d| in_strides[d]).collect()];
        let shape = coalesce_dims(&pshape, &mut st);
        let [out, inp] = st;
        Iter { shape, out, inp }
    }

    fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// `serial_for_each` over the linear range `lo..hi` of the iteration:
    /// one kernel call per 2-d piece.
    ///
    /// # Safety
    /// `inp` must point at element 0 of a layout with this iteration's input
    /// strides, and `out` hold every output offset.
    unsafe fn run<T: SumElem>(&self, inp: *const T, out: OutBuf<T>, lo: usize, hi: usize) {
        let nd = self.shape.len();
        if nd <= 1 {
            let (si, so) = (self.inp.first().copied().unwrap_or(0), self.out.first().copied().unwrap_or(0));
            loop2d_split(inp.offset(lo as isize * si), out, lo as isize * so, [si, 0], [so, 0], hi - lo, 1);
            return;
        }
        // A mixed-radix counter over the dims, innermost first.
        let mut values: Shape = SmallVec::from_elem(0, nd);
        let mut rem = lo;
        for d in 0..nd {
            values[d] = rem % self.shape[d];
            rem /= self.shape[d];
        }
        let mut offset = lo;
        while offset < hi {
            // DimCounter::max_2d_step: a whole 2-d piece when starting a row.
            let step0 = (self.shape[0] - values[0]).min(hi - offset);
            let step1 = if step0 == self.shape[0] { (self.shape[1] - values[1]).min((hi - offset) / self.shape[0]) } else { 1 };
            let (mut io, mut oo) = (0isize, 0isize);
            for d in 0..nd {
                io += values[d] as isize * self.inp[d];
                oo += values[d] as isize * self.out[d];
            }
            loop2d_split(inp.offset(io), out, oo, [self.inp[0], self.inp[1]], [self.out[0], self.out[1]], step0, step1);
            // DimCounter::increment.
            offset += step0 * step1;
            let (mut d, mut overflow) = if step1 != 1 { (1, step1) } else { (0, step0) };
            while d < nd && overflow > 0 {
                let v = values[d] + overflow;
                if v >= self.shape[d] {
                    overflow = 1;
                    values[d] = v - self.shape[d];
                } else {
                    overflow = 0;
                    values[d] = v;
                }
                d += 1;
            }
        }
    }
}

fn sum_typed<T: SumElem + ferrotorch_core::Element>(a: Src, dims: &[bool], keepdim: bool, out: Dst) {
    let it = Iter::new(&a.layout.shape, &a.layout.strides, dims, keepdim);
    let kept: usize = a.layout.shape.iter().zip(dims).map(|(&s, &r)| if r { 1 } else { s }).product();
    // Inline for the common full reduction: no heap allocation per call.
    let mut buf: SmallVec<[T; 4]> = SmallVec::from_elem(T::zero_elem(), kept);
    let n = it.numel();
    // SAFETY: the layout's offset and strides address only elements of its
    // storage; Iter permutes and merges them without leaving that set.
    let inp = unsafe { crate::at::<T>(a.base, a.layout.offset as isize) };
    let threads = crate::parallel::threads();
    if n > 0 && kept == 1 && n >= GRAIN && threads > 1 {
        // PyTorch's two-pass reduction: at::parallel_for's chunks, one partial
        // sum per thread, then those partials reduced in thread order.
        let tasks = threads.min(n.div_ceil(GRAIN));
        let chunk = n.div_ceil(tasks);
        let inp_addr = inp as usize;
        let parts: Vec<T> = crate::parallel::parallel_map(threads, |t| {
            let mut part = vec![T::zero_elem(); 1];
            let lo = t * chunk;
            if t < tasks && lo < n {
                // SAFETY: as above; the range lies inside the iteration.
                unsafe { it.run(inp_addr as *const T, OutBuf(part.as_mut_ptr(), 1), lo, n.min(lo + chunk)) };
            }
            part[0]
        });
        // SAFETY: `parts` holds `threads` contiguous elements.
        unsafe { loop2d(parts.as_ptr(), OutBuf(buf.as_mut_ptr(), buf.len()), 0, [1, 0], [0, 0], threads, 1) };
    } else if n > 0 {
        // SAFETY: as above.
        unsafe { it.run(inp, OutBuf(buf.as_mut_ptr(), buf.len()), 0, n) };
    }
    write_kept(&buf, a, dims, out);
}

/// Writes the dense kept-dims buffer into `out` (keepdim shape, any strides).
fn write_kept<T: SumElem + ferrotorch_core::Element>(buf: &[T], a: Src, dims: &[bool], out: Dst) {
    let keep: Shape = a.layout.shape.iter().zip(dims).map(|(&s, &r)| if r { 1 } else { s }).collect();
    let nd = keep.len();
    let ost: Strides = if out.layout.shape.len() == nd { out.layout.strides.clone() } else { SmallVec::from_elem(0, nd) };
    let mut idx: Shape = SmallVec::from_elem(0, nd);
    for &v in buf {
        let off = out.layout.offset as isize + idx.iter().zip(&ost).map(|(&i, &s)| i as isize * s).sum::<isize>();
        // SAFETY: `off` addresses an element of `out`'s keepdim layout.
        unsafe { *crate::at_mut::<T>(out.base, off) = v };
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < keep[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Sums the floating tensor `a` (f16, bf16, f32 or f64) over the dims flagged
/// in `dims` into `out` (same dtype, keepdim shape) in PyTorch's CPU order
/// (see the module notes). `keepdim` is the caller's flag: it decides the
/// strides of the output PyTorch iterates with, hence its order.
///
/// PyTorch sums some float16/bfloat16 inputs in float32 instead (see
/// [`needs_f32_buffer`]); the caller converts those.
pub fn sum(a: Src, dtype: DType, dims: &[bool], keepdim: bool, out: Dst) -> Result<()> {
    if dims.len() != a.layout.shape.len() {
        return Err(Error::runtime("cascade sum: one flag per dim expected"));
    }
    match dtype {
        DType::Float32 => sum_typed::<f32>(a, dims, keepdim, out),
        DType::Float64 => sum_typed::<f64>(a, dims, keepdim, out),
        DType::Float16 => sum_typed::<f16>(a, dims, keepdim, out),
        DType::BFloat16 => sum_typed::<bf16>(a, dims, keepdim, out),
        other => return Err(Error::runtime(format!("cascade sum: {other:?} is not a floating dtype"))),
    }
    Ok(())
}

/// Whether PyTorch sums a float16/bfloat16 input in a float32 buffer
/// (`should_use_acc_buffer`): its iteration has two or more dims and the
/// first two are both reduced.
pub fn needs_f32_buffer(shape: &[usize], strides: &[isize], dims: &[bool], keepdim: bool) -> bool {
    let it = Iter::new(shape, strides, dims, keepdim);
    it.shape.len() >= 2 && it.out[0] == 0 && it.out[1] == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotorch_core::Layout;

    #[test]
    fn the_dense_total_shortcut_is_the_general_iteration() {
        let cases: &[(&[usize], &[isize])] = &[
            (&[100], &[1]),
            (&[4, 25], &[25, 1]),
            (&[1, 100], &[100, 1]),
            (&[100, 1], &[1, 1]),
            (&[2, 1, 3, 1, 5], &[15, 7, 5, 9, 1]),
            (&[3, 4], &[1, 3]),
            (&[3, 4], &[8, 2]),
            (&[1], &[1]),
            (&[0, 3], &[3, 1]),
        ];
        for &(shape, strides) in cases {
            for keepdim in [false, true] {
                let dims = vec![true; shape.len()];
                let g = Iter::general(shape, strides, &dims, keepdim);
                match Iter::total_of_dense(shape, strides, &dims) {
                    Some(f) => {
                        assert_eq!((&f.shape, &f.out, &f.inp), (&g.shape, &g.out, &g.inp), "{shape:?} {strides:?}");
                    }
                    None => {
                        let dense = Layout { shape: shape.into(), strides: strides.into(), offset: 0 }.is_contiguous();
                        assert!(!dense || shape.iter().product::<usize>() < 2, "{shape:?} {strides:?} missed");
                    }
                }
            }
        }
    }

    fn layout(shape: &[usize], strides: &[isize]) -> Layout {
        Layout { shape: shape.iter().copied().collect(), strides: strides.iter().copied().collect(), offset: 0 }
    }

    /// Integers below 2^24 add exactly in f32 in any order, so every path
    /// must give the closed-form column and row sums.
    #[test]
    fn every_path_sums_exact_integers() {
        for &(r, c) in &[(1usize, 1usize), (3, 5), (17, 40), (70, 9), (300, 33)] {
            let data: Vec<f32> = (0..r * c).map(|i| (i % 97) as f32).collect();
            for (shape, strides) in [(vec![r, c], vec![c as isize, 1]), (vec![c, r], vec![1, c as isize])] {
                for dims in [[true, false], [false, true], [true, true]] {
                    let a = layout(&shape, &strides);
                    let keep: Vec<usize> = (0..2).map(|d| if dims[d] { 1 } else { shape[d] }).collect();
                    let mut out = vec![0f32; keep.iter().product()];
                    let o = layout(&keep, &[if dims[1] { 1 } else { keep[1] as isize }, 1]);
                    let src = Src { base: data.as_ptr() as *const u8, layout: &a };
                    let dst = Dst { base: out.as_mut_ptr() as *mut u8, layout: &o };
                    sum(src, DType::Float32, &dims, true, dst).unwrap();
                    let at = |i: usize, j: usize| data[i * strides[0] as usize + j * strides[1] as usize] as f64;
                    let mut want = vec![0f64; out.len()];
                    for i in 0..shape[0] {
                        for j in 0..shape[1] {
                            let k = if dims[0] && dims[1] { 0 } else if dims[0] { j } else { i };
                            want[k] += at(i, j);
                        }
                    }
                    let got: Vec<f64> = out.iter().map(|&v| v as f64).collect();
                    assert_eq!(got, want, "shape {shape:?} strides {strides:?} dims {dims:?}");
                }
            }
        }
    }

    #[test]
    fn cascade_levels_match_the_recursive_definition() {
        // multi_row_sum over one column of ones counts the rows exactly,
        // whatever the level structure, and ceil_log2 matches its definition.
        for n in [0usize, 1, 15, 16, 17, 255, 256, 257, 70000] {
            let s = multi_row_sum::<f64, 1>(|_, _| 1.0, n);
            assert_eq!(s[0], n as f64);
        }
        assert_eq!((ceil_log2(2), ceil_log2(3), ceil_log2(4), ceil_log2(5)), (1, 2, 2, 3));
    }
}
