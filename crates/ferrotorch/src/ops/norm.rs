//! Layer, batch and group normalisation as native ops: the op layer checks
//! the arguments as PyTorch does, and the forward and backward run the
//! [`NormKernels`](ferrotorch_core::backend::NormKernels) of the input's
//! backend (computing in float32 for float32/float16/bfloat16, float64 for
//! float64). Recorded as `NativeLayerNormBackward0`,
//! `NativeBatchNormBackward0` and `NativeGroupNormBackward0` with edges
//! (input, weight, bias) as in PyTorch.

use super::arith::UnaryOp;
use super::arith_grad::{adds, g0, mul, sub, un};
use super::creation::pretty;
use crate::autograd::{is_grad_enabled, record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use super::conj_bit::{read_opt, write_opt, Read, Write};
use ferrotorch_core::backend::NormGrads;
use ferrotorch_core::op::norm::{norm_compute_dtype, BatchNormSpec, GroupNormSpec, LayerNormSpec, Ncs};
use ferrotorch_core::{DType, Device, Error, Result, Src};

fn fmt_list(v: &[impl std::fmt::Display]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}
/// The checks of PyTorch's `layer_norm_cpu`, in its order: mixed parameter
/// dtypes, then `normalized_shape` against weight, bias and input. Returns
/// (rows, row length).
fn check_inputs(x: &Tensor, shape: &[i64], w: Option<&Tensor>, b: Option<&Tensor>) -> Result<(usize, usize)> {
    let params: Vec<&Tensor> = w.into_iter().chain(b).collect();
    check_param_dtypes(x.dtype(), &params)?;
    if shape.is_empty() {
        return Err(Error::runtime(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        ));
    }
    for (p, what) in [(w, "weight"), (b, "bias")] {
        if let Some(p) = p {
            if p.shape().len() != shape.len() || p.shape().iter().zip(shape).any(|(&a, &s)| a as i64 != s) {
                return Err(Error::runtime(format!(
                    "Expected {what} to be of same shape as normalized_shape, but got {what} of shape {} and normalized_shape = {}",
                    fmt_list(p.shape()),
                    fmt_list(shape)
                )));
            }
        }
    }
    let xs = x.shape();
    let k = shape.len();
    if xs.len() < k || xs[xs.len() - k..].iter().zip(shape).any(|(&a, &s)| a as i64 != s) {
        return Err(Error::runtime(format!(
            "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
            fmt_list(shape),
            shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            fmt_list(xs)
        )));
    }
    let n: usize = xs[xs.len() - k..].iter().product();
    let rows: usize = xs[..xs.len() - k].iter().product();
    Ok((rows, n))
}


/// A parameter as a contiguous tensor of the compute dtype `cdt`.
fn param(p: Option<&Tensor>, cdt: DType) -> Result<Option<Tensor>> {
    p.map(|p| p.to_dtype(cdt)?.contiguous()).transpose()
}

/// An optional tensor's kernel input holder (see [`src`]).
fn held(t: &Option<Tensor>) -> Result<Option<Read<'_>>> {
    read_opt(t.as_ref())
}

/// An optional kernel input from its holder.
fn src<'a>(r: &'a Option<Read<'_>>) -> Option<Src<'a>> {
    r.as_ref().map(|r| r.src())
}

/// Fresh gradients for the wanted ones of (input, weight, bias): the
/// input's `shape`/`dt` (its kernel writes every element), the parameters'
/// `[p]` in the compute dtype `cdt`, zeroed (their kernels leave them when
/// there is nothing to sum).
fn fresh_grads(want: [bool; 3], shape: &[usize], dt: DType, p: usize, cdt: DType, device: Device) -> Result<[Option<Tensor>; 3]> {
    Ok([
        if want[0] { Some(Tensor::empty(shape, dt, device)?) } else { None },
        if want[1] { Some(Tensor::zeros(&[p], cdt, device)?) } else { None },
        if want[2] { Some(Tensor::zeros(&[p], cdt, device)?) } else { None },
    ])
}

