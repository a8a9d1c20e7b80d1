//! Vectorisable elementary functions, written once over [`Vf`] and used for
//! f32 and f64 lanes alike (constants are chosen by `V::F64`).
//!
//! Method: Cody–Waite range reduction `x = n·ln2 + r` with a Taylor polynomial
//! for `e^r` (degree 7 for f32, 13 for f64, truncation error far below half an
//! ulp), scaling by `2^n` in two steps so subnormal results and overflow come
//! out right; `log` reduces to `[√2/2, √2)` and uses the `atanh` series of
//! fdlibm; `erf`/`erfc` use fdlibm's rational approximations, all branches
//! evaluated and blended. No branch depends on the data, so every lane follows
//! the same instruction stream. Measured errors against f64 references are
//! asserted in this crate's tests (about 1–2 ulp for f32).
//!
//! The erf/erfc coefficients are those of fdlibm's `s_erf.c`:
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//! Developed at SunPro, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this software is freely
//! granted, provided that this notice is preserved.

use super::Vf;

const LOG2E: f64 = std::f64::consts::LOG2_E;

#[inline(always)]
fn k<V: Vf>(v: f64) -> V {
    V::c(v)
}

/// Horner evaluation of `c[0] + c[1]·x + … + c[n]·x^n`.
#[inline(always)]
fn poly<V: Vf>(x: V, c: &[f64]) -> V {
    let mut p = k::<V>(c[c.len() - 1]);
    let mut i = c.len() - 1;
    while i > 0 {
        i -= 1;
        p = p.mul_add(x, k(c[i]));
    }
    p
}

const INV_FACT: [f64; 14] = [
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
];

/// Degree of the `e^r` Taylor polynomial on `|r| <= ln2/2`.
#[inline(always)]
fn exp_degree<V: Vf>() -> usize {
    if V::F64 {
        13
    } else {
        7
    }
}

/// `(ln2_hi, ln2_lo)`: `n·ln2_hi` is exact for every `n` the reductions produce.
#[inline(always)]
fn ln2_split<V: Vf>() -> (V, V) {
    if V::F64 {
        (k(6.93147180369123816490e-01), k(1.90821492927058770002e-10))
    } else {
        (k(0.693145751953125), k(1.428606765330187045e-06))
    }
}

/// Clamps `x` to `[lo, hi]` (NaN becomes `lo`; callers restore NaN at the end).
#[inline(always)]
fn clamp<V: Vf>(x: V, lo: f64, hi: f64) -> V {
    x.max(k(lo)).min(k(hi))
}

/// `x = n·ln2 + r`; returns `(n, r)` with `n` integral.
#[inline(always)]
fn reduce_ln2<V: Vf>(x: V) -> (V, V) {
    let n = x.mul(k(LOG2E)).round();
    let (hi, lo) = ln2_split::<V>();
    let r = n.neg().mul_add(hi, x);
    let r = n.neg().mul_add(lo, r);
    (n, r)
}

/// `p · 2^n` for integral `n` in about `[-1100, 1050]` (f64) / `[-160, 130]` (f32),
/// in two steps so that neither factor leaves the normal range.
#[inline(always)]
fn scale2<V: Vf>(p: V, n: V) -> V {
    let n1 = n.mul(k(0.5)).floor();
    let n2 = n.sub(n1);
    p.mul(n1.pow2i()).mul(n2.pow2i())
}

#[inline(always)]
fn exp_bounds<V: Vf>() -> (f64, f64) {
    if V::F64 {
        (-800.0, 710.0)
    } else {
        (-120.0, 89.0)
    }
}

/// `e^x = p·2^n` (`x` clamped to the range where that is finite or 0).
#[inline(always)]
fn exp_parts<V: Vf>(x: V) -> (V, V) {
    let (lo, hi) = exp_bounds::<V>();
    let (n, r) = reduce_ln2(clamp(x, lo, hi));
    (poly(r, &INV_FACT[..=exp_degree::<V>()]), n)
}

/// `e^x`.
#[inline(always)]
pub(crate) fn exp<V: Vf>(x: V) -> V {
    let (p, n) = exp_parts(x);
    V::select(x.is_nan(), x, scale2(p, n))
}

