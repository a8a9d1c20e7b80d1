//! Factory functions: constants, ranges, identity and random tensors.

use crate::defaults::{with_generator, SharedGenerator};
use crate::Tensor;
use ferrotorch_core::{dispatch_dtype, DType, Device, Error, Result, Scalar};

impl Tensor {
    /// `torch.full(shape, value, dtype=dtype)`.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType, device: Device) -> Result<Tensor> {
        let t = Tensor::empty(shape, dtype, device)?;
        t.fill_(value)?;
        Ok(t)
    }

    /// `torch.zeros`.
    pub fn zeros(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::full(shape, Scalar::Int(0), dtype, device)
    }

    /// `torch.ones`.
    pub fn ones(shape: &[usize], dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::full(shape, Scalar::Int(1), dtype, device)
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
            return Err(Error::runtime("upper bound and larger bound inconsistent with step sign"));
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
            return Err(Error::runtime("upper bound and larger bound inconsistent with step sign"));
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
        let lin = Tensor::linspace(start, end, steps, DType::Float64)?;
        let v = lin.to_vec::<f64>()?;
        Tensor::from_fn(v.len(), dtype, |i| base.powf(v[i]))
    }

    /// `torch.eye(n, m)`.
    pub fn eye(n: usize, m: usize, dtype: DType) -> Result<Tensor> {
        let t = Tensor::zeros(&[n, m], dtype, Device::CPU)?;
        let d = t.diagonal(0, 0, 1)?;
        d.fill_(Scalar::Int(1))?;
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
        check_float("rand", dtype)?;
        Tensor::random_with(shape, dtype, gen, |g| g.uniform())
    }

    /// `torch.randn`: standard normal.
    pub fn randn(shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        check_float("randn", dtype)?;
        Tensor::random_with(shape, dtype, gen, |g| g.normal())
    }

    /// `torch.normal(mean, std, size)`.
    pub fn normal(mean: f64, std: f64, shape: &[usize], dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
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

    /// `torch.randperm(n)`: a Fisher–Yates shuffle of `0..n`.
    pub fn randperm(n: usize, dtype: DType, gen: Option<&SharedGenerator>) -> Result<Tensor> {
        let mut v: Vec<i64> = (0..n as i64).collect();
        with_generator(gen, |g| {
            for i in (1..n).rev() {
                let j = g.below(i as u64 + 1) as usize;
                v.swap(i, j);
            }
        });
        Tensor::from_vec(v, &[n])?.to_dtype(dtype)
    }
}

fn check_float(op: &str, dtype: DType) -> Result<()> {
    if !dtype.is_floating_point() {
        return Err(Error::runtime(format!("\"{op}\" not implemented for '{}'", pretty(dtype))));
    }
    Ok(())
}

/// PyTorch's capitalised scalar-type names used in kernel errors (`'Long'`).
pub fn pretty(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "Bool",
        DType::UInt8 => "Byte",
        DType::Int8 => "Char",
        DType::Int16 => "Short",
        DType::Int32 => "Int",
        DType::Int64 => "Long",
        DType::Float16 => "Half",
        DType::BFloat16 => "BFloat16",
        DType::Float32 => "Float",
        DType::Float64 => "Double",
    }
}

