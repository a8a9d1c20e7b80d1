//! Discrete Fourier transforms on the CPU ([`FftSpec`]): rustfft's plans
//! for complex transforms and realfft's for real ones, applied as one 1-D
//! pass per transformed dim (`lanes::pass`), each batching its lanes and
//! spreading them over threads.
//!
//! A C2C transform reads the input in its first pass and works in place on
//! the output after; an R2C one starts with the real pass along its last
//! dim; a C2R one does its complex passes in scratch (the input is not
//! written) and ends with the real pass. The scale is applied once, in the
//! last pass.

mod lanes;
mod plan;
#[cfg(test)]
mod tests;

use crate::{Dst, Src};
use ferrotorch_core::op::fft::{FftKind, FftSpec};
use ferrotorch_core::{DType, Error, Result};
use lanes::{pass, Block, Strided};
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

fn run<T: FftFloat>(spec: &FftSpec, x: Src, out: Dst) -> Result<()> {
    let dims = &spec.dims;
    let last = dims.len() - 1;
    let scale_at = |i: usize| if i == last { spec.scale } else { 1.0 };
    // SAFETY (the views and passes below): the op layer hands live operands
    // of `dtype` that its layouts describe; `out` is fresh, aliases nothing
    // and its layout does not overlap itself.
    unsafe {
        match spec.kind {
            FftKind::C2C => {
                let o = Strided::<Complex<T>>::new(out.base, out.layout);
                let xs = Strided::<Complex<T>>::new(x.base, x.layout);
                for (i, &d) in dims.iter().enumerate() {
                    let src = if i == 0 { &xs } else { &o };
                    c2c_pass(src, &o, d, spec.forward, scale_at(i))?;
                }
            }
            FftKind::R2C { onesided } => {
                let o = Strided::<Complex<T>>::new(out.base, out.layout);
                let xs = Strided::<T>::new(x.base, x.layout);
                r2c_pass(&xs, &o, dims[last], spec.lengths[last], onesided, spec.forward, if last == 0 { spec.scale } else { 1.0 })?;
                for (i, &d) in dims[..last].iter().enumerate() {
                    c2c_pass(&o, &o, d, spec.forward, if i + 1 == last { spec.scale } else { 1.0 })?;
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
                    for (i, &d) in dims[..last].iter().enumerate() {
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

fn scale_all<E: std::ops::MulAssign<T>, T: FftFloat>(v: &mut [E], scale: f64) {
    if scale != 1.0 {
        let s = T::of_f64(scale);
        v.iter_mut().for_each(|e| *e *= s);
    }
}

/// A complex transform along `dim`, lanes of equal length in `src` and `dst`.
///
/// # Safety
/// As for [`pass`].
unsafe fn c2c_pass<T: FftFloat>(src: &Strided<Complex<T>>, dst: &Strided<Complex<T>>, dim: usize, forward: bool, scale: f64) -> Result<()> {
    let n = src.shape[dim];
    let plan = plan::complex::<T>(n, forward);
    let scratch_len = plan.get_outofplace_scratch_len();
    let lane = move |input: &mut [Complex<T>], output: &mut [Complex<T>], bi: Block, bo: Block| {
        let mut scratch = vec![Complex::default(); scratch_len];
        if bi.stride == n && bo.stride == n {
            // Back to back: rustfft batches the lanes in one call.
            plan.process_outofplace_with_scratch(input, output, &mut scratch);
        } else {
            for b in 0..bi.count {
                plan.process_outofplace_with_scratch(bi.lane(input, b), bo.lane(output, b), &mut scratch);
            }
        }
        scale_all::<_, T>(output, scale);
        Ok(())
    };
    // SAFETY: the caller's contract.
    unsafe { pass(src, dst, dim, &lane) }
}

/// realfft's errors, less the one about nonzero imaginary parts at frequency
/// 0 or `n / 2` (the kernels zero those first, so it cannot arise).
fn real_error(e: FftError) -> std::result::Result<(), String> {
    match e {
        FftError::InputValues(..) => Ok(()),
        other => Err(other.to_string()),
    }
}

/// Real lanes of `n` in `src` to their spectra in `dst`: `n / 2 + 1`
/// frequencies when `onesided`, else all `n` (the upper ones conjugates of
/// the lower). The inverse direction is the conjugate of the forward
/// spectrum, the input being real.
///
/// # Safety
/// As for [`pass`].
unsafe fn r2c_pass<T: FftFloat>(src: &Strided<T>, dst: &Strided<Complex<T>>, dim: usize, n: usize, onesided: bool, forward: bool, scale: f64) -> Result<()> {
    let plan = plan::real_forward::<T>(n);
    let half = n / 2 + 1;
    let scratch_len = plan.get_scratch_len();
    let lane = move |input: &mut [T], output: &mut [Complex<T>], bi: Block, bo: Block| {
        let mut scratch = vec![Complex::default(); scratch_len];
        for b in 0..bi.count {
            let (x, y) = (bi.lane(input, b), bo.lane(output, b));
            plan.process_with_scratch(x, &mut y[..half], &mut scratch).or_else(real_error)?;
            if !forward {
                y[..half].iter_mut().for_each(|c| c.im = -c.im);
            }
            if !onesided {
                for k in half..n {
                    y[k] = y[n - k].conj();
                }
            }
        }
        scale_all::<_, T>(output, scale);
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
    let scratch_len = plan.get_scratch_len();
    let zero = T::of_f64(0.0);
    let lane = move |input: &mut [Complex<T>], output: &mut [T], bi: Block, bo: Block| {
        let mut scratch = vec![Complex::default(); scratch_len];
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
            plan.process_with_scratch(x, y, &mut scratch).or_else(real_error)?;
        }
        scale_all::<_, T>(output, scale);
        Ok(())
    };
    // SAFETY: the caller's contract.
    unsafe { pass(src, dst, dim, &lane) }
}