/// A constant as a hi + lo pair in the lane type (lo = 0 for f64 lanes).
#[inline(always)]
fn split<V: Vf>(v: f64) -> (V, V) {
    if V::F64 {
        (k(v), k(0.0))
    } else {
        let h = v as f32 as f64;
        (k(h), k(v - h))
    }
}

/// The rounding error of `s = a + b` (Knuth's two-sum).
#[inline(always)]
fn sum_err<V: Vf>(a: V, b: V, s: V) -> V {
    let bb = s.sub(a);
    a.sub(s.sub(bb)).add(b.sub(bb))
}

/// `2^x`.
#[inline(always)]
pub(crate) fn exp2<V: Vf>(x: V) -> V {
    let (lo, hi) = exp_bounds::<V>();
    let xc = clamp(x, lo * LOG2E, hi * LOG2E);
    let n = xc.round();
    let f = xc.sub(n); // exact
    // r = f·ln2 in two parts so the product's rounding error is kept.
    let l = std::f64::consts::LN_2;
    let (c_hi, c_lo) = if V::F64 { (l, 2.3190468138462996e-17) } else { (l as f32 as f64, l - (l as f32 as f64)) };
    let (c_hi, c_lo) = (k::<V>(c_hi), k::<V>(c_lo));
    let r = f.mul(c_hi);
    let r = f.mul_add(c_lo, r.add(f.mul_err(c_hi)));
    let p = poly(r, &INV_FACT[..=exp_degree::<V>()]);
    V::select(x.is_nan(), x, scale2(p, n))
}

/// `e^x - 1`, accurate near 0.
#[inline(always)]
pub(crate) fn expm1<V: Vf>(x: V) -> V {
    let (lo, hi) = exp_bounds::<V>();
    let (n, r) = reduce_ln2(clamp(x, lo, hi));
    // u = e^r - 1 = r + r²·(1/2 + r/6 + …)
    let t = poly(r, &INV_FACT[2..=exp_degree::<V>()]);
    let u = t.mul_add(r.mul(r), r);
    // (u + 1)·2^n - 1 = 2^n2 · (u·2^n1 + (2^n1 - 2^-n2)), exact when n = 0.
    let n1 = n.mul(k(0.5)).floor();
    let n2 = n.sub(n1);
    let p1 = n1.pow2i();
    let y = u.mul_add(p1, p1.sub(n2.neg().pow2i())).mul(n2.pow2i());
    // NaN passes through; ±0 returns itself (expm1(-0) is -0).
    V::select(V::mor(x.is_nan(), x.eq(k(0.0))), x, y)
}

/// Natural logarithm (fdlibm's reduction to `[√2/2, √2)` and `atanh` series).
#[inline(always)]
pub(crate) fn log<V: Vf>(x: V) -> V {
    let (k_f, f, s, hfsq, r) = log_parts(x);
    let (hi, lo) = ln2_split::<V>();
    let y = s.mul(hfsq.add(r)).add(k_f.mul(lo)).sub(hfsq).add(f).add(k_f.mul(hi));
    log_special(x, y)
}

/// Returns `(k, f, s, hfsq, R)` with `x = 2^k·(1+f)`, `s = f/(2+f)`,
/// `hfsq = f²/2`, and `log(1+f) = f - hfsq + s·(hfsq + R)`.
#[inline(always)]
fn log_parts<V: Vf>(x: V) -> (V, V, V, V, V) {
    let (min_normal, up, up_k) = if V::F64 {
        (f64::MIN_POSITIVE, 2f64.powi(54), 54.0)
    } else {
        (f32::MIN_POSITIVE as f64, 2f64.powi(25), 25.0)
    };
    let sub = x.lt(k(min_normal));
    let xs = V::select(sub, x.mul(k(up)), x);
    let kadj = V::select(sub, k(-up_k), k(0.0));
    let (shift, bias, mant, sqrt_half_bits) = if V::F64 {
        ((0x3ff0_0000i64 - 0x3fe6_a09e) << 32, 1023.0, 0x000f_ffff_ffff_ffffu64, 0x3fe6_a09ei64 << 32)
    } else {
        (0x3f80_0000i64 - 0x3f35_04f3, 127.0, 0x007f_ffffu64, 0x3f35_04f3i64)
    };
    let ix = xs.bits_add(shift);
    let k_f = ix.exponent_field().sub(k(bias)).add(kadj);
    let m = ix.bits_and(mant).bits_add(sqrt_half_bits);
    let f = m.sub(k(1.0));
    let hfsq = k::<V>(0.5).mul(f).mul(f);
    let s = f.div(k::<V>(2.0).add(f));
    let z = s.mul(s);
    let w = z.mul(z);
    let r = if V::F64 {
        let t1 = w.mul(poly(w, &[3.999999999940941908e-01, 2.222219843214978396e-01, 1.531383769920937332e-01]));
        let t2 = z.mul(poly(
            w,
            &[6.666666666666735130e-01, 2.857142874366239149e-01, 1.818357216161805012e-01, 1.479819860511658591e-01],
        ));
        t2.add(t1)
    } else {
        let t1 = w.mul(poly(w, &[0.40000972152, 0.24279078841]));
        let t2 = z.mul(poly(w, &[0.66666662693, 0.28498786688]));
        t2.add(t1)
    };
    (k_f, f, s, hfsq, r)
}

