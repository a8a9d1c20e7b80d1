//! Factory functions: constants, ranges, identity and random tensors.

use crate::defaults::{with_generator, SharedGenerator};
use crate::Tensor;
use ferrotorch_core::{dispatch_dtype, DType, Device, Error, Result, Scalar};

impl Tensor {
    /// `torch.full(shape, value, dtype=dtype)`.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType, device: Device) -> Result<Tensor> {
        ferrotorch_core::dtype::check_scalar_fits(value, dtype, ferrotorch_core::layout::numel(shape))?;
        let t = Tensor::empty(shape, dtype, device)?;
        t.fill_init(value)?;
        Ok(t)
    }

    /// `torch.full_like(self, value, dtype=dtype)`: the value is checked
    /// against the result's element count, as `full` checks it (a
    /// one-element template would let `float16` overflow pass unchecked).
    pub fn full_like(&self, value: Scalar, dtype: DType) -> Result<Tensor> {
        ferrotorch_core::dtype::check_scalar_fits(value, dtype, self.numel())?;
        let out = self.empty_like(dtype)?;
        out.fill_init(value)?;
        Ok(out)
    }

    /// `torch.zeros`.
    pub fn zeros(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::empty_zeroed(shape, dtype, device)
    }

    /// `torch.ones`.
    pub fn ones(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::full(shape, Scalar::Int(1), dtype, device)
    }

    /// `torch.arange(start, end, step, dtype=dtype)` with PyTorch's rules: the
    /// bounds are checked in `f64`; an `int64` result converts all three
    /// arguments to integers first (so `arange(0.5, dtype=int64)` is empty and
    /// a fractional step that truncates to 0 is a `ValueError`); other integer
    /// results take their length from the `f64` arguments and their values from
    /// the truncated ones; floating results compute `start + i * step` in `f64`.
    pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            return Err(Error::not_implemented("\"arange_cpu\" not implemented for 'Bool'"));
        }
        let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
        if st == 0.0 {
            return Err(Error::runtime("step must be nonzero"));
        }
        if !(s.is_finite() && e.is_finite()) {
            return Err(Error::runtime(format!("unsupported range: {} -> {}", fmt_num(start), fmt_num(end))));
        }
        if !((st > 0.0 && e >= s) || (st < 0.0 && e <= s)) {
            return Err(Error::runtime("upper bound and lower bound inconsistent with step sign"));
        }
        if dtype == DType::Int64 {
            let (xs, xe, xst) = (start.to_i64(), end.to_i64(), step.to_i64());
            if xst == 0 {
                return Err(Error::value("step must be nonzero"));
            }
            return Tensor::arange_i64(xs, xe, xst, dtype);
        }
        let n = ((e - s) / st).ceil();
        if !(n >= 0.0 && n <= i64::MAX as f64) {
            return Err(Error::runtime("invalid size, possible overflow?"));
        }
        let n = n as usize;
        if dtype.is_floating_point() {
            return Tensor::from_fn(n, dtype, |i| s + i as f64 * st);
        }
        let (xs, xst) = (start.to_i64(), step.to_i64());
        let t = Tensor::empty(&[n], dtype, Device::CPU)?;
        dispatch_dtype!(dtype, T => {
            let p = t.data_ptr_mut() as *mut T;
            for i in 0..n {
                let v = xs.wrapping_add((i as i64).wrapping_mul(xst));
                // SAFETY: t holds n contiguous elements of T.
                unsafe { *p.add(i) = ferrotorch_core::element::cast::<i64, T>(v) };
            }
        });
        Ok(t)
    }

    /// `torch.arange(start, end, step)` computed in `f64` then cast, with
    /// PyTorch's length rule `ceil((end - start) / step)`.
    pub fn arange_f64(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        if step == 0.0 {
            return Err(Error::runtime("step must be nonzero"));
        }
        if !(start.is_finite() && end.is_finite()) {
            return Err(Error::runtime(format!("unsupported range: {start} -> {end}")));
        }
        if (step > 0.0 && end < start) || (step < 0.0 && end > start) {
            return Err(Error::runtime("upper bound and lower bound inconsistent with step sign"));
        }
        let n = ((end - start) / step).ceil().max(0.0) as usize;
        Tensor::from_fn(n, dtype, |i| start + i as f64 * step)
    }

    /// `torch.arange` over integers (exact for large int64 values).
    pub fn arange_i64(start: i64, end: i64, step: i64, dtype: DType) -> Result<Tensor> {
        if step == 0 {
            return Err(Error::runtime("step must be nonzero"));
        }
        if (step > 0 && end < start) || (step < 0 && end > start) {
            return Err(Error::runtime("upper bound and lower bound inconsistent with step sign"));
        }
        let n = ((end - start) as i128 + step as i128 - step.signum() as i128) / step as i128;
        let n = n.max(0) as usize;
        let t = Tensor::empty(&[n], dtype, Device::CPU)?;
        dispatch_dtype!(dtype, T => {
            let p = t.data_ptr_mut() as *mut T;
            for i in 0..n {
                // SAFETY: t holds n contiguous elements of T.
                unsafe { *p.add(i) = ferrotorch_core::element::cast::<i64, T>(start + i as i64 * step) };
            }
        });
        Ok(t)
    }

    /// A 1-d tensor of `n` elements computed in `f64` by `f(i)`.
    pub fn from_fn(n: usize, dtype: DType, f: impl Fn(usize) -> f64) -> Result<Tensor> {
        let t = Tensor::empty(&[n], dtype, Device::CPU)?;
        dispatch_dtype!(dtype, T => {
            let p = t.data_ptr_mut() as *mut T;
            for i in 0..n {
                // SAFETY: t holds n contiguous elements of T.
                unsafe { *p.add(i) = ferrotorch_core::element::cast::<f64, T>(f(i)) };
            }
        });
        Ok(t)
    }

    /// `torch.linspace(start, end, steps)` with PyTorch's symmetric formula
    /// (the first half counts up from start, the second half down from end).
    pub fn linspace(start: f64, end: f64, steps: i64, dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            return Err(super::math::not_impl("linspace", dtype));
        }
        if steps < 0 {
            return Err(Error::runtime("number of steps must be non-negative"));
        }
        let n = steps as usize;
        if n == 1 {
            return Tensor::from_fn(1, dtype, |_| start);
        }
        let step = (end - start) / (n as f64 - 1.0);
        let half = n / 2;
        Tensor::from_fn(n, dtype, |i| {
            if i < half {
                start + step * i as f64
            } else {
                end - step * (n - 1 - i) as f64
            }
        })
    }

    /// `torch.logspace(start, end, steps, base)`.
    pub fn logspace(start: f64, end: f64, steps: i64, base: f64, dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            return Err(super::math::not_impl("logspace", dtype));
        }
        let lin = Tensor::linspace(start, end, steps, DType::Float64)?;
        let v = lin.to_vec::<f64>()?;
        Tensor::from_fn(v.len(), dtype, |i| base.powf(v[i]))
    }

    /// `torch.eye(n, m)`.
    pub fn eye(n: usize, m: usize, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(&[n, m], dtype, Device::CPU)?;
        let d = t.diagonal(0, 0, 1)?;
        d.fill_init(Scalar::Int(1))?;
        Ok(t)
    }

    /// Fills a fresh tensor with `f(generator)` per element, in row-major order,
    /// so a seed reproduces the same tensor whatever the thread count.
    pub fn random_with(
        shape: &[usize],
        dtype: DType,
        gen: Option<&SharedGenerator>,
        f: impl Fn(&mut ferrotorch_cpu::random::Generator) -> f64,
    ) -> Result<Tensor> {
        let t = Tensor::empty(shape, dtype, Device::CPU)?;
        let n = t.numel();
        with_generator(gen, |g| {
            dispatch_dtype!(dtype, T => {
                let p = t.data_ptr_mut() as *mut T;
                for i in 0..n {
                    // SAFETY: t holds n contiguous elements of T.
                    unsafe { *p.add(i) = ferrotorch_core::element::cast::<f64, T>(f(g)) };
                }
            })
        });
        Ok(t)
    }

    /// `torch.rand`: uniform on [0, 1).
    pub fn rand(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        check_float("check_uniform_bounds", dtype)?;
        Tensor::random_with(shape, dtype, gen, |g| g.uniform())
    }

    /// `torch.randn`: standard normal.
    pub fn randn(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        check_float("normal_kernel_cpu", dtype)?;
        Tensor::random_with(shape, dtype, gen, |g| g.normal())
    }

    /// `torch.normal(mean, std, size)`.
    pub fn normal(mean: f64, std: f64, shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        check_float("normal_kernel_cpu", dtype)?;
        if std < 0.0 {
            return Err(Error::runtime(format!("normal expects std >= 0.0, but found std {std}")));
        }
        Tensor::random_with(shape, dtype, gen, |g| mean + std * g.normal())
    }

    /// `torch.randint(low, high, shape)`.
    pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        if high <= low {
            return Err(Error::runtime(format!(
                "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )));
        }
        let span = (high as i128 - low as i128) as u64;
        let t = Tensor::empty(shape, dtype, Device::CPU)?;
        let n = t.numel();
        with_generator(gen, |g| {
            dispatch_dtype!(dtype, T => {
                let p = t.data_ptr_mut() as *mut T;
                for i in 0..n {
                    let v = (low as i128 + g.below(span) as i128) as i64;
                    // SAFETY: t holds n contiguous elements of T.
                    unsafe { *p.add(i) = ferrotorch_core::element::cast::<i64, T>(v) };
                }
            })
        });
        Ok(t)
    }

    /// `torch.poisson(self)`: a Poisson count per element, `self` holding
    /// the rates, in `self`'s float dtype, drawn in row-major order from the
    /// generator (PyTorch's algorithms, our generator's stream). The result
    /// is a sample: its `PoissonBackward0` passes a zero gradient, as
    /// PyTorch's does.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// let rates = Tensor::from_vec(vec![0.0f32, 4.0, 250.0], &[3])?;
    /// let counts = rates.poisson(None)?.to_vec::<f32>()?;
    /// assert_eq!(counts[0], 0.0);
    /// assert!(counts.iter().all(|c| c.fract() == 0.0 && *c >= 0.0));
    /// # Ok::<(), ferrotorch_core::Error>(())
    /// ```
    pub fn poisson(&self, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        let dtype = self.dtype();
        if !dtype.is_floating_point() {
            return Err(Error::not_implemented(format!("\"poisson_cpu\" not implemented for '{}'", pretty(dtype))));
        }
        let lam = self.to_f64_vec()?;
        // NaN fails `>= 0` too.
        if lam.iter().any(|&l| !(l >= 0.0)) {
            return Err(Error::runtime("invalid Poisson rate, expected rate to be non-negative"));
        }
        let out = Tensor::empty(self.shape(), dtype, self.device())?;
        with_generator(gen, |g| {
            dispatch_dtype!(dtype, T => {
                let p = out.data_ptr_mut() as *mut T;
                for (i, &l) in lam.iter().enumerate() {
                    // SAFETY: `out` is fresh and contiguous with `lam.len()` elements.
                    unsafe { *p.add(i) = ferrotorch_core::element::cast::<f64, T>(g.poisson(l)) };
                }
            })
        });
        let shape = self.shape().to_vec();
        crate::autograd::record("PoissonBackward0", &[Some(self)], &[&out], move || {
            crate::autograd::rule(move |_, grads| {
                let Some(g) = super::arith_grad::g0(grads) else { return Ok(vec![None]) };
                Ok(vec![Some(Tensor::zeros(&shape, g.dtype(), g.device())?)])
            })
        });
        Ok(out)
    }

    /// `torch.randperm(n)`: a Fisher–Yates shuffle of `0..n`.
    pub fn randperm(n: usize, dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        // Allocated from the pool first, so an impossible size is an error, not an abort.
        let t = Tensor::empty(&[n], DType::Int64, Device::CPU)?;
        // SAFETY: t is a fresh contiguous int64 tensor of n elements that nothing else sees.
        let v = unsafe { std::slice::from_raw_parts_mut(t.data_ptr_mut() as *mut i64, n) };
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as i64;
        }
        with_generator(gen, |g| {
            for i in (1..n).rev() {
                let j = g.below(i as u64 + 1) as usize;
                v.swap(i, j);
            }
        });
        t.to_dtype(dtype)
    }
}

/// Random floating kernels refuse other dtypes with PyTorch's
/// `NotImplementedError` naming the kernel (`check_uniform_bounds`, ...).
fn check_float(kernel: &str, dtype: DType) -> Result<()> {
    if !dtype.is_floating_point() {
        return Err(Error::not_implemented(format!("\"{kernel}\" not implemented for '{}'", pretty(dtype))));
    }
    Ok(())
}

/// A number as PyTorch prints it in messages (`0`, `1.5`, `inf`).
fn fmt_num(s: Scalar) -> String {
    match s {
        Scalar::Float(f) => format!("{f}"),
        other => other.to_i64().to_string(),
    }
}

pub use ferrotorch_core::dtype::pretty;

