//! Discrete Fourier transforms (`torch.fft`) on the tensor's backend
//! ([`FftKernels`](ferrotorch_core::backend::FftKernels)).
//!
//! Complex tensors (complex64/complex128) reach the kernel as they are (its
//! layouts count complex elements); the zero-padding and trimming of
//! `n`/`s` and the adjoints' weights work on their real views
//! (`view_as_real`), whose dims are the complex tensor's plus the parts.
//!
//! Three primitives, PyTorch's `_fft_c2c`, `_fft_r2c` and `_fft_c2r`, call
//! the kernel and record `FftC2CBackward0`, `FftR2CBackward0` and
//! `FftC2RBackward0`; each derivative is the adjoint transform in PyTorch's
//! convention for complex gradients, written with the primitives themselves
//! so that it is differentiable again.
//! Every `torch.fft` function ([`FftFn`]) is one or two primitives plus the
//! zero-padding or trimming of `n`/`s` and conjugations, composed as
//! PyTorch composes them, so values, dtypes and graph nodes agree. The one
//! exception needs no graph: `fft2`/`fftn`/`ifft2`/`ifftn` of a real input
//! that records nothing run the two-sided real-input transform (half the
//! work) instead of PyTorch's complex copy and complex transform; the
//! values agree to rounding.

use crate::autograd::{needs_grad, record, rule_native as rule, GradModeGuard};
use crate::defaults::default_dtype;
use crate::ops::arith_grad::g0;
use crate::Tensor;
use ferrotorch_core::dtype::pretty;
use ferrotorch_core::error::{wrap_dim, wrap_dim_no_scalar};
use ferrotorch_core::op::fft::{FftKind, FftNorm, FftSpec};
use ferrotorch_core::{DType, Error, Result};
use smallvec::SmallVec;

/// The six transforms of `torch.fft`, each in a 1-D (`fft`), 2-D (`fft2`)
/// and n-D (`fftn`) form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftFn {
    /// Complex to complex, forward.
    Fft,
    /// Complex to complex, inverse.
    Ifft,
    /// Real to the non-redundant half of the spectrum, forward.
    Rfft,
    /// The inverse of [`FftFn::Rfft`]: half spectrum to a real signal.
    Irfft,
    /// A Hermitian-symmetric signal, given by its first half, to its real
    /// spectrum (forward).
    Hfft,
    /// The inverse of [`FftFn::Hfft`]: a real signal to half of its
    /// Hermitian spectrum.
    Ihfft,
}

/// How many dims a call transforms, which decides its argument names and defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftRank {
    /// `n` and one `dim` (default -1).
    One,
    /// `s` and `dim` (default `(-2, -1)`).
    Two,
    /// `s` and `dim` (default: all dims, or the last `len(s)`).
    N,
}

impl FftFn {
    /// Whether the transform runs in the forward direction (`exp(-2πi jk/n)`).
    pub fn forward(self) -> bool {
        matches!(self, FftFn::Fft | FftFn::Rfft | FftFn::Hfft)
    }

    /// Whether the output is complex.
    pub fn complex_output(self) -> bool {
        !matches!(self, FftFn::Irfft | FftFn::Hfft)
    }

    /// PyTorch's name of the function, as its messages use it.
    pub fn name(self, rank: FftRank) -> String {
        let base = match self {
            FftFn::Fft => "fft",
            FftFn::Ifft => "ifft",
            FftFn::Rfft => "rfft",
            FftFn::Irfft => "irfft",
            FftFn::Hfft => "hfft",
            FftFn::Ihfft => "ihfft",
        };
        match rank {
            FftRank::One => base.to_string(),
            FftRank::Two | FftRank::N => format!("{base}n"),
        }
    }
}

/// The kernel's precision for a transform input of `dtype`: integers and
/// bool become the default float dtype, as PyTorch promotes them.
fn precision(dtype: DType) -> Result<DType> {
    match dtype {
        DType::Float32 | DType::Float64 => Ok(dtype),
        DType::Complex64 => Ok(DType::Float32),
        DType::Complex128 => Ok(DType::Float64),
        DType::Float16 | DType::BFloat16 => Err(Error::runtime(format!("Unsupported dtype {}", pretty(dtype)))),
        other if other.is_complex() => Err(Error::runtime(format!("Unsupported dtype {}", pretty(other)))),
        _ => Ok(default_dtype()),
    }
}

