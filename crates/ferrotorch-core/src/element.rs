//! The Rust types behind each [`DType`] and the one dispatch macro that turns a
//! runtime dtype into a monomorphised kernel call.

use crate::dtype::DType;
use half::{bf16, f16};

/// A Rust type that can be stored in a tensor.
pub trait Element: Copy + Send + Sync + PartialEq + PartialOrd + std::fmt::Debug + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
    /// Widens to `f64` (exact for every type except `i64` above 2^53).
    fn to_f64(self) -> f64;
    /// Narrows from `f64`: ints truncate as PyTorch's `static_cast` does on
    /// x86 (see [`f64_to_i64_x86`]); f16/bf16 round through f32 as PyTorch does. Inside `dispatch_dtype!`
    /// bodies, where `T` names the concrete type, write `<T as Element>::from_f64`:
    /// `half`'s inherent `from_f64` would win and rounds differently.
    fn from_f64(v: f64) -> Self;
    /// Converts to `i64` (floats truncate).
    fn to_i64(self) -> i64;
    /// Converts from `i64` with wrapping for narrower ints, as C casts do.
    fn from_i64(v: i64) -> Self;
    /// Additive identity.
    fn zero() -> Self;
    /// Multiplicative identity.
    fn one() -> Self;
    /// The conversion of a float32 tensor element (`t.to(dtype)` from
    /// float32); the same as [`Element::from_f64`] except where PyTorch's
    /// float32 conversion kernel differs (bfloat16's NaN).
    #[inline(always)]
    fn from_f32_cast(v: f32) -> Self {
        Self::from_f64(v as f64)
    }
}

macro_rules! int_element {
    ($t:ty, $dt:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                // C compilers convert to the narrow ints through a 32-bit
                // conversion and keep the low bits (-1.0 -> uint8 is 255);
                // PyTorch converts to uint8 through int64 (c10's
                // static_cast_with_inter_type), so a double beyond the int32
                // range keeps its low byte (-6.884109383462684e16 -> 232).
                if std::mem::size_of::<$t>() == 8 || $dt == DType::UInt8 {
                    f64_to_i64_x86(v) as $t
                } else {
                    f64_to_i32_x86(v) as $t
                }
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn zero() -> Self {
                0
            }
            #[inline(always)]
            fn one() -> Self {
                1
            }
        }
    };
}
int_element!(u8, DType::UInt8);
int_element!(i8, DType::Int8);
int_element!(i16, DType::Int16);
int_element!(i32, DType::Int32);
int_element!(i64, DType::Int64);

macro_rules! float_element {
    ($t:ty, $dt:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                f64_to_i64_x86(self as f64)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
        }
    };
}
float_element!(f32, DType::Float32);
float_element!(f64, DType::Float64);

macro_rules! half_element {
    ($t:ty, $dt:expr, $nan_all_ones:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
            /// Rounds through f32 first, as PyTorch's `Half`/`BFloat16`
            /// constructors do (a double rounding that can differ from a
            /// direct f64 rounding in the last bit).
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::from_f32(v as f32)
            }
            /// A NaN becomes bfloat16's all-ones pattern 0xFFFF (sign set),
            /// as PyTorch's float32-to-bfloat16 conversion (`cvtfp32_bf16`,
            /// used for tensors of any length) writes it: `copysign(x,
            /// t.to(bfloat16))` then sees a negative NaN.
            #[inline(always)]
            fn from_f32_cast(v: f32) -> Self {
                if $nan_all_ones && v.is_nan() {
                    return <$t>::from_bits(0xFFFF);
                }
                <$t>::from_f32(v)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                f64_to_i64_x86(self.to_f64())
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::from_f32(v as f32)
            }
            #[inline(always)]
            fn zero() -> Self {
                <$t>::ZERO
            }
            #[inline(always)]
            fn one() -> Self {
                <$t>::ONE
            }
        }
    };
}
half_element!(f16, DType::Float16, false);
half_element!(bf16, DType::BFloat16, true);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn zero() -> Self {
        false
    }
    #[inline(always)]
    fn one() -> Self {
        true
    }
}

/// Float to `int64` truncation as PyTorch's CPU kernels do it on x86
/// (`cvttsd2si`): NaN, infinities and values outside the range give
/// `i64::MIN`, the "integer indefinite" value. C leaves these conversions
/// undefined; this is what PyTorch deterministically produces on x86.
#[inline(always)]
pub fn f64_to_i64_x86(v: f64) -> i64 {
    // 2^63 is exact in f64; the range check also rejects NaN.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// Float to `int32` truncation as on x86: out of range or NaN gives
/// `i32::MIN`. The narrower ints keep the low bits of this result.
#[inline(always)]
pub fn f64_to_i32_x86(v: f64) -> i32 {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// Converts between element types the way PyTorch's casts do: float → int via
/// truncation, anything → bool via `!= 0`, ints between each other wrapping.
#[inline(always)]
pub fn cast<S: Element, D: Element>(v: S) -> D {
    if S::DTYPE.is_floating_point() || D::DTYPE.is_floating_point() || D::DTYPE == DType::Bool {
        if D::DTYPE == DType::Bool {
            return D::from_f64(if v.to_f64() != 0.0 || v.to_f64().is_nan() { 1.0 } else { 0.0 });
        }
        if S::DTYPE == DType::Float32 {
            return D::from_f32_cast(v.to_f64() as f32);
        }
        D::from_f64(v.to_f64())
    } else {
        D::from_i64(v.to_i64())
    }
}

/// Runs `$body` with `$T` bound to the Rust type of the real `$dtype`
/// (complex dtypes go through [`dispatch_complex!`](crate::dispatch_complex)).
///
/// ```ignore
/// dispatch_dtype!(dtype, T => fill::<T>(ptr, n, value))
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::UInt8 => {
                type $T = u8;
                $body
            }
            $crate::DType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DType::Float16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BFloat16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            d @ ($crate::DType::Complex64 | $crate::DType::Complex128) => $crate::complex::complex_in_real_dispatch(d),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Element;
    use half::{bf16, f16};

    /// f64 -> f16/bf16 rounds through f32 (PyTorch's rule): a value just
    /// above a half-way point loses its tail in f32 and then ties to even.
    #[test]
    fn half_from_f64_rounds_through_f32() {
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(<f16 as Element>::from_f64(v), f16::ONE);
        let w = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(<bf16 as Element>::from_f64(w), bf16::ONE);
        assert_eq!(<f16 as Element>::from_i64(2049), f16::from_f32(2048.0));
    }
}
