//! Binary arithmetic kernels with vectorised f32/f64 paths.
//!
//! Per run of the strided iterator: when the output is contiguous and each input
//! is either contiguous or a broadcast scalar (stride 0), f32/f64 go through the
//! SIMD loop of the detected ISA; every other layout and dtype uses the generic
//! loop of [`crate::elementwise`] with PyTorch's per-dtype semantics.
//!
//! A large output that aliases no input is written with streaming stores
//! (`simd::stream`): `add(a, b, out=c)` over 64 MiB then moves 3
//! buffers' worth of memory instead of 4 (no read-for-ownership of `c`).

use crate::elementwise::{binary as generic_binary, Float, Num};
use crate::iter::Plan;
use crate::simd::{isa, map2, Isa, Vf};
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::{dispatch_dtype, BinaryOp, DType, Error, Result};

/// The ops of core's vocabulary with a vectorised f32/f64 loop here.
pub const SIMD_OPS: [BinaryOp; 6] =
    [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Maximum, BinaryOp::Minimum];

/// What one loop of this module computes: one of [`SIMD_OPS`], or `add`'s
/// alpha form `a + s·b` (one fused multiply-add, as PyTorch's vectorised add).
/// It names no op of its own; the op set is core's [`BinaryOp`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lanes {
    /// One of [`SIMD_OPS`].
    Op(BinaryOp),
    /// `a + s·b`
    AddScaled(f64),
}

/// Scalar semantics of every op (NaN-propagating max/min), in the element type.
#[inline(always)]
fn scalar_op<T: Num + Float>(op: Lanes, a: T, b: T) -> T {
    match op {
        Lanes::Op(BinaryOp::Add) => a.add(b),
        Lanes::AddScaled(s) => a.add(b.mul(T::from_f64(s))),
        Lanes::Op(BinaryOp::Sub) => a.sub(b),
        Lanes::Op(BinaryOp::Mul) => a.mul(b),
        Lanes::Op(BinaryOp::Div) => a.div(b),
        Lanes::Op(BinaryOp::Maximum) => max_nan(a, b),
        Lanes::Op(BinaryOp::Minimum) => min_nan(a, b),
        Lanes::Op(_) => unreachable!("not one of SIMD_OPS: the entry points check"),
    }
}

/// `maximum` with NaN propagation (`a > b ? a : b` otherwise).
#[inline(always)]
#[allow(clippy::eq_op)]
fn max_nan<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b {
        b
    } else if a > b {
        a
    } else {
        b
    }
}

/// `minimum` with NaN propagation (`a < b ? a : b` otherwise).
#[inline(always)]
#[allow(clippy::eq_op)]
fn min_nan<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a != a {
        a
    } else if b != b {
        b
    } else if a < b {
        a
    } else {
        b
    }
}

/// The vector form of `op`.
#[inline(always)]
fn simd_op<V: Vf>(op: Lanes, a: V, b: V) -> V {
    match op {
        Lanes::Op(BinaryOp::Add) => a.add(b),
        Lanes::AddScaled(s) => b.mul_add(V::c(s), a),
        Lanes::Op(BinaryOp::Sub) => a.sub(b),
        Lanes::Op(BinaryOp::Mul) => a.mul(b),
        Lanes::Op(BinaryOp::Div) => a.div(b),
        // `max(a, b)` returns b on NaN; a + b is NaN when either is.
        Lanes::Op(BinaryOp::Maximum) => V::select(V::mor(a.is_nan(), b.is_nan()), a.add(b), a.max(b)),
        Lanes::Op(BinaryOp::Minimum) => V::select(V::mor(a.is_nan(), b.is_nan()), a.add(b), a.min(b)),
        Lanes::Op(_) => unreachable!("not one of SIMD_OPS: the entry points check"),
    }
}

macro_rules! binary_arms {
    ($V:ty, $op:expr, $x:expr, $sx:expr, $y:expr, $sy:expr, $o:expr, $n:expr; $($k:ident),*) => {
        match $op {
            $(Lanes::Op(BinaryOp::$k) => map2::<$V, NT>($x, $sx, $y, $sy, $o, $n, |a, b| simd_op(Lanes::Op(BinaryOp::$k), a, b)),)*
            other => map2::<$V, NT>($x, $sx, $y, $sy, $o, $n, |a, b| simd_op(other, a, b)),
        }
    };
}