/// Runs `spec` on `x` (complex, or real for R2C) into a fresh tensor of
/// `out_shape` (complex, or real for C2R), of `x`'s precision.
fn transform(x: &Tensor, spec: FftSpec, out_shape: &[usize]) -> Result<Tensor> {
    let _no_grad = GradModeGuard::new(false);
    let real = precision(x.dtype())?;
    let out_dtype = if spec.kind == FftKind::C2R { real } else { real.to_complex().unwrap_or(DType::Complex64) };
    let out = Tensor::empty(out_shape, out_dtype, x.device())?;
    if out.numel() > 0 {
        out.backend()?.fft(&spec, real, x.operand()?.src(), out.operand_mut()?.dst())?;
    }
    Ok(out)
}

fn check_complex(x: &Tensor, what: &str) -> Result<()> {
    if !matches!(x.dtype(), DType::Complex64 | DType::Complex128) {
        return Err(Error::runtime(format!("{what}: expected a complex64/complex128 input, got {}", pretty(x.dtype()))));
    }
    Ok(())
}

/// `x` (complex) multiplied by the real weights `w` along `dim`.
fn weight_along(x: &Tensor, dim: usize, w: Vec<f64>) -> Result<Tensor> {
    let n = w.len();
    let parts = x.resolve_conj()?.view_as_real()?;
    let mut shape = vec![1i64; parts.ndim()];
    shape[dim] = n as i64;
    let w = Tensor::from_vec(w, &[n])?.to_device(x.device(), parts.dtype(), false)?.reshape(&shape)?;
    parts.mul(&w)?.view_as_complex()
}

/// The complex tensor with real part `x` (PyTorch's `to(complex)`, so its
/// node is `ToCopyBackward0` as there).
fn complexify(x: &Tensor) -> Result<Tensor> {
    x.to_dtype(x.dtype().to_complex().unwrap_or(DType::Complex64))
}

/// `x` cut or zero-padded at the end of each of `dims` to `sizes` (PyTorch's
/// `resize_fft_input`); a complex tensor is padded through its real view.
fn resize(x: &Tensor, dims: &[usize], sizes: &[usize]) -> Result<Tensor> {
    if x.dtype().is_complex() && dims.iter().zip(sizes).any(|(&d, &s)| x.shape()[d] < s) {
        return resize(&x.resolve_conj()?.view_as_real()?, dims, sizes)?.view_as_complex();
    }
    let mut x = x.clone();
    for (&d, &s) in dims.iter().zip(sizes) {
        let cur = x.shape()[d];
        if cur > s {
            x = x.narrow(d as i64, 0, s as i64)?;
        } else if cur < s {
            let mut pad_shape = x.shape().to_vec();
            pad_shape[d] = s - cur;
            let zeros = Tensor::zeros(&pad_shape, x.dtype(), x.device())?;
            x = Tensor::cat(&[x, zeros], d as i64)?;
        }
    }
    Ok(x)
}

