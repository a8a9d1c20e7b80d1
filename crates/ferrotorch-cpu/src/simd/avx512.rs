//! AVX-512F vectors: 16 × f32 and 8 × f64, with `__mmask16`/`__mmask8` masks.
//!
//! Soundness: values of these types are only created inside functions compiled
//! with `#[target_feature(enable = "avx512f,avx2,fma")]`, which are only called
//! after [`super::Isa::Avx512`] was detected. Every method is
//! `#[inline(always)]`, so the intrinsics end up inside those functions. Only
//! AVX-512F instructions are used (no DQ/VL), so float bit operations go
//! through the integer domain.

use super::Vf;
use std::arch::x86_64::*;

/// Runs an AVX-512F intrinsic.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: see the module comment: code using these types only runs
        // after AVX-512F was detected on this CPU, and the intrinsic itself
        // touches no memory.
        unsafe { $e }
    };
}

/// 16 lanes of f32.
#[derive(Clone, Copy)]
pub(crate) struct F32x16(pub __m512);
/// 8 lanes of f64.
#[derive(Clone, Copy)]
pub(crate) struct F64x8(pub __m512d);

// Rounding-mode immediates of VRNDSCALE: nearest-even, down, up, toward zero,
// with exceptions suppressed.
const RN: i32 = 0x08;
const RD: i32 = 0x09;

