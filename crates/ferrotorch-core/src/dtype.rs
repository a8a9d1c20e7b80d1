//! Element types and PyTorch's type-promotion rules (`promote_types`,
//! `result_type`, `can_cast`), kept in this one place.

use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::fmt;

/// The element type of a tensor. A closed set: kernels dispatch on it once per op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `torch.bool`
    Bool,
    /// `torch.uint8`
    UInt8,
    /// `torch.int8`
    Int8,
    /// `torch.int16`
    Int16,
    /// `torch.int32`
    Int32,
    /// `torch.int64`
    Int64,
    /// `torch.float16`
    Float16,
    /// `torch.bfloat16`
    BFloat16,
    /// `torch.float32`
    Float32,
    /// `torch.float64`
    Float64,
    /// `torch.complex64` (`cfloat`): two float32, real part first.
    Complex64,
    /// `torch.complex128` (`cdouble`): two float64, real part first.
    Complex128,
}

impl DType {
    /// Every dtype, in a stable order.
    pub const ALL: [DType; 12] = [
        DType::Bool,
        DType::UInt8,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    /// Bytes per element.
    pub const fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::UInt8 | DType::Int8 => 1,
            DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::Float32 => 4,
            DType::Int64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// `torch.complex64.is_complex`
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// `dtype.to_real()`: the type of a complex dtype's parts; real dtypes map to themselves.
    pub const fn to_real(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    /// `dtype.to_complex()`: the complex type whose parts are this floating
    /// type (bfloat16's is complex64, as PyTorch's; float16's, complex32, is
    /// not provided).
    pub const fn to_complex(self) -> Option<DType> {
        match self {
            DType::Float32 | DType::BFloat16 | DType::Complex64 => Some(DType::Complex64),
            DType::Float64 | DType::Complex128 => Some(DType::Complex128),
            _ => None,
        }
    }

    /// `torch.float32.is_floating_point`
    pub const fn is_floating_point(self) -> bool {
        matches!(self, DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64)
    }

    /// Floating or complex: the dtypes gradients flow through (PyTorch's
    /// `isDifferentiableType`).
    pub const fn is_differentiable(self) -> bool {
        self.is_floating_point() || self.is_complex()
    }

    /// Integral types, bool excluded.
    pub const fn is_integral(self) -> bool {
        matches!(self, DType::UInt8 | DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64)
    }

    /// `torch.int8.is_signed`
    pub const fn is_signed(self) -> bool {
        !matches!(self, DType::Bool | DType::UInt8)
    }

    /// The PyTorch name without the `torch.` prefix, e.g. `"float32"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// Parses a dtype name, accepting PyTorch's aliases (`float`, `double`, `half`,
    /// `long`, `int`, `short`) and an optional `torch.` prefix.
    pub fn from_name(name: &str) -> Result<DType> {
        let n = name.strip_prefix("torch.").unwrap_or(name);
        Ok(match n {
            "bool" => DType::Bool,
            "uint8" => DType::UInt8,
            "int8" => DType::Int8,
            "int16" | "short" => DType::Int16,
            "int32" | "int" => DType::Int32,
            "int64" | "long" => DType::Int64,
            "float16" | "half" => DType::Float16,
            "bfloat16" => DType::BFloat16,
            "float32" | "float" => DType::Float32,
            "float64" | "double" => DType::Float64,
            "complex64" | "cfloat" => DType::Complex64,
            "complex128" | "cdouble" => DType::Complex128,
            _ => return Err(Error::type_error(format!("invalid dtype: '{name}'"))),
        })
    }

    /// 0 = bool, 1 = integral, 2 = floating, 3 = complex: the categories
    /// that decide whether a scalar operand may change the result type.
    pub const fn category(self) -> u8 {
        if self.is_complex() {
            3
        } else if self.is_floating_point() {
            2
        } else if self.is_integral() {
            1
        } else {
            0
        }
    }

    /// `torch.promote_types(a, b)`.
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        if a == b {
            return a;
        }
        if a.is_complex() || b.is_complex() {
            // The parts promote as reals: complex64 with float64 is complex128.
            let parts = DType::promote(a.to_real(), b.to_real());
            return parts.to_complex().unwrap_or(DType::Complex64);
        }
        match (a, b) {
            (Bool, x) | (x, Bool) => x,
            (Float16, BFloat16) | (BFloat16, Float16) => Float32,
            (x, y) if x.is_floating_point() && y.is_floating_point() => {
                if x.itemsize() >= y.itemsize() {
                    x
                } else {
                    y
                }
            }
            (x, y) if x.is_floating_point() => {
                let _ = y;
                x
            }
            (x, y) if y.is_floating_point() => {
                let _ = x;
                y
            }
            // Both integral from here on.
            (UInt8, Int8) | (Int8, UInt8) => Int16,
            (UInt8, x) | (x, UInt8) => x,
            (x, y) => {
                if x.itemsize() >= y.itemsize() {
                    x
                } else {
                    y
                }
            }
        }
    }

    /// `torch.can_cast(from, to)`: same-kind casting as PyTorch defines it.
    pub fn can_cast(from: DType, to: DType) -> bool {
        if from.is_complex() && !to.is_complex() {
            return false;
        }
        if from.is_floating_point() && !to.is_differentiable() {
            return false;
        }
        if from != DType::Bool && to == DType::Bool {
            return false;
        }
        true
    }
}

/// PyTorch's check that a Python number fits the dtype it is written into
/// (`full`, `fill_`): "value cannot be converted to type int8_t without
/// overflow". Integers may wrap into `uint8` from -255..=255 as in PyTorch
/// (negative floats may not); floats check the range (infinities and NaN pass only into floating types);
/// `bool` and `float64` accept anything. Like PyTorch's CPU fast path for a
/// single element, `float16`/`bfloat16` tensors of one element are not checked.
pub fn check_scalar_fits(value: Scalar, dtype: DType, numel: usize) -> Result<()> {
    use DType::*;
    let (lo, hi, cname): (f64, f64, &str) = match dtype {
        Bool | Float64 | Complex64 | Complex128 => return Ok(()),
        Float16 | BFloat16 if numel == 1 => return Ok(()),
        Float16 => (-65504.0, 65504.0, "c10::Half"),
        BFloat16 => (-3.3895313892515355e38, 3.3895313892515355e38, "c10::BFloat16"),
        UInt8 => (-255.0, 255.0, "uint8_t"),
        Int8 => (i8::MIN as f64, i8::MAX as f64, "int8_t"),
        Int16 => (i16::MIN as f64, i16::MAX as f64, "int16_t"),
        Int32 => (i32::MIN as f64, i32::MAX as f64, "int"),
        Int64 => (i64::MIN as f64, i64::MAX as f64, "int64_t"),
        Float32 => (f32::MIN as f64, f32::MAX as f64, "float"),
    };
    let fits = match value {
        Scalar::Bool(_) => true,
        // A complex number fits a real type only without an imaginary part
        // (PyTorch's `checked_convert` from `c10::complex<double>`).
        Scalar::Complex(_, im) if im != 0.0 => false,
        Scalar::Complex(re, _) => return check_scalar_fits(Scalar::Float(re), dtype, numel),
        _ if dtype.is_floating_point() => {
            let f = value.to_f64();
            !f.is_finite() || (lo..=hi).contains(&f)
        }
        Scalar::Int(i) => match dtype {
            UInt8 => (-255..=255).contains(&i),
            Int8 => i8::try_from(i).is_ok(),
            Int16 => i16::try_from(i).is_ok(),
            Int32 => i32::try_from(i).is_ok(),
            _ => true,
        },
        // PyTorch compares a float with the integer type's lowest and max in
        // double: negative floats never fit uint8 (ints may wrap, floats
        // not), and 2^63 (int64's max rounded) passes.
        Scalar::Float(f) if dtype == UInt8 => f.is_finite() && (0.0..=hi).contains(&f),
        Scalar::Float(f) => f.is_finite() && (lo..=hi).contains(&f),
    };
    if fits {
        Ok(())
    } else {
        Err(Error::runtime(format!("value cannot be converted to type {cname} without overflow")))
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

/// How an operand takes part in `result_type`: PyTorch lets zero-dim tensors and
/// Python scalars change the result only when they are of a higher category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandKind {
    /// A tensor with at least one dimension.
    Dim,
    /// A zero-dimensional tensor.
    ZeroDim,
    /// A Python number (its dtype already inferred, float as the default dtype).
    Scalar,
}

fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (None, l) => l,
        (Some(h), None) => Some(h),
        (Some(h), Some(_)) if h.is_complex() => Some(h),
        // A complex number or 0-d tensor makes a real operand complex,
        // keeping a floating operand's precision (float64 + 1j is complex128).
        (Some(h), Some(l)) if l.is_complex() => Some(if h.is_floating_point() { h.to_complex().unwrap_or(DType::Complex64) } else { l }),
        (Some(h), Some(l)) => {
            if h.is_floating_point() {
                Some(h)
            } else if h == DType::Bool || l.is_floating_point() {
                Some(DType::promote(h, l))
            } else {
                Some(h)
            }
        }
    }
}

