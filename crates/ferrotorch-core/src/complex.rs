//! The Rust types behind the complex dtypes and their dispatch macro.
//!
//! Complex numbers have no order, so they are not [`Element`](crate::Element)s
//! and never reach the real kernels of `dispatch_dtype!`: a backend routes
//! complex operands to its complex kernels (through [`dispatch_complex!`](crate::dispatch_complex))
//! or answers PyTorch's "not implemented for 'ComplexFloat'" error.

use crate::dtype::DType;
use num_complex::Complex;

/// `complex64`'s element: two `f32`, real part first (C's `float _Complex`).
pub type C32 = Complex<f32>;
/// `complex128`'s element: two `f64`, real part first.
pub type C64 = Complex<f64>;

/// A Rust complex type that can be stored in a tensor.
pub trait ComplexElement: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
    /// Widens to a pair of `f64` (exact).
    fn to_c64(self) -> C64;
    /// Narrows from a pair of `f64` (each part rounded).
    fn from_c64(v: C64) -> Self;
}

impl ComplexElement for C32 {
    const DTYPE: DType = DType::Complex64;
    #[inline(always)]
    fn to_c64(self) -> C64 {
        C64::new(self.re as f64, self.im as f64)
    }
    #[inline(always)]
    fn from_c64(v: C64) -> Self {
        C32::new(v.re as f32, v.im as f32)
    }
}

impl ComplexElement for C64 {
    const DTYPE: DType = DType::Complex128;
    #[inline(always)]
    fn to_c64(self) -> C64 {
        self
    }
    #[inline(always)]
    fn from_c64(v: C64) -> Self {
        v
    }
}

/// Runs `$body` with `$T` bound to the Rust type of the complex `$dtype`,
/// or evaluates `$other` for a real dtype.
///
/// ```ignore
/// dispatch_complex!(dtype, T => fill::<T>(ptr, n, value), else return Err(...))
/// ```
#[macro_export]
macro_rules! dispatch_complex {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            $crate::DType::Complex64 => {
                type $T = $crate::complex::C32;
                $body
            }
            $crate::DType::Complex128 => {
                type $T = $crate::complex::C64;
                $body
            }
            _ => $other,
        }
    };
}

/// Where a complex dtype reached a real kernel's dispatch: backends route
/// complex operands before dispatching, so this is a broken invariant of the
/// backend, never a user error.
#[cold]
pub fn complex_in_real_dispatch(dtype: DType) -> ! {
    panic!("internal error: {dtype} reached a real-only kernel dispatch (the backend must route complex dtypes first)")
}