macro_rules! simd_binary_fn {
    ($name:ident, $V:ty, $E:ty $(, $feat:literal)?) => {
        $(#[target_feature(enable = $feat)])?
        unsafe fn $name<const NT: bool>(op: Lanes, x: *const $E, sx: usize, y: *const $E, sy: usize, o: *mut $E, n: usize) {
            binary_arms!($V, op, x, sx, y, sy, o, n; Add, Sub, Mul, Div, Maximum, Minimum)
        }
    };
}

simd_binary_fn!(binary_scalar_f32, f32, f32);
simd_binary_fn!(binary_scalar_f64, f64, f64);
#[cfg(target_arch = "x86_64")]
simd_binary_fn!(binary_avx2_f32, crate::simd::avx2::F32x8, f32, "avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_binary_fn!(binary_avx2_f64, crate::simd::avx2::F64x4, f64, "avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_binary_fn!(binary_avx512_f32, crate::simd::avx512::F32x16, f32, "avx512f,avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_binary_fn!(binary_avx512_f64, crate::simd::avx512::F64x8, f64, "avx512f,avx2,fma");

/// f32/f64 with a vectorised contiguous binary loop.
trait FastBinary: Num + Float {
    /// `o[i] = op(x[i·sx], y[i·sy])`, `sx`/`sy` ∈ {0, 1}; with `nt` `o` is
    /// written with streaming stores, which the caller fences.
    ///
    /// # Safety
    /// `n >= 1`; pointers valid for the elements their strides reach; `isa` supported.
    #[allow(clippy::too_many_arguments)]
    unsafe fn contiguous_binary(isa: Isa, nt: bool, op: Lanes, x: *const Self, sx: usize, y: *const Self, sy: usize, o: *mut Self, n: usize);
}

macro_rules! fast_binary {
    ($t:ty, $scalar:ident, $avx2:ident, $avx512:ident) => {
        impl FastBinary for $t {
            unsafe fn contiguous_binary(isa: Isa, nt: bool, op: Lanes, x: *const $t, sx: usize, y: *const $t, sy: usize, o: *mut $t, n: usize) {
                match (isa, nt) {
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx512, true) => $avx512::<true>(op, x, sx, y, sy, o, n),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx512, false) => $avx512::<false>(op, x, sx, y, sy, o, n),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx2, true) => $avx2::<true>(op, x, sx, y, sy, o, n),
                    #[cfg(target_arch = "x86_64")]
                    (Isa::Avx2, false) => $avx2::<false>(op, x, sx, y, sy, o, n),
                    // The scalar "vector" has no streaming store.
                    _ => $scalar::<false>(op, x, sx, y, sy, o, n),
                }
            }
        }
    };
}
fast_binary!(f32, binary_scalar_f32, binary_avx2_f32, binary_avx512_f32);
fast_binary!(f64, binary_scalar_f64, binary_avx2_f64, binary_avx512_f64);

/// `out = op(a, b)` for float32; `a` and `b` already broadcast to `out`'s shape
/// (stride 0 along broadcast dims). `out` may alias an input exactly (in-place ops).
fn binary_f32(op: Lanes, out: Dst, a: Src, b: Src) {
    binary_fast::<f32>(op, out, a, b)
}

/// `out = op(a, b)` for float64; as [`binary_f32`].
fn binary_f64(op: Lanes, out: Dst, a: Src, b: Src) {
    binary_fast::<f64>(op, out, a, b)
}

/// Runs at least this long are streamed when the output is
/// ([`output_streams`]): below it the unaligned head and the fence cost
/// more than the saved reads (a broadcast's short rows).
const STREAM_RUN: usize = 4096;

/// Whether `out` is written with streaming stores: large enough
/// ([`crate::simd::stream::streams`]) and in memory that neither input
/// reads (an in-place op reads each output line anyway, so saves nothing).
fn output_streams<T>(out: &Dst, a: &Src, b: &Src) -> bool {
    let bytes = out.layout.numel() * std::mem::size_of::<T>();
    crate::simd::stream::streams(bytes) && out.base as *const u8 != a.base && out.base as *const u8 != b.base
}

