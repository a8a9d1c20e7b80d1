//! Fused optimizer updates: one pass over a parameter and its state.
//!
//! PyTorch's single-tensor optimizers run a handful of elementwise ops per
//! parameter (lerp, mul, addcmul, sqrt, div, add, addcdiv), each a full pass
//! over memory. These kernels read every operand once and write each result
//! once, evaluating the same expressions in the same order and precision
//! (scalars rounded to the element type first, as PyTorch's CPU kernels take
//! Python numbers), so trajectories agree with PyTorch's to rounding.

use rayon::prelude::*;

/// Elements per parallel task: below this a parameter is updated on the
/// calling thread (thread wake-up costs more than the update).
const CHUNK: usize = 1 << 15;

/// Hyper-parameters of one Adam/AdamW step, already combined as PyTorch does
/// in Python (double precision) before they reach the kernels.
#[derive(Clone, Copy, Debug)]
pub struct AdamStep {
    /// `1 - lr * weight_decay` for decoupled decay (AdamW), else unused.
    pub decay_factor: f64,
    /// L2 penalty added to the gradient (Adam), 0 for none or decoupled.
    pub l2: f64,
    /// `1 - beta1`: the lerp weight of the first moment.
    pub one_minus_beta1: f64,
    /// `beta2`.
    pub beta2: f64,
    /// `1 - beta2`.
    pub one_minus_beta2: f64,
    /// `sqrt(1 - beta2^step)`.
    pub bias_correction2_sqrt: f64,
    /// `eps`.
    pub eps: f64,
    /// `-lr / (1 - beta1^step)`.
    pub neg_step_size: f64,
    /// Negate the gradient (`maximize=True`).
    pub maximize: bool,
    /// Apply `decay_factor` to the parameter (AdamW).
    pub decoupled: bool,
}

/// Hyper-parameters of one SGD step.
#[derive(Clone, Copy, Debug)]
pub struct SgdStep {
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// Momentum factor (0: plain SGD, no buffer).
    pub momentum: f64,
    /// `1 - dampening`.
    pub one_minus_dampening: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// `-lr`.
    pub neg_lr: f64,
    /// Negate the gradient (`maximize=True`).
    pub maximize: bool,
}

/// Element types the fused optimizers run on.
pub trait OptimFloat: Copy + Send + Sync + 'static {
    /// Rounds an `f64` hyper-parameter to this type, as PyTorch's kernels
    /// take a Python number for a tensor of this dtype.
    fn of(x: f64) -> Self;
    /// `1 / self` in this type (PyTorch rounds a divisor first, then inverts).
    fn recip(self) -> Self;
    /// One Adam step of one element; returns `(param, exp_avg, exp_avg_sq, max_exp_avg_sq)`.
    fn adam(p: Self, g: Self, m: Self, v: Self, vmax: Option<Self>, h: &AdamScalars<Self>) -> (Self, Self, Self, Self);
    /// One SGD step of one element; returns `(param, momentum_buffer)`.
    fn sgd(p: Self, g: Self, buf: Self, fresh: bool, h: &SgdScalars<Self>) -> (Self, Self);
}

/// [`AdamStep`] rounded to the element type once per call.
#[derive(Clone, Copy)]
pub struct AdamScalars<T> {
    decay_factor: T,
    l2: T,
    w: T,
    beta2: T,
    one_minus_beta2: T,
    inv_bc2_sqrt: T,
    eps: T,
    neg_step_size: T,
    maximize: bool,
    decoupled: bool,
    has_l2: bool,
}

/// [`SgdStep`] rounded to the element type once per call.
#[derive(Clone, Copy)]
pub struct SgdScalars<T> {
    weight_decay: T,
    momentum: T,
    one_minus_dampening: T,
    neg_lr: T,
    has_wd: bool,
    has_momentum: bool,
    nesterov: bool,
    maximize: bool,
}

