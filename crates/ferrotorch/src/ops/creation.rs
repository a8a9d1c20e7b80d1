//! Factory functions: constants, ranges, identity and random tensors.

use crate::defaults::{with_generator, SharedGenerator};
use crate::Tensor;
use ferrotorch_core::op::factory::{Distribution, Sequence};
use ferrotorch_core::{DType, Device, Error, Result, Scalar};

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
            return Tensor::sequence(n, Sequence::Affine { start: s, step: st }, dtype);
        }
        let (xs, xst) = (start.to_i64(), step.to_i64());
        Tensor::sequence(n, Sequence::AffineInt { start: xs, step: xst }, dtype)
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
        Tensor::sequence(n, Sequence::Affine { start, step }, dtype)
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
        Tensor::sequence(n, Sequence::AffineInt { start, step }, dtype)
    }

    /// A 1-d CPU tensor of `n` elements of the sequence `seq`.
    pub fn sequence(n: usize, seq: Sequence, dtype: DType) -> Result<Tensor> {
        let t = Tensor::empty(&[n], dtype, Device::CPU)?;
        t.backend()?.sequence(seq, dtype, t.operand_mut()?.dst())?;
        Ok(t)
    }

    /// `torch.linspace(start, end, steps)` with PyTorch's symmetric formula
    /// (the first half counts up from start, the second half down from end).
    pub fn linspace(start: f64, end: f64, steps: i64, dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            return Err(ferrotorch_core::dtype::not_impl("linspace", dtype));
        }
        if steps < 0 {
            return Err(Error::runtime("number of steps must be non-negative"));
        }
        Tensor::sequence(steps as usize, Sequence::Linspace { start, end }, dtype)
    }

    /// `torch.logspace(start, end, steps, base)`.
    pub fn logspace(start: f64, end: f64, steps: i64, base: f64, dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            return Err(ferrotorch_core::dtype::not_impl("logspace", dtype));
        }
        if steps < 0 {
            return Err(Error::runtime("number of steps must be non-negative"));
        }
        Tensor::sequence(steps as usize, Sequence::Logspace { start, end, base }, dtype)
    }

    /// `torch.eye(n, m)`.
    pub fn eye(n: usize, m: usize, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(&[n, m], dtype, Device::CPU)?;
        let d = t.diagonal(0, 0, 1)?;
        d.fill_init(Scalar::Int(1))?;
        Ok(t)
    }

    /// A fresh CPU tensor of draws of `dist`, taken from the generator in
    /// row-major order, so a seed reproduces the same tensor whatever the
    /// thread count.
    pub fn random(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>, dist: Distribution) -> Result<Tensor> {
        let t = Tensor::empty(shape, dtype, Device::CPU)?;
        let backend = t.backend()?;
        if dtype.is_complex() {
            // Both parts drawn from `dist`, as PyTorch's complex random kernels do.
            let parts = t.layout().as_real_parts();
            with_generator(gen, |g| backend.random(dist, g, dtype.to_real(), t.operand_mut_as(&parts)?.dst(), &[]))?;
            return Ok(t);
        }
        with_generator(gen, |g| backend.random(dist, g, dtype, t.operand_mut()?.dst(), &[]))?;
        Ok(t)
    }

    /// `torch.rand`: uniform on [0, 1).
    pub fn rand(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        if !dtype.is_complex() {
            check_float("check_uniform_bounds", dtype)?;
        }
        Tensor::random(shape, dtype, gen, Distribution::Uniform)
    }

    /// `torch.randn`: standard normal.
    pub fn randn(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        if dtype.is_complex() {
            // Unit variance in all: each part has variance 1/2.
            return Tensor::random(shape, dtype, gen, Distribution::Normal { mean: 0.0, std: std::f64::consts::FRAC_1_SQRT_2 });
        }
        check_float("normal_kernel_cpu", dtype)?;
        Tensor::random(shape, dtype, gen, Distribution::Normal { mean: 0.0, std: 1.0 })
    }

    /// `torch.normal(mean, std, size)`.
    pub fn normal(mean: f64, std: f64, shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        check_float("normal_kernel_cpu", dtype)?;
        if std < 0.0 {
            return Err(Error::runtime(format!("normal expects std >= 0.0, but found std {std}")));
        }
        Tensor::random(shape, dtype, gen, Distribution::Normal { mean, std })
    }

    /// `torch.randint(low, high, shape)`.
    pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        if high <= low {
            return Err(Error::runtime(format!(
                "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )));
        }
        let span = (high as i128 - low as i128) as u64;
        Tensor::random(shape, dtype, gen, Distribution::Integers { low, span })
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
        let rates = self.contiguous()?;
        let out = Tensor::empty(self.shape(), dtype, self.device())?;
        let backend = out.backend()?;
        with_generator(gen, |g| backend.random(Distribution::Poisson, g, dtype, out.operand_mut()?.dst(), &[rates.operand()?.src()]))?;
        let shape = self.shape().to_vec();
        crate::autograd::record("PoissonBackward0", &[Some(self)], &[&out], move || {
            crate::autograd::rule(move |_, grads| {
                let Some(g) = super::arith_grad::g0(grads) else { return Ok(vec![None]) };
                Ok(vec![Some(Tensor::zeros(&shape, g.dtype(), g.device())?)])
            })
        });
        Ok(out)
    }

    /// `torch.binomial(self, prob)`: a binomial count per element, `self`
    /// holding the numbers of trials and `prob` (same float dtype; the two
    /// broadcast) the success probabilities, drawn in row-major order from
    /// the generator with PyTorch's CPU algorithms (inversion below 10
    /// expected successes, Hörmann's BTRS above). A count `<= 0` or a
    /// probability `<= 0` gives 0, a probability `>= 1` the count, a NaN
    /// probability NaN. The draw has no derivative: the result records
    /// PyTorch's `NotImplemented` node.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// let n = Tensor::from_vec(vec![10.0f64, 0.0, 7.0], &[3])?;
    /// let p = Tensor::from_vec(vec![0.3f64, 0.5, 1.0], &[3])?;
    /// let k = n.binomial(&p, None)?.to_vec::<f64>()?;
    /// assert!(k[0] >= 0.0 && k[0] <= 10.0 && k[0].fract() == 0.0);
    /// assert_eq!((k[1], k[2]), (0.0, 7.0));
    /// # Ok::<(), ferrotorch_core::Error>(())
    /// ```
    pub fn binomial(&self, prob: &Tensor, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        super::common_device(&[self, prob])?;
        let dtype = self.dtype();
        if prob.dtype() != dtype {
            return Err(Error::runtime(format!("Found dtype {} but expected {}", pretty(prob.dtype()), pretty(dtype))));
        }
        if !matches!(dtype, DType::Float32 | DType::Float64) {
            return Err(Error::not_implemented(format!("\"binomial_cpu\" not implemented for '{}'", pretty(dtype))));
        }
        let shape = ferrotorch_core::layout::broadcast_shapes(self.shape(), prob.shape())?.to_vec();
        let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
        crate::autograd::without_derivative("binomial", &[Some(self), Some(prob)], || {
            let count = self.expand(&sizes)?.contiguous()?;
            let p = prob.expand(&sizes)?.contiguous()?;
            let out = Tensor::empty(&shape, dtype, self.device())?;
            let backend = out.backend()?;
            with_generator(gen, |g| backend.random(Distribution::Binomial, g, dtype, out.operand_mut()?.dst(), &[count.operand()?.src(), p.operand()?.src()]))?;
            Ok(out)
        })
    }

    /// `torch.randperm(n)`: a Fisher–Yates shuffle of `0..n`.
    pub fn randperm(n: usize, dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        let t = Tensor::random(&[n], DType::Int64, gen, Distribution::Permutation)?;
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

