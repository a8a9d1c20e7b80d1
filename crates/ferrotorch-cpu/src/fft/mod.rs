//! Discrete Fourier transforms on the CPU ([`FftSpec`]): rustfft's plans
//! for complex transforms and realfft's for real ones, applied as one 1-D
//! pass per transformed dim (`lanes`), each batching its lanes and
//! spreading them over threads.
//!
//! A C2C transform reads the input in its first pass, along the input's
//! rows where it can, and works in place on the output after. An R2C one
//! starts with the real pass along its last dim, writing the non-redundant
//! half of the spectrum, transforms that half along the other dims, and
//! fills in the redundant half by symmetry when the output is two-sided
//! (so `fft2` of a real image costs about half that of a complex one). A
//! C2R one does its complex passes in scratch (the input is not written)
//! and ends with the real pass. The scale is applied once, in the last
//! pass.

mod lanes;
mod plan;
mod scratch;
#[cfg(test)]
mod tests;

use crate::parallel::{parallel_for, threads};
use crate::{Dst, Src};
use ferrotorch_core::op::fft::{FftKind, FftSpec};
use ferrotorch_core::{DType, Error, Result};
use lanes::{pass, pass_in_place, Block, Strided};
use plan::FftFloat;
use realfft::FftError;
use rustfft::num_complex::Complex;

/// `out = spec(x)` for operands of precision `dtype` (float32/float64;
/// complex operands' layouts count complex elements).
pub fn fft(spec: &FftSpec, dtype: DType, x: Src, out: Dst) -> Result<()> {
    spec.check(x.layout, out.layout)?;
    if x.layout.numel() == 0 || out.layout.numel() == 0 {
        return Ok(());
    }
    match dtype {
        DType::Float32 => run::<f32>(spec, x, out),
        DType::Float64 => run::<f64>(spec, x, out),
        other => Err(Error::not_implemented(format!("fft: no CPU kernel for {other:?}"))),
    }
}

/// `dims` with the one along which `strides` is smallest first, the others
/// in their order: the first pass reads the source, and reading it along
/// its rows lets the later, strided passes work in place in the output.
/// The complex passes commute, so the order changes rounding only.
fn rows_first(dims: &[usize], strides: &[isize]) -> Vec<usize> {
    let mut order = dims.to_vec();
    if let Some(i) = (0..order.len()).min_by_key(|&i| strides[order[i]].unsigned_abs()) {
        let d = order.remove(i);
        order.insert(0, d);
    }
    order
}

fn run<T: FftFloat>(spec: &FftSpec, x: Src, out: Dst) -> Result<()> {
    let dims = &spec.dims;
    let last = dims.len() - 1;
    // SAFETY (the views and passes below): the op layer hands live operands
    // of `dtype` that its layouts describe; `out` is fresh, aliases nothing
    // and its layout does not overlap itself.
    unsafe {
        match spec.kind {
            FftKind::C2C => {
                let o = Strided::<Complex<T>>::new(out.base, out.layout);
                let xs = Strided::<Complex<T>>::new(x.base, x.layout);
                let order = rows_first(dims, &x.layout.strides);
                for (i, &d) in order.iter().enumerate() {
                    let src = if i == 0 { &xs } else { &o };
                    c2c_pass(src, &o, d, spec.forward, if i == last { spec.scale } else { 1.0 })?;
                }
            }
            FftKind::R2C { onesided } => {
                // The real pass along the halved dim fills its first n / 2 + 1
                // frequencies, the complex passes transform those, and a
                // two-sided output gets the rest by Hermitian symmetry
                // (half the work of transforming the complexified input).
                let o = Strided::<Complex<T>>::new(out.base, out.layout);
                let xs = Strided::<T>::new(x.base, x.layout);
                let (halved, n) = (dims[last], spec.lengths[last]);
                let h = o.narrow(halved, n / 2 + 1);
                r2c_pass(&xs, &h, halved, n, spec.forward, if last == 0 { spec.scale } else { 1.0 })?;
                for (i, &d) in dims[..last].iter().enumerate() {
                    c2c_pass(&h, &h, d, spec.forward, if i + 1 == last { spec.scale } else { 1.0 })?;
                }
                if !onesided {
                    hermitian_fill(&o, dims, halved);
                }
            }
            FftKind::C2R => {
                let xs = Strided::<Complex<T>>::new(x.base, x.layout);
                let o = Strided::<T>::new(out.base, out.layout);
                if last == 0 {
                    c2r_pass(&xs, &o, dims[0], spec.lengths[0], spec.forward, spec.scale)?;
                } else {
                    // The complex passes need somewhere to write: the input is read-only.
                    let mut buf = vec![Complex::<T>::default(); x.layout.numel()];
                    let b = Strided::dense(&mut buf, &x.layout.shape);
                    for (i, &d) in rows_first(&dims[..last], &x.layout.strides).iter().enumerate() {
                        let src = if i == 0 { &xs } else { &b };
                        c2c_pass(src, &b, d, spec.forward, 1.0)?;
                    }
                    c2r_pass(&b, &o, dims[last], spec.lengths[last], spec.forward, spec.scale)?;
                }
            }
        }
    }
    Ok(())
}

