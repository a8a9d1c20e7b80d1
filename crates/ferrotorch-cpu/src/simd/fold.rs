//! The vector folds of the strided reduction engine: NaN-propagating extremes
//! over a contiguous run, and the column-mode steps that fold one contiguous
//! input row into a block of per-column accumulators (sum over dim 0 of a
//! row-major matrix, amax over dim 0, ...).
//!
//! Every fold here gives exactly the result of the scalar reducer it stands
//! in for: column sums add each column's values in row order in f64, and the
//! extremes only reorder comparisons, which cannot change a max or min (ties
//! between `0.0` and `-0.0` aside, which PyTorch leaves unspecified too).

use super::{Isa, Vf};

/// Is `x` a better extreme than `cur`, NaN beating everything? (Scalar rule
/// of the folds below, for tails.)
#[inline(always)]
#[allow(clippy::eq_op)]
fn takes<E: PartialOrd>(max: bool, x: E, cur: E) -> bool {
    (if max { x > cur } else { x < cur }) | (x != x)
}

/// NaN-propagating max (`max`) or min of a run (`-inf`/`+inf` when empty).
#[inline(always)]
unsafe fn extreme_run<V: Vf>(x: &[V::E], max: bool) -> V::E
where
    V::E: PartialOrd,
{
    let (l, n, p) = (V::LANES, x.len(), x.as_ptr());
    let init = V::c(if max { f64::NEG_INFINITY } else { f64::INFINITY });
    let mut acc = [init; 4];
    // NaNs are tracked apart from the values so the hot loop is one max/min
    // and one compare per vector.
    let mut nan = init.is_nan();
    let mut i = 0;
    while i + 4 * l <= n {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 4·LANES <= n keeps the load inside `x`.
            let v = V::load(p.add(i + k * l));
            nan = V::mor(nan, v.is_nan());
            *a = if max { v.max(*a) } else { v.min(*a) };
        }
        i += 4 * l;
    }
    // Single vectors after that: a short row (softmax over an attention
    // row of 32) would otherwise fall wholly to the scalar tail below.
    while i + l <= n {
        // SAFETY: i + LANES <= n keeps the load inside `x`.
        let v = V::load(p.add(i));
        nan = V::mor(nan, v.is_nan());
        acc[0] = if max { v.max(acc[0]) } else { v.min(acc[0]) };
        i += l;
    }
    let v = if max { acc[0].max(acc[1]).max(acc[2].max(acc[3])) } else { acc[0].min(acc[1]).min(acc[2].min(acc[3])) };
    let mut lanes = [V::E::default(); 16];
    v.store(lanes.as_mut_ptr());
    let mut m = lanes[0];
    for &e in lanes[1..l].iter().chain(&x[i..]) {
        if takes(max, e, m) {
            m = e;
        }
    }
    if V::any(nan) {
        // Any NaN of the vector part: return one of them.
        return x[..i].iter().copied().find(|&e| e != e).unwrap_or(m);
    }
    m
}

/// `accs[j] = extreme(accs[j], row[j])`, NaN sticky, for every j.
#[inline(always)]
unsafe fn extreme_row<V: Vf>(accs: &mut [V::E], row: *const V::E, max: bool)
where
    V::E: PartialOrd,
{
    let (l, n, a) = (V::LANES, accs.len(), accs.as_mut_ptr());
    let mut j = 0;
    while j + l <= n {
        // SAFETY: j + LANES <= n keeps both accesses inside the block.
        let (cur, v) = (V::load(a.add(j)), V::load(row.add(j)));
        let take = V::mor(if max { v.gt(cur) } else { v.lt(cur) }, v.is_nan());
        V::select(take, v, cur).store(a.add(j));
        j += l;
    }
    for j in j..n {
        let v = *row.add(j);
        if takes(max, v, accs[j]) {
            accs[j] = v;
        }
    }
}

/// `accs[j] += row[j]` in f64.
#[inline(always)]
unsafe fn add_row_f64<V: Vf<E = f64>>(accs: &mut [f64], row: *const f64) {
    let (l, n, a) = (V::LANES, accs.len(), accs.as_mut_ptr());
    let mut j = 0;
    while j + l <= n {
        // SAFETY: j + LANES <= n keeps both accesses inside the block.
        V::load(a.add(j)).add(V::load(row.add(j))).store(a.add(j));
        j += l;
    }
    for j in j..n {
        accs[j] += *row.add(j);
    }
}