/// Log's special values: `log(+inf) = inf`, `log(±0) = -inf`, negative → NaN, NaN → NaN.
#[inline(always)]
fn log_special<V: Vf>(x: V, y: V) -> V {
    let y = V::select(x.eq(k(f64::INFINITY)), x, y);
    let y = V::select(x.eq(k(0.0)), k(f64::NEG_INFINITY), y);
    let y = V::select(x.lt(k(0.0)), k(f64::NAN), y);
    V::select(x.is_nan(), x, y)
}

/// `log(1 + x)`, accurate near 0.
#[inline(always)]
pub(crate) fn log1p<V: Vf>(x: V) -> V {
    let u = k::<V>(1.0).add(x);
    // log(u) + (x - (u - 1))/u corrects the rounding of 1 + x.
    let c = x.sub(u.sub(k(1.0))).div(u);
    let big = if V::F64 { 2f64.powi(53) } else { 2f64.powi(24) };
    let c = V::select(V::mor(u.eq(k(0.0)), x.abs().ge(k(big))), k(0.0), c);
    let l = log(u);
    // NaN passes through; ±0 returns itself (log1p(-0) is -0).
    V::select(V::mor(x.is_nan(), x.eq(k(0.0))), x, l.add(c))
}

/// `tanh x = sign(x) · d/(d + 2)` with `d = expm1(2|x|)`.
#[inline(always)]
pub(crate) fn tanh<V: Vf>(x: V) -> V {
    let a = x.abs();
    let d = expm1(a.add(a));
    let y = d.div(d.add(k(2.0)));
    let sat = if V::F64 { 19.1 } else { 9.1 };
    let y = V::select(a.gt(k(sat)), k(1.0), y);
    y.copysign(x)
}

/// `x · sigmoid(z + z_lo)` (`z_lo` a tiny correction to `z`): `x/(1 + e)` for
/// `z >= 0` and `x·e/(1 + e)` otherwise, `e = e^-|z|`, with the final power-of-two
/// scaling applied last so that subnormal results are rounded once.
#[inline(always)]
fn x_sigmoid<V: Vf>(x: V, z: V, z_lo: V) -> V {
    let (p, n) = exp_parts(z.abs().neg());
    let pos = z.ge(k(0.0));
    let z_lo = V::select(z.abs().lt(k(1e4)), z_lo, k(0.0));
    // e^-(|z| ± z_lo) ≈ e^-|z| · (1 ∓ z_lo)
    let p = p.mul_add(V::select(pos, z_lo.neg(), z_lo), p);
    let q = x.div(k::<V>(1.0).add(scale2(p, n)));
    let y = V::select(pos, q, scale2(q.mul(p), n));
    // Below the clamp e^z is far under the smallest subnormal: x·0 (NaN for
    // infinite x, as PyTorch).
    V::select(z.lt(k(exp_bounds::<V>().0)), x.mul(k(0.0)), y)
}

/// `1 / (1 + e^-x)`.
#[inline(always)]
pub(crate) fn sigmoid<V: Vf>(x: V) -> V {
    let y = x_sigmoid(k(1.0), x, k(0.0));
    V::select(x.is_nan(), x, y)
}

/// `x · sigmoid(x)`.
#[inline(always)]
pub(crate) fn silu<V: Vf>(x: V) -> V {
    x_sigmoid(x, x, k(0.0))
}

