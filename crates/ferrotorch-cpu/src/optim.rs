//! Fused optimizer updates: one multi-tensor driver, one element kernel per
//! optimizer.
//!
//! PyTorch's single-tensor optimizers run a handful of elementwise ops per
//! parameter (lerp, mul, addcmul, sqrt, div, add, addcdiv), each a full pass
//! over memory. Here a parameter group is one call: [`multi_tensor_apply`]
//! cuts every parameter of the group into chunks, runs the chunks in
//! parallel, and for each element loads the parameter, its gradient and its
//! state once, runs the optimizer's [`Update`] and stores the results once.
//!
//! The element kernels evaluate PyTorch's expressions in PyTorch's order and
//! element precision, rounding each op as its CPU kernel does: Python-number
//! scalars are first rounded to the element type; `add(alpha=)`, `lerp` and
//! `addcmul` are fused multiply-adds (PyTorch's vectorised kernels use
//! `fmadd`, and its scalar tails are contracted to FMA as well), `addcdiv`
//! and division by a Python number are plain roundings, and `number / tensor`
//! is `reciprocal(tensor) * number` (`Tensor.__rtruediv__`). So trajectories
//! agree with PyTorch's bit for bit where the host has FMA (every x86-64 CPU
//! with AVX2; elsewhere `mul_add` still rounds once, just slower).

use crate::simd::{isa, Isa};
pub use ferrotorch_core::op::optim::{AdamStep, SgdStep, AdagradStep, AdadeltaStep, AdamaxStep, NadamStep, RadamStep, RmspropStep, RpropStep, AsgdStep};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// Elements per parallel task: a group smaller than two of these runs on the
/// calling thread (thread wake-up costs more than the update).
const CHUNK: usize = 1 << 15;

/// Element types the fused optimizers run on.
pub trait OptimFloat:
    Copy
    + Send
    + Sync
    + PartialOrd
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `0`.
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// Rounds an `f64` hyper-parameter to this type, as PyTorch's kernels
    /// take a Python number for a tensor of this dtype.
    fn of(x: f64) -> Self;
    /// `self * b + c` with one rounding.
    fn fma(self, b: Self, c: Self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Is this NaN?
    fn is_nan(self) -> bool;
}

