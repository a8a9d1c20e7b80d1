//! Generic elementwise loops (unary and binary maps) and the arithmetic traits
//! that give every dtype PyTorch's semantics (wrapping ints, bool as logical).

use crate::iter::Plan;
use crate::{at, at_mut, Dst, Src};
use ferrotorch_core::Element;
use half::{bf16, f16};

/// Arithmetic with PyTorch's per-dtype semantics.
pub trait Num: Element {
    /// `a + b` (ints wrap, bool is logical or).
    fn add(self, o: Self) -> Self;
    /// `a - b`.
    fn sub(self, o: Self) -> Self;
    /// `a * b` (bool is logical and).
    fn mul(self, o: Self) -> Self;
    /// `-a`.
    fn neg(self) -> Self;
    /// `|a|`.
    fn abs(self) -> Self;
}

/// Floating-point math, computed natively for f32/f64 and through f32 for halves.
pub trait Float: Num {
    /// Widen to the compute type.
    fn to_f32x(self) -> f64;
    /// Apply an f64 function (used for half types and rare ops).
    fn map_f64(self, f: impl Fn(f64) -> f64) -> Self;
    /// `a / b`.
    fn div(self, o: Self) -> Self;
    /// `e^a`.
    fn exp(self) -> Self;
    /// `ln a`.
    fn ln(self) -> Self;
    /// `sqrt a`.
    fn sqrt(self) -> Self;
    /// `tanh a`.
    fn tanh(self) -> Self;
    /// `a^b`.
    fn powf(self, o: Self) -> Self;
}

macro_rules! int_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline(always)] fn abs(self) -> Self { if self.to_i64() < 0 { self.neg() } else { self } }
        }
    )*};
}
int_num!(u8, i8, i16, i32, i64);

impl Num for bool {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self
    }
}

macro_rules! float_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn abs(self) -> Self { <$t>::abs(self) }
        }
        impl Float for $t {
            #[inline(always)] fn to_f32x(self) -> f64 { self as f64 }
            #[inline(always)] fn map_f64(self, f: impl Fn(f64) -> f64) -> Self { f(self as f64) as $t }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
            #[inline(always)] fn exp(self) -> Self { <$t>::exp(self) }
            #[inline(always)] fn ln(self) -> Self { <$t>::ln(self) }
            #[inline(always)] fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline(always)] fn tanh(self) -> Self { <$t>::tanh(self) }
            #[inline(always)] fn powf(self, o: Self) -> Self { <$t>::powf(self, o) }
        }
    )*};
}
float_num!(f32, f64);

macro_rules! half_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            #[inline(always)] fn sub(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() - o.to_f32()) }
            #[inline(always)] fn mul(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn abs(self) -> Self { <$t>::from_f32(self.to_f32().abs()) }
        }
        impl Float for $t {
            #[inline(always)] fn to_f32x(self) -> f64 { self.to_f64() }
            #[inline(always)] fn map_f64(self, f: impl Fn(f64) -> f64) -> Self { <$t as Element>::from_f64(f(self.to_f64())) }
            #[inline(always)] fn div(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() / o.to_f32()) }
            #[inline(always)] fn exp(self) -> Self { <$t>::from_f32(self.to_f32().exp()) }
            #[inline(always)] fn ln(self) -> Self { <$t>::from_f32(self.to_f32().ln()) }
            #[inline(always)] fn sqrt(self) -> Self { <$t>::from_f32(self.to_f32().sqrt()) }
            #[inline(always)] fn tanh(self) -> Self { <$t>::from_f32(self.to_f32().tanh()) }
            #[inline(always)] fn powf(self, o: Self) -> Self { <$t>::from_f32(self.to_f32().powf(o.to_f32())) }
        }
    )*};
}
half_num!(f16, bf16);

/// `out[i] = f(a[i])` over broadcast-compatible layouts (a already broadcast to out's shape).
pub fn unary<A: Element, O: Element>(out: Dst, a: Src, f: impl Fn(A) -> O + Sync) {
    let plan = Plan::<2>::new(
        &out.layout.shape,
        [&out.layout.strides, &a.layout.strides],
        [out.layout.offset, a.layout.offset],
    );
    let (ob, ab) = (out.base as usize, a.base as usize);
    plan.for_each_par(|off, n, st| {
        // SAFETY: offsets come from the plan over layouts that fit their storages;
        // the op layer guarantees `out` does not partially overlap `a`.
        unsafe {
            let o = at_mut::<O>(ob as *mut u8, off[0]);
            let x = at::<A>(ab as *const u8, off[1]);
            if st == [1, 1] {
                for i in 0..n {
                    *o.add(i) = f(*x.add(i));
                }
            } else {
                for i in 0..n as isize {
                    *o.offset(i * st[0]) = f(*x.offset(i * st[1]));
                }
            }
        }
    });
}

/// `out[i] = f(a[i], b[i])`; `a` and `b` already broadcast to out's shape.
pub fn binary<A: Element, B: Element, O: Element>(out: Dst, a: Src, b: Src, f: impl Fn(A, B) -> O + Sync) {
    let plan = Plan::<3>::new(
        &out.layout.shape,
        [&out.layout.strides, &a.layout.strides, &b.layout.strides],
        [out.layout.offset, a.layout.offset, b.layout.offset],
    );
    let (ob, ab, bb) = (out.base as usize, a.base as usize, b.base as usize);
    plan.for_each_par(|off, n, st| {
        // SAFETY: as in `unary`.
        unsafe {
            let o = at_mut::<O>(ob as *mut u8, off[0]);
            let x = at::<A>(ab as *const u8, off[1]);
            let y = at::<B>(bb as *const u8, off[2]);
            match st {
                // Separate loops let the compiler vectorise the common layouts.
                [1, 1, 1] => {
                    for i in 0..n {
                        *o.add(i) = f(*x.add(i), *y.add(i));
                    }
                }
                [1, 1, 0] => {
                    let yv = *y;
                    for i in 0..n {
                        *o.add(i) = f(*x.add(i), yv);
                    }
                }
                [1, 0, 1] => {
                    let xv = *x;
                    for i in 0..n {
                        *o.add(i) = f(xv, *y.add(i));
                    }
                }
                _ => {
                    for i in 0..n as isize {
                        *o.offset(i * st[0]) = f(*x.offset(i * st[1]), *y.offset(i * st[2]));
                    }
                }
            }
        }
    });
}
