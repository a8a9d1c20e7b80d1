//! What the filling factories compute: ranges ([`Sequence`]) and random
//! draws ([`Distribution`]), each element a function of its row-major
//! position (and, for draws, of the generator's stream in that order).

/// A deterministic 1-d sequence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sequence {
    /// `start + i * step` computed in f64, then cast (floating `arange`).
    Affine {
        /// First value.
        start: f64,
        /// Step between values.
        step: f64,
    },
    /// `start + i * step` in wrapping int64 arithmetic, then cast (integer
    /// `arange`, exact for large values).
    AffineInt {
        /// First value.
        start: i64,
        /// Step between values.
        step: i64,
    },
    /// `linspace` with PyTorch's symmetric formula over the output's `n`
    /// elements: the first half counts up from `start`, the rest down from
    /// `end`; one element is `start`.
    Linspace {
        /// First value.
        start: f64,
        /// Last value.
        end: f64,
    },
    /// `base ** linspace(start, end)` with the exponents in f64.
    Logspace {
        /// First exponent.
        start: f64,
        /// Last exponent.
        end: f64,
        /// The base.
        base: f64,
    },
}

impl Sequence {
    /// Element `i` of `n` in f64 (the float sequences).
    pub fn value(&self, i: usize, n: usize) -> f64 {
        let lin = |start: f64, end: f64| {
            if n == 1 {
                return start;
            }
            let step = (end - start) / (n as f64 - 1.0);
            if i < n / 2 {
                start + step * i as f64
            } else {
                end - step * (n - 1 - i) as f64
            }
        };
        match *self {
            Sequence::Affine { start, step } => start + i as f64 * step,
            Sequence::AffineInt { start, step } => start.wrapping_add((i as i64).wrapping_mul(step)) as f64,
            Sequence::Linspace { start, end } => lin(start, end),
            Sequence::Logspace { start, end, base } => base.powf(lin(start, end)),
        }
    }
}

/// A random draw per element, taken from the generator in row-major order
/// so that a seed gives the same tensor whatever the thread count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform on `[0, 1)`.
    Uniform,
    /// `mean + std * N(0, 1)`.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation (not negative).
        std: f64,
    },
    /// Integers uniform on `[low, low + span)`.
    Integers {
        /// Smallest value.
        low: i64,
        /// Number of values (at least 1).
        span: u64,
    },
    /// A Poisson count per element, the rates read from a second operand
    /// of the output's shape (each not negative).
    Poisson,
    /// A binomial count per element, the trial counts and success
    /// probabilities read from two operands of the output's shape.
    Binomial,
    /// A uniformly random permutation of `0..n` (int64 output of `n`
    /// elements; a Fisher–Yates shuffle).
    Permutation,
}