/// Instantiates a generic fold for the detected ISA: `$avx512`/`$avx2`/`$scalar`
/// are the vector types of the element, `$call` the generic call with `V` as
/// its vector type.
macro_rules! per_isa {
    ($isa:expr, [$scalar:ty, $avx2:ty, $avx512:ty], |$($arg:ident : $t:ty),*| -> $ret:ty { $f:ident::<V>($($a:expr),*) }) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx2,fma")]
        unsafe fn on_avx512($($arg: $t),*) -> $ret {
            $f::<$avx512>($($a),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn on_avx2($($arg: $t),*) -> $ret {
            $f::<$avx2>($($a),*)
        }
        match $isa {
            // SAFETY: the level was detected on this CPU (callers pass `isa()`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => on_avx512($($arg),*),
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => on_avx2($($arg),*),
            _ => $f::<$scalar>($($a),*),
        }
    }};
}

#[cfg(target_arch = "x86_64")]
use super::{avx2::{F32x8, F64x4}, avx512::{F32x16, F64x8}};
#[cfg(not(target_arch = "x86_64"))]
type F32x8 = f32;
#[cfg(not(target_arch = "x86_64"))]
type F32x16 = f32;
#[cfg(not(target_arch = "x86_64"))]
type F64x4 = f64;
#[cfg(not(target_arch = "x86_64"))]
type F64x8 = f64;

/// NaN-propagating max (`max`) or min of an f32 run (`∓inf` when empty).
pub(crate) fn extreme_f32(isa: Isa, x: &[f32], max: bool) -> f32 {
    // SAFETY: `x` is a valid slice; the ISA was detected.
    unsafe { per_isa!(isa, [f32, F32x8, F32x16], |x: &[f32], max: bool| -> f32 { extreme_run::<V>(x, max) }) }
}

/// NaN-propagating max (`max`) or min of an f64 run (`∓inf` when empty).
pub(crate) fn extreme_f64(isa: Isa, x: &[f64], max: bool) -> f64 {
    // SAFETY: as for `extreme_f32`.
    unsafe { per_isa!(isa, [f64, F64x4, F64x8], |x: &[f64], max: bool| -> f64 { extreme_run::<V>(x, max) }) }
}

/// Column step of max/min over f32: `accs[j] = extreme(accs[j], row[j])`.
///
/// # Safety
/// `row` must be valid for `accs.len()` reads.
pub(crate) unsafe fn extreme_row_f32(isa: Isa, accs: &mut [f32], row: *const f32, max: bool) {
    per_isa!(isa, [f32, F32x8, F32x16], |accs: &mut [f32], row: *const f32, max: bool| -> () { extreme_row::<V>(accs, row, max) })
}

/// Column step of max/min over f64, as [`extreme_row_f32`].
///
/// # Safety
/// `row` must be valid for `accs.len()` reads.
pub(crate) unsafe fn extreme_row_f64(isa: Isa, accs: &mut [f64], row: *const f64, max: bool) {
    per_isa!(isa, [f64, F64x4, F64x8], |accs: &mut [f64], row: *const f64, max: bool| -> () { extreme_row::<V>(accs, row, max) })
}

/// Column step of a sum over f64: `accs[j] += row[j]`.
///
/// # Safety
/// `row` must be valid for `accs.len()` reads.
pub(crate) unsafe fn add_row_f64_to_f64(isa: Isa, accs: &mut [f64], row: *const f64) {
    per_isa!(isa, [f64, F64x4, F64x8], |accs: &mut [f64], row: *const f64| -> () { add_row_f64::<V>(accs, row) })
}