macro_rules! optim_float {
    ($T:ty) => {
        impl OptimFloat for $T {
            #[inline(always)]
            fn of(x: f64) -> Self {
                x as $T
            }

            #[inline(always)]
            fn recip(self) -> Self {
                1.0 / self
            }

            #[inline(always)]
            fn adam(p: $T, g: $T, m: $T, v: $T, vmax: Option<$T>, h: &AdamScalars<$T>) -> ($T, $T, $T, $T) {
                let g = if h.maximize { -g } else { g };
                let mut p = p;
                let g = if h.decoupled {
                    p = p * h.decay_factor;
                    g
                } else if h.has_l2 {
                    g + h.l2 * p
                } else {
                    g
                };
                // lerp(m, g, w) with PyTorch's two-sided formula.
                let m = if h.w.abs() < 0.5 { m + h.w * (g - m) } else { g - (g - m) * (1.0 - h.w) };
                let v = v * h.beta2 + h.one_minus_beta2 * g * g;
                let (vd, vmax) = match vmax {
                    Some(old) => {
                        // maximum propagates NaN as torch.maximum does.
                        let mx = if old.is_nan() || v.is_nan() { <$T>::NAN } else { old.max(v) };
                        (mx, mx)
                    }
                    None => (v, 0.0),
                };
                // A Python-number divisor is applied as a reciprocal product, as
                // PyTorch's div kernel does for a CPU scalar.
                let denom = vd.sqrt() * h.inv_bc2_sqrt + h.eps;
                let p = p + h.neg_step_size * m / denom;
                (p, m, v, vmax)
            }

            #[inline(always)]
            fn sgd(p: $T, g: $T, buf: $T, fresh: bool, h: &SgdScalars<$T>) -> ($T, $T) {
                let mut g = if h.maximize { -g } else { g };
                if h.has_wd {
                    g = g + h.weight_decay * p;
                }
                let mut buf = buf;
                if h.has_momentum {
                    buf = if fresh { g } else { buf * h.momentum + h.one_minus_dampening * g };
                    g = if h.nesterov { g + h.momentum * buf } else { buf };
                }
                (p + h.neg_lr * g, buf)
            }
        }
    };
}
optim_float!(f32);
optim_float!(f64);

impl<T: OptimFloat> AdamScalars<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AdamStep) -> Self {
        let bc2 = T::of(s.bias_correction2_sqrt);
        AdamScalars {
            decay_factor: T::of(s.decay_factor),
            l2: T::of(s.l2),
            w: T::of(s.one_minus_beta1),
            beta2: T::of(s.beta2),
            one_minus_beta2: T::of(s.one_minus_beta2),
            inv_bc2_sqrt: bc2.recip(),
            eps: T::of(s.eps),
            neg_step_size: T::of(s.neg_step_size),
            maximize: s.maximize,
            decoupled: s.decoupled,
            has_l2: !s.decoupled && s.l2 != 0.0,
        }
    }
}

impl<T: OptimFloat> SgdScalars<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &SgdStep) -> Self {
        SgdScalars {
            weight_decay: T::of(s.weight_decay),
            momentum: T::of(s.momentum),
            one_minus_dampening: T::of(s.one_minus_dampening),
            neg_lr: T::of(s.neg_lr),
            has_wd: s.weight_decay != 0.0,
            has_momentum: s.momentum != 0.0,
            nesterov: s.nesterov,
            maximize: s.maximize,
        }
    }
}

/// One Adam/AdamW step over one parameter, in place.
///
/// All slices have the parameter's length; `vmax` is the AMSGrad running
/// maximum when enabled.
pub fn adam<T: OptimFloat>(p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], vmax: Option<&mut [T]>, h: &AdamScalars<T>) {
    let body = |p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], vmax: Option<&mut [T]>| match vmax {
        Some(vmax) => {
            for i in 0..p.len() {
                let (pi, mi, vi, xi) = T::adam(p[i], g[i], m[i], v[i], Some(vmax[i]), h);
                p[i] = pi;
                m[i] = mi;
                v[i] = vi;
                vmax[i] = xi;
            }
        }
        None => {
            for i in 0..p.len() {
                let (pi, mi, vi, _) = T::adam(p[i], g[i], m[i], v[i], None, h);
                p[i] = pi;
                m[i] = mi;
                v[i] = vi;
            }
        }
    };
    if p.len() < 2 * CHUNK || rayon::current_num_threads() <= 1 {
        return body(p, g, m, v, vmax);
    }
    match vmax {
        Some(vmax) => p
            .par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(m.par_chunks_mut(CHUNK))
            .zip(v.par_chunks_mut(CHUNK))
            .zip(vmax.par_chunks_mut(CHUNK))
            .for_each(|((((p, g), m), v), x)| body(p, g, m, v, Some(x))),
        None => p
            .par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(m.par_chunks_mut(CHUNK))
            .zip(v.par_chunks_mut(CHUNK))
            .for_each(|(((p, g), m), v)| body(p, g, m, v, None)),
    }
}