macro_rules! optim_float {
    ($T:ty) => {
        impl OptimFloat for $T {
            const ZERO: $T = 0.0;
            const ONE: $T = 1.0;
            #[inline(always)]
            fn of(x: f64) -> $T {
                x as $T
            }
            #[inline(always)]
            fn fma(self, b: $T, c: $T) -> $T {
                <$T>::mul_add(self, b, c)
            }
            #[inline(always)]
            fn sqrt(self) -> $T {
                <$T>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> $T {
                <$T>::abs(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$T>::is_nan(self)
            }
        }
    };
}
optim_float!(f32);
optim_float!(f64);

// PyTorch's elementwise ops on one element, rounded as its CPU kernels round.

/// `a.add(b, alpha=alpha)`.
#[inline(always)]
fn add_alpha<T: OptimFloat>(a: T, b: T, alpha: T) -> T {
    b.fma(alpha, a)
}

/// `a.addcmul(t1, t2, value=v)`.
#[inline(always)]
fn addcmul<T: OptimFloat>(a: T, t1: T, t2: T, v: T) -> T {
    (v * t1).fma(t2, a)
}

/// `a.addcdiv(t1, t2, value=v)`.
#[inline(always)]
fn addcdiv<T: OptimFloat>(a: T, t1: T, t2: T, v: T) -> T {
    a + v * t1 / t2
}

/// A lerp weight, with PyTorch's choice of formula made once.
#[derive(Clone, Copy, Debug)]
pub struct Lerp<T> {
    small: bool,
    coeff: T,
}

impl<T: OptimFloat> Lerp<T> {
    fn new(w: f64) -> Self {
        let w = T::of(w);
        let small = w.abs() < T::of(0.5);
        Lerp { small, coeff: if small { w } else { w - T::ONE } }
    }

    /// `a.lerp(end, w)`.
    #[inline(always)]
    fn at(self, a: T, end: T) -> T {
        self.coeff.fma(end - a, if self.small { a } else { end })
    }
}

/// `torch.maximum`: NaN if either is.
#[inline(always)]
fn maximum<T: OptimFloat>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a {
        b
    } else {
        a
    }
}

/// `torch.sign` (0 for NaN, as PyTorch's CPU kernel gives).
#[inline(always)]
fn sign<T: OptimFloat>(x: T) -> T {
    if x > T::ZERO {
        T::ONE
    } else if x < T::ZERO {
        -T::ONE
    } else {
        T::ZERO
    }
}

/// `x.clamp(lo, hi)` with Python-number bounds (NaN stays NaN).
#[inline(always)]
fn clamp<T: OptimFloat>(x: T, lo: T, hi: T) -> T {
    if x.is_nan() {
        return x;
    }
    let y = if x < lo { lo } else { x };
    if hi < y {
        hi
    } else {
        y
    }
}

/// `grad` as the update sees it: negated for `maximize`, plus the L2 term.
#[inline(always)]
fn grad_in<T: OptimFloat>(p: T, g: T, maximize: bool, l2: Option<T>) -> T {
    let g = if maximize { -g } else { g };
    match l2 {
        Some(wd) => add_alpha(g, p, wd),
        None => g,
    }
}

/// `Some(wd)` rounded to `T` when the L2 penalty applies.
fn l2_of<T: OptimFloat>(weight_decay: f64, applies: bool) -> Option<T> {
    (applies && weight_decay != 0.0).then(|| T::of(weight_decay))
}

/// One optimizer's update of one element: `p` the parameter, `g` the
/// gradient, `s` the element's values of the `S` state tensors (in the
/// kernel's slot order; a slot the group leaves out reads 0 and is not
/// stored). Returns the new parameter value and updates `s` in place.
pub trait Update<T, const S: usize>: Sync {
    /// Updates one element.
    fn update(&self, p: T, g: T, s: &mut [T; S]) -> T;
}

/// One parameter of a group: its kernel (hyper-parameters rounded for its
/// step), its values, its gradient and its state slots.
pub struct Job<'a, T, K, const S: usize> {
    /// The element kernel with this parameter's hyper-parameters.
    pub kernel: K,
    /// Parameter values, updated in place.
    pub param: &'a mut [T],
    /// Gradient values.
    pub grad: &'a [T],
    /// State tensors, `None` for a slot the group does not keep.
    pub state: [Option<&'a mut [T]>; S],
}

/// A [`Job`]'s operands as raw pointers, so chunks of it can go to threads.
struct Raw<T, const S: usize> {
    p: *mut T,
    g: *const T,
    s: [*mut T; S],
    n: usize,
}

// SAFETY: the pointers come from the exclusive (param, state) and shared
// (grad) borrows of a `Job`, which outlive the call; threads touch disjoint
// index ranges.
unsafe impl<T: Send, const S: usize> Send for Raw<T, S> {}
unsafe impl<T: Sync, const S: usize> Sync for Raw<T, S> {}

/// Runs every job's update over all its elements: the multi-tensor step of a
/// parameter group. Large groups are cut into chunks of `CHUNK` elements
/// (across parameters) run in parallel.
///
/// # Panics
/// If a job's gradient or a present state slot differs in length from its parameter.
pub fn multi_tensor_apply<T: OptimFloat, K: Update<T, S>, const S: usize>(jobs: Vec<Job<'_, T, K, S>>) {
    let mut raws = Vec::with_capacity(jobs.len());
    let mut kernels = Vec::with_capacity(jobs.len());
    for j in jobs {
        let n = j.param.len();
        assert_eq!(j.grad.len(), n, "fused optimizer: gradient length");
        assert!(j.state.iter().flatten().all(|s| s.len() == n), "fused optimizer: state length");
        raws.push(Raw {
            p: j.param.as_mut_ptr(),
            g: j.grad.as_ptr(),
            s: j.state.map(|s| s.map_or(std::ptr::null_mut(), |s| s.as_mut_ptr())),
            n,
        });
        kernels.push(j.kernel);
    }
    let fma = isa() >= Isa::Avx2;
    // SAFETY: each (job, range) is visited once; ranges of a job are disjoint
    // and within its length; jobs own disjoint memory (exclusive borrows).
    let run = |i: usize, lo: usize, hi: usize| unsafe { run_range(&raws[i], &kernels[i], lo, hi, fma) };
    let total: usize = raws.iter().map(|r| r.n).sum();
    if total < 2 * CHUNK || crate::parallel::threads() <= 1 {
        for (i, r) in raws.iter().enumerate() {
            run(i, 0, r.n);
        }
        return;
    }
    let tasks: Vec<(usize, usize, usize)> = raws
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.n).step_by(CHUNK).map(move |lo| (i, lo, (lo + CHUNK).min(r.n))))
        .collect();
    crate::parallel::parallel_for(tasks.len(), |t| {
        let (i, lo, hi) = tasks[t];
        run(i, lo, hi)
    });
}

