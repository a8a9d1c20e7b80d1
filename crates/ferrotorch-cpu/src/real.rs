//! Scalar math shared by the CPU's elementwise kernels: the compute type of each
//! floating dtype (halves compute in `f32`, as PyTorch does), with the special
//! functions the standard library lacks (`erf`, `erfc`, `erfinv`) taken from the
//! vectorised kernels' own scalar forms, so every path computes them alike.

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
        crate::simd::math::erf::<f32>(self)
    }
    #[inline(always)]
    fn erfc(self) -> Self {
        crate::simd::math::erfc::<f32>(self)
    }
    #[inline(always)]
    fn erfinv(self) -> Self {
        crate::unary::erfinv(self as f64) as f32
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
        crate::unary::erf(self)
    }
    #[inline(always)]
    fn erfc(self) -> Self {
        crate::unary::erfc(self)
    }
    #[inline(always)]
    fn erfinv(self) -> Self {
        crate::unary::erfinv(self)
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

pub use ferrotorch_core::dtype::not_impl;