/// The kernel outputs for [`fresh_grads`].
fn grad_operands<'a>(g: &'a [Option<Write<'_>>; 3]) -> NormGrads<'a> {
    let dst = |i: usize| g[i].as_ref().map(|w| w.dst());
    NormGrads { input: dst(0), weight: dst(1), bias: dst(2) }
}

/// The kernel output holders of [`fresh_grads`].
fn grad_writes(g: &[Option<Tensor>; 3]) -> Result<[Option<Write<'_>>; 3]> {
    Ok([write_opt(g[0].as_ref())?, write_opt(g[1].as_ref())?, write_opt(g[2].as_ref())?])
}

impl Tensor {
    /// `layer_norm(input, normalized_shape, weight, bias, eps)`: normalises
    /// over the last `normalized_shape.len()` dims. float16/bfloat16 inputs
    /// may take float32 weight and bias (PyTorch's CPU mixed-type rule); the
    /// output has the input's dtype. Records `NativeLayerNormBackward0`.
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// let y = x.layer_norm(&[2], None, None, 0.0).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, 1.0, -1.0, 1.0]);
    /// ```
    pub fn layer_norm(&self, normalized_shape: &[i64], weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
        let ts: Vec<&Tensor> = [Some(self), weight, bias].into_iter().flatten().collect();
        let device = super::common_device(&ts)?;
        let (rows, n) = check_inputs(self, normalized_shape, weight, bias)?;
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"LayerNormKernelImpl\" not implemented for '{}'", pretty(dt))));
        }
        let cdt = norm_compute_dtype(dt);
        let spec = LayerNormSpec { rows, n, eps };
        let (out, mean, rstd) = {
            let _no_grad = GradModeGuard::new(false);
            let x = self.contiguous()?;
            let (w, b) = (param(weight, cdt)?, param(bias, cdt)?);
            let out = Tensor::empty(self.shape(), dt, device)?;
            let (mean, rstd) = (Tensor::zeros(&[rows], cdt, device)?, Tensor::zeros(&[rows], cdt, device)?);
            out.backend()?.layer_norm(&spec, dt, x.operand()?.src(), src(&held(&w)?), src(&held(&b)?), out.operand_mut()?.dst(), mean.operand_mut()?.dst(), rstd.operand_mut()?.dst())?;
            (out, mean, rstd)
        };
        let sx = SavedTensor::input(self);
        let sw = weight.map(SavedTensor::input);
        let (want_x, want_w, want_b) =
            (self.requires_grad(), weight.is_some_and(|w| w.requires_grad()), bias.is_some_and(|b| b.requires_grad()));
        let pshape: Vec<i64> = weight.or(bias).map(|p| p.shape().iter().map(|&s| s as i64).collect()).unwrap_or_default();
        let (wdt, bdt) = (weight.map(|w| w.dtype()), bias.map(|b| b.dtype()));
        let k = normalized_shape.len();
        record("NativeLayerNormBackward0", &[Some(self), weight, bias], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let x = sx.unpack(node)?;
                let w = sw.as_ref().map(|s| s.unpack(node)).transpose()?;
                if is_grad_enabled() {
                    // create_graph: the same gradients written with
                    // differentiable ops, so that they can be differentiated again.
                    return composite_backward(&g, &x, w.as_ref(), k, eps, [want_x, want_w, want_b], wdt, bdt);
                }
                let _no_grad = GradModeGuard::new(false);
                let (gc, xc) = (g.to_dtype(dt)?.contiguous()?, x.contiguous()?);
                let w = param(w.as_ref(), cdt)?;
                // The kernel computes the weight and bias gradients together.
                let want_wb = want_w || want_b;
                let grads = fresh_grads([want_x, want_wb, want_wb], xc.shape(), dt, n, cdt, xc.device())?;
                xc.backend()?.layer_norm_backward(&spec, dt, gc.operand()?.src(), xc.operand()?.src(), mean.operand()?.src(), rstd.operand()?.src(), src(&held(&w)?), grad_operands(&grad_writes(&grads)?))?;
                let [gx, gw, gb] = grads;
                let gw = gw.filter(|_| want_w).map(|t| t.reshape(&pshape)?.to_dtype(wdt.unwrap_or(dt))).transpose()?;
                let gb = gb.filter(|_| want_b).map(|t| t.reshape(&pshape)?.to_dtype(bdt.unwrap_or(dt))).transpose()?;
                Ok(vec![gx, gw, gb])
            })
        });
        Ok(out)
    }
}