/// # Safety
/// `lo..hi` lies within the job, no other thread touches it, and `fma` only
/// where the CPU has AVX2 and FMA.
unsafe fn run_range<T: OptimFloat, K: Update<T, S>, const S: usize>(r: &Raw<T, S>, k: &K, lo: usize, hi: usize, fma: bool) {
    #[cfg(target_arch = "x86_64")]
    if fma {
        return run_range_fma(r, k, lo, hi);
    }
    let _ = fma;
    range_body(r, k, lo, hi)
}

/// The loop compiled with FMA available, so `mul_add` is one instruction.
///
/// # Safety
/// As [`run_range`], on a CPU with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_range_fma<T: OptimFloat, K: Update<T, S>, const S: usize>(r: &Raw<T, S>, k: &K, lo: usize, hi: usize) {
    range_body(r, k, lo, hi)
}

#[inline(always)]
unsafe fn range_body<T: OptimFloat, K: Update<T, S>, const S: usize>(r: &Raw<T, S>, k: &K, lo: usize, hi: usize) {
    if r.s.iter().all(|p| !p.is_null()) {
        for i in lo..hi {
            let mut s = [T::ZERO; S];
            for j in 0..S {
                s[j] = *r.s[j].add(i);
            }
            *r.p.add(i) = k.update(*r.p.add(i), *r.g.add(i), &mut s);
            for j in 0..S {
                *r.s[j].add(i) = s[j];
            }
        }
    } else {
        for i in lo..hi {
            let mut s = [T::ZERO; S];
            for j in 0..S {
                if !r.s[j].is_null() {
                    s[j] = *r.s[j].add(i);
                }
            }
            *r.p.add(i) = k.update(*r.p.add(i), *r.g.add(i), &mut s);
            for j in 0..S {
                if !r.s[j].is_null() {
                    *r.s[j].add(i) = s[j];
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Element kernels. Each `*Step` holds one parameter's hyper-parameters as
// PyTorch computes them in Python (double precision); `new` rounds them to
// the element type once per parameter.


/// [`AdamStep`] in the element type. Slots: `exp_avg`, `exp_avg_sq`,
/// `max_exp_avg_sq` (AMSGrad; the kernel runs with 2 slots without it).
#[derive(Clone, Copy)]
pub struct Adam<T> {
    decay: Option<T>,
    l2: Option<T>,
    lerp: Lerp<T>,
    beta2: T,
    one_minus_beta2: T,
    bc2_sqrt: T,
    eps: T,
    neg_step_size: T,
    maximize: bool,
}

impl<T: OptimFloat> Adam<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AdamStep) -> Self {
        Adam {
            decay: s.decoupled.then(|| T::of(s.decay_factor)),
            l2: l2_of(s.l2, !s.decoupled),
            lerp: Lerp::new(s.one_minus_beta1),
            beta2: T::of(s.beta2),
            one_minus_beta2: T::of(s.one_minus_beta2),
            bc2_sqrt: T::of(s.bias_correction2_sqrt),
            eps: T::of(s.eps),
            neg_step_size: T::of(s.neg_step_size),
            maximize: s.maximize,
        }
    }

    #[inline(always)]
    fn elem(&self, p: T, g: T, m: &mut T, v: &mut T, vmax: Option<&mut T>) -> T {
        let p = match self.decay {
            Some(d) => p * d,
            None => p,
        };
        let g = grad_in(p, g, self.maximize, self.l2);
        *m = self.lerp.at(*m, g);
        *v = addcmul(*v * self.beta2, g, g, self.one_minus_beta2);
        let vd = match vmax {
            Some(x) => {
                *x = maximum(*x, *v);
                *x
            }
            None => *v,
        };
        let denom = vd.sqrt() / self.bc2_sqrt + self.eps;
        addcdiv(p, *m, denom, self.neg_step_size)
    }
}

impl<T: OptimFloat> Update<T, 2> for Adam<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let [m, v] = s;
        self.elem(p, g, m, v, None)
    }
}

impl<T: OptimFloat> Update<T, 3> for Adam<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 3]) -> T {
        let [m, v, x] = s;
        self.elem(p, g, m, v, Some(x))
    }
}


