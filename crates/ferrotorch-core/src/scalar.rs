//! Python-like scalars: what `x + 1`, `x * 2.5` and `fill_(True)` carry.

use crate::dtype::DType;
use crate::element::{cast, Element};

/// A number not yet stored in a tensor; its kind decides type promotion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A Python `bool`.
    Bool(bool),
    /// A Python `int`.
    Int(i64),
    /// A Python `float`.
    Float(f64),
    /// A Python `complex`: real and imaginary parts.
    Complex(f64, f64),
}

impl Scalar {
    /// The value as `f64` (ints may lose precision above 2^53, as in PyTorch;
    /// a complex number gives its real part).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Complex(re, _) => re,
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
    /// The value as `i64` (floats truncate toward zero).
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(f) | Scalar::Complex(f, _) => f as i64,
        }
    }
    /// The value stored as element type `T`, converted as PyTorch's `fill_`
    /// does (a complex scalar gives its real part, as the real casts do).
    pub fn to_element<T: Element>(self) -> T {
        match self {
            Scalar::Bool(b) => cast::<bool, T>(b),
            Scalar::Int(i) => cast::<i64, T>(i),
            Scalar::Float(f) | Scalar::Complex(f, _) => cast::<f64, T>(f),
        }
    }
    /// Truthiness, as Python's `bool(x)`.
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }
    /// The dtype PyTorch infers for this Python scalar (`float` uses
    /// `default_float`, `complex` its complex counterpart).
    pub fn inferred_dtype(self, default_float: DType) -> DType {
        match self {
            Scalar::Complex(..) => default_float.to_complex().unwrap_or(DType::Complex64),
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::Int64,
            Scalar::Float(_) => default_float,
        }
    }
    /// Is this a floating-point scalar?
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float(_))
    }
    /// Is this a complex scalar?
    pub fn is_complex(self) -> bool {
        matches!(self, Scalar::Complex(..))
    }
    /// Real and imaginary parts (0 imaginary part for real scalars).
    pub fn to_c64(self) -> (f64, f64) {
        match self {
            Scalar::Complex(re, im) => (re, im),
            s => (s.to_f64(), 0.0),
        }
    }
}