/// The layer_norm gradients from differentiable tensor ops (used under
/// `create_graph`): with `x̂ = (x − mean)·rstd` and `ĝ = g·w`,
/// `gx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂))`, `gw = Σ g·x̂`, `gb = Σ g` over the
/// leading dims; reduced dtypes compute in float32.
#[allow(clippy::too_many_arguments)]
fn composite_backward(
    g: &Tensor,
    x: &Tensor,
    w: Option<&Tensor>,
    k: usize,
    eps: f64,
    want: [bool; 3],
    wdt: Option<DType>,
    bdt: Option<DType>,
) -> Result<Vec<Option<Tensor>>> {
    let dt = x.dtype();
    let cdt = if matches!(dt, DType::Float16 | DType::BFloat16) { DType::Float32 } else { dt };
    let (xf, gf) = (x.to_dtype(cdt)?, g.to_dtype(cdt)?);
    let nd = x.ndim();
    let dims: Vec<i64> = (nd - k..nd).map(|d| d as i64).collect();
    let lead: Vec<i64> = (0..nd - k).map(|d| d as i64).collect();
    let mean = xf.mean_dims(Some(&dims), true, None)?;
    let xc = sub(&xf, &mean)?;
    let var = mul(&xc, &xc)?.mean_dims(Some(&dims), true, None)?;
    let rstd = un(&adds(&var, eps)?, UnaryOp::Rsqrt)?;
    let xhat = mul(&xc, &rstd)?;
    let sum_lead = |t: Tensor| -> Result<Tensor> { if lead.is_empty() { Ok(t) } else { t.sum_dims(Some(&lead), false, None) } };
    let gx = if want[0] {
        let gh = match w {
            Some(w) => mul(&gf, &w.to_dtype(cdt)?)?,
            None => gf.clone(),
        };
        Some(normalised_input_grad(&gh, &xhat, &rstd, &dims)?.to_dtype(dt)?)
    } else {
        None
    };
    let gw = if want[1] { Some(sum_lead(mul(&gf, &xhat)?)?.to_dtype(wdt.unwrap_or(dt))?) } else { None };
    let gb = if want[2] { Some(sum_lead(gf.clone())?.to_dtype(bdt.unwrap_or(dt))?) } else { None };
    Ok(vec![gx, gw, gb])
}

// ---------------------------------------------------------------------------
// Batch and group normalisation.

/// PyTorch's CPU mixed-dtype rule for normalisation parameters: they share
/// the input's dtype, or are all float32 beside a float16/bfloat16 input.
/// Returns the dtype the statistics are stored in (the parameters' dtype).
fn check_param_dtypes(dt: DType, params: &[&Tensor]) -> Result<DType> {
    if params.iter().any(|p| p.dtype() != dt) {
        if params.iter().any(|p| p.dtype() != DType::Float32) {
            return Err(Error::runtime("mixed dtype (CPU): expect parameter to have scalar type of Float"));
        }
        if !matches!(dt, DType::Float16 | DType::BFloat16) {
            return Err(Error::runtime("mixed dtype (CPU): all inputs must share same datatype."));
        }
        return Ok(DType::Float32);
    }
    Ok(dt)
}

/// `t.size(dim)` on a tensor of fewer dims: PyTorch's IndexError.
fn size_error(ndim: usize, dim: usize) -> Error {
    if ndim == 0 {
        Error::index(format!("Dimension specified as {dim} but tensor has no dimensions"))
    } else {
        Error::index(format!("Dimension out of range (expected to be in range of [{}, {}], but got {dim})", -(ndim as i64), ndim - 1))
    }
}