impl Tensor {
    /// `torch._fft_c2c`: the complex transform over `dims` of `self`
    /// (complex64/complex128), each output multiplied by `scale`. Records
    /// `FftC2CBackward0`.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// // [1, i] -> [1 + i, 1 - i]
    /// let x = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], &[2, 2])?.view_as_complex()?;
    /// let y = x.fft_c2c(&[0], 1.0, true)?;
    /// assert_eq!(y.view_as_real()?.to_f64_vec()?, vec![1.0, 1.0, 1.0, -1.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fft_c2c(&self, dims: &[usize], scale: f64, forward: bool) -> Result<Tensor> {
        check_complex(self, "_fft_c2c")?;
        let shape = self.shape().to_vec();
        let lengths: SmallVec<[usize; 4]> = dims.iter().map(|&d| shape.get(d).copied().unwrap_or(0)).collect();
        let spec = FftSpec { kind: FftKind::C2C, forward, dims: dims.iter().copied().collect(), lengths, scale };
        let out = transform(self, spec, &shape)?;
        let dims = dims.to_vec();
        record("FftC2CBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                Ok(vec![Some(g.fft_c2c(&dims, scale, !forward)?)])
            })
        });
        Ok(out)
    }

    /// `torch._fft_r2c`: the forward transform over `dims` of the real
    /// signal `self` (float32/float64), scaled by `scale`; with `onesided`
    /// the last of `dims` keeps frequencies `0..=n/2`. Records
    /// `FftR2CBackward0`.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4])?;
    /// let y = x.fft_r2c(&[0], 1.0, true)?; // [10, -2 + 2i, -2]
    /// assert_eq!(y.view_as_real()?.to_f64_vec()?, vec![10.0, 0.0, -2.0, 2.0, -2.0, 0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fft_r2c(&self, dims: &[usize], scale: f64, onesided: bool) -> Result<Tensor> {
        if !matches!(self.dtype(), DType::Float32 | DType::Float64) {
            return Err(Error::runtime(format!("_fft_r2c: expected a float32/float64 input, got {}", pretty(self.dtype()))));
        }
        let Some(&last) = dims.last() else {
            return Err(Error::runtime("_fft_r2c: must transform at least one axis"));
        };
        let lengths: SmallVec<[usize; 4]> = dims.iter().map(|&d| self.shape().get(d).copied().unwrap_or(0)).collect();
        let mut out_shape = self.shape().to_vec();
        let n = lengths[lengths.len() - 1];
        if onesided && last < out_shape.len() {
            out_shape[last] = n / 2 + 1;
        }
        let spec = FftSpec { kind: FftKind::R2C { onesided }, forward: true, dims: dims.iter().copied().collect(), lengths, scale };
        let out = transform(self, spec, &out_shape)?;
        let dims = dims.to_vec();
        record("FftR2CBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                // The adjoint: the dropped frequencies come back as zeros, the
                // inverse complex transform, and the real part.
                let full = if onesided { resize(&g, &[last], &[n])? } else { g };
                let gx = full.fft_c2c(&dims, scale, false)?.real()?;
                Ok(vec![Some(gx)])
            })
        });
        Ok(out)
    }

    /// `torch._fft_c2r`: the inverse transform over `dims` of the
    /// Hermitian-symmetric signal whose non-redundant half is `self`
    /// (complex; the last of `dims` holds `last_dim_size / 2 + 1`
    /// frequencies), to a real signal of `last_dim_size` samples there,
    /// scaled by `scale`. Records `FftC2RBackward0`.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// // The half spectrum [10, -2 + 2i, -2] of [1, 2, 3, 4].
    /// let h = Tensor::from_vec(vec![10.0f64, 0.0, -2.0, 2.0, -2.0, 0.0], &[3, 2])?.view_as_complex()?;
    /// let x = h.fft_c2r(&[0], 0.25, 4)?;
    /// assert_eq!(x.to_f64_vec()?, vec![1.0, 2.0, 3.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fft_c2r(&self, dims: &[usize], scale: f64, last_dim_size: usize) -> Result<Tensor> {
        check_complex(self, "_fft_c2r")?;
        let shape = self.shape().to_vec();
        let Some(&last) = dims.last() else {
            return Err(Error::runtime("_fft_c2r: must transform at least one axis"));
        };
        let mut lengths: SmallVec<[usize; 4]> = dims.iter().map(|&d| shape.get(d).copied().unwrap_or(0)).collect();
        let k = lengths.len() - 1;
        lengths[k] = last_dim_size;
        let mut out_shape = shape.clone();
        if last < out_shape.len() {
            out_shape[last] = last_dim_size;
        }
        let spec = FftSpec { kind: FftKind::C2R, forward: false, dims: dims.iter().copied().collect(), lengths, scale };
        let out = transform(self, spec, &out_shape)?;
        let dims = dims.to_vec();
        let n = last_dim_size;
        record("FftC2RBackward0", &[Some(self)], &[&out], move || {
            rule(move |_, g| {
                let Some(g) = g0(g) else { return Ok(vec![None]) };
                // The adjoint: the forward half spectrum of the gradient, the
                // frequencies that stand for two (k and n - k) counted twice.
                let half = n / 2 + 1;
                let gx = g.fft_r2c(&dims, scale, true)?;
                let w = (0..half).map(|k| if k >= 1 && k < 1 + (n - half) { 2.0 } else { 1.0 }).collect();
                Ok(vec![Some(weight_along(&gx, last, w)?)])
            })
        });
        Ok(out)
    }

    /// A `torch.fft` function: `f` in the form `rank` over `self` (real or
    /// complex). `s` is `[n]` for [`FftRank::One`], and `dim` one dim there;
    /// both default as PyTorch's.
    ///
    /// ```
    /// use ferrotorch::ops::fft::{FftFn, FftRank};
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4])?;
    /// let spectrum = x.fft_fn(FftFn::Rfft, FftRank::One, None, None, Some("ortho"))?;
    /// let back = spectrum.fft_fn(FftFn::Irfft, FftRank::One, Some(&[4]), None, Some("ortho"))?;
    /// let v = back.to_f64_vec()?;
    /// assert!(v.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-12));
    /// # Ok(())
    /// # }
    /// ```
    pub fn fft_fn(&self, f: FftFn, rank: FftRank, s: Option<&[i64]>, dim: Option<&[i64]>, norm: Option<&str>) -> Result<Tensor> {
        let name = f.name(rank);
        let norm = FftNorm::parse(norm)?;
        let complex_input = self.dtype().is_complex();
        if complex_input && matches!(f, FftFn::Rfft | FftFn::Ihfft) {
            let msg = match (f, rank) {
                (FftFn::Ihfft, FftRank::Two | FftRank::N) => format!("Only supports floating-point dtypes, but found: {}", pretty(self.dtype())),
                (_, FftRank::One) => format!("{name} expects a real input tensor, but got {}", pretty(self.dtype())),
                _ => format!("{name} expects a real-valued input tensor, but got {}", pretty(self.dtype())),
            };
            return Err(Error::runtime(msg));
        }
        // The input in the kernel's precision: integers and bool promoted as PyTorch does.
        let dt = precision(self.dtype())?;
        let x = if !complex_input && self.dtype() != dt { self.to_dtype(dt)? } else { self.clone() };
        let (dims, sizes) = fft_dims(x.shape(), rank, f, s, dim)?;
        let forward = f.forward();
        // The factor of a primitive over signals of these lengths in this direction.
        let scale = |sizes: &[usize]| norm.scale(forward, sizes.iter().product());
        match f {
            FftFn::Fft | FftFn::Ifft => {
                if rank == FftRank::One && !complex_input {
                    let x = resize(&x, &dims, &sizes)?;
                    let out = x.fft_r2c(&dims, scale(&sizes), false)?;
                    return if forward { Ok(out) } else { out.conj() };
                }
                if !complex_input && !dims.is_empty() && !needs_grad(&[&x]) {
                    // With no graph to mirror, a real signal's spectrum comes
                    // from the real-input transform (half the work) rather
                    // than from transforming its complex copy as PyTorch does.
                    let x = resize(&x, &dims, &sizes)?;
                    let lengths = sizes.iter().copied().collect();
                    let spec = FftSpec { kind: FftKind::R2C { onesided: false }, forward, dims: dims.iter().copied().collect(), lengths, scale: scale(&sizes) };
                    return transform(&x, spec, &x.shape().to_vec());
                }
                let x = if complex_input { x } else { complexify(&x)? };
                let x = resize(&x, &dims, &sizes)?;
                if dims.is_empty() {
                    return Ok(x);
                }
                x.fft_c2c(&dims, scale(&sizes), forward)
            }
            FftFn::Rfft => resize(&x, &dims, &sizes)?.fft_r2c(&dims, scale(&sizes), true),
            FftFn::Ihfft => {
                let x = resize(&x, &dims, &sizes)?;
                let (last, rest) = split_last(&dims);
                let (slast, srest) = split_last(&sizes);
                let half = x.fft_r2c(&[last], norm.scale(false, slast), true)?;
                if rest.is_empty() {
                    return half.conj();
                }
                half.conj_with(true)?.fft_c2c(rest, norm.scale(false, srest.iter().product()), false)
            }
            FftFn::Irfft | FftFn::Hfft => {
                let x = if complex_input { x } else { complexify(&x)? };
                // `sizes` ends with the real output length; the input keeps n / 2 + 1 there.
                let (last, rest) = split_last(&dims);
                let n = sizes[sizes.len() - 1];
                let k = sizes.len() - 1;
                let mut in_sizes = sizes.clone();
                in_sizes[k] = n / 2 + 1;
                let x = resize(&x, &dims, &in_sizes)?;
                if f == FftFn::Irfft {
                    return x.fft_c2r(&dims, scale(&sizes), n);
                }
                let x = if rest.is_empty() { x } else { x.fft_c2c(rest, norm.scale(true, sizes[..k].iter().product()), true)? };
                x.conj()?.fft_c2r(&[last], norm.scale(true, n), n)
            }
        }
    }
}

