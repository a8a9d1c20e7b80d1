//! Runtime ISA selection and the small vector abstraction the fast kernels are
//! written against.
//!
//! Every vectorised algorithm (see the `math` module) is written once, generic over the
//! `Vf` trait, and instantiated for each instruction set: AVX-512F (16 × f32,
//! 8 × f64), AVX2+FMA (8 × f32, 4 × f64) and a portable scalar fallback where a
//! "vector" is a single `f32`/`f64`. The x86 instantiations live inside
//! `#[target_feature]` functions that are only called after
//! `is_x86_feature_detected!` confirmed the feature ([`isa`] caches the answer),
//! so one build runs at full speed on every CPU without `target-cpu=native`.
//!
//! `FERROTORCH_CPU_CAPABILITY=default|avx2|avx512` caps the level chosen (like
//! PyTorch's `ATEN_CPU_CAPABILITY`); it is read once, at the first kernel call.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub(crate) mod fold;
pub(crate) mod math;
pub(crate) mod stream;
pub(crate) mod sum;

/// An instruction-set level the kernels can run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// Portable scalar code (any CPU).
    Scalar = 1,
    /// AVX2 with FMA (x86-64, Haswell / Zen and later).
    Avx2 = 2,
    /// AVX-512 Foundation (x86-64, Skylake-SP / Zen 4 and later).
    Avx512 = 3,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Scalar, Isa::Avx2, Isa::Avx512];

    /// Does this CPU support the level?
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The name PyTorch's `torch.backends.cpu.get_cpu_capability()` would print.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "DEFAULT",
            Isa::Avx2 => "AVX2",
            Isa::Avx512 => "AVX512",
        }
    }
}

static ISA: AtomicU8 = AtomicU8::new(0);

fn detect() -> Isa {
    let cap = match std::env::var("FERROTORCH_CPU_CAPABILITY").ok().as_deref().map(str::to_ascii_lowercase) {
        Some(s) if s == "default" || s == "scalar" => Isa::Scalar,
        Some(s) if s == "avx2" => Isa::Avx2,
        _ => Isa::Avx512,
    };
    Isa::ALL.iter().rev().copied().find(|i| *i <= cap && i.is_supported()).unwrap_or(Isa::Scalar)
}

/// The instruction set the kernels use on this machine (detected once, cached).
#[inline]
pub fn isa() -> Isa {
    match ISA.load(Ordering::Relaxed) {
        1 => Isa::Scalar,
        2 => Isa::Avx2,
        3 => Isa::Avx512,
        _ => {
            let i = detect();
            ISA.store(i as u8, Ordering::Relaxed);
            i
        }
    }
}

/// A vector of `LANES` floats of type `E`, with the operations the math
/// kernels need. Comparisons return a mask type `M` consumed by [`Vf::select`].
///
/// `min`/`max` follow the x86 `minps`/`maxps` rule: `max(a, b) = if a > b { a } else { b }`
/// (so the *second* operand comes back when either is NaN); kernels order operands
/// to get PyTorch's NaN propagation.
///
/// Implementations for x86 types are only ever constructed inside functions
/// compiled with the matching `#[target_feature]`, called after detection.
pub(crate) trait Vf: Copy {
    /// Element type (`f32` or `f64`).
    type E: Copy + Default + 'static;
    /// Lane mask produced by comparisons.
    type M: Copy;
    /// Number of lanes.
    const LANES: usize;
    /// `true` for f64 lanes (selects constants in generic algorithms).
    const F64: bool;