/// [`SgdStep`] in the element type. Slot: `momentum_buffer` (absent without momentum).
#[derive(Clone, Copy)]
pub struct Sgd<T> {
    l2: Option<T>,
    momentum: Option<T>,
    one_minus_dampening: T,
    neg_lr: T,
    nesterov: bool,
    maximize: bool,
    fresh: bool,
}

impl<T: OptimFloat> Sgd<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &SgdStep) -> Self {
        Sgd {
            l2: l2_of(s.weight_decay, true),
            momentum: (s.momentum != 0.0).then(|| T::of(s.momentum)),
            one_minus_dampening: T::of(s.one_minus_dampening),
            neg_lr: T::of(s.neg_lr),
            nesterov: s.nesterov,
            maximize: s.maximize,
            fresh: s.fresh,
        }
    }
}

impl<T: OptimFloat> Update<T, 1> for Sgd<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 1]) -> T {
        let mut g = grad_in(p, g, self.maximize, self.l2);
        if let Some(mu) = self.momentum {
            let buf = if self.fresh { g } else { add_alpha(s[0] * mu, g, self.one_minus_dampening) };
            s[0] = buf;
            g = if self.nesterov { add_alpha(g, buf, mu) } else { buf };
        }
        add_alpha(p, g, self.neg_lr)
    }
}


/// [`AdagradStep`] in the element type. Slot: `sum`.
#[derive(Clone, Copy)]
pub struct Adagrad<T> {
    l2: Option<T>,
    neg_clr: T,
    eps: T,
    maximize: bool,
}

impl<T: OptimFloat> Adagrad<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AdagradStep) -> Self {
        Adagrad { l2: l2_of(s.weight_decay, true), neg_clr: T::of(s.neg_clr), eps: T::of(s.eps), maximize: s.maximize }
    }
}

impl<T: OptimFloat> Update<T, 1> for Adagrad<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 1]) -> T {
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = addcmul(s[0], g, g, T::ONE);
        let std = s[0].sqrt() + self.eps;
        addcdiv(p, g, std, self.neg_clr)
    }
}


/// [`AdadeltaStep`] in the element type. Slots: `square_avg`, `acc_delta`.
#[derive(Clone, Copy)]
pub struct Adadelta<T> {
    l2: Option<T>,
    rho: T,
    one_minus_rho: T,
    eps: T,
    neg_lr: T,
    maximize: bool,
}

impl<T: OptimFloat> Adadelta<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AdadeltaStep) -> Self {
        Adadelta {
            l2: l2_of(s.weight_decay, true),
            rho: T::of(s.rho),
            one_minus_rho: T::of(s.one_minus_rho),
            eps: T::of(s.eps),
            neg_lr: T::of(s.neg_lr),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 2> for Adadelta<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = addcmul(s[0] * self.rho, g, g, self.one_minus_rho);
        let std = (s[0] + self.eps).sqrt();
        let delta = (s[1] + self.eps).sqrt() / std * g;
        s[1] = addcmul(s[1] * self.rho, delta, delta, self.one_minus_rho);
        add_alpha(p, delta, self.neg_lr)
    }
}


/// [`AdamaxStep`] in the element type. Slots: `exp_avg`, `exp_inf`.
#[derive(Clone, Copy)]
pub struct Adamax<T> {
    l2: Option<T>,
    lerp: Lerp<T>,
    beta2: T,
    eps: T,
    neg_clr: T,
    maximize: bool,
}

impl<T: OptimFloat> Adamax<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AdamaxStep) -> Self {
        Adamax {
            l2: l2_of(s.weight_decay, true),
            lerp: Lerp::new(s.one_minus_beta1),
            beta2: T::of(s.beta2),
            eps: T::of(s.eps),
            neg_clr: T::of(s.neg_clr),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 2> for Adamax<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = self.lerp.at(s[0], g);
        s[1] = maximum(s[1] * self.beta2, g.abs() + self.eps);
        addcdiv(p, s[0], s[1], self.neg_clr)
    }
}