fn split_last<T: Copy>(v: &[T]) -> (T, &[T]) {
    (v[v.len() - 1], &v[..v.len() - 1])
}

/// PyTorch's resolution of `n`/`s` and `dim` for a call of `f` in the form
/// `rank` on a (complex) shape: the transformed dims and the signal length
/// along each (for C2R functions the last is the real output length).
fn fft_dims(shape: &[usize], rank: FftRank, f: FftFn, s: Option<&[i64]>, dim: Option<&[i64]>) -> Result<(Vec<usize>, Vec<usize>)> {
    let nd = shape.len();
    let c2r = matches!(f, FftFn::Irfft | FftFn::Hfft);
    let points = |v: i64| -> Result<usize> {
        if v < 1 {
            Err(Error::runtime(format!("Invalid number of data points ({v}) specified")))
        } else {
            Ok(v as usize)
        }
    };
    if rank == FftRank::One {
        let d = wrap_dim_no_scalar(dim.and_then(|d| d.first().copied()).unwrap_or(-1), nd)?;
        let n = match s.and_then(|s| s.first().copied()) {
            Some(n) => points(n)?,
            None if c2r => points(2 * (shape[d] as i64 - 1))?,
            None => points(shape[d] as i64)?,
        };
        return Ok((vec![d], vec![n]));
    }
    let default_dims: Vec<i64>;
    let dim = match (rank, dim) {
        (_, Some(d)) => Some(d),
        (FftRank::Two, None) => {
            default_dims = vec![-2, -1];
            Some(default_dims.as_slice())
        }
        _ => None,
    };
    let dims: Vec<usize> = match (dim, s) {
        (Some(d), _) => {
            let w = d.iter().map(|&v| wrap_dim(v, nd)).collect::<Result<Vec<_>>>()?;
            if (1..w.len()).any(|i| w[..i].contains(&w[i])) {
                return Err(Error::runtime("FFT dims must be unique"));
            }
            w
        }
        (None, Some(s)) => {
            if s.len() > nd {
                return Err(Error::runtime(format!("Got shape with {} values but input tensor only has {nd} dimensions.", s.len())));
            }
            (nd - s.len()..nd).collect()
        }
        (None, None) => (0..nd).collect(),
    };
    if let (Some(s), Some(_)) = (s, dim) {
        if s.len() != dims.len() {
            return Err(Error::runtime("When given, dim and shape arguments must have the same length"));
        }
    }
    if dims.is_empty() && f != FftFn::Fft && f != FftFn::Ifft {
        return Err(Error::runtime(format!("{} must transform at least one axis", f.name(FftRank::N))));
    }
    let mut sizes = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        let given = s.map(|s| s[i]).filter(|&v| v != -1);
        let last = i + 1 == dims.len();
        sizes.push(match given {
            Some(v) => points(v)?,
            None if c2r && last => points(2 * (shape[d] as i64 - 1))?,
            None => points(shape[d] as i64)?,
        });
    }
    Ok((dims, sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f64], forward: bool) -> Vec<(f64, f64)> {
        let n = x.len() / 2;
        let sign = if forward { -1.0 } else { 1.0 };
        (0..n)
            .map(|k| {
                (0..n).fold((0.0, 0.0), |(re, im), j| {
                    let th = sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                    let (a, b) = (x[2 * j], x[2 * j + 1]);
                    (re + a * th.cos() - b * th.sin(), im + a * th.sin() + b * th.cos())
                })
            })
            .collect()
    }

    #[test]
    fn fft_of_a_complex_signal_matches_the_naive_dft_and_pads() {
        let v: Vec<f64> = (0..10).map(|i| (i as f64 * 0.7).sin()).collect();
        let x = Tensor::from_vec(v.clone(), &[5, 2]).unwrap().view_as_complex().unwrap();
        let y = x.fft_fn(FftFn::Fft, FftRank::One, Some(&[7]), None, None).unwrap();
        assert_eq!(y.shape(), &[7]);
        let y = y.view_as_real().unwrap();
        let mut padded = v.clone();
        padded.extend([0.0; 4]);
        let want = naive(&padded, true);
        for (g, w) in y.to_f64_vec().unwrap().chunks(2).zip(want) {
            assert!((g[0] - w.0).abs() < 1e-12 && (g[1] - w.1).abs() < 1e-12);
        }
    }

    #[test]
    fn the_dims_and_lengths_follow_pytorch() {
        assert_eq!(fft_dims(&[3, 4], FftRank::N, FftFn::Fft, Some(&[5]), None).unwrap(), (vec![1], vec![5]));
        assert_eq!(fft_dims(&[3, 4], FftRank::Two, FftFn::Irfft, None, None).unwrap(), (vec![0, 1], vec![3, 6]));
        assert_eq!(fft_dims(&[3, 4], FftRank::N, FftFn::Fft, Some(&[-1, 2]), Some(&[1, 0])).unwrap(), (vec![1, 0], vec![4, 2]));
        assert!(fft_dims(&[3, 4], FftRank::N, FftFn::Fft, None, Some(&[1, -1])).is_err());
        assert!(fft_dims(&[3, 4], FftRank::N, FftFn::Fft, Some(&[1, 2, 3]), None).is_err());
        assert!(fft_dims(&[1], FftRank::One, FftFn::Irfft, None, None).is_err());
    }
}