    /// Loads `LANES` elements (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for `LANES` reads.
    unsafe fn load(p: *const Self::E) -> Self;
    /// Stores `LANES` elements (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for `LANES` writes.
    unsafe fn store(self, p: *mut Self::E);
    /// Stores `LANES` elements with a streaming (non-temporal) store, which
    /// writes the line without first reading it ([`stream`]); an ordinary
    /// store where the ISA has none. Weakly ordered: the writer calls
    /// [`stream::fence`] before another thread may read them.
    ///
    /// # Safety
    /// `p` must be valid for `LANES` writes and aligned to `LANES` elements.
    unsafe fn stream(self, p: *mut Self::E);
    /// Every lane `v`.
    fn splat(v: Self::E) -> Self;
    /// Every lane `v` rounded to the element type (for literal constants).
    fn c(v: f64) -> Self;

    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    /// `self * b + c`, fused where the ISA has FMA.
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// The rounding error of `self * b`: `self·b - round(self·b)`, exactly.
    fn mul_err(self, b: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    /// `if self > o { self } else { o }`.
    fn max(self, o: Self) -> Self;
    /// `if self < o { self } else { o }`.
    fn min(self, o: Self) -> Self;
    fn floor(self) -> Self;
    /// Round half to even.
    fn round(self) -> Self;
    /// Magnitude of `self` with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;

    fn lt(self, o: Self) -> Self::M;
    #[allow(dead_code)]
    fn le(self, o: Self) -> Self::M;
    fn gt(self, o: Self) -> Self::M;
    fn ge(self, o: Self) -> Self::M;
    fn eq(self, o: Self) -> Self::M;
    /// Lanes that are NaN.
    fn is_nan(self) -> Self::M;
    /// `m ? a : b` lane by lane.
    fn select(m: Self::M, a: Self, b: Self) -> Self;
    #[allow(dead_code)]
    fn mand(a: Self::M, b: Self::M) -> Self::M;
    fn mor(a: Self::M, b: Self::M) -> Self::M;
    /// Is any lane of `m` set?
    fn any(m: Self::M) -> bool;

    /// Lane-wise integer add of `k` to the raw bit patterns.
    fn bits_add(self, k: i64) -> Self;
    /// Lane-wise and of the raw bits with `m`.
    fn bits_and(self, m: u64) -> Self;
    /// The biased exponent field of each lane's bits (`bits >> mantissa_bits`,
    /// logical), converted to a float. Sign bit included for negative inputs.
    fn exponent_field(self) -> Self;
    /// `2^n` for lanes holding integers `n` within the normal exponent range.
    fn pow2i(self) -> Self;

    /// Horizontal sum of the lanes.
    #[allow(dead_code)]
    fn reduce_add(self) -> Self::E;
}

/// Scalar fallback: one lane.
macro_rules! scalar_vf {
    ($t:ty, $bits:ty, $mant:expr, $f64:expr) => {
        impl Vf for $t {
            type E = $t;
            type M = bool;
            const LANES: usize = 1;
            const F64: bool = $f64;
            #[inline(always)]
            unsafe fn load(p: *const $t) -> $t {
                *p
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut $t) {
                *p = self
            }
            #[inline(always)]
            unsafe fn stream(self, p: *mut $t) {
                *p = self
            }
            #[inline(always)]
            fn splat(v: $t) -> $t {
                v
            }
            #[inline(always)]
            fn c(v: f64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: $t) -> $t {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                self * o
            }
            #[inline(always)]
            fn div(self, o: $t) -> $t {
                self / o
            }
            #[inline(always)]
            fn mul_add(self, b: $t, c: $t) -> $t {
                // Fused only where FMA is part of the baseline (e.g. aarch64);
                // a libm call per element would be far slower than the rounding
                // difference is worth.
                #[cfg(any(target_feature = "fma", target_arch = "aarch64"))]
                {
                    <$t>::mul_add(self, b, c)
                }
                #[cfg(not(any(target_feature = "fma", target_arch = "aarch64")))]
                {
                    self * b + c
                }
            }
            #[inline(always)]
            fn mul_err(self, b: $t) -> $t {
                mul_err_scalar(self, b)
            }
            #[inline(always)]
            fn neg(self) -> $t {
                -self
            }
            #[inline(always)]
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn max(self, o: $t) -> $t {
                if self > o {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn min(self, o: $t) -> $t {
                if self < o {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn floor(self) -> $t {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn round(self) -> $t {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn copysign(self, s: $t) -> $t {
                <$t>::copysign(self, s)
            }
            #[inline(always)]
            fn lt(self, o: $t) -> bool {
                self < o
            }
            #[inline(always)]
            fn le(self, o: $t) -> bool {
                self <= o
            }
            #[inline(always)]
            fn gt(self, o: $t) -> bool {
                self > o
            }
            #[inline(always)]
            fn ge(self, o: $t) -> bool {
                self >= o
            }
            #[inline(always)]
            fn eq(self, o: $t) -> bool {
                self == o
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn select(m: bool, a: $t, b: $t) -> $t {
                if m {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn mand(a: bool, b: bool) -> bool {
                a & b
            }
            #[inline(always)]
            fn mor(a: bool, b: bool) -> bool {
                a | b
            }
            #[inline(always)]
            fn any(m: bool) -> bool {
                m
            }
            #[inline(always)]
            fn bits_add(self, k: i64) -> $t {
                <$t>::from_bits(self.to_bits().wrapping_add(k as $bits))
            }
            #[inline(always)]
            fn bits_and(self, m: u64) -> $t {
                <$t>::from_bits(self.to_bits() & (m as $bits))
            }
            #[inline(always)]
            fn exponent_field(self) -> $t {
                (self.to_bits() >> $mant) as $t
            }
            #[inline(always)]
            fn pow2i(self) -> $t {
                let bias = (<$t>::MAX_EXP - 1) as i64;
                <$t>::from_bits(((self as i64 + bias) as $bits) << $mant)
            }
            #[inline(always)]
            fn reduce_add(self) -> $t {
                self
            }
        }
    };
}
trait MulErr {
    fn mul_err_exact(a: Self, b: Self) -> Self;
}
impl MulErr for f32 {
    #[inline(always)]
    fn mul_err_exact(a: f32, b: f32) -> f32 {
        // The f64 product of two f32 values is exact.
        ((a as f64) * (b as f64) - (a * b) as f64) as f32
    }
}
impl MulErr for f64 {
    #[inline(always)]
    fn mul_err_exact(a: f64, b: f64) -> f64 {
        f64::mul_add(a, b, -(a * b))
    }
}
#[inline(always)]
fn mul_err_scalar<T: MulErr>(a: T, b: T) -> T {
    T::mul_err_exact(a, b)
}

scalar_vf!(f32, u32, 23, false);
scalar_vf!(f64, u64, 52, true);

/// Applies `f` to `n` elements from `x` into `o`, a vector at a time; the tail
/// goes through a padded stack buffer so every element sees the same algorithm.
///
/// # Safety
/// `x` valid for `n` reads, `o` valid for `n` writes; they may be equal but must
/// not otherwise overlap.
#[inline(always)]
pub(crate) unsafe fn map1<V: Vf>(x: *const V::E, o: *mut V::E, n: usize, f: impl Fn(V) -> V) {
    let mut i = 0;
    while i + V::LANES <= n {
        f(V::load(x.add(i))).store(o.add(i));
        i += V::LANES;
    }
    if i < n {
        let mut buf = [V::E::default(); 16];
        let rest = n - i;
        std::ptr::copy_nonoverlapping(x.add(i), buf.as_mut_ptr(), rest);
        f(V::load(buf.as_ptr())).store(buf.as_mut_ptr());
        std::ptr::copy_nonoverlapping(buf.as_ptr(), o.add(i), rest);
    }
}

/// Applies `f` lane-wise to two inputs; `sx`/`sy` are 0 (broadcast scalar) or 1.
/// With `NT` the output is written with streaming stores ([`Vf::stream`])
/// from its first vector-aligned element on; the caller fences
/// ([`stream::fence`]) before the output is handed to another thread.
///
/// # Safety
/// `n >= 1`; `x` valid for `n` reads when `sx == 1` (one read when 0), likewise
/// `y`; `o` valid for `n` writes.
#[inline(always)]
pub(crate) unsafe fn map2<V: Vf, const NT: bool>(
    x: *const V::E,
    sx: usize,
    y: *const V::E,
    sy: usize,
    o: *mut V::E,
    n: usize,
    f: impl Fn(V, V) -> V,
) {
    // Fewer than a vector of elements at `i`, through a padded stack buffer
    // so that every element sees the same algorithm.
    let partial = |i: usize, len: usize| {
        let mut bx = [V::E::default(); 16];
        let mut by = [V::E::default(); 16];
        for k in 0..len {
            bx[k] = *x.add((i + k) * sx);
            by[k] = *y.add((i + k) * sy);
        }
        f(V::load(bx.as_ptr()), V::load(by.as_ptr())).store(bx.as_mut_ptr());
        std::ptr::copy_nonoverlapping(bx.as_ptr(), o.add(i), len);
    };
    let mut i = 0;
    if NT {
        // Streaming stores need an aligned address: the elements before
        // `o`'s first vector boundary go one partial vector ahead.
        let bytes = V::LANES * std::mem::size_of::<V::E>();
        let head = ((bytes - (o as usize) % bytes) % bytes / std::mem::size_of::<V::E>()).min(n);
        if head > 0 {
            partial(0, head);
            i = head;
        }
    }
    let xs = V::splat(*x);
    let ys = V::splat(*y);
    macro_rules! body {
        (|$j:ident| $ld_x:expr, $ld_y:expr) => {{
            while i + V::LANES <= n {
                let $j = i;
                let v = f($ld_x, $ld_y);
                if NT {
                    v.stream(o.add($j));
                } else {
                    v.store(o.add($j));
                }
                i += V::LANES;
            }
        }};
    }
    match (sx, sy) {
        (1, 1) => body!(|j| V::load(x.add(j)), V::load(y.add(j))),
        (1, _) => body!(|j| V::load(x.add(j)), ys),
        (_, 1) => body!(|j| xs, V::load(y.add(j))),
        _ => body!(|j| xs, ys),
    }
    if i < n {
        partial(i, n - i);
    }
}
