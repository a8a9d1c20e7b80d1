//! Pseudo-random numbers: a seedable xoshiro256++ generator with uniform,
//! normal (Box–Muller) and integer draws. Reproducible run to run for a seed.
//!
//! The generator is pure state and arithmetic, so it lives beside the op
//! vocabulary: a backend's random kernels ([`FactoryKernels`](crate::backend::FactoryKernels))
//! draw from it.

/// The state behind `torch.Generator` on the CPU.
#[derive(Debug, Clone)]
pub struct Generator {
    s: [u64; 4],
    seed: u64,
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        let mut g = Generator { s: [0; 4], seed };
        g.manual_seed(seed);
        g
    }

    /// Reseeds (expanding the seed with splitmix64 so nearby seeds diverge).
    pub fn manual_seed(&mut self, seed: u64) {
        let mut x = seed;
        self.s = [splitmix(&mut x), splitmix(&mut x), splitmix(&mut x), splitmix(&mut x)];
        self.seed = seed;
    }

    /// The seed last set.
    pub fn initial_seed(&self) -> u64 {
        self.seed
    }

    /// The full state, for `get_state`.
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// Restores a state from `state()`.
    pub fn set_state(&mut self, s: [u64; 4]) {
        self.s = s;
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal via Box–Muller.
    #[inline]
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]: ln is finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Uniform integer in [low, high) without modulo bias (Lemire's method).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut x = self.next_u64();
        let mut m = (x as u128) * (n as u128);
        let mut l = m as u64;
        if l < n {
            let t = n.wrapping_neg() % n;
            while l < t {
                x = self.next_u64();
                m = (x as u128) * (n as u128);
                l = m as u64;
            }
        }
        (m >> 64) as u64
    }
}

impl Generator {
    /// One Poisson sample of rate `lambda` (finite or not, `>= 0`), as a
    /// count in f64, with PyTorch's CPU algorithms: the product of uniforms
    /// against `exp(-lambda)` below 10, Hörmann's transformed rejection with
    /// squeeze (PTRS, 1993) from 10 up. A count past i64's range is
    /// `i64::MIN`, as PyTorch's int64 conversion of it gives on x86.
    pub fn poisson(&mut self, lambda: f64) -> f64 {
        if lambda == 0.0 {
            return 0.0;
        }
        if lambda < 10.0 {
            let limit = (-lambda).exp();
            let (mut count, mut prod) = (0.0, 1.0);
            loop {
                prod *= self.uniform();
                if prod <= limit {
                    return count;
                }
                count += 1.0;
            }
        }
        let slam = lambda.sqrt();
        let loglam = lambda.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.uniform() - 0.5;
            let v = self.uniform();
            let us = 0.5 - u.abs();
            let k = to_i64_like_x86(((2.0 * a / us + b) * u + lambda + 0.43).floor());
            // The squeeze: most draws are accepted without any logarithm.
            if us >= 0.07 && v <= vr {
                return k as f64;
            }
            if k < 0 || (us < 0.013 && v > us) {
                continue;
            }
            let lhs = v.ln() + inv_alpha.ln() - (a / (us * us) + b).ln();
            if lhs <= -lambda + k as f64 * loglam - ln_factorial(k) {
                return k as f64;
            }
        }
    }
}

impl Generator {
    /// One binomial sample of `count` trials (a float, as PyTorch takes it)
    /// with success probability `prob`, with PyTorch's CPU algorithm: 0 for
    /// `count <= 0` or `prob <= 0`, `count` for `prob >= 1`, NaN for a NaN
    /// `prob`; otherwise, on the smaller of `prob` and `1 - prob` (the
    /// count of failures when that is `1 - prob`), inversion by geometric
    /// waiting times below 10 expected successes and Hörmann's transformed
    /// rejection (BTRS, 1993) from 10 up.
    pub fn binomial(&mut self, count: f64, prob: f64) -> f64 {
        if count <= 0.0 || prob <= 0.0 {
            0.0
        } else if prob >= 1.0 {
            count
        } else if prob <= 0.5 {
            self.binomial_small_p(count, prob)
        } else if prob > 0.5 {
            count - self.binomial_small_p(count, 1.0 - prob)
        } else {
            f64::NAN
        }
    }

    fn binomial_small_p(&mut self, count: f64, prob: f64) -> f64 {
        if count * prob >= 10.0 {
            self.binomial_btrs(count, prob)
        } else {
            self.binomial_inversion(count, prob)
        }
    }

    /// Counts geometric waiting times (trials to the next success) until
    /// they pass `count`.
    fn binomial_inversion(&mut self, count: f64, prob: f64) -> f64 {
        let logprob = (-prob).ln_1p();
        let (mut sum, mut successes) = (0.0, 0.0);
        loop {
            sum += (self.uniform().ln() / logprob).ceil();
            if sum > count {
                return successes;
            }
            successes += 1.0;
        }
    }

    /// Hörmann's BTRS: a transformed-rejection draw with a squeeze, the
    /// exact acceptance test through Stirling's tail of `ln k!`.
    fn binomial_btrs(&mut self, count: f64, prob: f64) -> f64 {
        let stddev = (count * prob * (1.0 - prob)).sqrt();
        let b = 1.15 + 2.53 * stddev;
        let a = -0.0873 + 0.0248 * b + 0.01 * prob;
        let c = count * prob + 0.5;
        let v_r = 0.92 - 4.2 / b;
        let r = prob / (1.0 - prob);
        let alpha = (2.83 + 5.1 / b) * stddev;
        let m = ((count + 1.0) * prob).floor();
        loop {
            let u = self.uniform() - 0.5;
            let v = self.uniform();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + c).floor();
            if k < 0.0 || k > count {
                continue;
            }
            if us >= 0.07 && v <= v_r {
                return k;
            }
            let v = (v * alpha / (a / (us * us) + b)).ln();
            let bound = (m + 0.5) * ((m + 1.0) / (r * (count - m + 1.0))).ln()
                + (count + 1.0) * ((count - m + 1.0) / (count - k + 1.0)).ln()
                + (k + 0.5) * (r * (count - k + 1.0) / (k + 1.0)).ln()
                + stirling_tail(m)
                + stirling_tail(count - m)
                - stirling_tail(k)
                - stirling_tail(count - k);
            if v <= bound {
                return k;
            }
        }
    }
}