/// A statistic returned to the caller in `dt`: a fresh tensor even when
/// `dt` is the compute dtype, since the backward keeps its own.
fn returned_stat(t: &Tensor, shape: &[i64], dt: DType) -> Result<Tensor> {
    let t = t.reshape(shape)?;
    if t.dtype() == dt {
        t.clone_data()
    } else {
        t.to_dtype(dt)
    }
}

/// The reduced dims of batch norm: all but the channel dim.
fn bn_dims(nd: usize) -> Vec<i64> {
    std::iter::once(0).chain(2..nd as i64).collect()
}


impl Tensor {
    /// `batch_norm(input, running_mean, running_var, weight, bias, training,
    /// momentum, eps)` over dim 1 of an input of at least 2 dims. In
    /// training the batch mean and biased variance normalise, and the running
    /// statistics (when given) move towards the batch mean and unbiased
    /// variance by `momentum`, in place; in evaluation the running statistics
    /// normalise. Records `NativeBatchNormBackward0` (edges input, weight, bias).
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// // channel 0 holds (1, 3), channel 1 holds (3, 5): each has variance 1
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 3.0, 5.0], &[2, 2]).unwrap();
    /// let rm = Tensor::from_vec(vec![0.0f64, 0.0], &[2]).unwrap();
    /// let rv = Tensor::from_vec(vec![1.0f64, 1.0], &[2]).unwrap();
    /// let y = x.batch_norm(Some(&rm), Some(&rv), None, None, true, 0.5, 0.0).unwrap();
    /// assert_eq!(y.to_vec::<f64>().unwrap(), vec![-1.0, -1.0, 1.0, 1.0]);
    /// // running stats move halfway to the batch mean and unbiased variance (2)
    /// assert_eq!(rm.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
    /// assert_eq!(rv.to_vec::<f64>().unwrap(), vec![1.5, 1.5]);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<Tensor> {
        // ATen's `_batch_norm_impl_index`: an empty input (with a channel
        // dim) returns before any dtype check, so an integer one passes.
        if self.ndim() >= 2 && self.numel() == 0 {
            let ts: Vec<&Tensor> = [Some(self), weight, bias, running_mean, running_var].into_iter().flatten().collect();
            super::common_device(&ts)?;
            return self.empty_batch_norm(weight, bias);
        }
        Ok(self.native_batch_norm(weight, bias, running_mean, running_var, training, momentum, eps)?.0)
    }

    /// ATen's result for an empty input: a copy, scaled by `weight[0]` and
    /// shifted by `bias[0]` (with type promotion).
    fn empty_batch_norm(&self, weight: Option<&Tensor>, bias: Option<&Tensor>) -> Result<Tensor> {
        let mut out = self.clone_data()?;
        if let Some(w) = weight.filter(|w| w.numel() > 0) {
            out = out.mul(&w.reshape(&[-1])?.select(0, 0)?)?;
        }
        if let Some(b) = bias.filter(|b| b.numel() > 0) {
            out = out.add(&b.reshape(&[-1])?.select(0, 0)?)?;
        }
        Ok(out)
    }

    /// `native_batch_norm(input, weight, bias, running_mean, running_var,
    /// training, momentum, eps) -> (output, save_mean, save_invstd)`: as
    /// [`Tensor::batch_norm`], with the batch mean and `1/sqrt(var + eps)` per
    /// channel (empty in evaluation), in the parameters' dtype.
    #[allow(clippy::too_many_arguments)]
    pub fn native_batch_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let ts: Vec<&Tensor> = [Some(self), weight, bias, running_mean, running_var].into_iter().flatten().collect();
        let device = super::common_device(&ts)?;
        let nd = self.ndim();
        // ATen reads size(1) unchecked here: 0 features below 2 dims.
        let nf = if nd >= 2 { self.shape()[1] } else { 0 };
        for (name, t) in [("running_mean", running_mean), ("running_var", running_var)] {
            match t {
                Some(t) if t.numel() != nf => return Err(Error::runtime(format!("{name} should contain {nf} elements not {}", t.numel()))),
                None if !training => return Err(Error::runtime(format!("{name} must be defined in evaluation mode"))),
                _ => {}
            }
        }
        for (name, t) in [("weight", weight), ("bias", bias)] {
            if let Some(t) = t {
                if t.numel() != nf {
                    return Err(Error::runtime(format!("{name} should contain {nf} elements not {}", t.numel())));
                }
            }
        }
        if training && running_mean.is_some() != running_var.is_some() {
            return Err(Error::value("running_mean and running_var must either both be None or neither be None"));
        }
        if nd < 2 {
            return Err(size_error(nd, 1));
        }
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"batch_norm\" not implemented for '{}'", pretty(dt))));
        }
        let params: Vec<&Tensor> = [weight, bias, running_mean, running_var].into_iter().flatten().collect();
        let pdt = check_param_dtypes(dt, &params)?;
        for t in [running_mean, running_var].into_iter().flatten() {
            if t.ndim() != 1 {
                return Err(Error::runtime(format!("TensorAccessor expected 1 dims but tensor has {}", t.ndim())));
            }
        }
        if self.numel() == 0 {
            let out = self.empty_batch_norm(weight, bias)?;
            let (c, cdt) = (self.shape()[1], norm_compute_dtype(dt));
            let e = || if device.is_meta() { Tensor::empty(&[c], cdt, device) } else { Tensor::empty(&[0], pdt, device) };
            return Ok((out, e()?, e()?));
        }
        let strided = !self.is_contiguous();
        let dims = bn_dims(nd);
        let cdt = norm_compute_dtype(dt);
        let spec = BatchNormSpec { shape: Ncs::of(self.shape()), training, momentum, eps, strided, stats_dtype: pdt };
        let (out, save_mean, save_invstd) = {
            let _no_grad = GradModeGuard::new(false);
            // Strided inputs: PyTorch takes the mean with at::mean, then
            // walks the elements around it (here over a contiguous copy).
            let sm = if training && strided { Some(self.mean_dims(Some(&dims), false, Some(pdt))?.to_dtype(cdt)?.contiguous()?) } else { None };
            let x = self.contiguous()?;
            let (w, b) = (param(weight, cdt)?, param(bias, cdt)?);
            let out = Tensor::empty(self.shape(), dt, device)?;
            let (m, s) = (Tensor::zeros(&[nf], cdt, device)?, Tensor::zeros(&[nf], cdt, device)?);
            // The running statistics update in place, as PyTorch's kernel
            // writes them: no version bump, no autograd.
            let (hm, hv) = (write_opt(running_mean)?, write_opt(running_var)?);
            let (rm, rv) = (hm.as_ref().map(|w| w.dst()), hv.as_ref().map(|w| w.dst()));
            out.backend()?.batch_norm(&spec, dt, x.operand()?.src(), src(&held(&w)?), src(&held(&b)?), rm, rv, src(&held(&sm)?), out.operand_mut()?.dst(), m.operand_mut()?.dst(), s.operand_mut()?.dst())?;
            (out, m, s)
        };
        let sx = SavedTensor::input(self);
        let sw = weight.map(SavedTensor::input);
        let want = [self.requires_grad(), weight.is_some_and(|w| w.requires_grad()), bias.is_some_and(|b| b.requires_grad())];
        let (wdt, bdt) = (weight.map(|w| w.dtype()), bias.map(|b| b.dtype()));
        let pshape: Vec<i64> = weight.or(bias).map(|p| p.shape().iter().map(|&s| s as i64).collect()).unwrap_or_default();
        let c = nf;
        // PyTorch's meta kernel (a decomposition) returns the statistics
        // in the compute dtype in either mode; its CPU kernel returns the
        // batch statistics in the parameters' dtype, and none in evaluation.
        let stats = if device.is_meta() {
            (save_mean.clone(), save_invstd.clone())
        } else if training {
            (returned_stat(&save_mean, &[c as i64], pdt)?, returned_stat(&save_invstd, &[c as i64], pdt)?)
        } else {
            (Tensor::empty(&[0], pdt, device)?, Tensor::empty(&[0], pdt, device)?)
        };
        record("NativeBatchNormBackward0", &[Some(self), weight, bias], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let x = sx.unpack(node)?;
                let w = sw.as_ref().map(|s| s.unpack(node)).transpose()?;
                let nd = x.ndim();
                let dims = bn_dims(nd);
                if is_grad_enabled() {
                    let fixed = (!training).then(|| (save_mean.clone(), save_invstd.clone()));
                    let mut bshape = vec![1i64; nd];
                    bshape[1] = -1;
                    return composite_channel_backward(&g, &x, w.as_ref(), &dims, &bshape, None, fixed, eps, want, wdt, bdt);
                }
                let _no_grad = GradModeGuard::new(false);
                let g = g.to_dtype(dt)?;
                let gstrided = strided || !g.is_contiguous();
                let gsum = if gstrided { Some(g.sum_dims(Some(&dims), false, None)?.to_dtype(cdt)?.contiguous()?) } else { None };
                let (gc, xc) = (g.contiguous()?, x.contiguous()?);
                let w = param(w.as_ref(), cdt)?;
                let grads = fresh_grads(want, xc.shape(), dt, c, cdt, xc.device())?;
                let (m, s) = (save_mean.operand()?, save_invstd.operand()?);
                xc.backend()?.batch_norm_backward(&spec, dt, gc.operand()?.src(), xc.operand()?.src(), m.src(), s.src(), src(&held(&w)?), src(&held(&gsum)?), grad_operands(&grad_writes(&grads)?))?;
                let [gx, gw, gb] = grads;
                let gw = gw.map(|t| t.reshape(&pshape)?.to_dtype(wdt.unwrap_or(dt))).transpose()?;
                let gb = gb.map(|t| t.reshape(&pshape)?.to_dtype(bdt.unwrap_or(dt))).transpose()?;
                Ok(vec![gx, gw, gb])
            })
        });
        Ok((out, stats.0, stats.1))
    }

    /// `group_norm(input, num_groups, weight, bias, eps)`: each sample's
    /// channels split into `num_groups` groups normalised over the group's
    /// channels and spatial dims, then scaled and shifted per channel.
    /// Records `NativeGroupNormBackward0` (edges input, weight, bias).
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0, 5.0, 7.0], &[1, 2, 2]).unwrap();
    /// let y = x.group_norm(1, None, None, 0.0).unwrap();
    /// let v = y.to_vec::<f32>().unwrap();
    /// assert!((v[0] + 1.3416407).abs() < 1e-6 && (v[3] - 1.3416407).abs() < 1e-6);
    /// ```
    pub fn group_norm(&self, num_groups: i64, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<Tensor> {
        Ok(self.native_group_norm(num_groups, weight, bias, eps)?.0)
    }

    /// `native_group_norm`: as [`Tensor::group_norm`], also returning the
    /// per-(sample, group) mean and `1/sqrt(var + eps)`, shaped
    /// `[N, num_groups]`, in the parameters' dtype.
    pub fn native_group_norm(&self, num_groups: i64, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Result<(Tensor, Tensor, Tensor)> {
        let ts: Vec<&Tensor> = [Some(self), weight, bias].into_iter().flatten().collect();
        let device = super::common_device(&ts)?;
        let nd = self.ndim();
        if nd < 2 {
            return Err(size_error(nd, nd));
        }
        let c = self.shape()[1];
        if num_groups <= 0 {
            return Err(Error::runtime(format!("Expected num groups to be greater than 0, got {num_groups}")));
        }
        let groups = num_groups as usize;
        if c % groups != 0 {
            return Err(Error::runtime(format!(
                "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={num_groups}",
                fmt_list(self.shape())
            )));
        }
        for (name, t) in [("weight", weight), ("bias", bias)] {
            if let Some(t) = t {
                if t.ndim() != 1 || t.numel() != c {
                    return Err(Error::runtime(format!(
                        "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {} and input of shape {}",
                        fmt_list(t.shape()),
                        fmt_list(self.shape())
                    )));
                }
            }
        }
        let dt = self.dtype();
        let params: Vec<&Tensor> = [weight, bias].into_iter().flatten().collect();
        // ATen's mixed-dtype check comes before its kernel's dtype dispatch.
        if !dt.is_floating_point() && params.iter().any(|p| p.dtype() != dt) {
            return Err(Error::runtime("mixed dtype (CPU): all inputs must share same datatype."));
        }
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"GroupNormKernelImpl\" not implemented for '{}'", pretty(dt))));
        }
        let pdt = check_param_dtypes(dt, &params)?;
        let cdt = norm_compute_dtype(dt);
        let shape = Ncs::of(self.shape());
        let spec = GroupNormSpec { shape, groups, eps, stats_dtype: pdt };
        let (out, mean, rstd) = {
            let _no_grad = GradModeGuard::new(false);
            let x = self.contiguous()?;
            let (w, b) = (param(weight, cdt)?, param(bias, cdt)?);
            let out = Tensor::empty(self.shape(), dt, device)?;
            let rows = shape.n * groups;
            let (mean, rstd) = (Tensor::zeros(&[rows], cdt, device)?, Tensor::zeros(&[rows], cdt, device)?);
            out.backend()?.group_norm(&spec, dt, x.operand()?.src(), src(&held(&w)?), src(&held(&b)?), out.operand_mut()?.dst(), mean.operand_mut()?.dst(), rstd.operand_mut()?.dst())?;
            (out, mean, rstd)
        };
        // PyTorch's meta kernel returns the statistics in the input's
        // dtype, its CPU kernel in the parameters'.
        let stat_dt = if device.is_meta() { dt } else { pdt };
        let stat_shape = [shape.n as i64, groups as i64];
        let stats = (returned_stat(&mean, &stat_shape, stat_dt)?, returned_stat(&rstd, &stat_shape, stat_dt)?);
        let sx = SavedTensor::input(self);
        let sw = weight.map(SavedTensor::input);
        let want = [self.requires_grad(), weight.is_some_and(|w| w.requires_grad()), bias.is_some_and(|b| b.requires_grad())];
        let (wdt, bdt) = (weight.map(|w| w.dtype()), bias.map(|b| b.dtype()));
        record("NativeGroupNormBackward0", &[Some(self), weight, bias], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let x = sx.unpack(node)?;
                let w = sw.as_ref().map(|s| s.unpack(node)).transpose()?;
                let nd = x.ndim();
                if is_grad_enabled() {
                    let mut bshape = vec![1i64; nd];
                    bshape[1] = -1;
                    let dims = bn_dims(nd);
                    return composite_channel_backward(&g, &x, w.as_ref(), &dims, &bshape, Some(groups), None, eps, want, wdt, bdt);
                }
                let _no_grad = GradModeGuard::new(false);
                let (gc, xc) = (g.to_dtype(dt)?.contiguous()?, x.contiguous()?);
                let w = param(w.as_ref(), cdt)?;
                let grads = fresh_grads(want, xc.shape(), dt, shape.c, cdt, xc.device())?;
                xc.backend()?.group_norm_backward(&spec, dt, gc.operand()?.src(), xc.operand()?.src(), mean.operand()?.src(), rstd.operand()?.src(), src(&held(&w)?), grad_operands(&grad_writes(&grads)?))?;
                let [gx, gw, gb] = grads;
                let gw = gw.map(|t| t.to_dtype(wdt.unwrap_or(dt))).transpose()?;
                let gb = gb.map(|t| t.to_dtype(bdt.unwrap_or(dt))).transpose()?;
                Ok(vec![gx, gw, gb])
            })
        });
        Ok((out, stats.0, stats.1))
    }
}