/// [`NadamStep`] in the element type. Slots: `exp_avg`, `exp_avg_sq`.
#[derive(Clone, Copy)]
pub struct Nadam<T> {
    decay: Option<T>,
    l2: Option<T>,
    lerp: Lerp<T>,
    beta2: T,
    one_minus_beta2: T,
    bias_correction2: T,
    eps: T,
    grad_coeff: T,
    avg_coeff: T,
    maximize: bool,
}

impl<T: OptimFloat> Nadam<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &NadamStep) -> Self {
        Nadam {
            decay: (s.decoupled && s.weight_decay != 0.0).then(|| T::of(s.decay_factor)),
            l2: l2_of(s.weight_decay, !s.decoupled),
            lerp: Lerp::new(s.one_minus_beta1),
            beta2: T::of(s.beta2),
            one_minus_beta2: T::of(s.one_minus_beta2),
            bias_correction2: T::of(s.bias_correction2),
            eps: T::of(s.eps),
            grad_coeff: T::of(s.grad_coeff),
            avg_coeff: T::of(s.avg_coeff),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 2> for Nadam<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let p = match self.decay {
            Some(d) => p * d,
            None => p,
        };
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = self.lerp.at(s[0], g);
        s[1] = addcmul(s[1] * self.beta2, g, g, self.one_minus_beta2);
        let denom = (s[1] / self.bias_correction2).sqrt() + self.eps;
        let p = addcdiv(p, g, denom, self.grad_coeff);
        addcdiv(p, s[0], denom, self.avg_coeff)
    }
}


/// [`RadamStep`] in the element type. Slots: `exp_avg`, `exp_avg_sq`.
#[derive(Clone, Copy)]
pub struct Radam<T> {
    decay: Option<T>,
    l2: Option<T>,
    lerp: Lerp<T>,
    beta2: T,
    one_minus_beta2: T,
    bias_correction1: T,
    bc2_sqrt: T,
    lr: T,
    eps: T,
    rect: Option<T>,
    maximize: bool,
}

impl<T: OptimFloat> Radam<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &RadamStep) -> Self {
        Radam {
            decay: (s.decoupled && s.weight_decay != 0.0).then(|| T::of(s.decay_factor)),
            l2: l2_of(s.weight_decay, !s.decoupled),
            lerp: Lerp::new(s.one_minus_beta1),
            beta2: T::of(s.beta2),
            one_minus_beta2: T::of(s.one_minus_beta2),
            bias_correction1: T::of(s.bias_correction1),
            bc2_sqrt: T::of(s.bias_correction2_sqrt),
            lr: T::of(s.lr),
            eps: T::of(s.eps),
            rect: s.rect.map(T::of),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 2> for Radam<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let p = match self.decay {
            Some(d) => p * d,
            None => p,
        };
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = self.lerp.at(s[0], g);
        s[1] = addcmul(s[1] * self.beta2, g, g, self.one_minus_beta2);
        let corrected = s[0] / self.bias_correction1;
        let step = match self.rect {
            Some(rect) => {
                // `bc2_sqrt / (sqrt(v) + eps)` is `reciprocal(...) * bc2_sqrt` in PyTorch.
                let adaptive = T::ONE / (s[1].sqrt() + self.eps) * self.bc2_sqrt;
                corrected * self.lr * adaptive * rect
            }
            None => corrected * self.lr,
        };
        add_alpha(p, step, -T::ONE)
    }
}


/// [`RmspropStep`] in the element type. Slots: `square_avg`, `grad_avg`
/// (centered only), `momentum_buffer` (momentum only).
#[derive(Clone, Copy)]
pub struct Rmsprop<T> {
    l2: Option<T>,
    alpha: T,
    one_minus_alpha: T,
    lerp: Lerp<T>,
    eps: T,
    momentum: Option<T>,
    centered: bool,
    neg_lr: T,
    maximize: bool,
}

