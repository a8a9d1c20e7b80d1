//! Kernels of the complex dtypes (`complex64`, `complex128`).
//!
//! What only moves or adds the parts (copies between complex types, sums,
//! accumulation, the parts' fills) runs the real kernels over the
//! interleaved float view of the storage ([`Layout::as_real_parts`]), so it
//! keeps their order, rounding and threading. The rest is an elementwise map
//! over the complex elements through the one strided iterator, and `gemm`'s
//! complex products.

use crate::iter::Plan;
use crate::{at, at_mut, copy, Dst, Src};
use ferrotorch_core::complex::{ComplexElement, C32, C64};
use ferrotorch_core::dtype::pretty;
use ferrotorch_core::op::{CumKind, ReduceKind};
use ferrotorch_core::{dispatch_complex, BinaryOp, DType, Error, Layout, Result, Scalar, UnaryOp};
use ferrotorch_core::num_complex::Complex;

/// PyTorch's error for a kernel that has no complex version.
pub fn not_impl(op: &str, dtype: DType) -> Error {
    Error::not_implemented(format!("\"{op}\" not implemented for '{}'", pretty(dtype)))
}

/// The layout of one part (0 = real, 1 = imaginary) of a complex layout, in real elements.
fn part(l: &Layout, which: usize) -> Layout {
    let mut strides = l.strides.clone();
    strides.iter_mut().for_each(|s| *s *= 2);
    Layout { shape: l.shape.clone(), strides, offset: l.offset * 2 + which }
}

/// Runs `f(&mut out, in)` over every element of `dst`'s shape (`src` broadcast to it).
fn map1<I: Copy + Send + Sync, O: Copy + Send + Sync>(dst: Dst, src: Src, f: impl Fn(I) -> O + Sync) {
    let plan = Plan::<2>::new(&dst.layout.shape, [&dst.layout.strides, &src.layout.strides], [dst.layout.offset, src.layout.offset]);
    let (db, sb) = (dst.base as usize, src.base as usize);
    plan.for_each_par(|off, n, st| {
        if st == [1, 1] {
            // A unit-stride run: plain pointer steps the compiler can vectorise
            // (raw pointers, since an in-place op passes the same memory twice).
            // SAFETY (both blocks): the run's `n` elements lie inside both
            // layouts, which the op layer checked against their storages.
            let (o, x) = unsafe { (at_mut::<O>(db as *mut u8, off[0]), at::<I>(sb as *const u8, off[1])) };
            for i in 0..n {
                unsafe { *o.add(i) = f(*x.add(i)) };
            }
            return;
        }
        for i in 0..n as isize {
            // SAFETY: the plan yields offsets inside both layouts, which the
            // op layer checked against their storages.
            unsafe { *at_mut::<O>(db as *mut u8, off[0] + i * st[0]) = f(*at::<I>(sb as *const u8, off[1] + i * st[1])) };
        }
    });
}

/// Runs `out = f(a, b)` over every element of `dst`'s shape.
fn map2<A: Copy + Send + Sync, B: Copy + Send + Sync, O: Copy + Send + Sync>(dst: Dst, a: Src, b: Src, f: impl Fn(A, B) -> O + Sync) {
    let l = [dst.layout, a.layout, b.layout];
    let plan = Plan::<3>::new(&l[0].shape, [&l[0].strides, &l[1].strides, &l[2].strides], [l[0].offset, l[1].offset, l[2].offset]);
    let (db, ab, bb) = (dst.base as usize, a.base as usize, b.base as usize);
    plan.for_each_par(|off, n, st| {
        for i in 0..n as isize {
            // SAFETY: as in `map1`.
            unsafe {
                let x = *at::<A>(ab as *const u8, off[1] + i * st[1]);
                let y = *at::<B>(bb as *const u8, off[2] + i * st[2]);
                *at_mut::<O>(db as *mut u8, off[0] + i * st[0]) = f(x, y);
            }
        }
    });
}