/// `rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂))` over `dims`: the input gradient of a
/// normalisation with batch statistics, in differentiable ops.
fn normalised_input_grad(gh: &Tensor, xhat: &Tensor, rstd: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let t1 = sub(gh, &gh.mean_dims(Some(dims), true, None)?)?;
    let t2 = mul(xhat, &mul(gh, xhat)?.mean_dims(Some(dims), true, None)?)?;
    mul(rstd, &sub(&t1, &t2)?)
}

/// The batch-norm / group-norm gradients from differentiable tensor ops
/// (used under `create_graph`). Statistics are over `dims` (batch norm) or,
/// with `groups`, over each sample's group (group norm); `fixed` holds the
/// evaluation-mode running mean and `1/sqrt(var + eps)` (constants). The
/// parameter gradients sum over `dims`; reduced dtypes compute in float32.
#[allow(clippy::too_many_arguments)]
fn composite_channel_backward(
    g: &Tensor,
    x: &Tensor,
    w: Option<&Tensor>,
    dims: &[i64],
    bshape: &[i64],
    groups: Option<usize>,
    fixed: Option<(Tensor, Tensor)>,
    eps: f64,
    want: [bool; 3],
    wdt: Option<DType>,
    bdt: Option<DType>,
) -> Result<Vec<Option<Tensor>>> {
    let dt = x.dtype();
    let cdt = if matches!(dt, DType::Float16 | DType::BFloat16) { DType::Float32 } else { dt };
    let (xf, gf) = (x.to_dtype(cdt)?, g.to_dtype(cdt)?);
    let shape: Vec<i64> = x.shape().iter().map(|&s| s as i64).collect();
    let gh = match w {
        Some(w) => mul(&gf, &w.to_dtype(cdt)?.reshape(bshape)?)?,
        None => gf.clone(),
    };
    let (xhat, gx) = match (fixed, groups) {
        (Some((mean, rstd)), _) => {
            let (mean, rstd) = (mean.to_dtype(cdt)?.reshape(bshape)?, rstd.to_dtype(cdt)?.reshape(bshape)?);
            (mul(&sub(&xf, &mean)?, &rstd)?, mul(&gh, &rstd)?)
        }
        (None, Some(groups)) => {
            let v = [shape[0], groups as i64, -1];
            let xr = xf.reshape(&v)?;
            let mean = xr.mean_dims(Some(&[2]), true, None)?;
            let xc = sub(&xr, &mean)?;
            let rstd = un(&adds(&mul(&xc, &xc)?.mean_dims(Some(&[2]), true, None)?, eps)?, UnaryOp::Rsqrt)?;
            let xhat = mul(&xc, &rstd)?;
            let gx = normalised_input_grad(&gh.reshape(&v)?, &xhat, &rstd, &[2])?.reshape(&shape)?;
            (xhat.reshape(&shape)?, gx)
        }
        (None, None) => {
            let mean = xf.mean_dims(Some(dims), true, None)?;
            let xc = sub(&xf, &mean)?;
            let rstd = un(&adds(&mul(&xc, &xc)?.mean_dims(Some(dims), true, None)?, eps)?, UnaryOp::Rsqrt)?;
            let xhat = mul(&xc, &rstd)?;
            let gx = normalised_input_grad(&gh, &xhat, &rstd, dims)?;
            (xhat, gx)
        }
    };
    let gx = if want[0] { Some(gx.to_dtype(dt)?) } else { None };
    let gw = if want[1] { Some(mul(&gf, &xhat)?.sum_dims(Some(dims), false, None)?.to_dtype(wdt.unwrap_or(dt))?) } else { None };
    let gb = if want[2] { Some(gf.sum_dims(Some(dims), false, None)?.to_dtype(bdt.unwrap_or(dt))?) } else { None };
    Ok(vec![gx, gw, gb])
}
