//! The normal distribution's special functions: the inverse CDF `ndtri`, the
//! log-CDF `log_ndtr` and the scaled complementary error function `erfcx`.

use super::{exp_x2, polevl};

/// The quantile function of the standard normal distribution (Cephes'
/// `ndtri`, Copyright (c) 2018, Steven Moshier; 3-clause BSD): ∓inf at 0 and
/// 1, NaN outside [0, 1].
pub fn ndtri(y0: f64) -> f64 {
    const S2PI: f64 = 2.506_628_274_631_000_502_42;
    const EXPM2: f64 = 0.135_335_283_236_612_691_89;
    const P0: [f64; 5] = [
        -5.996_335_010_141_078_952_67E1, 9.800_107_541_859_996_615_36E1, -5.667_628_574_690_704_392_93E1, 1.393_126_093_872_796_795_03E1,
        -1.239_165_838_673_812_580_16E0,
    ];
    const Q0: [f64; 9] = [
        1.0, 1.954_488_583_381_417_598_34E0, 4.676_279_128_988_815_384_53E0, 8.636_024_213_908_905_905_75E1, -2.254_626_878_541_193_705_27E2,
        2.002_602_123_800_606_603_59E2, -8.203_722_561_683_333_399_12E1, 1.590_562_251_262_116_955_15E1, -1.183_316_211_213_300_031_42E0,
    ];
    const P1: [f64; 9] = [
        4.055_448_923_059_624_199_23E0, 3.152_510_945_998_938_661_54E1, 5.716_281_922_464_212_881_62E1, 4.408_050_738_932_008_347_00E1,
        1.468_495_619_288_580_240_14E1, 2.186_633_068_507_902_675_39E0, -1.402_560_791_713_544_958_75E-1, -3.504_246_268_278_482_034_18E-2,
        -8.574_567_851_546_854_136_11E-4,
    ];
    const Q1: [f64; 9] = [
        1.0, 1.577_998_832_564_667_497_31E1, 4.539_076_351_288_792_105_84E1, 4.131_720_382_546_720_304_40E1, 1.504_253_856_929_075_034_08E1,
        2.504_649_462_083_094_159_79E0, -1.421_829_228_547_877_885_74E-1, -3.808_064_076_915_782_771_94E-2, -9.332_594_808_954_574_273_72E-4,
    ];
    const P2: [f64; 9] = [
        3.237_748_917_769_460_359_70E0, 6.915_228_890_689_842_116_95E0, 3.938_810_252_924_744_434_15E0, 1.333_034_608_158_075_423_89E0,
        2.014_853_895_491_790_815_38E-1, 1.237_166_348_178_200_213_58E-2, 3.015_815_535_082_354_160_07E-4, 2.658_069_746_867_375_508_32E-6,
        6.239_745_391_849_832_937_30E-9,
    ];
    const Q2: [f64; 9] = [
        1.0, 6.024_270_393_647_420_142_55E0, 3.679_835_638_561_608_594_03E0, 1.377_020_994_890_813_302_71E0, 2.162_369_935_944_966_358_90E-1,
        1.342_040_060_885_431_890_37E-2, 3.280_144_646_821_277_391_04E-4, 2.892_478_647_453_806_839_36E-6, 6.790_194_080_099_812_744_25E-9,
    ];
    if y0 == 0.0 {
        return f64::NEG_INFINITY;
    }
    if y0 == 1.0 {
        return f64::INFINITY;
    }
    if !(0.0..=1.0).contains(&y0) {
        return f64::NAN;
    }
    let mut upper = true;
    let mut y = y0;
    if y > 1.0 - EXPM2 {
        y = 1.0 - y;
        upper = false;
    }
    if y > EXPM2 {
        let y = y - 0.5;
        let y2 = y * y;
        return (y + y * (y2 * polevl(y2, &P0) / polevl(y2, &Q0))) * S2PI;
    }
    let x = (-2.0 * y.ln()).sqrt();
    let x0 = x - x.ln() / x;
    let z = 1.0 / x;
    let x1 = if x < 8.0 { z * polevl(z, &P1) / polevl(z, &Q1) } else { z * polevl(z, &P2) / polevl(z, &Q2) };
    let r = x0 - x1;
    if upper { -r } else { r }
}

/// `exp(x^2) erfc(x)`: the product directly for moderate x (the square split
/// so the exponential adds no error), a continued fraction for large x and
/// the reflection `2 exp(x^2) - erfcx(-x)` below 0.
pub fn erfcx(x: f64) -> f64 {
    const ISPI: f64 = 0.564_189_583_547_756_286_948_079_451_56;
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        if x < -26.7 {
            return f64::INFINITY;
        }
        let e = 2.0 * exp_x2(x);
        return if x < -6.1 { e } else { e - erfcx(-x) };
    }
    if x < 10.0 {
        return exp_x2(x) * crate::unary::erfc(x);
    }
    if x > 5e7 {
        return ISPI / x;
    }
    // erfc(x) e^(x^2) sqrt(pi) = 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))),
    // summed from the tail; 40 levels are exact to rounding for x >= 10.
    let mut t = x;
    for k in (1..=40).rev() {
        t = x + (k as f64 / 2.0) / t;
    }
    ISPI / t
}

/// `ln Φ(x)`, the log of the standard normal CDF: through `erfcx` in the
/// lower tail, `log1p(-erfc(x/√2)/2)` elsewhere (SciPy's form).
pub fn log_ndtr(x: f64) -> f64 {
    let t = x * std::f64::consts::FRAC_1_SQRT_2;
    if x < -1.0 {
        (erfcx(-t) / 2.0).ln() - t * t
    } else {
        (-crate::unary::erfc(t) / 2.0).ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndtri_inverts_the_normal_cdf() {
        for &p in &[1e-300, 1e-20, 1e-5, 0.1, 0.3, 0.5, 0.8, 0.999] {
            let x = ndtri(p);
            let back = 0.5 * crate::unary::erfc(-x * std::f64::consts::FRAC_1_SQRT_2);
            // erfc's own error deep in the tail (1e-300) bounds the round trip.
            assert!(((back - p) / p).abs() < 1e-12, "{p} {back}");
        }
    }

    #[test]
    fn erfcx_is_continuous_where_the_method_changes() {
        let (a, b) = (erfcx(10.0 - 1e-12), erfcx(10.0));
        assert!(((a - b) / b).abs() < 1e-13);
    }
}