fn binary_fast<T: FastBinary>(op: Lanes, out: Dst, a: Src, b: Src) {
    let isa = isa();
    let stream = output_streams::<T>(&out, &a, &b);
    let plan = Plan::<3>::new(
        &out.layout.shape,
        [&out.layout.strides, &a.layout.strides, &b.layout.strides],
        [out.layout.offset, a.layout.offset, b.layout.offset],
    );
    let (ob, ab, bb) = (out.base as usize, a.base as usize, b.base as usize);
    plan.for_each_par(|off, n, st| {
        // SAFETY: the plan's offsets address elements of the three layouts,
        // which the caller guarantees fit their storages.
        unsafe {
            let o = at_mut::<T>(ob as *mut u8, off[0]);
            let x = at::<T>(ab as *const u8, off[1]);
            let y = at::<T>(bb as *const u8, off[2]);
            match st {
                [1, sx @ (0 | 1), sy @ (0 | 1)] if n > 0 => {
                    let nt = stream && n >= STREAM_RUN;
                    T::contiguous_binary(isa, nt, op, x, sx as usize, y, sy as usize, o, n);
                    if nt {
                        crate::simd::stream::fence();
                    }
                }
                // One element at a time through the vector kernel, whose
                // fused multiply-add `scalar_op` has no portable form for.
                _ if matches!(op, Lanes::AddScaled(_)) => {
                    for i in 0..n as isize {
                        T::contiguous_binary(isa, false, op, x.offset(i * st[1]), 0, y.offset(i * st[2]), 0, o.offset(i * st[0]), 1);
                    }
                }
                _ => {
                    for i in 0..n as isize {
                        *o.offset(i * st[0]) = scalar_op(op, *x.offset(i * st[1]), *y.offset(i * st[2]));
                    }
                }
            }
        }
    });
}

/// `out = op(a, b)` for one of [`SIMD_OPS`] in any dtype (all three share
/// `dtype`; `a` and `b` already broadcast to `out`'s shape, stride 0 along
/// broadcast dims; `out` may alias an input exactly, for in-place ops).
/// Integers wrap; `Div` on integer or bool dtypes is an error (the op layer
/// promotes to float).
pub fn binary(op: BinaryOp, dtype: DType, out: Dst, a: Src, b: Src) -> Result<()> {
    if !SIMD_OPS.contains(&op) {
        return Err(Error::runtime(format!("internal error: no vectorised loop for {}", op.name())));
    }
    run(Lanes::Op(op), dtype, out, a, b)
}

/// `out = a + s·b` (`add`/`sub` with `alpha`), with [`binary`]'s layout rules.
pub fn add_scaled(s: f64, dtype: DType, out: Dst, a: Src, b: Src) -> Result<()> {
    run(Lanes::AddScaled(s), dtype, out, a, b)
}

/// The loops of [`binary`] and [`add_scaled`].
fn run(op: Lanes, dtype: DType, out: Dst, a: Src, b: Src) -> Result<()> {
    match dtype {
        DType::Float32 => binary_f32(op, out, a, b),
        DType::Float64 => binary_f64(op, out, a, b),
        DType::Float16 => generic_binary::<half::f16, half::f16, half::f16>(out, a, b, move |x, y| scalar_op(op, x, y)),
        DType::BFloat16 => generic_binary::<half::bf16, half::bf16, half::bf16>(out, a, b, move |x, y| scalar_op(op, x, y)),
        _ => {
            if matches!(op, Lanes::Op(BinaryOp::Div)) {
                return Err(Error::not_implemented(format!("\"div_cpu\" not implemented for '{}'", dtype.name())));
            }
            dispatch_dtype!(dtype, T => int_binary::<T>(op, out, a, b));
        }
    }
    Ok(())
}

