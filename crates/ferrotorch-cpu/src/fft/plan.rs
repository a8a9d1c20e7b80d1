//! The process-wide FFT plans.
//!
//! Planning a length factors it and builds twiddle tables, which costs more
//! than transforming a short signal; rustfft's and realfft's planners keep
//! every plan they made (by length and direction) and hand out shared
//! `Arc`s, so one planner per precision, kept for the process, makes each
//! plan once and reuses it across calls and threads.

use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The planners of one precision.
pub struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

impl<T: FftNum> Planners<T> {
    fn new() -> Self {
        Planners { complex: Mutex::new(FftPlanner::new()), real: Mutex::new(RealFftPlanner::new()) }
    }
}

/// A float type the kernels transform: `f32` or `f64`, each with its planners.
pub trait FftFloat: FftNum + Default + rustfft::num_traits::NumAssign + super::scratch::Plain {
    /// This precision's planners.
    fn planners() -> &'static Planners<Self>;
    /// `v` rounded to this type.
    fn of_f64(v: f64) -> Self;
}

impl FftFloat for f32 {
    fn planners() -> &'static Planners<f32> {
        static P: OnceLock<Planners<f32>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
    fn of_f64(v: f64) -> f32 {
        v as f32
    }
}

impl FftFloat for f64 {
    fn planners() -> &'static Planners<f64> {
        static P: OnceLock<Planners<f64>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
    fn of_f64(v: f64) -> f64 {
        v
    }
}

/// A planner's lock; a panic while planning (an allocation failure) leaves
/// the cache usable, so a poisoned lock is taken over.
fn lock<P>(m: &Mutex<P>) -> MutexGuard<'_, P> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The complex plan of length `n` in the given direction.
pub fn complex<T: FftFloat>(n: usize, forward: bool) -> Arc<dyn Fft<T>> {
    let dir = if forward { FftDirection::Forward } else { FftDirection::Inverse };
    lock(&T::planners().complex).plan_fft(n, dir)
}

/// The real-to-complex (forward) plan for real signals of length `n`.
pub fn real_forward<T: FftFloat>(n: usize) -> Arc<dyn RealToComplex<T>> {
    lock(&T::planners().real).plan_fft_forward(n)
}

/// The complex-to-real (inverse) plan for real signals of length `n`.
pub fn real_inverse<T: FftFloat>(n: usize) -> Arc<dyn ComplexToReal<T>> {
    lock(&T::planners().real).plan_fft_inverse(n)
}