/// Column step of a sum over f32 into f64 accumulators: `accs[j] += row[j] as f64`.
///
/// # Safety
/// `row` must be valid for `accs.len()` reads.
pub(crate) unsafe fn add_row_f32_to_f64(isa: Isa, accs: &mut [f64], row: *const f32) {
    match isa {
        // SAFETY: the level was detected on this CPU.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => x86::add_row_f32_avx512(accs, row),
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => x86::add_row_f32_avx2(accs, row),
        _ => {
            for (j, a) in accs.iter_mut().enumerate() {
                *a += *row.add(j) as f64;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn add_row_f32_avx2(accs: &mut [f64], row: *const f32) {
        let (n, a) = (accs.len(), accs.as_mut_ptr());
        let mut j = 0;
        while j + 4 <= n {
            // SAFETY: j + 4 <= n keeps both accesses inside the block.
            let v = _mm256_cvtps_pd(_mm_loadu_ps(row.add(j)));
            _mm256_storeu_pd(a.add(j), _mm256_add_pd(_mm256_loadu_pd(a.add(j)), v));
            j += 4;
        }
        for j in j..n {
            accs[j] += *row.add(j) as f64;
        }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn add_row_f32_avx512(accs: &mut [f64], row: *const f32) {
        let (n, a) = (accs.len(), accs.as_mut_ptr());
        let mut j = 0;
        while j + 8 <= n {
            // SAFETY: j + 8 <= n keeps both accesses inside the block.
            let v = _mm512_cvtps_pd(_mm256_loadu_ps(row.add(j)));
            _mm512_storeu_pd(a.add(j), _mm512_add_pd(_mm512_loadu_pd(a.add(j)), v));
            j += 8;
        }
        for j in j..n {
            accs[j] += *row.add(j) as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, nan_at: Option<usize>) -> Vec<f32> {
        let mut x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1009) as f32 - 504.0) * 0.37).collect();
        if let Some(k) = nan_at {
            x[k] = f32::NAN;
        }
        x
    }

    /// Every supported ISA against a plain scalar fold, over lengths around the
    /// vector widths, with and without a NaN in the vector part and in the tail.
    #[test]
    fn extremes_match_scalar_on_every_isa() {
        for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
            // an empty run gives the fold's start (softmax rows rely on it)
            assert_eq!(extreme_f32(isa, &[], true), f32::NEG_INFINITY);
            assert_eq!(extreme_f64(isa, &[], false), f64::INFINITY);
            for n in [1usize, 7, 16, 63, 64, 65, 200, 1001] {
                for nan_at in [None, Some(0), Some(n / 2), Some(n - 1)] {
                    let x = data(n, nan_at);
                    for max in [true, false] {
                        let want = x[1..].iter().fold(x[0], |m, &e| if takes(max, e, m) { e } else { m });
                        let got = extreme_f32(isa, &x, max);
                        assert_eq!(got.is_nan(), nan_at.is_some(), "{isa:?} n={n} nan_at={nan_at:?}");
                        if nan_at.is_none() {
                            assert_eq!(got, want, "{isa:?} n={n} max={max}");
                        }
                        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
                        let got64 = extreme_f64(isa, &x64, max);
                        assert_eq!(got64.is_nan(), nan_at.is_some());
                        if nan_at.is_none() {
                            assert_eq!(got64, want as f64);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn column_steps_match_scalar_on_every_isa() {
        for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
            for n in [1usize, 5, 8, 17, 33, 100] {
                let rows: Vec<Vec<f32>> = (0..4).map(|r| data(n + r, if r == 2 { Some(n / 2) } else { None })[r..].to_vec()).collect();
                let mut sum = vec![0f64; n];
                let mut sum64 = vec![0f64; n];
                let mut mx = vec![f32::NEG_INFINITY; n];
                let mut mn64 = vec![f64::INFINITY; n];
                for row in &rows {
                    let row64: Vec<f64> = row.iter().map(|&v| v as f64).collect();
                    unsafe {
                        add_row_f32_to_f64(isa, &mut sum, row.as_ptr());
                        add_row_f64_to_f64(isa, &mut sum64, row64.as_ptr());
                        extreme_row_f32(isa, &mut mx, row.as_ptr(), true);
                        extreme_row_f64(isa, &mut mn64, row64.as_ptr(), false);
                    }
                }
                for j in 0..n {
                    let col: Vec<f64> = rows.iter().map(|r| r[j] as f64).collect();
                    let want: f64 = col.iter().fold(0.0, |a, &v| a + v);
                    assert!(sum[j] == want || (sum[j].is_nan() && want.is_nan()), "{isa:?} sum col {j}");
                    assert!(sum64[j] == want || (sum64[j].is_nan() && want.is_nan()), "{isa:?} sum64 col {j}");
                    let has_nan = col.iter().any(|v| v.is_nan());
                    let wmax = col.iter().copied().filter(|v| !v.is_nan()).fold(f64::NEG_INFINITY, f64::max);
                    let wmin = col.iter().copied().filter(|v| !v.is_nan()).fold(f64::INFINITY, f64::min);
                    assert_eq!(mx[j].is_nan(), has_nan, "{isa:?} max col {j}");
                    assert_eq!(mn64[j].is_nan(), has_nan, "{isa:?} min col {j}");
                    if !has_nan {
                        assert_eq!(mx[j] as f64, wmax);
                        assert_eq!(mn64[j], wmin);
                    }
                }
            }
        }
    }
}