fn int_binary<T: Num>(op: Lanes, out: Dst, a: Src, b: Src) {
    generic_binary::<T, T, T>(out, a, b, move |x, y| match op {
        Lanes::Op(BinaryOp::Add) => x.add(y),
        Lanes::AddScaled(s) => x.add(y.mul(T::from_f64(s))),
        Lanes::Op(BinaryOp::Sub) => x.sub(y),
        Lanes::Op(BinaryOp::Mul) => x.mul(y),
        Lanes::Op(BinaryOp::Maximum) => {
            if x >= y {
                x
            } else {
                y
            }
        }
        Lanes::Op(BinaryOp::Minimum) => {
            if x <= y {
                x
            } else {
                y
            }
        }
        Lanes::Op(_) => unreachable!("division and non-SIMD ops never reach the integer loop"),
    })
}

/// `o[i] = op(x[i], y[i])` on contiguous slices with an explicit instruction set
/// (for tests and benchmarks; unsupported levels fall back to a lower one),
/// streamed when `nt`.
///
/// # Panics
/// If the lengths differ.
#[cfg(test)]
fn binary_slice_with<T: FastBinary>(isa_req: Isa, nt: bool, op: Lanes, x: &[T], y: &[T], out: &mut [T]) {
    assert!(x.len() == out.len() && y.len() == out.len(), "binary_slice: length mismatch");
    if out.is_empty() {
        return;
    }
    let isa = Isa::ALL.iter().rev().copied().find(|i| *i <= isa_req && i.is_supported()).unwrap_or(Isa::Scalar);
    // SAFETY: three slices of equal non-zero length; `isa` is supported.
    unsafe { T::contiguous_binary(isa, nt, op, x.as_ptr(), 1, y.as_ptr(), 1, out.as_mut_ptr(), out.len()) };
    if nt {
        crate::simd::stream::fence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotorch_core::Layout;

    fn l(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
        Layout { shape: shape.into(), strides: strides.into(), offset }
    }

    fn reference(op: Lanes, a: f64, b: f64) -> f64 {
        match op {
            Lanes::Op(BinaryOp::Add) => a + b,
            Lanes::AddScaled(s) => a + s * b,
            Lanes::Op(BinaryOp::Sub) => a - b,
            Lanes::Op(BinaryOp::Mul) => a * b,
            Lanes::Op(BinaryOp::Div) => a / b,
            Lanes::Op(BinaryOp::Maximum) => if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) },
            Lanes::Op(BinaryOp::Minimum) => if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) },
            Lanes::Op(op) => unreachable!("{op:?} is not in SIMD_OPS"),
        }
    }

    const OPS: [Lanes; 7] = [
        Lanes::Op(BinaryOp::Add),
        Lanes::AddScaled(2.5),
        Lanes::Op(BinaryOp::Sub),
        Lanes::Op(BinaryOp::Mul),
        Lanes::Op(BinaryOp::Div),
        Lanes::Op(BinaryOp::Maximum),
        Lanes::Op(BinaryOp::Minimum),
    ];

    fn same(g: f64, w: f64) -> bool {
        (g.is_nan() && w.is_nan()) || g == w
    }

    #[test]
    fn every_isa_matches_scalar_semantics() {
        let vals = [0.0, -0.0, 1.5, -2.25, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-40, 3.0e38, 7.0];
        let mut xs = vec![];
        let mut ys = vec![];
        for &a in &vals {
            for &b in &vals {
                xs.push(a);
                ys.push(b);
            }
        }
        let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
        let y32: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
        // Streamed outputs start at every offset from a vector boundary: the
        // unaligned head takes the partial-vector path.
        for (isa, nt, skip) in Isa::ALL.into_iter().flat_map(|i| [(i, false, 0), (i, true, 0), (i, true, 1), (i, true, 5)]) {
            for op in OPS {
                let mut ob = vec![0f64; xs.len() + skip];
                let o = &mut ob[skip..];
                binary_slice_with(isa, nt, op, &xs, &ys, o);
                let mut ob32 = vec![0f32; xs.len() + skip];
                let o32 = &mut ob32[skip..];
                binary_slice_with(isa, nt, op, &x32, &y32, o32);
                for i in 0..xs.len() {
                    let w = reference(op, xs[i], ys[i]);
                    let alpha_ok = matches!(op, Lanes::AddScaled(_)) && ((o[i] - w).abs() <= 1e-15 * w.abs() || same(o[i], scalar_op(op, xs[i], ys[i])));
                    assert!(same(o[i], w) || alpha_ok, "{isa:?} {op:?}({}, {}) = {} want {w}", xs[i], ys[i], o[i]);
                    // f32 semantics; AddAlpha may be fused (as PyTorch's vectorised add) or not.
                    let w32 = scalar_op(op, x32[i], y32[i]);
                    let fused = reference(op, x32[i] as f64, y32[i] as f64) as f32;
                    let ok = same(o32[i] as f64, w32 as f64) || (matches!(op, Lanes::AddScaled(_)) && same(o32[i] as f64, fused as f64));
                    assert!(ok, "{isa:?} {op:?} f32({}, {}) = {} want {w32}", x32[i], y32[i], o32[i]);
                }
            }
        }
    }

    #[test]
    fn broadcast_scalar_transposed_and_empty_layouts() {
        // out (3, 5) contiguous; a = rows of a (3, 5) buffer, b variants.
        let a: Vec<f32> = (0..15).map(|i| i as f32 - 4.0).collect();
        let b: Vec<f32> = (0..15).map(|i| (i as f32) * 0.5 + 1.0).collect();
        let ol = l(&[3, 5], &[5, 1], 0);
        let al = l(&[3, 5], &[5, 1], 0);
        let cases = [
            l(&[3, 5], &[0, 0], 4),  // scalar
            l(&[3, 5], &[0, 1], 2),  // row broadcast
            l(&[3, 5], &[1, 0], 0),  // column broadcast
            l(&[3, 5], &[1, 3], 0),  // transposed (5, 3) buffer
            l(&[3, 5], &[5, 1], 0),  // contiguous
        ];
        for bl in &cases {
            for op in OPS {
                let mut o = vec![0f32; 15];
                run(op, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &ol }, Src { base: a.as_ptr() as *const u8, layout: &al }, Src { base: b.as_ptr() as *const u8, layout: bl }).unwrap();
                for i in 0..3 {
                    for j in 0..5 {
                        let bv = b[(bl.offset as isize + i as isize * bl.strides[0] + j as isize * bl.strides[1]) as usize];
                        let w = reference(op, a[i * 5 + j] as f64, bv as f64) as f32;
                        assert!((o[i * 5 + j] - w).abs() <= 1e-6 * w.abs(), "{op:?} {bl:?}");
                    }
                }
            }
        }
        // both operands broadcast scalars (an expanded tensor times a number),
        // over more elements than the widest vector
        let big = l(&[8, 9], &[9, 1], 0);
        let sa = l(&[8, 9], &[0, 0], 6);
        let sb = l(&[8, 9], &[0, 0], 1);
        for op in OPS {
            let mut o = vec![0f32; 72];
            run(op, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &big }, Src { base: a.as_ptr() as *const u8, layout: &sa }, Src { base: b.as_ptr() as *const u8, layout: &sb }).unwrap();
            let w = reference(op, a[6] as f64, b[1] as f64) as f32;
            assert!(o.iter().all(|&v| (v - w).abs() <= 1e-6 * w.abs()), "{op:?} scalar-scalar: {o:?} vs {w}");
        }
        // empty and 0-d
        let e = l(&[0, 5], &[5, 1], 0);
        let mut o = vec![9f32; 1];
        run(Lanes::Op(BinaryOp::Add), DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &e }, Src { base: a.as_ptr() as *const u8, layout: &e }, Src { base: b.as_ptr() as *const u8, layout: &e }).unwrap();
        assert_eq!(o, [9.0]);
        let z = l(&[], &[], 0);
        let z1 = l(&[], &[], 3);
        run(Lanes::Op(BinaryOp::Mul), DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &z }, Src { base: a.as_ptr() as *const u8, layout: &z1 }, Src { base: b.as_ptr() as *const u8, layout: &z1 }).unwrap();
        assert_eq!(o, [-1.0 * 2.5]);
    }

    #[test]
    fn in_place_parallel_and_integer_dtypes() {
        let n = 100_003;
        let mut a: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
        let lay = l(&[n], &[1], 0);
        let p = a.as_mut_ptr();
        binary_f64(Lanes::Op(BinaryOp::Sub), Dst { base: p as *mut u8, layout: &lay }, Src { base: p as *const u8, layout: &lay }, Src { base: b.as_ptr() as *const u8, layout: &lay });
        assert!(a.iter().enumerate().all(|(i, &v)| v == (i - i % 7) as f64));
        let xi: Vec<i8> = vec![100, -128, 5];
        let yi: Vec<i8> = vec![100, 1, -7];
        let li = l(&[3], &[1], 0);
        let mut oi = vec![0i8; 3];
        for (op, want) in [(Lanes::Op(BinaryOp::Add), [-56i8, -127, -2]), (Lanes::Op(BinaryOp::Mul), [16, -128, -35]), (Lanes::Op(BinaryOp::Maximum), [100, 1, 5])] {
            run(op, DType::Int8, Dst { base: oi.as_mut_ptr() as *mut u8, layout: &li }, Src { base: xi.as_ptr() as *const u8, layout: &li }, Src { base: yi.as_ptr() as *const u8, layout: &li }).unwrap();
            assert_eq!(oi, want, "{op:?}");
        }
        assert!(run(Lanes::Op(BinaryOp::Div), DType::Int8, Dst { base: oi.as_mut_ptr() as *mut u8, layout: &li }, Src { base: xi.as_ptr() as *const u8, layout: &li }, Src { base: yi.as_ptr() as *const u8, layout: &li }).is_err());
    }

    #[test]
    fn large_outputs_stream_with_the_same_results() {
        // Past the streaming size, at an unaligned start (offset 3 into the
        // buffer), against a broadcast row and a scalar, and in place.
        let (rows, cols) = (257usize, 4099usize);
        let n = rows * cols;
        assert!(crate::simd::stream::streams(4 * n) || isa() == Isa::Scalar);
        let a: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1001) as f32 * 0.37 - 150.0).collect();
        let b: Vec<f32> = (0..cols).map(|j| (j % 13) as f32 - 6.5).collect();
        let la = l(&[rows, cols], &[cols as isize, 1], 0);
        let lo = l(&[rows, cols], &[cols as isize, 1], 3);
        for (bl, name) in [(l(&[rows, cols], &[0, 1], 0), "row"), (l(&[rows, cols], &[0, 0], 5), "scalar")] {
            for op in OPS {
                let mut o = vec![0f32; n + 3];
                run(op, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lo }, Src { base: a.as_ptr() as *const u8, layout: &la }, Src { base: b.as_ptr() as *const u8, layout: &bl }).unwrap();
                for i in 0..n {
                    let bv = b[(bl.offset as isize + (i % cols) as isize * bl.strides[1]) as usize];
                    let w = scalar_op(op, a[i], bv);
                    let fused = reference(op, a[i] as f64, bv as f64) as f32;
                    assert!(same(o[3 + i] as f64, w as f64) || same(o[3 + i] as f64, fused as f64), "{name} {op:?} at {i}: {} vs {w}", o[3 + i]);
                }
                assert_eq!(o[..3], [0.0; 3], "{name} {op:?} wrote before the output");
            }
        }
        let mut c = a.clone();
        let p = c.as_mut_ptr();
        let lb = l(&[rows, cols], &[0, 1], 0);
        run(Lanes::Op(BinaryOp::Mul), DType::Float32, Dst { base: p as *mut u8, layout: &la }, Src { base: p as *const u8, layout: &la }, Src { base: b.as_ptr() as *const u8, layout: &lb }).unwrap();
        assert!(c.iter().enumerate().all(|(i, &v)| v == a[i] * b[i % cols]));
    }

    #[test]
    fn public_entry_points_take_core_ops() {
        let (x, y) = ([1.5f32, -2.0], [2.0f32, 4.0]);
        let lay = l(&[2], &[1], 0);
        let mut o = [0f32; 2];
        let (xs, ys) = (Src { base: x.as_ptr() as *const u8, layout: &lay }, Src { base: y.as_ptr() as *const u8, layout: &lay });
        binary(BinaryOp::Mul, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay }, xs, ys).unwrap();
        assert_eq!(o, [3.0, -8.0]);
        add_scaled(0.5, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay }, xs, ys).unwrap();
        assert_eq!(o, [2.5, 0.0]);
        // Ops without a loop here are the pointwise module's: an error, not a wrong result.
        assert!(binary(BinaryOp::Pow, DType::Float32, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay }, xs, ys).is_err());
    }
}
