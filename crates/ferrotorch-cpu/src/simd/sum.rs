//! Vectorised sums of contiguous f32/f64 runs, accumulated in f64 with
//! several independent accumulators (bandwidth-bound on every ISA).

use super::Isa;

/// Sum of `x` in f64.
pub(crate) fn sum_f32(isa: Isa, x: &[f32]) -> f64 {
    match isa {
        // SAFETY: the level was detected on this CPU (callers pass `isa()` or a
        // supported level).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { x86::sum_f32_avx512(x) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::sum_f32_avx2(x) },
        _ => sum_scalar(x.iter().map(|&v| v as f64)),
    }
}

/// Sum of `x` in f64.
pub(crate) fn sum_f64(isa: Isa, x: &[f64]) -> f64 {
    match isa {
        // SAFETY: the level was detected on this CPU.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { x86::sum_f64_avx512(x) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { x86::sum_f64_avx2(x) },
        _ => sum_scalar(x.iter().copied()),
    }
}

/// Four interleaved accumulators.
fn sum_scalar(it: impl Iterator<Item = f64>) -> f64 {
    let mut a = [0f64; 4];
    for (i, v) in it.enumerate() {
        a[i & 3] += v;
    }
    (a[0] + a[1]) + (a[2] + a[3])
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Elements summed in f32 lanes before they are flushed to f64: each of
    /// the 32 lanes then adds at most 64 values, so the f32 rounding error
    /// stays near that of a 64-term pairwise sum while the hot loop is one
    /// load and one add per 8 elements (no conversions).
    const F32_BLOCK: usize = 2048;

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sum_f32_avx2(x: &[f32]) -> f64 {
        let n = x.len();
        let p = x.as_ptr();
        let mut wide = [_mm256_setzero_pd(); 2];
        let mut i = 0;
        while i + 32 <= n {
            let end = (i + F32_BLOCK).min(n - n % 32);
            let mut acc = [_mm256_setzero_ps(); 4];
            while i < end {
                // SAFETY (whole loop): i + 32 <= end <= n keeps every load inside `x`.
                for k in 0..4 {
                    acc[k] = _mm256_add_ps(acc[k], _mm256_loadu_ps(p.add(i + 8 * k)));
                }
                i += 32;
            }
            let s = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
            wide[0] = _mm256_add_pd(wide[0], _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
            wide[1] = _mm256_add_pd(wide[1], _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(s)));
        }
        let s = _mm256_add_pd(wide[0], wide[1]);
        let mut t = [0f64; 4];
        _mm256_storeu_pd(t.as_mut_ptr(), s);
        let mut total = (t[0] + t[1]) + (t[2] + t[3]);
        for &v in &x[i..] {
            total += v as f64;
        }
        total
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sum_f64_avx2(x: &[f64]) -> f64 {
        let n = x.len();
        let p = x.as_ptr();
        let mut acc = [_mm256_setzero_pd(); 4];
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY (whole loop): i + 16 <= n keeps every load inside `x`.
            for k in 0..4 {
                acc[k] = _mm256_add_pd(acc[k], _mm256_loadu_pd(p.add(i + 4 * k)));
            }
            i += 16;
        }
        let s = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
        let mut t = [0f64; 4];
        _mm256_storeu_pd(t.as_mut_ptr(), s);
        let mut total = (t[0] + t[1]) + (t[2] + t[3]);
        for &v in &x[i..] {
            total += v;
        }
        total
    }

    /// As [`sum_f32_avx2`] with 16-lane accumulators: 4096 elements per
    /// block keep the 64 lanes at 64 values each.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn sum_f32_avx512(x: &[f32]) -> f64 {
        let n = x.len();
        let p = x.as_ptr();
        let mut wide = _mm512_setzero_pd();
        let mut i = 0;
        while i + 64 <= n {
            let end = (i + 2 * F32_BLOCK).min(n - n % 64);
            let mut acc = [_mm512_setzero_ps(); 4];
            while i < end {
                // SAFETY (whole loop): i + 64 <= end <= n keeps every load inside `x`.
                for k in 0..4 {
                    acc[k] = _mm512_add_ps(acc[k], _mm512_loadu_ps(p.add(i + 16 * k)));
                }
                i += 64;
            }
            let s = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
            let lo = _mm512_castps512_ps256(s);
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(s)));
            wide = _mm512_add_pd(wide, _mm512_add_pd(_mm512_cvtps_pd(lo), _mm512_cvtps_pd(hi)));
        }
        let mut total = _mm512_reduce_add_pd(wide);
        for &v in &x[i..] {
            total += v as f64;
        }
        total
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn sum_f64_avx512(x: &[f64]) -> f64 {
        let n = x.len();
        let p = x.as_ptr();
        let mut acc = [_mm512_setzero_pd(); 4];
        let mut i = 0;
        while i + 32 <= n {
            // SAFETY (whole loop): i + 32 <= n keeps every load inside `x`.
            for k in 0..4 {
                acc[k] = _mm512_add_pd(acc[k], _mm512_loadu_pd(p.add(i + 8 * k)));
            }
            i += 32;
        }
        let s = _mm512_add_pd(_mm512_add_pd(acc[0], acc[1]), _mm512_add_pd(acc[2], acc[3]));
        let mut total = _mm512_reduce_add_pd(s);
        for &v in &x[i..] {
            total += v;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ISA this CPU supports against an exact-enough f64 sum, over
    /// lengths around the vector width, the f32 block and the tails.
    #[test]
    fn sums_match_f64_reference_on_every_isa() {
        for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
            for n in [0usize, 1, 7, 31, 32, 33, 2047, 2048, 2049, 4096 + 17, 100_003] {
                let x32: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1009) as f32 - 504.0) * 0.37).collect();
                let want: f64 = x32.iter().map(|&v| v as f64).sum();
                let scale: f64 = x32.iter().map(|&v| (v as f64).abs()).sum::<f64>().max(1.0);
                let got = sum_f32(isa, &x32);
                assert!((got - want).abs() <= 1e-6 * scale, "{isa:?} n={n}: {got} vs {want}");
                let x64: Vec<f64> = x32.iter().map(|&v| v as f64 * 1.000001).collect();
                let want64: f64 = x64.iter().sum();
                assert!((sum_f64(isa, &x64) - want64).abs() <= 1e-12 * scale, "{isa:?} f64 n={n}");
            }
        }
    }
}
