//! Pseudo-random numbers: a seedable xoshiro256++ generator with uniform,
//! normal (Box–Muller) and integer draws. Reproducible run to run for a seed.

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