/// `ln k! - (k + 1/2) ln(k + 1) + (k + 1) - ln √(2π)`, the error of
/// Stirling's approximation of `ln k!`: tabulated below 10, its asymptotic
/// series above.
fn stirling_tail(k: f64) -> f64 {
    const TABLE: [f64; 10] = [
        0.081_061_466_795_327_26,
        0.041_340_695_955_409_29,
        0.027_677_925_684_998_34,
        0.020_790_672_103_765_09,
        0.016_644_691_189_821_19,
        0.013_876_128_823_070_75,
        0.011_896_709_945_891_77,
        0.010_411_265_261_972_09,
        0.009_255_462_182_712_733,
        0.008_330_563_433_362_871,
    ];
    if k <= 9.0 {
        return TABLE[k.max(0.0) as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

/// `x as int64` as x86's conversion does it: out of range (or NaN) is `i64::MIN`.
fn to_i64_like_x86(x: f64) -> i64 {
    if x.is_finite() && x >= -9.223_372_036_854_775_808e18 && x < 9.223_372_036_854_775_808e18 {
        x as i64
    } else {
        i64::MIN
    }
}

/// `ln(k!)` for `k >= 0`: summed logarithms below 16, Stirling's series
/// (to the x⁻⁷ term, accurate to a few ulps there) above.
fn ln_factorial(k: i64) -> f64 {
    if k < 16 {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let x = k as f64 + 1.0;
    let (x2, half_ln_2pi) = (x * x, 0.918_938_533_204_672_8);
    (x - 0.5) * x.ln() - x + half_ln_2pi + (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new(67280421310721)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_roughly_standard() {
        let mut a = Generator::new(1);
        let mut b = Generator::new(1);
        assert_eq!(a.next_u64(), b.next_u64());
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| a.normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
        assert!((0..1000).all(|_| a.below(7) < 7));
    }
}

#[cfg(test)]
mod binomial_tests {
    use super::*;

    #[test]
    fn stirling_tail_matches_ln_factorial() {
        // ln k! = (k + 1/2) ln(k + 1) - (k + 1) + ln √(2π) + tail(k), checked on both sides of the table.
        for k in [0i64, 3, 9, 10, 30, 200] {
            let x = k as f64;
            let approx = (x + 0.5) * (x + 1.0).ln() - (x + 1.0) + 0.918_938_533_204_672_8 + stirling_tail(x);
            assert!((approx - ln_factorial(k)).abs() < 1e-9 * ln_factorial(k).max(1.0), "{k}");
        }
    }

    #[test]
    fn moments_match_n_p_and_n_p_q() {
        let mut g = Generator::new(3);
        // Inversion (n p < 10), BTRS (n p >= 10), and the mirrored p > 1/2 branches.
        for (n, p) in [(20.0, 0.1), (1000.0, 0.3), (50.0, 0.9), (400.0, 0.75)] {
            let m = 40_000;
            let xs: Vec<f64> = (0..m).map(|_| g.binomial(n, p)).collect();
            assert!(xs.iter().all(|&x| x >= 0.0 && x <= n && x.fract() == 0.0));
            let mean = xs.iter().sum::<f64>() / m as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / m as f64;
            let (mu, s2) = (n * p, n * p * (1.0 - p));
            assert!((mean - mu).abs() < 5.0 * (s2 / m as f64).sqrt(), "{n} {p}: {mean}");
            assert!((var / s2 - 1.0).abs() < 0.05, "{n} {p}: {var}");
        }
        assert_eq!((g.binomial(5.0, 0.0), g.binomial(-1.0, 0.5), g.binomial(7.0, 1.5)), (0.0, 0.0, 7.0));
        assert!(g.binomial(5.0, f64::NAN).is_nan());
    }
}

#[cfg(test)]
mod poisson_tests {
    use super::*;

    #[test]
    fn ln_factorial_matches_summed_logs() {
        for k in [0i64, 1, 2, 15, 16, 17, 50, 170] {
            let exact: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
            assert!((ln_factorial(k) - exact).abs() <= 1e-12 * exact.max(1.0), "k = {k}");
        }
    }

    #[test]
    fn poisson_mean_and_variance() {
        let mut g = Generator::new(7);
        for lambda in [0.5, 3.0, 9.9, 10.0, 25.0, 1e4] {
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| g.poisson(lambda)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            // Standard errors: sqrt(lambda / n) for the mean, about lambda * sqrt(2 / n) for the variance.
            assert!((mean - lambda).abs() < 5.0 * (lambda / n as f64).sqrt(), "lambda {lambda}: mean {mean}");
            assert!((var - lambda).abs() < 6.0 * lambda * (2.0 / n as f64).sqrt() + 0.01, "lambda {lambda}: var {var}");
            assert!(xs.iter().all(|&x| x >= 0.0 && x.fract() == 0.0));
        }
        assert_eq!(g.poisson(0.0), 0.0);
        assert_eq!(g.poisson(f64::INFINITY), i64::MIN as f64);
    }
}
