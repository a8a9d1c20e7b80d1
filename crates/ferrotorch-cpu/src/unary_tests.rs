//! Accuracy and layout tests of the unary kernels.

use crate::simd::Isa;
use crate::pointwise::unary;
use crate::unary::*;
use ferrotorch_core::UnaryOp;
use crate::{Dst, Src};
use ferrotorch_core::{DType, Layout};

/// Inputs spanning the whole f32 range: special values, a log-uniform sweep of
/// bit patterns of both signs, and a dense linear sweep of [-12, 12].
pub(crate) fn f32_inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        0.5,
        -0.5,
        0.25,
        0.75,
        88.72283,
        88.7229,
        -87.33654,
        -103.9,
        -104.0,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
    ];
    let step = 7919u32 * 3; // covers every exponent of both signs
    let mut b = 0u32;
    while let Some(nb) = b.checked_add(step) {
        v.push(f32::from_bits(b));
        b = nb;
    }
    for i in 0..=48_000 {
        v.push(-12.0 + 24.0 * i as f32 / 48_000.0);
    }
    v
}

/// Distance of `y` from the exact `r` in units of the f32 ulp at `r`.
pub(crate) fn ulp_err_f32(y: f32, r: f64) -> f64 {
    if r.is_nan() || y.is_nan() {
        return if r.is_nan() && y.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let rr = r as f32;
    if rr.is_infinite() {
        return if y == rr || (y.abs() == f32::MAX && y.signum() == rr.signum()) { 0.0 } else { f64::INFINITY };
    }
    if y.is_infinite() {
        return if (r.abs() - f32::MAX as f64) / f32::MAX as f64 <= 2.0f64.powi(-24) { 1.0 } else { f64::INFINITY };
    }
    let a = r.abs();
    let ulp = if a < f32::MIN_POSITIVE as f64 { 2f64.powi(-149) } else { 2f64.powi(a.log2().floor() as i32 - 23) };
    (y as f64 - r).abs() / ulp
}

/// Distance in f64 ulps between `y` and a reference `r` (itself rounded).
pub(crate) fn ulp_err_f64(y: f64, r: f64) -> f64 {
    if r.is_nan() || y.is_nan() {
        return if r.is_nan() && y.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if r.is_infinite() || y.is_infinite() {
        return if y == r { 0.0 } else { f64::INFINITY };
    }
    let a = r.abs();
    // ulp of the binade of `a`: the gap above its power-of-two floor
    let floor = f64::from_bits(a.to_bits() & 0xfff0_0000_0000_0000);
    let ulp = if a < f64::MIN_POSITIVE { f64::from_bits(1) } else { f64::from_bits(floor.to_bits() + 1) - floor };
    (y - r).abs() / ulp
}

fn supported_isas() -> Vec<Isa> {
    Isa::ALL.iter().copied().filter(|i| i.is_supported()).collect()
}

/// Max f32 ulp error allowed per op (measured maxima sit at or below these).
fn f32_bound(op: UnaryOp) -> f64 {
    use UnaryOp::*;
    match op {
        Sqrt | Reciprocal => 0.5,
        Erfc => 3.0,        // erfc's tail multiplies two exponentials
        Gelu(false) => 4.5, // … and so does gelu's left tail
        Silu | Gelu(true) => 3.5,
        _ => 2.5,
    }
}

#[test]
fn f32_simd_accuracy_against_f64_reference() {
    let xs = f32_inputs();
    let mut out = vec![0f32; xs.len()];
    let mut report = String::new();
    let mut failed = false;
    for isa in supported_isas() {
        for op in SIMD_OPS {
            unary_slice_with(isa, op, &xs, &mut out);
            let (mut worst, mut at) = (0f64, 0f32);
            for (&x, &y) in xs.iter().zip(&out) {
                let e = ulp_err_f32(y, reference(op, x as f64));
                if e > worst || e.is_nan() {
                    worst = e;
                    at = x;
                }
            }
            let ok = worst <= f32_bound(op);
            failed |= !ok;
            report += &format!(
                "{:?} {:<28} max {:>8.3} ulp at x = {:e}{}\n",
                isa,
                format!("{op:?}"),
                worst,
                at,
                if ok { "" } else { "  <-- over bound" }
            );
        }
    }
    println!("{report}");
    assert!(!failed, "{report}");
}

#[test]
fn f64_simd_accuracy_against_f64_reference() {
    let xs: Vec<f64> = f32_inputs().into_iter().map(|x| x as f64).chain([0.1, -0.1, 1e-300, -1e-300, 700.0, -740.0]).collect();
    let mut out = vec![0f64; xs.len()];
    let mut report = String::new();
    let mut failed = false;
    for isa in supported_isas() {
        for op in SIMD_OPS {
            unary_slice_with(isa, op, &xs, &mut out);
            let (mut worst, mut at) = (0f64, 0f64);
            for (&x, &y) in xs.iter().zip(&out) {
                let r = reference(op, x);
                if r.abs() < f64::MIN_POSITIVE * 2f64.powi(60) {
                    // The reference's intermediates (e.g. e^x) may be subnormal
                    // here and have lost bits: only check the magnitude.
                    assert!(y.abs() < f64::MIN_POSITIVE * 2f64.powi(61), "{op:?}({x}) = {y}, want {r}");
                    continue;
                }
                let mut e = ulp_err_f64(y, r);
                if op == UnaryOp::Gelu(true) && x.is_finite() {
                    // The f64 reference rounds the cubic; for x < 0 the result's
                    // relative sensitivity to that is ~0.27·|x|³.
                    e /= 1.0 + 0.3 * x.abs().powi(3);
                }
                if e > worst || e.is_nan() {
                    worst = e;
                    at = x;
                }
            }
            let ok = worst <= f64_bound(op);
            failed |= !ok;
            report += &format!(
                "{:?} {:<28} max {:>8.3} ulp at x = {:e}{}\n",
                isa,
                format!("{op:?}"),
                worst,
                at,
                if ok { "" } else { "  <-- over bound" }
            );
        }
    }
    println!("{report}");
    assert!(!failed, "{report}");
}

/// f64 bounds, against a reference that is itself within an ulp or so.
fn f64_bound(op: UnaryOp) -> f64 {
    use UnaryOp::*;
    match op {
        Sqrt | Reciprocal => 0.5,
        Gelu(false) | Erfc => 6.0, // the reference composes several rounded std calls
        _ => 4.0,
    }
}

#[test]
fn reference_erf_erfc_erfinv_known_values() {
    // (x, erf x, erfc x) from Python's math module (correctly rounded to ~1 ulp).
    let table = [
        (0.0, 0.0, 1.0),
        (1e-10, 1.1283791670955126e-10, 0.999999999887162),
        (0.3, 0.3286267594591274, 0.6713732405408726),
        (0.84375, 0.7672256612323416, 0.23277433876765835),
        (1.0, 0.8427007929497149, 0.15729920705028513),
        (2.0, 0.9953222650189527, 0.004677734981047265),
        (3.5, 0.9999992569016276, 7.430983723414128e-07),
        (6.0, 1.0, 2.1519736712498916e-17),
        (10.0, 1.0, 2.088487583762545e-45),
        (7.995000839233398, 1.0, 1.2166156972470159e-29),
        (-2.0, -0.9953222650189527, 1.9953222650189528),
    ];
    for (x, e, c) in table {
        assert!(ulp_err_f64(erf(x), e) <= 1.0, "erf({x}) = {} vs {e}", erf(x));
        let tol = if c < 1e-300 { 64.0 } else { 2.0 }; // subnormal results
        assert!(ulp_err_f64(erfc(x), c) <= tol, "erfc({x}) = {} vs {c}", erfc(x));
    }
    assert!(erf(f64::INFINITY) == 1.0 && erf(f64::NEG_INFINITY) == -1.0 && erf(f64::NAN).is_nan());
    assert!(erfc(f64::INFINITY) == 0.0 && erfc(f64::NEG_INFINITY) == 2.0);
    for &y in &[0.0, 1e-300, 1e-12, 0.1, 0.5, 0.9, 0.999, 0.999999, 1.0 - 1e-15, -0.7] {
        let x = erfinv(y);
        assert!((erf(x) - y).abs() <= 2.0 * f64::EPSILON * y.abs().max(1e-300), "erfinv({y}) = {x}");
        if y > 0.5 {
            // x is quantised: erfc's relative slope is 2x, so allow 2x·2ulp(x) plus rounding.
            let rel = (erfc(x) - (1.0 - y)).abs() / (1.0 - y);
            assert!(rel <= 2.0 * x * 2.0 * x * f64::EPSILON + 8.0 * f64::EPSILON, "erfinv({y}) tail: {rel}");
        }
    }
    assert!(erfinv(1.0) == f64::INFINITY && erfinv(-1.0) == f64::NEG_INFINITY && erfinv(1.5).is_nan());
}

#[test]
fn special_values_match_pytorch() {
    use UnaryOp::*;
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let xs = [nan, -0.0, inf, -inf, -3.0, 0.5, 30.0];
    // Values printed by PyTorch 2.13 for the same inputs (NaN written as nan).
    let cases: &[(UnaryOp, [f32; 7])] = &[
        (Silu, [nan, -0.0, inf, nan, -0.14227761, 0.31122968, 30.0]),
        (Gelu(false), [nan, 0.0, inf, nan, -0.0040496, 0.3457312, 30.0]),
        (Sigmoid, [nan, 0.5, 1.0, 0.0, 0.047425874, 0.62245935, 1.0]),
        (Expm1, [nan, -0.0, inf, -1.0, -0.9502129, 0.6487213, 1.0686474e13]),
        (Rsqrt, [nan, f32::NEG_INFINITY, 0.0, nan, nan, 1.4142135, 0.18257418]),
        (Reciprocal, [nan, f32::NEG_INFINITY, 0.0, -0.0, -0.33333334, 2.0, 0.033333335]),
        (Gelu(true), [nan, -0.0, inf, nan, -0.0036374331, 0.345714, 30.0]),
    ];
    for isa in supported_isas() {
        for (op, want) in cases {
            let mut got = [0f32; 7];
            unary_slice_with(isa, *op, &xs, &mut got);
            for i in 0..7 {
                let (g, w) = (got[i], want[i]);
                let same = (g.is_nan() && w.is_nan()) || g == w || ((g - w).abs() <= 1e-4 * w.abs().max(1e-3));
                assert!(same, "{isa:?} {op:?}({}) = {g}, PyTorch gives {w}", xs[i]);
            }
        }
    }
}

fn layout(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
    Layout { shape: shape.into(), strides: strides.into(), offset }
}

#[test]
fn strided_broadcast_empty_and_0d_layouts() {
    // a: 3x4 buffer; inputs read transposed, broadcast, and sliced.
    let a: Vec<f32> = (0..12).map(|i| i as f32 * 0.37 - 2.0).collect();
    let cases: Vec<(Layout, Layout)> = vec![
        (layout(&[4, 3], &[3, 1], 0), layout(&[4, 3], &[1, 4], 0)), // transposed input
        (layout(&[2, 3], &[3, 1], 0), layout(&[2, 3], &[0, 1], 1)), // broadcast rows
        (layout(&[3, 2], &[2, 1], 0), layout(&[3, 2], &[4, 2], 1)), // stepped slice
        (layout(&[], &[], 0), layout(&[], &[], 5)),                 // 0-d
        (layout(&[0, 3], &[3, 1], 0), layout(&[0, 3], &[3, 1], 0)), // empty
        (layout(&[12], &[1], 0), layout(&[12], &[1], 0)),           // contiguous
    ];
    for (ol, al) in &cases {
        for op in [UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Log1p, UnaryOp::Gelu(false)] {
            let mut out = vec![f32::NAN; 12];
            unary(
                op,
                DType::Float32,
                Dst { base: out.as_mut_ptr() as *mut u8, layout: ol },
                Src { base: a.as_ptr() as *const u8, layout: al },
            )
            .unwrap();
            let n: usize = ol.shape.iter().product();
            let mut idx = vec![0usize; ol.shape.len()];
            for _ in 0..n {
                let mut oo = ol.offset as isize;
                let mut ao = al.offset as isize;
                for d in 0..idx.len() {
                    oo += idx[d] as isize * ol.strides[d];
                    ao += idx[d] as isize * al.strides[d];
                }
                let want = reference(op, a[ao as usize] as f64);
                assert!(ulp_err_f32(out[oo as usize], want) <= 2.5, "{op:?} layout {ol:?} <- {al:?}");
                for d in (0..idx.len()).rev() {
                    idx[d] += 1;
                    if idx[d] < ol.shape[d] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
            if n == 0 {
                assert!(out.iter().all(|v| v.is_nan()), "empty output must not be written");
            }
        }
    }
}

#[test]
fn every_dtype_and_in_place() {
    use half::{bf16, f16};
    let l = layout(&[70], &[1], 0);
    let xs: Vec<f64> = (0..70).map(|i| i as f64 * 0.1 - 3.0).collect();
    // f64
    let mut o64 = vec![0f64; 70];
    unary(UnaryOp::Sigmoid, DType::Float64, Dst { base: o64.as_mut_ptr() as *mut u8, layout: &l }, Src { base: xs.as_ptr() as *const u8, layout: &l }).unwrap();
    for i in 0..70 {
        assert!(ulp_err_f64(o64[i], reference(UnaryOp::Sigmoid, xs[i])) <= 4.0);
    }
    // halves, computed in f32
    let h: Vec<f16> = xs.iter().map(|&x| f16::from_f64(x)).collect();
    let mut oh = vec![f16::ZERO; 70];
    unary(UnaryOp::Exp, DType::Float16, Dst { base: oh.as_mut_ptr() as *mut u8, layout: &l }, Src { base: h.as_ptr() as *const u8, layout: &l }).unwrap();
    for i in 0..70 {
        let want = f16::from_f64(h[i].to_f64().exp());
        assert!((oh[i].to_f64() - want.to_f64()).abs() <= want.to_f64() * 1e-3, "f16 exp");
    }
    let mut b: Vec<bf16> = xs.iter().map(|&x| bf16::from_f64(x)).collect();
    let src = b.clone();
    let p = b.as_mut_ptr();
    // in place: out and input are the same storage
    unary(UnaryOp::Tanh, DType::BFloat16, Dst { base: p as *mut u8, layout: &l }, Src { base: p as *const u8, layout: &l }).unwrap();
    for i in 0..70 {
        let want = src[i].to_f64().tanh();
        assert!((b[i].to_f64() - want).abs() <= 1e-2 * want.abs().max(1e-2), "bf16 tanh in place");
    }
    // integers
    let ints: Vec<i32> = vec![-5, 0, 7, i32::MIN];
    let li = layout(&[4], &[1], 0);
    let mut oi = vec![0i32; 4];
    for (op, want) in [
        (UnaryOp::Neg, [5, 0, -7, i32::MIN]),
        (UnaryOp::Abs, [5, 0, 7, i32::MIN]),
        (UnaryOp::Sign, [-1, 0, 1, -1]),
        (UnaryOp::Relu, [0, 0, 7, 0]),
        (UnaryOp::Floor, [-5, 0, 7, i32::MIN]),
    ] {
        unary(op, DType::Int32, Dst { base: oi.as_mut_ptr() as *mut u8, layout: &li }, Src { base: ints.as_ptr() as *const u8, layout: &li }).unwrap();
        assert_eq!(oi, want, "{op:?}");
    }
    let e = unary(UnaryOp::Exp, DType::Int64, Dst { base: oi.as_mut_ptr() as *mut u8, layout: &li }, Src { base: ints.as_ptr() as *const u8, layout: &li });
    assert!(e.is_err());
}

#[test]
fn large_parallel_run_matches_serial() {
    let n = 300_001;
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 20011) as f32 * 0.001 - 10.0).collect();
    let l = layout(&[n], &[1], 0);
    let mut out = vec![0f32; n];
    unary_f32(UnaryOp::Silu, Dst { base: out.as_mut_ptr() as *mut u8, layout: &l }, Src { base: xs.as_ptr() as *const u8, layout: &l });
    let mut serial = vec![0f32; n];
    unary_slice_f32(UnaryOp::Silu, &xs, &mut serial);
    assert_eq!(out, serial);
}