mod f32v {
    use super::*;
    const SIGN: u32 = 0x8000_0000;

impl Vf for F32x16 {
    type E = f32;
    type M = __mmask16;
    const LANES: usize = 16;
    const F64: bool = false;
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        F32x16(_mm512_loadu_ps(p))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        _mm512_storeu_ps(p, self.0)
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f32) {
        _mm512_stream_ps(p, self.0)
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        F32x16(avx!(_mm512_set1_ps(v)))
    }
    #[inline(always)]
    fn c(v: f64) -> Self {
        Self::splat(v as f32)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F32x16(avx!(_mm512_add_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F32x16(avx!(_mm512_sub_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F32x16(avx!(_mm512_mul_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F32x16(avx!(_mm512_div_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        F32x16(avx!(_mm512_fmadd_ps(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn mul_err(self, b: Self) -> Self {
        F32x16(avx!(_mm512_fmsub_ps(self.0, b.0, _mm512_mul_ps(self.0, b.0))))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        avx!(F32x16(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(self.0), _mm512_set1_epi32(SIGN as i32)))))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F32x16(avx!(_mm512_abs_ps(self.0)))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F32x16(avx!(_mm512_sqrt_ps(self.0)))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        F32x16(avx!(_mm512_max_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        F32x16(avx!(_mm512_min_ps(self.0, o.0)))
    }
    #[inline(always)]
    fn floor(self) -> Self {
        F32x16(avx!(_mm512_roundscale_ps::<RD>(self.0)))
    }
    #[inline(always)]
    fn round(self) -> Self {
        F32x16(avx!(_mm512_roundscale_ps::<RN>(self.0)))
    }
    #[inline(always)]
    fn copysign(self, s: Self) -> Self {
        avx!({
            let sign = _mm512_set1_epi32(SIGN as i32);
            let mag = _mm512_andnot_si512(sign, _mm512_castps_si512(self.0));
            F32x16(_mm512_castsi512_ps(_mm512_or_si512(mag, _mm512_and_si512(sign, _mm512_castps_si512(s.0)))))
        })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn le(self, o: Self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn is_nan(self) -> __mmask16 {
        avx!(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(self.0, self.0))
    }
    #[inline(always)]
    fn select(m: __mmask16, a: Self, b: Self) -> Self {
        F32x16(avx!(_mm512_mask_blend_ps(m, b.0, a.0)))
    }
    #[inline(always)]
    fn mand(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    fn mor(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    fn bits_add(self, k: i64) -> Self {
        avx!(F32x16(_mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(self.0), _mm512_set1_epi32(k as i32)))))
    }
    #[inline(always)]
    fn bits_and(self, m: u64) -> Self {
        avx!(F32x16(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(self.0), _mm512_set1_epi32(m as i32)))))
    }
    #[inline(always)]
    fn exponent_field(self) -> Self {
        avx!(F32x16(_mm512_cvtepi32_ps(_mm512_srli_epi32::<23>(_mm512_castps_si512(self.0)))))
    }
    #[inline(always)]
    fn pow2i(self) -> Self {
        avx!({
            let n = _mm512_add_epi32(_mm512_cvtps_epi32(self.0), _mm512_set1_epi32(127));
            F32x16(_mm512_castsi512_ps(_mm512_slli_epi32::<23>(n)))
        })
    }
    #[inline(always)]
    fn reduce_add(self) -> f32 {
        let mut a = [0 as f32; 16];
        // SAFETY: `a` has room for every lane.
        unsafe { self.store(a.as_mut_ptr()) };
        let mut h = 16 / 2;
        while h > 0 {
            for i in 0..h {
                a[i] += a[i + h];
            }
            h /= 2;
        }
        a[0]
    }
}
}

mod f64v {
    use super::*;
    const SIGN: u64 = 0x8000_0000_0000_0000;

impl Vf for F64x8 {
    type E = f64;
    type M = __mmask8;
    const LANES: usize = 8;
    const F64: bool = true;
    #[inline(always)]
    unsafe fn load(p: *const f64) -> Self {
        F64x8(_mm512_loadu_pd(p))
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        _mm512_storeu_pd(p, self.0)
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        _mm512_stream_pd(p, self.0)
    }
    #[inline(always)]
    fn splat(v: f64) -> Self {
        F64x8(avx!(_mm512_set1_pd(v)))
    }
    #[inline(always)]
    fn c(v: f64) -> Self {
        Self::splat(v as f64)
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        F64x8(avx!(_mm512_add_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        F64x8(avx!(_mm512_sub_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        F64x8(avx!(_mm512_mul_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        F64x8(avx!(_mm512_div_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn mul_add(self, b: Self, c: Self) -> Self {
        F64x8(avx!(_mm512_fmadd_pd(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn mul_err(self, b: Self) -> Self {
        F64x8(avx!(_mm512_fmsub_pd(self.0, b.0, _mm512_mul_pd(self.0, b.0))))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        avx!(F64x8(_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(self.0), _mm512_set1_epi64(SIGN as i64)))))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F64x8(avx!(_mm512_abs_pd(self.0)))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F64x8(avx!(_mm512_sqrt_pd(self.0)))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        F64x8(avx!(_mm512_max_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        F64x8(avx!(_mm512_min_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn floor(self) -> Self {
        F64x8(avx!(_mm512_roundscale_pd::<RD>(self.0)))
    }
    #[inline(always)]
    fn round(self) -> Self {
        F64x8(avx!(_mm512_roundscale_pd::<RN>(self.0)))
    }
    #[inline(always)]
    fn copysign(self, s: Self) -> Self {
        avx!({
            let sign = _mm512_set1_epi64(SIGN as i64);
            let mag = _mm512_andnot_si512(sign, _mm512_castpd_si512(self.0));
            F64x8(_mm512_castsi512_pd(_mm512_or_si512(mag, _mm512_and_si512(sign, _mm512_castpd_si512(s.0)))))
        })
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn le(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_GT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn is_nan(self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_UNORD_Q>(self.0, self.0))
    }
    #[inline(always)]
    fn select(m: __mmask8, a: Self, b: Self) -> Self {
        F64x8(avx!(_mm512_mask_blend_pd(m, b.0, a.0)))
    }
    #[inline(always)]
    fn mand(a: __mmask8, b: __mmask8) -> __mmask8 {
        a & b
    }
    #[inline(always)]
    fn mor(a: __mmask8, b: __mmask8) -> __mmask8 {
        a | b
    }
    #[inline(always)]
    fn any(m: __mmask8) -> bool {
        m != 0
    }
    #[inline(always)]
    fn bits_add(self, k: i64) -> Self {
        avx!(F64x8(_mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(self.0), _mm512_set1_epi64(k as i64)))))
    }
    #[inline(always)]
    fn bits_and(self, m: u64) -> Self {
        avx!(F64x8(_mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(self.0), _mm512_set1_epi64(m as i64)))))
    }
    #[inline(always)]
    fn exponent_field(self) -> Self {
        // (bits >> 52) < 2^12: or it into the mantissa of 2^52 and subtract 2^52.
        avx!({
            let e = _mm512_srli_epi64::<52>(_mm512_castpd_si512(self.0));
            let magic = _mm512_set1_epi64(0x4330_0000_0000_0000);
            F64x8(_mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(e, magic)), _mm512_set1_pd(4503599627370496.0)))
        })
    }
    #[inline(always)]
    fn pow2i(self) -> Self {
        // n + 1.5·2^52 holds n in its low mantissa bits; add the bias and shift
        // it into the exponent field (the magic's own bits shift out).
        avx!({
            let t = _mm512_castpd_si512(_mm512_add_pd(self.0, _mm512_set1_pd(6755399441055744.0)));
            let e = _mm512_add_epi64(t, _mm512_set1_epi64(1023));
            F64x8(_mm512_castsi512_pd(_mm512_slli_epi64::<52>(e)))
        })
    }
    #[inline(always)]
    fn reduce_add(self) -> f64 {
        let mut a = [0 as f64; 8];
        // SAFETY: `a` has room for every lane.
        unsafe { self.store(a.as_mut_ptr()) };
        let mut h = 8 / 2;
        while h > 0 {
            for i in 0..h {
                a[i] += a[i + h];
            }
            h /= 2;
        }
        a[0]
    }
}
}