impl<T: OptimFloat> Rmsprop<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &RmspropStep) -> Self {
        Rmsprop {
            l2: l2_of(s.weight_decay, true),
            alpha: T::of(s.alpha),
            one_minus_alpha: T::of(s.one_minus_alpha),
            lerp: Lerp::new(s.one_minus_alpha),
            eps: T::of(s.eps),
            momentum: (s.momentum > 0.0).then(|| T::of(s.momentum)),
            centered: s.centered,
            neg_lr: T::of(s.neg_lr),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 3> for Rmsprop<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 3]) -> T {
        let g = grad_in(p, g, self.maximize, self.l2);
        s[0] = addcmul(s[0] * self.alpha, g, g, self.one_minus_alpha);
        let avg = if self.centered {
            s[1] = self.lerp.at(s[1], g);
            addcmul(s[0], s[1], s[1], -T::ONE).sqrt()
        } else {
            s[0].sqrt()
        } + self.eps;
        match self.momentum {
            Some(mu) => {
                s[2] = addcdiv(s[2] * mu, g, avg, T::ONE);
                add_alpha(p, s[2], self.neg_lr)
            }
            None => addcdiv(p, g, avg, self.neg_lr),
        }
    }
}


/// [`RpropStep`] in the element type. Slots: `prev`, `step_size`.
#[derive(Clone, Copy)]
pub struct Rprop<T> {
    etaminus: T,
    etaplus: T,
    lo: T,
    hi: T,
    maximize: bool,
}

impl<T: OptimFloat> Rprop<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &RpropStep) -> Self {
        Rprop {
            etaminus: T::of(s.etaminus),
            etaplus: T::of(s.etaplus),
            lo: T::of(s.step_size_min),
            hi: T::of(s.step_size_max),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 2> for Rprop<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 2]) -> T {
        let g = if self.maximize { -g } else { g };
        let sg = sign(g * s[0]);
        let factor = if sg > T::ZERO {
            self.etaplus
        } else if sg < T::ZERO {
            self.etaminus
        } else {
            T::ONE
        };
        s[1] = clamp(s[1] * factor, self.lo, self.hi);
        // A sign change skips this update and forgets the gradient.
        let g = if factor == self.etaminus { T::ZERO } else { g };
        s[0] = g;
        addcmul(p, sign(g), s[1], -T::ONE)
    }
}


/// [`AsgdStep`] in the element type. Slot: `ax`.
#[derive(Clone, Copy)]
pub struct Asgd<T> {
    l2: Option<T>,
    decay: T,
    neg_eta: T,
    mu: Option<T>,
    maximize: bool,
}

impl<T: OptimFloat> Asgd<T> {
    /// Rounds the step's hyper-parameters to `T`.
    pub fn new(s: &AsgdStep) -> Self {
        Asgd {
            l2: l2_of(s.weight_decay, true),
            decay: T::of(s.decay_factor),
            neg_eta: T::of(-s.eta),
            mu: (s.mu != 1.0).then(|| T::of(s.mu)),
            maximize: s.maximize,
        }
    }
}