/// `dst = src` converted, where either side is complex. A real value gets
/// imaginary part 0; a complex value written to a real type keeps its real
/// part (to `bool`: whether either part is nonzero, as PyTorch's cast).
pub fn copy_cast(dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) {
    let real = |d: &Layout, w| part(d, w);
    match (dst_dtype.is_complex(), src_dtype.is_complex()) {
        (true, true) => {
            let (dl, sl) = (dst.layout.as_real_parts(), src.layout.as_real_parts());
            copy::copy_cast(Dst { base: dst.base, layout: &dl }, dst_dtype.to_real(), Src { base: src.base, layout: &sl }, src_dtype.to_real());
        }
        // One interleaving pass (the common `x.to(complex64)` of float32, and
        // float64 to complex128) instead of a strided copy plus a strided fill.
        (true, false) if src_dtype == dst_dtype.to_real() => match dst_dtype {
            DType::Complex64 => map1::<f32, C32>(dst, src, |x| Complex::new(x, 0.0)),
            _ => map1::<f64, C64>(dst, src, |x| Complex::new(x, 0.0)),
        },
        (true, false) => {
            let (re, im) = (real(dst.layout, 0), real(dst.layout, 1));
            copy::copy_cast(Dst { base: dst.base, layout: &re }, dst_dtype.to_real(), src, src_dtype);
            copy::fill(Dst { base: dst.base, layout: &im }, dst_dtype.to_real(), Scalar::Int(0));
        }
        (false, true) if dst_dtype == DType::Bool => {
            dispatch_complex!(src_dtype, S => map1::<S, bool>(dst, src, |z| z.re != 0.0 || z.im != 0.0), else {})
        }
        (false, true) => {
            let re = real(src.layout, 0);
            copy::copy_cast(dst, dst_dtype, Src { base: src.base, layout: &re }, src_dtype.to_real());
        }
        (false, false) => copy::copy_cast(dst, dst_dtype, src, src_dtype),
    }
}

/// Every element of the complex `dst` set to `value` (a real value has imaginary part 0).
pub fn fill(dst: Dst, dtype: DType, value: Scalar) {
    let (re, im) = value.to_c64();
    let (lre, lim) = (part(dst.layout, 0), part(dst.layout, 1));
    copy::fill(Dst { base: dst.base, layout: &lre }, dtype.to_real(), Scalar::Float(re));
    copy::fill(Dst { base: dst.base, layout: &lim }, dtype.to_real(), Scalar::Float(im));
}

/// The complex element at element offset `off`.
///
/// # Safety
/// `off` must address an element of `dtype` inside the storage at `base`.
pub unsafe fn read_scalar(base: *const u8, dtype: DType, off: usize) -> Scalar {
    dispatch_complex!(dtype, T => {
        // SAFETY: the caller's contract.
        let z = unsafe { *at::<T>(base, off as isize) }.to_c64();
        Scalar::Complex(z.re, z.im)
    }, else Scalar::Float(f64::NAN))
}

/// `dst += src` over complex elements: the real accumulation over both parts.
pub fn accumulate(dtype: DType, dst: Dst, src: Src, row_major: bool) {
    let (dl, sl) = (dst.layout.as_real_parts(), src.layout.as_real_parts());
    copy::accumulate(dtype.to_real(), Dst { base: dst.base, layout: &dl }, Src { base: src.base, layout: &sl }, row_major);
}

/// Smith's complex division (scaling by the larger part of the divisor), so
/// `|b|^2` neither overflows nor underflows where the quotient is finite.
#[inline]
fn div<F: num_traits::Float>(a: Complex<F>, b: Complex<F>) -> Complex<F> {
    if b.re.abs() >= b.im.abs() {
        if b.re == F::zero() && b.im == F::zero() {
            return Complex::new(a.re / b.re.abs(), a.im / b.re.abs());
        }
        let r = b.im / b.re;
        let d = b.re + r * b.im;
        Complex::new((a.re + a.im * r) / d, (a.im - a.re * r) / d)
    } else {
        let r = b.re / b.im;
        let d = b.im + r * b.re;
        Complex::new((a.re * r + a.im) / d, (a.im * r - a.re) / d)
    }
}

/// `z / |z|` (0 at 0): `sgn`.
#[inline]
fn sgn<F: num_traits::Float>(z: Complex<F>) -> Complex<F> {
    let a = z.re.hypot(z.im);
    if a == F::zero() {
        Complex::new(F::zero(), F::zero())
    } else {
        Complex::new(z.re / a, z.im / a)
    }
}

