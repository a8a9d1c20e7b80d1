//! Descriptions of the discrete Fourier transforms, shared by the op layer
//! (which pads or trims the signal, picks the dims and the normalisation)
//! and every backend's [`FftKernels`](crate::backend::FftKernels).
//!
//! The three kinds are PyTorch's primitives (`_fft_c2c`, `_fft_r2c`,
//! `_fft_c2r`); every `torch.fft` function is one of them plus padding,
//! trimming or a conjugation. A complex operand is passed to a kernel with
//! its layout in *complex elements* (sizes, strides and offset count
//! `(re, im)` pairs, which lie interleaved in memory), and `dtype` names the
//! real precision (float32 or float64) of both parts.

use crate::error::{Error, Result};
use crate::layout::{fmt_shape, Layout};
use smallvec::SmallVec;

/// Which of the three transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftKind {
    /// Complex input, complex output of the same shape.
    C2C,
    /// Real input, complex output. With `onesided` the last transformed dim
    /// of the output keeps only the `n / 2 + 1` non-redundant frequencies
    /// (the rest follow by Hermitian symmetry); without it the output has
    /// the input's shape.
    R2C {
        /// Keep only frequencies `0..=n/2` of the last transformed dim.
        onesided: bool,
    },
    /// A Hermitian-symmetric spectrum, given by its `n / 2 + 1` non-redundant
    /// frequencies along the last transformed dim, to a real signal of `n`
    /// samples there. The imaginary parts of frequency 0 (and of `n / 2` for
    /// even `n`) are ignored, as any real signal's spectrum has them zero.
    C2R,
}

/// One batched multi-dimensional discrete Fourier transform:
/// `out[k] = scale · Σ_j x[j] · exp(∓2πi Σ_d j_d k_d / n_d)` over `dims`,
/// with `-` when `forward`, independently for every index of the other dims.
#[derive(Clone, Debug, PartialEq)]
pub struct FftSpec {
    /// The transform.
    pub kind: FftKind,
    /// The sign of the exponent: `exp(-2πi jk/n)` (forward) or `exp(+2πi jk/n)`.
    pub forward: bool,
    /// The transformed dims, distinct, in the operands' dim numbering. For
    /// [`FftKind::R2C`] and [`FftKind::C2R`] the last one is the halved dim.
    pub dims: SmallVec<[usize; 4]>,
    /// The signal length `n_d` of each of `dims` (the real length of the
    /// halved dim), so that a backend can check the operands against it.
    pub lengths: SmallVec<[usize; 4]>,
    /// The factor every output element is multiplied by (1, `1/√N` or
    /// `1/N` for PyTorch's norm modes, `N` the product of `lengths`).
    pub scale: f64,
}

/// PyTorch's `norm=` argument of the `torch.fft` functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftNorm {
    /// No scaling forward, `1/n` backward (`"backward"`, the default).
    Backward,
    /// `1/√n` both ways (`"ortho"`).
    Ortho,
    /// `1/n` forward, none backward (`"forward"`).
    Forward,
}

impl FftNorm {
    /// Parses `norm=` (`None` is `"backward"`), with PyTorch's error for
    /// anything else.
    pub fn parse(norm: Option<&str>) -> Result<FftNorm> {
        match norm {
            None | Some("backward") => Ok(FftNorm::Backward),
            Some("ortho") => Ok(FftNorm::Ortho),
            Some("forward") => Ok(FftNorm::Forward),
            Some(other) => Err(Error::runtime(format!("Invalid normalization mode: \"{other}\""))),
        }
    }

    /// The factor a transform over signals of `numel` points applies in the
    /// given direction: the forward one scales by `1/n` in `"forward"` mode,
    /// the inverse one in `"backward"` mode, both by `1/√n` in `"ortho"`.
    pub fn scale(self, forward: bool, numel: usize) -> f64 {
        let n = numel.max(1) as f64;
        match (self, forward) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Forward, true) | (FftNorm::Backward, false) => 1.0 / n,
            _ => 1.0,
        }
    }
}

impl FftSpec {
    /// The output's sizes along `dims` for an input of `in_shape`, and
    /// whether the operands described by `x` and `out` fit this spec: every
    /// dim not transformed agrees, and the transformed ones are
    /// `lengths` (in the halved dim: `n / 2 + 1` on the complex side, or `n`
    /// for a two-sided R2C). An error names both shapes.
    pub fn check(&self, x: &Layout, out: &Layout) -> Result<()> {
        let bad = || {
            Error::runtime(format!(
                "fft: operands of shapes {} and {} do not fit a {:?} transform of lengths {:?} over dims {:?}",
                fmt_shape(&x.shape),
                fmt_shape(&out.shape),
                self.kind,
                self.lengths.as_slice(),
                self.dims.as_slice()
            ))
        };
        if x.shape.len() != out.shape.len() || self.dims.len() != self.lengths.len() || self.dims.is_empty() {
            return Err(bad());
        }
        let nd = x.shape.len();
        let mut seen = SmallVec::<[bool; 8]>::from_elem(false, nd);
        for &d in &self.dims {
            if d >= nd || seen[d] {
                return Err(bad());
            }
            seen[d] = true;
        }
        for d in 0..nd {
            if !seen[d] && x.shape[d] != out.shape[d] {
                return Err(bad());
            }
        }
        let last = self.dims.len() - 1;
        for (i, (&d, &n)) in self.dims.iter().zip(&self.lengths).enumerate() {
            let (want_x, want_out) = match self.kind {
                FftKind::R2C { onesided: true } if i == last => (n, n / 2 + 1),
                FftKind::C2R if i == last => (n / 2 + 1, n),
                _ => (n, n),
            };
            if x.shape[d] != want_x || out.shape[d] != want_out {
                return Err(bad());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smallvec::smallvec;

    #[test]
    fn norm_scales_follow_pytorch_modes() {
        assert_eq!(FftNorm::parse(None).unwrap(), FftNorm::Backward);
        assert_eq!(FftNorm::Backward.scale(true, 8), 1.0);
        assert_eq!(FftNorm::Backward.scale(false, 8), 0.125);
        assert_eq!(FftNorm::Forward.scale(true, 8), 0.125);
        assert_eq!(FftNorm::Forward.scale(false, 8), 1.0);
        assert_eq!(FftNorm::Ortho.scale(false, 16), 0.25);
        assert!(FftNorm::parse(Some("bogus")).is_err());
    }

    #[test]
    fn check_accepts_halved_dims_and_rejects_mismatches() {
        let spec = FftSpec { kind: FftKind::R2C { onesided: true }, forward: true, dims: smallvec![0, 2], lengths: smallvec![3, 8], scale: 1.0 };
        let x = Layout::contiguous(&[3, 2, 8]);
        assert!(spec.check(&x, &Layout::contiguous(&[3, 2, 5])).is_ok());
        assert!(spec.check(&x, &Layout::contiguous(&[3, 2, 8])).is_err());
        assert!(spec.check(&x, &Layout::contiguous(&[3, 1, 5])).is_err());
        let c2r = FftSpec { kind: FftKind::C2R, forward: false, dims: smallvec![1], lengths: smallvec![7], scale: 1.0 };
        assert!(c2r.check(&Layout::contiguous(&[2, 4]), &Layout::contiguous(&[2, 7])).is_ok());
        assert!(c2r.check(&Layout::contiguous(&[2, 5]), &Layout::contiguous(&[2, 7])).is_err());
    }
}
