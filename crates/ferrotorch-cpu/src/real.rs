//! Scalar math shared by the CPU's elementwise kernels: the compute type of each
//! floating dtype (halves compute in `f32`, as PyTorch does) and the special
//! functions the standard library lacks (`erf`, `erfc`, `erfinv`).

use ferrotorch_core::Element;
use half::{bf16, f16};
use num_traits::Float as NFloat;

/// A native floating type a kernel computes in (`f32` or `f64`).
pub trait Real: NFloat + Send + Sync + std::fmt::Debug + 'static {
    /// The constant `v` in this type.
    fn c(v: f64) -> Self;
    /// Widened to `f64`.
    fn f(self) -> f64;
    /// The error function.
    fn erf(self) -> Self;
    /// The complementary error function.
    fn erfc(self) -> Self;
    /// The inverse error function.
    fn erfinv(self) -> Self;
}

impl Real for f32 {
    #[inline(always)]
    fn c(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn f(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn erf(self) -> Self {
        libm::erff(self)
    }
    #[inline(always)]
    fn erfc(self) -> Self {
        libm::erfcf(self)
    }
    #[inline(always)]
    fn erfinv(self) -> Self {
        erfinv_f64(self as f64) as f32
    }
}

impl Real for f64 {
    #[inline(always)]
    fn c(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn f(self) -> f64 {
        self
    }
    #[inline(always)]
    fn erf(self) -> Self {
        libm::erf(self)
    }
    #[inline(always)]
    fn erfc(self) -> Self {
        libm::erfc(self)
    }
    #[inline(always)]
    fn erfinv(self) -> Self {
        erfinv_f64(self)
    }
}

/// A floating storage type and the type its math runs in.
pub trait Compute: Element {
    /// The compute type.
    type C: Real;
    /// Widens to the compute type.
    fn up(self) -> Self::C;
    /// Rounds back to the storage type.
    fn down(c: Self::C) -> Self;
}

/// Native floats compute in themselves.
macro_rules! compute_native {
    ($($t:ty),*) => {$(
        impl Compute for $t {
            type C = $t;
            #[inline(always)]
            fn up(self) -> $t {
                self
            }
            #[inline(always)]
            fn down(c: $t) -> Self {
                c
            }
        }
    )*};
}
compute_native!(f32, f64);

/// Half types compute in `f32` and round once on the way back.
macro_rules! compute_half {
    ($($t:ty),*) => {$(
        impl Compute for $t {
            type C = f32;
            #[inline(always)]
            fn up(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn down(c: f32) -> Self {
                <$t>::from_f32(c)
            }
        }
    )*};
}
compute_half!(f16, bf16);

/// Runs `$body` with `$T` bound to a floating storage type; other dtypes give
/// PyTorch's `NotImplementedError` ("\"op_cpu\" not implemented for 'Long'").
#[macro_export]
macro_rules! real_dispatch {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {
        match $dtype {
            ferrotorch_core::DType::Float16 => {
                type $T = half::f16;
                $body
            }
            ferrotorch_core::DType::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            ferrotorch_core::DType::Float32 => {
                type $T = f32;
                $body
            }
            ferrotorch_core::DType::Float64 => {
                type $T = f64;
                $body
            }
            other => return Err($crate::real::not_impl($op, other)),
        }
    };
}

/// PyTorch's "\"op_cpu\" not implemented for 'Long'" error.
pub fn not_impl(op: &str, dtype: ferrotorch_core::DType) -> ferrotorch_core::Error {
    ferrotorch_core::Error::not_implemented(format!("\"{op}_cpu\" not implemented for '{}'", ferrotorch_core::dtype::pretty(dtype)))
}

/// Inverse error function: Giles' single-precision approximation refined by
/// two Newton steps on `erf`, which gives full double precision.
pub fn erfinv_f64(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 {
        return f64::INFINITY;
    }
    if y == -1.0 {
        return f64::NEG_INFINITY;
    }
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let mut p = 2.810_226_36e-08;
        for c in [3.432_739_39e-07, -3.523_387_7e-06, -4.391_506_54e-06, 0.000_218_580_87, -0.001_253_725_03, -0.004_177_681_64, 0.246_640_727, 1.501_409_41] {
            p = c + p * w;
        }
        p * y
    } else {
        let w = w.sqrt() - 3.0;
        let mut p = -0.000_200_214_257;
        for c in [0.000_100_950_558, 0.001_349_343_22, -0.003_673_428_44, 0.005_739_507_73, -0.007_622_461_3, 0.009_438_870_47, 1.001_674_06, 2.832_976_82] {
            p = c + p * w;
        }
        p * y
    };
    // Newton: x -= (erf(x) - y) / erf'(x), erf'(x) = 2/sqrt(pi) e^{-x^2}.
    for _ in 0..2 {
        let err = libm::erf(x) - y;
        x -= err / (std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp());
    }
    x
}

#[cfg(test)]
mod tests {
    #[test]
    fn erfinv_inverts_erf() {
        for &v in &[-0.999, -0.5, -1e-9, 0.0, 0.3, 0.9, 0.999_999] {
            let x = super::erfinv_f64(v);
            assert!((libm::erf(x) - v).abs() < 1e-15, "{v}");
        }
    }
}