/// The complex unary ops: results of `dtype`, or of its real type for
/// `abs`, or bool for the predicates.
pub fn unary(op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()> {
    match dtype {
        DType::Complex64 => unary_typed::<f32>(op, dtype, out, x),
        DType::Complex128 => unary_typed::<f64>(op, dtype, out, x),
        _ => Err(not_impl(op.kernel_name(), dtype)),
    }
}

/// The part type of a complex element type.
trait Part: num_traits::Float + num_traits::FloatConst + Send + Sync + 'static {}
impl Part for f32 {}
impl Part for f64 {}

fn unary_typed<F: Part>(op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()> {
    use UnaryOp::*;
    let f: fn(Complex<F>) -> Complex<F> = match op {
        Neg => |z| -z,
        Exp => |z| z.exp(),
        Log => |z| z.ln(),
        Sqrt => |z| z.sqrt(),
        Rsqrt => |z| div(Complex::<F>::from(F::one()), z.sqrt()),
        Reciprocal => |z| div(Complex::<F>::from(F::one()), z),
        Sin => |z| z.sin(),
        Cos => |z| z.cos(),
        Tan => |z| z.tan(),
        Sinh => |z| z.sinh(),
        Cosh => |z| z.cosh(),
        Tanh => |z| z.tanh(),
        Asin => |z| z.asin(),
        Acos => |z| z.acos(),
        Atan => |z| z.atan(),
        Asinh => |z| z.asinh(),
        Acosh => |z| z.acosh(),
        Atanh => |z| z.atanh(),
        Sgn => sgn,
        Sigmoid => |z| div(Complex::<F>::from(F::one()), Complex::<F>::from(F::one()) + (-z).exp()),
        Log2 => |z| z.ln() / F::LN_2(),
        Log10 => |z| z.ln() / F::LN_10(),
        Expm1 => |z| z.exp() - Complex::<F>::from(F::one()),
        Log1p => |z| (z + Complex::<F>::from(F::one())).ln(),
        Abs => {
            map1::<Complex<F>, F>(out, x, |z| z.re.hypot(z.im));
            return Ok(());
        }
        Angle => {
            map1::<Complex<F>, F>(out, x, |z| z.im.atan2(z.re));
            return Ok(());
        }
        IsNan => {
            map1::<Complex<F>, bool>(out, x, |z| z.re.is_nan() || z.im.is_nan());
            return Ok(());
        }
        IsFinite => {
            map1::<Complex<F>, bool>(out, x, |z| z.re.is_finite() && z.im.is_finite());
            return Ok(());
        }
        IsInf => {
            map1::<Complex<F>, bool>(out, x, |z| z.re.is_infinite() || z.im.is_infinite());
            return Ok(());
        }
        _ => return Err(not_impl(op.kernel_name(), dtype)),
    };
    map1::<Complex<F>, Complex<F>>(out, x, f);
    Ok(())
}

/// The complex binary ops; comparisons write bool.
pub fn binary(op: BinaryOp, compute: DType, out: Dst, a: Src, b: Src) -> Result<()> {
    match compute {
        DType::Complex64 => binary_typed::<f32>(op, compute, out, a, b),
        DType::Complex128 => binary_typed::<f64>(op, compute, out, a, b),
        _ => Err(not_impl(op.name(), compute)),
    }
}

fn binary_typed<F: Part>(op: BinaryOp, dtype: DType, out: Dst, a: Src, b: Src) -> Result<()> {
    use BinaryOp::*;
    type T<F> = Complex<F>;
    let f: fn(T<F>, T<F>) -> T<F> = match op {
        Add => |x, y| x + y,
        Sub => |x, y| x - y,
        Mul => |x, y| x * y,
        Div => div,
        Pow => pow,
        Eq => {
            map2::<T<F>, T<F>, bool>(out, a, b, |x, y| x == y);
            return Ok(());
        }
        Ne => {
            map2::<T<F>, T<F>, bool>(out, a, b, |x, y| x != y);
            return Ok(());
        }
        _ => return Err(not_impl(op.name(), dtype)),
    };
    map2::<T<F>, T<F>, T<F>>(out, a, b, f);
    Ok(())
}

/// `x ** y`: 1 for a zero exponent, 0 for a zero base with an exponent of
/// positive real part, `exp(y log x)` otherwise (C's `cpow`).
fn pow<F: num_traits::Float>(x: Complex<F>, y: Complex<F>) -> Complex<F> {
    if y.re == F::zero() && y.im == F::zero() {
        return Complex::<F>::from(F::one());
    }
    if x.re == F::zero() && x.im == F::zero() && y.im == F::zero() && y.re > F::zero() {
        return Complex::new(F::zero(), F::zero());
    }
    let l = Complex::new(x.re.hypot(x.im).ln(), x.im.atan2(x.re));
    (y * l).exp()
}

/// `sum`/`mean` of complex elements over `dims`: the real kernels' cascade
/// sum over the interleaved parts (the parts dim is kept).
pub fn sum(x: Src, dtype: DType, dims: &[bool], keepdim: bool, out: Dst) -> Result<()> {
    let (xl, ol) = (x.layout.as_real_parts(), out.layout.as_real_parts());
    let mut d = dims.to_vec();
    d.push(false);
    crate::cascade::sum(Src { base: x.base, layout: &xl }, dtype.to_real(), &d, keepdim, Dst { base: out.base, layout: &ol })
}

/// The reductions of complex elements other than the cascade sum: `Sum`,
/// `Mean` and `Prod` into a keepdim-shaped `out` of the same dtype.
pub fn reduce(kind: ReduceKind, x: Src, dtype: DType, dims: &[bool], out: Dst) -> Result<()> {
    match kind {
        ReduceKind::Sum | ReduceKind::Mean => {
            let (xl, ol) = (x.layout.as_real_parts(), out.layout.as_real_parts());
            let mut d = dims.to_vec();
            d.push(false);
            crate::reduction::reduce(kind, Src { base: x.base, layout: &xl }, dtype.to_real(), &d, Dst { base: out.base, layout: &ol }, dtype.to_real())
        }
        ReduceKind::Prod if dtype == DType::Complex64 => {
            prod::<f32>(x, dims, out);
            Ok(())
        }
        ReduceKind::Prod => {
            prod::<f64>(x, dims, out);
            Ok(())
        }
        _ => Err(not_impl("reduce", dtype)),
    }
}

/// Products over the flagged dims, one output element at a time, in index order.
fn prod<F: Part>(x: Src, dims: &[bool], out: Dst) {
    let kept: Vec<usize> = x.layout.shape.iter().zip(dims).map(|(&s, &r)| if r { 1 } else { s }).collect();
    let red: Vec<usize> = x.layout.shape.iter().zip(dims).map(|(&s, &r)| if r { s } else { 1 }).collect();
    let ostr: Vec<isize> = out.layout.strides.to_vec();
    let plan = Plan::<2>::new(&kept, [&ostr, &x.layout.strides], [out.layout.offset, x.layout.offset]);
    let (ob, xb) = (out.base as usize, x.base as usize);
    let rplan_strides: Vec<isize> = x.layout.strides.to_vec();
    plan.for_each(|off, n, st| {
        for i in 0..n as isize {
            let rp = Plan::<1>::new(&red, [&rplan_strides], [0]);
            let mut acc = Complex::<F>::from(F::one());
            let base = off[1] + i * st[1];
            rp.for_each(|ro, rn, rs| {
                for j in 0..rn as isize {
                    // SAFETY: the reduced offsets stay inside x's layout.
                    acc = acc * unsafe { *at::<Complex<F>>(xb as *const u8, base + ro[0] + j * rs[0]) };
                }
            });
            // SAFETY: the kept plan's offsets lie inside out's layout.
            unsafe { *at_mut::<Complex<F>>(ob as *mut u8, off[0] + i * st[0]) = acc };
        }
    });
}

/// `cumsum` of complex elements along `dim`: the real running sum over
/// both parts (the parts dim is last, so `dim` keeps its index).
pub fn cumulative(kind: CumKind, x: Src, x_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()> {
    if kind != CumKind::Sum || x_dtype != out_dtype {
        return Err(not_impl("cumprod", x_dtype));
    }
    let (xl, ol) = (x.layout.as_real_parts(), out.layout.as_real_parts());
    crate::reduction::cumulative(kind, Src { base: x.base, layout: &xl }, x_dtype.to_real(), dim, Dst { base: out.base, layout: &ol }, x_dtype.to_real())
}

/// Batched complex matrix products through `gemm` (`out` as the real
/// `matmul`'s: (.., m, p) from (.., m, k) @ (.., k, p), batch dims shared),
/// with `a`/`b` read conjugated where `conj` says (`gemm`'s own flags).
pub fn matmul(dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool, conj: [bool; 2]) -> Result<()> {
    match dtype {
        DType::Complex64 => matmul_typed::<C32>(out, a, b, accumulate, conj),
        DType::Complex128 => matmul_typed::<C64>(out, a, b, accumulate, conj),
        _ => return Err(not_impl("matmul", dtype)),
    }
    Ok(())
}

fn matmul_typed<T: Copy + num_traits::Zero + num_traits::One + 'static>(out: Dst, a: Src, b: Src, accumulate: bool, conj: [bool; 2]) {
    let n = out.layout.ndim();
    let (m, p) = (out.layout.shape[n - 2], out.layout.shape[n - 1]);
    let k = a.layout.shape[n - 1];
    let batch = &out.layout.shape[..n - 2];
    let nb: usize = batch.iter().product();
    for bi in 0..nb {
        let [oa, ob, oo] = crate::matmul::batch_offsets(bi, batch, [a.layout, b.layout, out.layout]);
        let (oa, ob, oo) = (oa + a.layout.offset as isize, ob + b.layout.offset as isize, oo + out.layout.offset as isize);
        let (ars, acs) = (a.layout.strides[n - 2], a.layout.strides[n - 1]);
        let (brs, bcs) = (b.layout.strides[n - 2], b.layout.strides[n - 1]);
        let (ors, ocs) = (out.layout.strides[n - 2], out.layout.strides[n - 1]);
        // SAFETY: the three matrices lie inside their layouts, which fit
        // their storages; `gemm` reads and writes only m×k, k×p and m×p
        // elements at the given strides. Arguments are in gemm's
        // column-major convention (dst, column stride, row stride).
        unsafe {
            gemm::gemm::<T>(
                m, p, k,
                at_mut::<T>(out.base, oo), ocs, ors,
                accumulate,
                at::<T>(a.base, oa), acs, ars,
                at::<T>(b.base, ob), bcs, brs,
                if accumulate { T::one() } else { T::zero() }, T::one(),
                false, conj[0], conj[1],
                gemm::Parallelism::None,
            );
        }
    }
}

/// `where(cond, x, y)` over complex elements: a select of both parts.
pub fn select(dtype: DType, out: Dst, cond: Src, x: Src, y: Src) -> Result<()> {
    let (ol, xl, yl) = (out.layout.as_real_parts(), x.layout.as_real_parts(), y.layout.as_real_parts());
    let mut cl = cond.layout.clone();
    cl.shape.push(2);
    cl.strides.push(0);
    crate::pointwise::select(
        dtype.to_real(),
        Dst { base: out.base, layout: &ol },
        Src { base: cond.base, layout: &cl },
        Src { base: x.base, layout: &xl },
        Src { base: y.base, layout: &yl },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_binary(op: BinaryOp, a: &[C64], b: &[C64]) -> Vec<C64> {
        let l = Layout::contiguous(&[a.len()]);
        let mut out = vec![C64::new(0.0, 0.0); a.len()];
        binary(
            op,
            DType::Complex128,
            Dst { base: out.as_mut_ptr() as *mut u8, layout: &l },
            Src { base: a.as_ptr() as *const u8, layout: &l },
            Src { base: b.as_ptr() as *const u8, layout: &l },
        )
        .unwrap();
        out
    }

    /// Smith's division agrees with the textbook formula where that one
    /// is exact, and stays finite where `|b|^2` would overflow.
    #[test]
    fn division_is_scaled() {
        let a = [C64::new(1.0, 2.0), C64::new(-3.0, 0.5), C64::new(1e300, 1e300)];
        let b = [C64::new(2.0, -1.0), C64::new(0.0, 4.0), C64::new(1e300, -1e300)];
        let q = run_binary(BinaryOp::Div, &a, &b);
        // (1+2i)/(2-i) = i; (-3+0.5i)/(4i) = 0.125+0.75i; (1+i)/(1-i) = i.
        assert_eq!(q[0], C64::new(0.0, 1.0));
        assert_eq!(q[1], C64::new(0.125, 0.75));
        assert!((q[2] - C64::new(0.0, 1.0)).norm() < 1e-15);
    }

    /// `x ** 0` is 1 (0 ** 0 included), `0 ** y` is 0 for a positive real `y`,
    /// and `i ** 2` is -1 up to rounding.
    #[test]
    fn power_edge_cases() {
        let z = C64::new(0.0, 0.0);
        let p = run_binary(BinaryOp::Pow, &[z, z, C64::new(0.0, 1.0)], &[z, C64::new(2.5, 0.0), C64::new(2.0, 0.0)]);
        assert_eq!(p[0], C64::new(1.0, 0.0));
        assert_eq!(p[1], z);
        assert!((p[2] - C64::new(-1.0, 0.0)).norm() < 1e-15);
    }

    /// Casts keep the real part (bool: either part nonzero); real values
    /// become complex with imaginary part 0; sums run over both parts.
    #[test]
    fn casts_and_sums_through_the_parts() {
        let z = [C64::new(1.5, -2.0), C64::new(0.0, 3.0), C64::new(0.0, 0.0)];
        let l = Layout::contiguous(&[3]);
        let src = Src { base: z.as_ptr() as *const u8, layout: &l };
        let mut f = [0f32; 3];
        copy_cast(Dst { base: f.as_mut_ptr() as *mut u8, layout: &l }, DType::Float32, src, DType::Complex128);
        assert_eq!(f, [1.5, 0.0, 0.0]);
        let mut b = [false; 3];
        copy_cast(Dst { base: b.as_mut_ptr() as *mut u8, layout: &l }, DType::Bool, src, DType::Complex128);
        assert_eq!(b, [true, true, false]);
        let ints = [7i64, -2, 0];
        let mut c = [C32::new(9.0, 9.0); 3];
        copy_cast(Dst { base: c.as_mut_ptr() as *mut u8, layout: &l }, DType::Complex64, Src { base: ints.as_ptr() as *const u8, layout: &l }, DType::Int64);
        assert_eq!(c, [C32::new(7.0, 0.0), C32::new(-2.0, 0.0), C32::new(0.0, 0.0)]);
        let mut s = [C64::new(0.0, 0.0)];
        let ol = Layout::contiguous(&[1]);
        sum(src, DType::Complex128, &[true], true, Dst { base: s.as_mut_ptr() as *mut u8, layout: &ol }).unwrap();
        assert_eq!(s[0], C64::new(1.5, 1.0));
    }

    /// A complex product through `gemm` equals the sum of products, with
    /// either operand read conjugated by the flags.
    #[test]
    fn matmul_matches_the_definition() {
        let a: Vec<C64> = (0..6).map(|i| C64::new(i as f64, 1.0 - i as f64)).collect();
        let b: Vec<C64> = (0..6).map(|i| C64::new(0.5 * i as f64, 2.0)).collect();
        let (la, lb, lo) = (Layout::contiguous(&[2, 3]), Layout::contiguous(&[3, 2]), Layout::contiguous(&[2, 2]));
        for conj in [[false, false], [true, false], [false, true], [true, true]] {
            let mut out = vec![C64::new(0.0, 0.0); 4];
            matmul(
                DType::Complex128,
                Dst { base: out.as_mut_ptr() as *mut u8, layout: &lo },
                Src { base: a.as_ptr() as *const u8, layout: &la },
                Src { base: b.as_ptr() as *const u8, layout: &lb },
                false,
                conj,
            )
            .unwrap();
            let c = |z: C64, on: bool| if on { z.conj() } else { z };
            for i in 0..2 {
                for j in 0..2 {
                    let want: C64 = (0..3).map(|k| c(a[i * 3 + k], conj[0]) * c(b[k * 2 + j], conj[1])).sum();
                    assert!((out[i * 2 + j] - want).norm() < 1e-12, "{conj:?}");
                }
            }
        }
    }
}