/// Multiplies the lanes of `buf` (laid out as `blk`) by `scale`.
fn scale_lanes<E: std::ops::MulAssign<T>, T: FftFloat>(buf: &mut [E], blk: Block, scale: f64) {
    if scale == 1.0 {
        return;
    }
    let s = T::of_f64(scale);
    if blk.stride == blk.len {
        buf[..blk.count * blk.len].iter_mut().for_each(|e| *e *= s);
    } else {
        for b in 0..blk.count {
            blk.lane(buf, b).iter_mut().for_each(|e| *e *= s);
        }
    }
}

/// A complex transform along `dim`, lanes of equal length in `src` and `dst`.
///
/// # Safety
/// As for [`pass`].
unsafe fn c2c_pass<T: FftFloat>(src: &Strided<Complex<T>>, dst: &Strided<Complex<T>>, dim: usize, forward: bool, scale: f64) -> Result<()> {
    let n = src.shape[dim];
    let plan = plan::complex::<T>(n, forward);
    let work_len = plan.get_inplace_scratch_len();
    let lane = move |buf: &mut [Complex<T>], blk: Block| {
        scratch::work::<Complex<T>, _>(work_len, |work| {
            if blk.stride == n {
                // Back to back: rustfft batches the lanes in one call.
                plan.process_with_scratch(&mut buf[..blk.count * n], work);
            } else {
                for b in 0..blk.count {
                    plan.process_with_scratch(blk.lane(buf, b), work);
                }
            }
        });
        scale_lanes::<_, T>(buf, blk, scale);
        Ok(())
    };
    // SAFETY: the caller's contract.
    unsafe { pass_in_place(src, dst, dim, &lane) }
}

/// Completes a two-sided spectrum of real input whose first `n / 2 + 1`
/// frequencies along `halved` are filled: `X[k] = conj(X[-k])`, the indices
/// negated (modulo their sizes) along every transformed dim in `dims`.
///
/// # Safety
/// `o` addresses a live storage holding every element its layout reaches,
/// written only here, and its layout does not overlap itself.
unsafe fn hermitian_fill<T: FftFloat>(o: &Strided<Complex<T>>, dims: &[usize], halved: usize) {
    let n = o.shape[halved];
    let half = n / 2 + 1;
    if half >= n {
        return;
    }
    let rest: Vec<usize> = (0..o.shape.len()).filter(|&d| d != halved).collect();
    let rows: usize = rest.iter().map(|&d| o.shape[d]).product();
    // Tasks of at least 16 Ki elements, a few per thread.
    let per = rows.div_ceil(4 * threads()).max((1 << 14) / (n - half)).max(1);
    let (p, step) = (o.ptr, o.strides[halved]);
    parallel_for(rows.div_ceil(per), |t| {
        for r in t * per..rows.min((t + 1) * per) {
            let (mut left, mut at, mut from) = (r, 0isize, 0isize);
            for &d in rest.iter().rev() {
                let size = o.shape[d];
                let i = left % size;
                left /= size;
                let m = if dims.contains(&d) { (size - i) % size } else { i };
                at += i as isize * o.strides[d];
                from += m as isize * o.strides[d];
            }
            // SAFETY: both indices lie in `o`'s layout; the writes (at
            // `half..n` along `halved`) and reads (at `1..n - half + 1`,
            // below `half`) never meet, and distinct rows write distinct
            // elements, so the tasks are disjoint.
            unsafe {
                let p = p.get();
                for j in half..n {
                    *p.offset(at + j as isize * step) = (*p.offset(from + (n - j) as isize * step)).conj();
                }
            }
        }
    });
}