impl<T: OptimFloat> Update<T, 1> for Asgd<T> {
    #[inline(always)]
    fn update(&self, p: T, g: T, s: &mut [T; 1]) -> T {
        let g = grad_in(p, g, self.maximize, self.l2);
        let p = add_alpha(p * self.decay, g, self.neg_eta);
        s[0] = match self.mu {
            Some(mu) => s[0] + (p - s[0]) * mu,
            None => p,
        };
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adam_step(lr: f64, b1: f64, b2: f64, t: i32) -> AdamStep {
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
    /// (up to eps), whatever the gradient's magnitude; across several
    /// parameters and the parallel path with a ragged tail.
    #[test]
    fn adam_first_step_is_lr_times_sign() {
        let sizes = [3 * CHUNK + 5, 7, CHUNK - 1];
        let mut ps: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![1.0; n]).collect();
        let gs: Vec<Vec<f64>> =
            sizes.iter().map(|&n| (0..n).map(|i| if i % 2 == 0 { 3.0 } else { -0.25 }).collect()).collect();
        let mut ms: Vec<Vec<f64>> = sizes.iter().map(|&n| vec![0.0; n]).collect();
        let mut vs = ms.clone();
        let k = Adam::<f64>::new(&adam_step(0.1, 0.9, 0.999, 1));
        let jobs: Vec<Job<f64, Adam<f64>, 2>> = ps
            .iter_mut()
            .zip(&gs)
            .zip(ms.iter_mut().zip(vs.iter_mut()))
            .map(|((p, g), (m, v))| Job { kernel: k, param: p, grad: g, state: [Some(m), Some(v)] })
            .collect();
        multi_tensor_apply(jobs);
        for (j, p) in ps.iter().enumerate() {
            for i in 0..p.len() {
                let want = 1.0 - 0.1 * gs[j][i].signum();
                assert!((p[i] - want).abs() < 1e-7, "{i}: {} vs {want}", p[i]);
                assert!((ms[j][i] - 0.1 * gs[j][i]).abs() < 1e-15);
            }
        }
    }

    /// AMSGrad keeps the running maximum, NaN included.
    #[test]
    fn amsgrad_max_propagates_nan() {
        let (mut p, g) = (vec![0.0f32; 2], vec![1.0f32, f32::NAN]);
        let (mut m, mut v, mut x) = (vec![0.0f32; 2], vec![4.0f32, 0.0], vec![9.0f32, 0.0]);
        let k = Adam::<f32>::new(&adam_step(0.1, 0.9, 0.999, 2));
        multi_tensor_apply(vec![Job { kernel: k, param: &mut p, grad: &g, state: [Some(&mut m), Some(&mut v), Some(&mut x)] }]);
        assert_eq!(x[0], 9.0);
        assert!(x[1].is_nan() && p[1].is_nan());
    }

    /// SGD with momentum: the first step takes the gradient as the buffer,
    /// the second follows buf = mu * buf + (1 - dampening) * g.
    #[test]
    fn sgd_momentum_two_steps() {
        let mut s = SgdStep {
            weight_decay: 0.0,
            momentum: 0.5,
            one_minus_dampening: 1.0,
            nesterov: false,
            neg_lr: -0.1,
            maximize: false,
            fresh: true,
        };
        let (mut p, g, mut b) = (vec![1.0f64], vec![2.0f64], vec![0.0f64]);
        multi_tensor_apply(vec![Job { kernel: Sgd::new(&s), param: &mut p, grad: &g, state: [Some(&mut b)] }]);
        assert_eq!((p[0], b[0]), (1.0 - 0.2, 2.0));
        s.fresh = false;
        multi_tensor_apply(vec![Job { kernel: Sgd::new(&s), param: &mut p, grad: &g, state: [Some(&mut b)] }]);
        assert_eq!(b[0], 3.0);
        assert!((p[0] - (0.8 - 0.3)).abs() < 1e-15);
    }

    /// Rprop: a sign flip shrinks the step, skips the update and zeroes prev.
    #[test]
    fn rprop_sign_flip() {
        let k = Rprop::<f64>::new(&RpropStep { etaminus: 0.5, etaplus: 1.2, step_size_min: 1e-6, step_size_max: 50.0, maximize: false });
        let (mut p, g) = (vec![0.0f64, 0.0], vec![1.0, 1.0]);
        let (mut prev, mut ss) = (vec![1.0f64, -1.0], vec![0.1f64, 0.1]);
        multi_tensor_apply(vec![Job { kernel: k, param: &mut p, grad: &g, state: [Some(&mut prev), Some(&mut ss)] }]);
        assert_eq!(ss, vec![0.1 * 1.2, 0.05]);
        assert_eq!(prev, vec![1.0, 0.0]);
        assert_eq!(p, vec![-0.1 * 1.2, 0.0]);
    }

    /// A missing state slot reads zero and is never written.
    #[test]
    fn rmsprop_without_optional_slots() {
        let k = Rmsprop::<f64>::new(&RmspropStep {
            weight_decay: 0.0,
            alpha: 0.0,
            one_minus_alpha: 1.0,
            eps: 0.0,
            momentum: 0.0,
            centered: false,
            neg_lr: -1.0,
            maximize: false,
        });
        let (mut p, g, mut sq) = (vec![0.0f64], vec![-4.0f64], vec![0.0f64]);
        multi_tensor_apply(vec![Job { kernel: k, param: &mut p, grad: &g, state: [Some(&mut sq), None, None] }]);
        assert_eq!((p[0], sq[0]), (1.0, 16.0));
    }
}