/// `x · sigmoid(2·√(2/π)·(x + 0.044715·x³))`, which equals
/// `x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³)))`. The argument is carried with
/// its rounding error: for `x < 0` the result's relative sensitivity to it is
/// about `2·0.134·|x|³`, which would cost f32 hundreds of ulps at `x ≈ -9`.
#[inline(always)]
pub(crate) fn gelu_tanh<V: Vf>(x: V) -> V {
    let x2 = x.mul(x);
    let x2e = x.mul_err(x);
    let x3 = x2.mul(x);
    let x3e = x2.mul_err(x).add(x2e.mul(x));
    let (a_hi, a_lo) = split::<V>(0.044715);
    let p = x3.mul(a_hi);
    let pe = x3.mul_err(a_hi).add(x3e.mul(a_hi)).add(x3.mul(a_lo));
    let s = x.add(p);
    let se = sum_err(x, p, s).add(pe);
    let (c_hi, c_lo) = split::<V>(2.0 * 0.7978845608028654);
    let z = s.mul(c_hi);
    let ze = s.mul_err(c_hi).add(se.mul(c_hi)).add(s.mul(c_lo));
    x_sigmoid(x, z, ze)
}



/// fdlibm's erf/erfc coefficients (see the module notice).
mod erfc {
    pub const ERX: f64 = 8.45062911510467529297e-01;
    pub const PP: [f64; 5] = [
        1.28379167095512558561e-01,
        -3.25042107247001499370e-01,
        -2.84817495755985104766e-02,
        -5.77027029648944159157e-03,
        -2.37630166566501626084e-05,
    ];
    pub const QQ: [f64; 6] = [
        1.0,
        3.97917223959155352819e-01,
        6.50222499887672944485e-02,
        5.08130628187576562776e-03,
        1.32494738004321644526e-04,
        -3.96022827877536812320e-06,
    ];
    pub const PA: [f64; 7] = [
        -2.36211856075265944077e-03,
        4.14856118683748331666e-01,
        -3.72207876035701323847e-01,
        3.18346619901161753674e-01,
        -1.10894694282396677476e-01,
        3.54783043256182359371e-02,
        -2.16637559486879084300e-03,
    ];
    pub const QA: [f64; 7] = [
        1.0,
        1.06420880400844228286e-01,
        5.40397917702171048937e-01,
        7.18286544141962662868e-02,
        1.26171219808761642112e-01,
        1.36370839120290507362e-02,
        1.19844998467991074170e-02,
    ];
    pub const RA: [f64; 8] = [
        -9.86494403484714822705e-03,
        -6.93858572707181764372e-01,
        -1.05586262253232909814e+01,
        -6.23753324503260060396e+01,
        -1.62396669462573470355e+02,
        -1.84605092906711035994e+02,
        -8.12874355063065934246e+01,
        -9.81432934416914548592e+00,
    ];
    pub const SA: [f64; 9] = [
        1.0,
        1.96512716674392571292e+01,
        1.37657754143519042600e+02,
        4.34565877475229228821e+02,
        6.45387271733267880336e+02,
        4.29008140027567833386e+02,
        1.08635005541779435134e+02,
        6.57024977031928170135e+00,
        -6.04244152148580987438e-02,
    ];
    // Tail set padded to the degrees of the RA/SA set with zeros so one
    // evaluation with blended coefficients serves both intervals.
    pub const RB: [f64; 8] = [
        -9.86494292470009928597e-03,
        -7.99283237680523006574e-01,
        -1.77579549177547519889e+01,
        -1.60636384855821916062e+02,
        -6.37566443368389627722e+02,
        -1.02509513161107724954e+03,
        -4.83519191608651397019e+02,
        0.0,
    ];
    pub const SB: [f64; 9] = [
        1.0,
        3.03380607434824582924e+01,
        3.25792512996573918826e+02,
        1.53672958608443695994e+03,
        3.19985821950859553908e+03,
        2.55305040643316442583e+03,
        4.74528541206955367215e+02,
        -2.24409524465858183362e+01,
        0.0,
    ];
}

/// Horner with coefficients blended lane by lane between two tables.
#[inline(always)]
fn poly_sel<V: Vf>(x: V, m: V::M, a: &[f64], b: &[f64]) -> V {
    let n = a.len();
    let mut p = V::select(m, k(a[n - 1]), k(b[n - 1]));
    let mut i = n - 1;
    while i > 0 {
        i -= 1;
        p = p.mul_add(x, V::select(m, k(a[i]), k(b[i])));
    }
    p
}