/// `torch.result_type` over any mix of operands.
pub fn result_type(operands: &[(DType, OperandKind)]) -> Result<DType> {
    let mut groups: [Option<DType>; 3] = [None; 3];
    for &(dt, kind) in operands {
        let slot = &mut groups[kind as usize];
        *slot = Some(match *slot {
            None => dt,
            Some(cur) => DType::promote(cur, dt),
        });
    }
    let [dim, zero, scalar] = groups;
    combine_categories(dim, combine_categories(zero, scalar))
        .ok_or_else(|| Error::runtime("result_type needs at least one operand"))
}

/// PyTorch's `NotImplementedError` for a CPU kernel without `dtype`:
/// `"{op}_cpu" not implemented for '{dtype}'`.
pub fn not_impl(op: &str, dtype: DType) -> crate::Error {
    crate::Error::not_implemented(format!("\"{op}_cpu\" not implemented for '{}'", pretty(dtype)))
}

/// PyTorch's capitalised scalar-type names used in kernel errors (`'Long'`).
pub fn pretty(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "Bool",
        DType::UInt8 => "Byte",
        DType::Int8 => "Char",
        DType::Int16 => "Short",
        DType::Int32 => "Int",
        DType::Int64 => "Long",
        DType::Float16 => "Half",
        DType::BFloat16 => "BFloat16",
        DType::Float32 => "Float",
        DType::Float64 => "Double",
        DType::Complex64 => "ComplexFloat",
        DType::Complex128 => "ComplexDouble",
    }
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

    #[test]
    fn promotion_table_matches_pytorch() {
        assert_eq!(DType::promote(UInt8, Int8), Int16);
        assert_eq!(DType::promote(Bool, Int8), Int8);
        assert_eq!(DType::promote(Int32, Float16), Float16);
        assert_eq!(DType::promote(Float16, BFloat16), Float32);
        assert_eq!(DType::promote(Float32, Float64), Float64);
        assert_eq!(DType::promote(Int64, Float32), Float32);
        assert_eq!(DType::promote(UInt8, Int64), Int64);
    }

    #[test]
    fn scalars_only_win_across_categories() {
        let r = result_type(&[(Int32, OperandKind::Dim), (Int64, OperandKind::Scalar)]).unwrap();
        assert_eq!(r, Int32);
        let r = result_type(&[(Int32, OperandKind::Dim), (Float32, OperandKind::Scalar)]).unwrap();
        assert_eq!(r, Float32);
        let r = result_type(&[(Float16, OperandKind::Dim), (Float64, OperandKind::ZeroDim)]).unwrap();
        assert_eq!(r, Float16);
        let r = result_type(&[(Int8, OperandKind::Dim), (Float64, OperandKind::ZeroDim)]).unwrap();
        assert_eq!(r, Float64);
        let r = result_type(&[(Bool, OperandKind::Dim), (Int64, OperandKind::Scalar)]).unwrap();
        assert_eq!(r, Int64);
    }

    /// Expected values from `torch.promote_types`/`torch.result_type` (PyTorch 2.13).
    #[test]
    fn complex_promotion_matches_pytorch() {
        assert_eq!(DType::promote(Complex64, Float64), Complex128);
        assert_eq!(DType::promote(Complex64, Int64), Complex64);
        assert_eq!(DType::promote(BFloat16, Complex64), Complex64);
        assert_eq!(DType::promote(Complex128, Complex64), Complex128);
        let r = result_type(&[(Float64, OperandKind::Dim), (Complex64, OperandKind::Scalar)]).unwrap();
        assert_eq!(r, Complex128);
        let r = result_type(&[(Int32, OperandKind::Dim), (Complex64, OperandKind::ZeroDim)]).unwrap();
        assert_eq!(r, Complex64);
        let r = result_type(&[(Complex64, OperandKind::Dim), (Float64, OperandKind::ZeroDim)]).unwrap();
        assert_eq!(r, Complex64);
        assert!(!DType::can_cast(Complex64, Float64));
        assert!(DType::can_cast(Float64, Complex64));
    }

    #[test]
    fn can_cast_rules() {
        assert!(!DType::can_cast(Float32, Int32));
        assert!(DType::can_cast(Int32, Float16));
        assert!(!DType::can_cast(Int8, Bool));
        assert!(DType::can_cast(Bool, UInt8));
    }
}
