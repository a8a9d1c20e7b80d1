//! AVX2 + FMA vectors: 8 × f32 and 4 × f64 (masks are all-ones lanes).
//!
//! Soundness: values of these types are only created inside functions compiled
//! with `#[target_feature(enable = "avx2,fma")]` (or a superset), which are only
//! called after [`super::Isa::Avx2`] was detected. Every method is
//! `#[inline(always)]`, so the intrinsics end up inside those functions.

use super::Vf;
use std::arch::x86_64::*;

/// Runs an AVX/AVX2/FMA intrinsic.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: see the module comment: code using these types only runs
        // after AVX2 and FMA were detected on this CPU, and the intrinsic
        // itself touches no memory.
        unsafe { $e }
    };
}

/// 8 lanes of f32.
#[derive(Clone, Copy)]
pub(crate) struct F32x8(pub __m256);
/// 4 lanes of f64.
#[derive(Clone, Copy)]
pub(crate) struct F64x4(pub __m256d);

impl Vf for F32x8 {
    type E = f32;
    type M = __m256;
    const LANES: usize = 8;
    const F64: bool = false;
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        F32x8(_mm256_loadu_ps(p))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        _mm256_storeu_ps(p, self.0)
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f32) {
        _mm256_stream_ps(p, self.0)
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        F32x8(avx!(_mm256_set1_ps(v)))
    }
    #[inline(always)]
    fn c(v: f64) -> Self {
        Self::splat(v as f32)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F32x8(avx!(_mm256_add_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F32x8(avx!(_mm256_sub_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F32x8(avx!(_mm256_mul_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F32x8(avx!(_mm256_div_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        F32x8(avx!(_mm256_fmadd_ps(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn mul_err(self, b: Self) -> Self {
        F32x8(avx!(_mm256_fmsub_ps(self.0, b.0, _mm256_mul_ps(self.0, b.0))))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        F32x8(avx!(_mm256_xor_ps(self.0, _mm256_set1_ps(-0.0))))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F32x8(avx!(_mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0)))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F32x8(avx!(_mm256_sqrt_ps(self.0)))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        F32x8(avx!(_mm256_max_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        F32x8(avx!(_mm256_min_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn floor(self) -> Self {
        F32x8(avx!(_mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0)))
    }
    #[inline(always)]
    fn round(self) -> Self {
        F32x8(avx!(_mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(self.0)))
    }
    #[inline(always)]
    fn copysign(self, s: Self) -> Self {
        avx!({
            let sign = _mm256_set1_ps(-0.0);
            F32x8(_mm256_or_ps(_mm256_andnot_ps(sign, self.0), _mm256_and_ps(sign, s.0)))
        })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_LT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn le(self, o: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_LE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_GT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_GE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn is_nan(self) -> __m256 {
        avx!(_mm256_cmp_ps::<_CMP_UNORD_Q>(self.0, self.0))
    }
    #[inline(always)]
    fn select(m: __m256, a: Self, b: Self) -> Self {
        F32x8(avx!(_mm256_blendv_ps(b.0, a.0, m)))
    }
    #[inline(always)]
    fn mand(a: __m256, b: __m256) -> __m256 {
        avx!(_mm256_and_ps(a, b))
    }
    #[inline(always)]
    fn mor(a: __m256, b: __m256) -> __m256 {
        avx!(_mm256_or_ps(a, b))
    }
    #[inline(always)]
    fn any(m: __m256) -> bool {
        avx!(_mm256_movemask_ps(m)) != 0
    }
    #[inline(always)]
    fn bits_add(self, k: i64) -> Self {
        avx!(F32x8(_mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(self.0), _mm256_set1_epi32(k as i32)))))
    }
    #[inline(always)]
    fn bits_and(self, m: u64) -> Self {
        avx!(F32x8(_mm256_and_ps(self.0, _mm256_castsi256_ps(_mm256_set1_epi32(m as u32 as i32)))))
    }
    #[inline(always)]
    fn exponent_field(self) -> Self {
        avx!(F32x8(_mm256_cvtepi32_ps(_mm256_srli_epi32::<23>(_mm256_castps_si256(self.0)))))
    }
    #[inline(always)]
    fn pow2i(self) -> Self {
        avx!({
            let n = _mm256_add_epi32(_mm256_cvtps_epi32(self.0), _mm256_set1_epi32(127));
            F32x8(_mm256_castsi256_ps(_mm256_slli_epi32::<23>(n)))
        })
    }
    #[inline(always)]
    fn reduce_add(self) -> f32 {
        let mut a = [0f32; 8];
        // SAFETY: `a` has room for 8 lanes.
        unsafe { self.store(a.as_mut_ptr()) };
        ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]))
    }
}

impl Vf for F64x4 {
    type E = f64;
    type M = __m256d;
    const LANES: usize = 4;
    const F64: bool = true;
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        F64x4(_mm256_loadu_pd(p))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        _mm256_storeu_pd(p, self.0)
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        _mm256_stream_pd(p, self.0)
    }
    #[inline(always)]
    fn splat(v: f64) -> Self {
        F64x4(avx!(_mm256_set1_pd(v)))
    }
    #[inline(always)]
    fn c(v: f64) -> Self {
        Self::splat(v)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F64x4(avx!(_mm256_add_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F64x4(avx!(_mm256_sub_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F64x4(avx!(_mm256_mul_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F64x4(avx!(_mm256_div_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        F64x4(avx!(_mm256_fmadd_pd(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn mul_err(self, b: Self) -> Self {
        F64x4(avx!(_mm256_fmsub_pd(self.0, b.0, _mm256_mul_pd(self.0, b.0))))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        F64x4(avx!(_mm256_xor_pd(self.0, _mm256_set1_pd(-0.0))))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F64x4(avx!(_mm256_andnot_pd(_mm256_set1_pd(-0.0), self.0)))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F64x4(avx!(_mm256_sqrt_pd(self.0)))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        F64x4(avx!(_mm256_max_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        F64x4(avx!(_mm256_min_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn floor(self) -> Self {
        F64x4(avx!(_mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0)))
    }
    #[inline(always)]
    fn round(self) -> Self {
        F64x4(avx!(_mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(self.0)))
    }
    #[inline(always)]
    fn copysign(self, s: Self) -> Self {
        avx!({
            let sign = _mm256_set1_pd(-0.0);
            F64x4(_mm256_or_pd(_mm256_andnot_pd(sign, self.0), _mm256_and_pd(sign, s.0)))
        })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_LT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn le(self, o: Self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_LE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_GT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_GE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_EQ_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn is_nan(self) -> __m256d {
        avx!(_mm256_cmp_pd::<_CMP_UNORD_Q>(self.0, self.0))
    }
    #[inline(always)]
    fn select(m: __m256d, a: Self, b: Self) -> Self {
        F64x4(avx!(_mm256_blendv_pd(b.0, a.0, m)))
    }
    #[inline(always)]
    fn mand(a: __m256d, b: __m256d) -> __m256d {
        avx!(_mm256_and_pd(a, b))
    }
    #[inline(always)]
    fn mor(a: __m256d, b: __m256d) -> __m256d {
        avx!(_mm256_or_pd(a, b))
    }
    #[inline(always)]
    fn any(m: __m256d) -> bool {
        avx!(_mm256_movemask_pd(m)) != 0
    }
    #[inline(always)]
    fn bits_add(self, k: i64) -> Self {
        avx!(F64x4(_mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(self.0), _mm256_set1_epi64x(k)))))
    }
    #[inline(always)]
    fn bits_and(self, m: u64) -> Self {
        avx!(F64x4(_mm256_and_pd(self.0, _mm256_castsi256_pd(_mm256_set1_epi64x(m as i64)))))
    }
    #[inline(always)]
    fn exponent_field(self) -> Self {
        // (bits >> 52) < 2^12: or it into the mantissa of 2^52 and subtract 2^52.
        avx!({
            let e = _mm256_srli_epi64::<52>(_mm256_castpd_si256(self.0));
            let magic = _mm256_set1_epi64x(0x4330_0000_0000_0000);
            F64x4(_mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(e, magic)), _mm256_set1_pd(4503599627370496.0)))
        })
    }
    #[inline(always)]
    fn pow2i(self) -> Self {
        // n + 1.5·2^52 holds n in its low mantissa bits; add the bias and shift
        // it into the exponent field (the magic's own bits shift out).
        avx!({
            let t = _mm256_castpd_si256(_mm256_add_pd(self.0, _mm256_set1_pd(6755399441055744.0)));
            let e = _mm256_add_epi64(t, _mm256_set1_epi64x(1023));
            F64x4(_mm256_castsi256_pd(_mm256_slli_epi64::<52>(e)))
        })
    }
    #[inline(always)]
    fn reduce_add(self) -> f64 {
        let mut a = [0f64; 4];
        // SAFETY: `a` has room for 4 lanes.
        unsafe { self.store(a.as_mut_ptr()) };
        (a[0] + a[2]) + (a[1] + a[3])
    }
}