/// realfft's errors, less the one about nonzero imaginary parts at frequency
/// 0 or `n / 2` (the kernels zero those first, so it cannot arise).
fn real_error(e: FftError) -> std::result::Result<(), String> {
    match e {
        FftError::InputValues(..) => Ok(()),
        other => Err(other.to_string()),
    }
}

/// Real lanes of `n` in `src` to their first `n / 2 + 1` frequencies in
/// `dst` (the rest are their conjugates, in reverse). The inverse direction
/// is the conjugate of the forward spectrum, the input being real.
///
/// # Safety
/// As for [`pass`].
unsafe fn r2c_pass<T: FftFloat>(src: &Strided<T>, dst: &Strided<Complex<T>>, dim: usize, n: usize, forward: bool, scale: f64) -> Result<()> {
    let plan = plan::real_forward::<T>(n);
    let work_len = plan.get_scratch_len();
    let lane = move |input: &mut [T], output: &mut [Complex<T>], bi: Block, bo: Block| {
        scratch::work::<Complex<T>, _>(work_len, |work| {
            for b in 0..bi.count {
                let (x, y) = (bi.lane(input, b), bo.lane(output, b));
                plan.process_with_scratch(x, y, work).or_else(real_error)?;
                if !forward {
                    y.iter_mut().for_each(|c| c.im = -c.im);
                }
            }
            Ok::<(), String>(())
        })?;
        scale_lanes::<_, T>(output, bo, scale);
        Ok(())
    };
    // SAFETY: the caller's contract.
    unsafe { pass(src, dst, dim, &lane) }
}

/// Half spectra (`n / 2 + 1` frequencies) in `src` to real lanes of `n` in
/// `dst`, the spectra extended by Hermitian symmetry. The forward direction
/// is the inverse one of the conjugated spectrum.
///
/// # Safety
/// As for [`pass`].
unsafe fn c2r_pass<T: FftFloat>(src: &Strided<Complex<T>>, dst: &Strided<T>, dim: usize, n: usize, forward: bool, scale: f64) -> Result<()> {
    let plan = plan::real_inverse::<T>(n);
    let half = n / 2 + 1;
    let work_len = plan.get_scratch_len();
    let zero = T::of_f64(0.0);
    let lane = move |input: &mut [Complex<T>], output: &mut [T], bi: Block, bo: Block| {
        scratch::work::<Complex<T>, _>(work_len, |work| {
        for b in 0..bi.count {
            let (x, y) = (bi.lane(input, b), bo.lane(output, b));
            if forward {
                x.iter_mut().for_each(|c| c.im = -c.im);
            }
            // A real signal's spectrum is real at 0 and n/2: those imaginary parts are dropped.
            x[0].im = zero;
            if n % 2 == 0 {
                x[half - 1].im = zero;
            }
            plan.process_with_scratch(x, y, work).or_else(real_error)?;
        }
        Ok::<(), String>(())
        })?;
        scale_lanes::<_, T>(output, bo, scale);
        Ok(())
    };
    // SAFETY: the caller's contract.
    unsafe { pass(src, dst, dim, &lane) }
}