/// One SGD step over one parameter, in place. `buf` is the momentum buffer
/// (ignored without momentum); `fresh` says it holds no history yet, so it
/// takes the gradient as PyTorch's first step clones it.
pub fn sgd<T: OptimFloat>(p: &mut [T], g: &[T], buf: Option<&mut [T]>, fresh: bool, h: &SgdScalars<T>) {
    let body = |p: &mut [T], g: &[T], buf: Option<&mut [T]>| match buf {
        Some(buf) => {
            for i in 0..p.len() {
                let (pi, bi) = T::sgd(p[i], g[i], buf[i], fresh, h);
                p[i] = pi;
                buf[i] = bi;
            }
        }
        None => {
            for i in 0..p.len() {
                p[i] = T::sgd(p[i], g[i], p[i], fresh, h).0;
            }
        }
    };
    if p.len() < 2 * CHUNK || rayon::current_num_threads() <= 1 {
        return body(p, g, buf);
    }
    match buf {
        Some(buf) => p
            .par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(buf.par_chunks_mut(CHUNK))
            .for_each(|((p, g), b)| body(p, g, Some(b))),
        None => p.par_chunks_mut(CHUNK).zip(g.par_chunks(CHUNK)).for_each(|(p, g)| body(p, g, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(lr: f64, b1: f64, b2: f64, t: i32) -> AdamStep {
        AdamStep {
            decay_factor: 1.0,
            l2: 0.0,
            one_minus_beta1: 1.0 - b1,
            beta2: b2,
            one_minus_beta2: 1.0 - b2,
            bias_correction2_sqrt: (1.0 - b2.powi(t)).sqrt(),
            eps: 1e-8,
            neg_step_size: -lr / (1.0 - b1.powi(t)),
            maximize: false,
            decoupled: false,
        }
    }

    /// Closed form: Adam's first step moves every parameter by -lr * sign(g)
    /// (up to eps), whatever the gradient's magnitude.
    #[test]
    fn adam_first_step_is_lr_times_sign() {
        let n = 3 * CHUNK + 5; // parallel path with a ragged tail
        let mut p = vec![1.0f64; n];
        let g: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 3.0 } else { -0.25 }).collect();
        let (mut m, mut v) = (vec![0.0; n], vec![0.0; n]);
        adam(&mut p, &g, &mut m, &mut v, None, &AdamScalars::new(&step(0.1, 0.9, 0.999, 1)));
        for i in 0..n {
            let want = 1.0 - 0.1 * g[i].signum();
            assert!((p[i] - want).abs() < 1e-7, "{i}: {} vs {want}", p[i]);
            assert!((m[i] - 0.1 * g[i]).abs() < 1e-15);
            assert!((v[i] - 0.001 * g[i] * g[i]).abs() < 1e-15);
        }
    }

    /// AMSGrad keeps the running maximum, NaN included.
    #[test]
    fn amsgrad_max_propagates_nan() {
        let (mut p, g) = (vec![0.0f32; 2], vec![1.0f32, f32::NAN]);
        let (mut m, mut v, mut x) = (vec![0.0f32; 2], vec![4.0f32, 0.0], vec![9.0f32, 0.0]);
        adam(&mut p, &g, &mut m, &mut v, Some(&mut x), &AdamScalars::new(&step(0.1, 0.9, 0.999, 2)));
        assert_eq!(x[0], 9.0);
        assert!(x[1].is_nan() && p[1].is_nan());
    }

    /// SGD with momentum: the first step takes the gradient as the buffer,
    /// the second follows buf = mu * buf + (1 - dampening) * g.
    #[test]
    fn sgd_momentum_two_steps() {
        let h = SgdScalars::new(&SgdStep {
            weight_decay: 0.0,
            momentum: 0.5,
            one_minus_dampening: 1.0,
            nesterov: false,
            neg_lr: -0.1,
            maximize: false,
        });
        let (mut p, g, mut b) = (vec![1.0f64], vec![2.0f64], vec![0.0f64]);
        sgd(&mut p, &g, Some(&mut b), true, &h);
        assert_eq!((p[0], b[0]), (1.0 - 0.2, 2.0));
        sgd(&mut p, &g, Some(&mut b), false, &h);
        assert_eq!(b[0], 3.0);
        assert!((p[0] - (0.8 - 0.3)).abs() < 1e-15);
    }
}