/// For `a >= 0` (with `a + lo` the exact argument, `lo` tiny): `(erf(a), erfc(a))`,
/// each with small relative error, including erfc's far tail.
#[inline(always)]
pub(crate) fn erf_erfc_abs<V: Vf>(a: V, lo: V) -> (V, V) {
    use erfc::*;
    let one = k::<V>(1.0);
    // |a| < 0.84375: erf = a + a·P(a²)/Q(a²).
    let z = a.mul(a);
    let y = poly(z, &PP).div(poly(z, &QQ));
    let erf_a = a.mul_add(y, a);
    let erfc_a = V::select(a.lt(k(0.25)), one.sub(erf_a), k::<V>(0.5).sub(a.mul(y).add(a.sub(k(0.5)))));
    // 0.84375 <= a < 1.25: erf = erx + P(s)/Q(s), s = a - 1.
    let s = a.sub(one);
    let pq = poly(s, &PA).div(poly(s, &QA));
    let erf_b = k::<V>(ERX).add(pq);
    let erfc_b = k::<V>(1.0 - ERX).sub(pq);
    // a >= 1.25: erfc = exp(-a² - 0.5625 + R/S)/a with R/S in 1/a².
    let tail = a.ge(k(1.25));
    let (erf_c, erfc_c) = if V::any(tail) {
        let s = one.div(a.mul(a));
        let near = a.lt(k(1.0 / 0.35));
        let rs = poly_sel(s, near, &RA, &RB).div(poly_sel(s, near, &SA, &SB));
        // z = a with its low bits cleared, so z·z is exact.
        // (11 bits for f32 so that z·z + 0.5625 is exact too)
        let zt = a.bits_and(if V::F64 { 0xffff_ffff_0000_0000 } else { 0xffff_e000 });
        let e1 = exp(zt.mul(zt).neg().sub(k(0.5625)));
        let e2 = exp(zt.sub(a).mul(zt.add(a)).add(rs).sub(k::<V>(2.0).mul(a).mul(lo)));
        let r = e1.mul(e2).div(a);
        let r = V::select(a.ge(k(28.0)), k(0.0), r);
        (one.sub(r), r)
    } else {
        (one, k(0.0))
    };
    let mid = a.lt(k(1.25));
    let small = a.lt(k(0.84375));
    let erf = V::select(small, erf_a, V::select(mid, erf_b, erf_c));
    let erfc = V::select(small, erfc_a, V::select(mid, erfc_b, erfc_c));
    (erf, erfc)
}

/// Error function.
#[inline(always)]
pub(crate) fn erf<V: Vf>(x: V) -> V {
    let (e, _) = erf_erfc_abs(x.abs(), k(0.0));
    V::select(x.is_nan(), x, e.copysign(x))
}

/// Complementary error function `1 - erf(x)`.
#[inline(always)]
pub(crate) fn erfc<V: Vf>(x: V) -> V {
    let (_, c) = erf_erfc_abs(x.abs(), k(0.0));
    let y = V::select(x.lt(k(0.0)), k::<V>(2.0).sub(c), c);
    V::select(x.is_nan(), x, y)
}

/// `x/2 · (1 + erf(x/√2))`, evaluated as `x/2 · erfc(-x/√2)` for negative `x`
/// (keeping `x/√2` exact as a hi + lo pair) so the left tail keeps its
/// relative accuracy.
#[inline(always)]
pub(crate) fn gelu<V: Vf>(x: V) -> V {
    let c = std::f64::consts::FRAC_1_SQRT_2;
    let (c_hi, c_lo) = if V::F64 { (c, -4.833646656726457e-17) } else { (c as f32 as f64, c - (c as f32 as f64)) };
    let ch = k::<V>(c_hi);
    let t = x.mul(ch);
    let t_lo = x.mul_err(ch).add(x.mul(k(c_lo)));
    let neg = x.lt(k(0.0));
    let lo = V::select(neg, t_lo.neg(), t_lo);
    let (e, ec) = erf_erfc_abs(t.abs(), lo);
    let half_x = x.mul(k(0.5));
    V::select(neg, half_x.mul(ec), half_x.mul(one_plus(e)))
}

#[inline(always)]
fn one_plus<V: Vf>(x: V) -> V {
    k::<V>(1.0).add(x)
}
