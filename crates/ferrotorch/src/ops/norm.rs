//! Layer, batch and group normalisation as native ops: the forward and
//! backward run the kernels of `ferrotorch-cpu::norm` (compute in float32 for
//! float32/float16/bfloat16, float64 for float64; batch statistics of
//! float32 accumulate in float64 as PyTorch's), recorded as
//! `NativeLayerNormBackward0`, `NativeBatchNormBackward0` and
//! `NativeGroupNormBackward0` with edges (input, weight, bias) as in PyTorch.

use ferrotorch_core::host_vec::filled;
use super::arith::UnaryOp;
use super::arith_grad::{adds, g0, mul, sub, un};
use super::creation::pretty;
use crate::autograd::{is_grad_enabled, record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Element, Error, Result};
use ferrotorch_cpu::norm::{
    batch_norm_apply, batch_norm_backward, batch_norm_eval_invstd, batch_norm_stats, group_norm_backward, group_norm_forward, layer_norm_backward,
    layer_norm_forward, round_through, MomentFloat, Ncs,
};

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

/// A contiguous tensor's elements as a slice.
///
/// # Safety
/// `t` must be contiguous and hold elements of type `T`.
unsafe fn elems<T>(t: &Tensor) -> &[T] {
    std::slice::from_raw_parts(t.data_ptr() as *const T, t.numel())
}

/// As [`elems`], writable.
///
/// # Safety
/// As for [`elems`]; nothing else may reference `t`'s elements meanwhile.
#[allow(clippy::mut_from_ref)]
unsafe fn elems_mut<T>(t: &Tensor) -> &mut [T] {
    std::slice::from_raw_parts_mut(t.data_ptr_mut() as *mut T, t.numel())
}

/// A parameter's values in the compute type.
fn param<F: Element>(p: Option<&Tensor>) -> Result<Option<Vec<F>>> {
    p.map(|p| p.to_dtype(F::DTYPE)?.contiguous()?.to_vec::<F>()).transpose()
}

/// The statistics of a forward, kept for the backward.
enum Stats {
    F32(Vec<f32>, Vec<f32>),
    F64(Vec<f64>, Vec<f64>),
}

fn forward_typed<T: Element, F: MomentFloat>(x: &Tensor, out: &Tensor, n: usize, rows: usize, w: Option<&Tensor>, b: Option<&Tensor>, eps: f64) -> Result<(Vec<F>, Vec<F>)> {
    let (wv, bv) = (param::<F>(w)?, param::<F>(b)?);
    let (mut mean, mut rstd) = (filled(rows, F::ZERO)?, filled(rows, F::ZERO)?);
    // SAFETY: `x` is contiguous of dtype T; `out` is fresh, contiguous, of dtype T.
    let (xd, od) = unsafe { (elems::<T>(x), elems_mut::<T>(out)) };
    layer_norm_forward::<T, F>(xd, n, wv.as_deref(), bv.as_deref(), eps, od, &mut mean, &mut rstd);
    Ok((mean, rstd))
}

/// (gx, gw, gb) of the native backward; gw/gb in the compute type, shaped `[n]`.
#[allow(clippy::too_many_arguments)]
fn backward_typed<T: Element, F: MomentFloat>(
    g: &Tensor,
    x: &Tensor,
    n: usize,
    mean: &[F],
    rstd: &[F],
    w: Option<&Tensor>,
    want_x: bool,
    want_wb: bool,
) -> Result<(Option<Tensor>, Option<(Tensor, Tensor)>)> {
    let wv = param::<F>(w)?;
    let gx = if want_x { Some(Tensor::empty(x.shape(), x.dtype(), x.device())?) } else { None };
    let (mut dw, mut db) = if want_wb { (filled(n, F::ZERO)?, filled(n, F::ZERO)?) } else { (Vec::new(), Vec::new()) };
    // SAFETY: `g` and `x` are contiguous of dtype T; `gx` is fresh.
    let (gd, xd) = unsafe { (elems::<T>(g), elems::<T>(x)) };
    let gxd = gx.as_ref().map(|t| unsafe { elems_mut::<T>(t) });
    layer_norm_backward::<T, F>(gd, xd, n, mean, rstd, wv.as_deref(), gxd, &mut dw, &mut db, want_wb);
    let wb = if want_wb { Some((Tensor::from_vec(dw, &[n])?, Tensor::from_vec(db, &[n])?)) } else { None };
    Ok((gx, wb))
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
        super::check_cpu("layer_norm", &ts)?;
        let (rows, n) = check_inputs(self, normalized_shape, weight, bias)?;
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"LayerNormKernelImpl\" not implemented for '{}'", pretty(dt))));
        }
        let (out, stats) = {
            let _no_grad = GradModeGuard::new(false);
            let x = self.contiguous()?;
            let out = Tensor::empty(self.shape(), dt, self.device())?;
            let stats = match dt {
                DType::Float32 => {
                    let (m, r) = forward_typed::<f32, f32>(&x, &out, n, rows, weight, bias, eps)?;
                    Stats::F32(m, r)
                }
                DType::Float16 => {
                    let (m, r) = forward_typed::<half::f16, f32>(&x, &out, n, rows, weight, bias, eps)?;
                    Stats::F32(m, r)
                }
                DType::BFloat16 => {
                    let (m, r) = forward_typed::<half::bf16, f32>(&x, &out, n, rows, weight, bias, eps)?;
                    Stats::F32(m, r)
                }
                _ => {
                    let (m, r) = forward_typed::<f64, f64>(&x, &out, n, rows, weight, bias, eps)?;
                    Stats::F64(m, r)
                }
            };
            (out, stats)
        };
        let sx = SavedTensor::input(self);
        let sw = weight.map(SavedTensor::input);
        let (want_x, want_w, want_b) =
            (self.requires_grad(), weight.is_some_and(|w| w.requires_grad()), bias.is_some_and(|b| b.requires_grad()));
        let wshape: Option<Vec<usize>> = weight.or(bias).map(|p| p.shape().to_vec());
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
                let want_wb = want_w || want_b;
                let (gx, wb) = match (&stats, dt) {
                    (Stats::F32(m, r), DType::Float32) => backward_typed::<f32, f32>(&gc, &xc, n, m, r, w.as_ref(), want_x, want_wb)?,
                    (Stats::F32(m, r), DType::Float16) => backward_typed::<half::f16, f32>(&gc, &xc, n, m, r, w.as_ref(), want_x, want_wb)?,
                    (Stats::F32(m, r), DType::BFloat16) => backward_typed::<half::bf16, f32>(&gc, &xc, n, m, r, w.as_ref(), want_x, want_wb)?,
                    (Stats::F64(m, r), _) => backward_typed::<f64, f64>(&gc, &xc, n, m, r, w.as_ref(), want_x, want_wb)?,
                    _ => return Err(Error::runtime("layer_norm backward: statistics do not match the input dtype")),
                };
                let pshape: Vec<i64> = wshape.iter().flatten().map(|&s| s as i64).collect();
                let (gw, gb) = match wb {
                    Some((gw, gb)) => (
                        if want_w { Some(gw.reshape(&pshape)?.to_dtype(wdt.unwrap_or(dt))?) } else { None },
                        if want_b { Some(gb.reshape(&pshape)?.to_dtype(bdt.unwrap_or(dt))?) } else { None },
                    ),
                    None => (None, None),
                };
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

/// The (N, C, S) view of a tensor of at least 2 dims.
fn ncs(x: &Tensor) -> Ncs {
    let s = x.shape();
    Ncs { n: s[0], c: s[1], s: s[2..].iter().product() }
}

/// Writes `v` into the 1-d tensor `t` through its stride, as PyTorch's
/// accessors update running statistics (no version bump, no autograd).
fn write_stat<F: Element>(t: &Tensor, v: &[F]) {
    fn go<P: Element, F: Element>(t: &Tensor, v: &[F]) {
        let st = t.strides().first().copied().unwrap_or(1);
        let p = t.data_ptr_mut() as *mut P;
        for (i, &x) in v.iter().enumerate() {
            // SAFETY: `t` is 1-d of `v.len()` elements of type P (checked by the caller).
            unsafe { *p.offset(i as isize * st) = P::from_f64(x.to_f64()) };
        }
    }
    match t.dtype() {
        DType::Float32 => go::<f32, F>(t, v),
        DType::Float16 => go::<half::f16, F>(t, v),
        DType::BFloat16 => go::<half::bf16, F>(t, v),
        _ => go::<f64, F>(t, v),
    }
}

/// What a batch-norm forward keeps for its backward.
enum BnSaved {
    F32 { mean: Vec<f32>, invstd: Vec<f32> },
    F64 { mean: Vec<f64>, invstd: Vec<f64> },
}

/// Dispatches `$f::<T, F>(args)` on a floating dtype (F: the compute type).
macro_rules! by_float {
    ($dt:expr, $f:ident($($a:expr),*)) => {
        match $dt {
            DType::Float32 => $f::<f32, f32>($($a),*),
            DType::Float16 => $f::<half::f16, f32>($($a),*),
            DType::BFloat16 => $f::<half::bf16, f32>($($a),*),
            _ => $f::<f64, f64>($($a),*),
        }
    };
}

/// A statistic rounded to the dtype it is stored in (`pdt`).
fn rounder<T: Element, F: MomentFloat>(pdt: DType) -> fn(F) -> F {
    if pdt == F::DTYPE {
        |v| v
    } else {
        round_through::<T, F>
    }
}

trait SaveAs: Sized {
    fn save(mean: Vec<Self>, invstd: Vec<Self>) -> BnSaved;
    fn load(s: &BnSaved) -> Option<(&[Self], &[Self])>;
}
impl SaveAs for f32 {
    fn save(mean: Vec<f32>, invstd: Vec<f32>) -> BnSaved {
        BnSaved::F32 { mean, invstd }
    }
    fn load(s: &BnSaved) -> Option<(&[f32], &[f32])> {
        match s {
            BnSaved::F32 { mean, invstd } => Some((mean, invstd)),
            _ => None,
        }
    }
}
impl SaveAs for f64 {
    fn save(mean: Vec<f64>, invstd: Vec<f64>) -> BnSaved {
        BnSaved::F64 { mean, invstd }
    }
    fn load(s: &BnSaved) -> Option<(&[f64], &[f64])> {
        match s {
            BnSaved::F64 { mean, invstd } => Some((mean, invstd)),
            _ => None,
        }
    }
}

/// The batch-norm forward for one dtype; returns (output, saved statistics
/// for the backward, save_mean, save_invstd).
#[allow(clippy::too_many_arguments)]
fn bn_forward_typed<T: Element, F: MomentFloat + SaveAs>(
    x: &Tensor,
    w: Option<&Tensor>,
    b: Option<&Tensor>,
    rm: Option<&Tensor>,
    rv: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
    strided: bool,
    strided_mean: Option<&Tensor>,
    pdt: DType,
) -> Result<(Tensor, BnSaved, Option<(Tensor, Tensor)>)> {
    let shp = ncs(x);
    let (wv, bv) = (param::<F>(w)?, param::<F>(b)?);
    // SAFETY: `x` is contiguous of dtype T.
    let xd = unsafe { elems::<T>(x) };
    let out = Tensor::empty(x.shape(), x.dtype(), x.device())?;
    // SAFETY: `out` is fresh, contiguous, of dtype T.
    let od = unsafe { elems_mut::<T>(&out) };
    if training {
        let (mut rmv, mut rvv) = (param::<F>(rm)?, param::<F>(rv)?);
        let sm = strided_mean.map(|m| m.to_dtype(F::DTYPE)?.contiguous()?.to_vec::<F>()).transpose()?;
        let (mut mean, mut invstd) = (filled(shp.c, F::ZERO)?, filled(shp.c, F::ZERO)?);
        let round = rounder::<T, F>(pdt);
        batch_norm_stats::<T, F>(xd, shp, sm.as_deref(), eps, momentum, rmv.as_deref_mut(), rvv.as_deref_mut(), round, &mut mean, &mut invstd);
        if let (Some(t), Some(v)) = (rm, &rmv) {
            write_stat(t, v);
        }
        if let (Some(t), Some(v)) = (rv, &rvv) {
            write_stat(t, v);
        }
        batch_norm_apply::<T, F>(xd, shp, &mean, &invstd, wv.as_deref(), bv.as_deref(), strided, od);
        let stats = (Tensor::from_vec(mean.clone(), &[shp.c])?.to_dtype(pdt)?, Tensor::from_vec(invstd.clone(), &[shp.c])?.to_dtype(pdt)?);
        Ok((out, F::save(mean, invstd), Some(stats)))
    } else {
        let (Some(rmv), Some(rvv)) = (param::<F>(rm)?, param::<F>(rv)?) else {
            return Err(Error::runtime("running_mean must be defined in evaluation mode"));
        };
        let invstd = batch_norm_eval_invstd(&rvv, eps, false);
        batch_norm_apply::<T, F>(xd, shp, &rmv, &invstd, wv.as_deref(), bv.as_deref(), strided, od);
        Ok((out, F::save(rmv, batch_norm_eval_invstd(&rvv, eps, true)), None))
    }
}

/// The batch-norm backward for one dtype: (gx, gw, gb), the parameter
/// gradients in the compute type.
#[allow(clippy::too_many_arguments)]
fn bn_backward_typed<T: Element, F: MomentFloat + SaveAs>(
    g: &Tensor,
    x: &Tensor,
    saved: &BnSaved,
    w: Option<&Tensor>,
    train: bool,
    gsum: Option<&Tensor>,
    want: [bool; 3],
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    let shp = ncs(x);
    let (mean, invstd) = F::load(saved).ok_or_else(|| Error::runtime("batch_norm backward: statistics do not match the input dtype"))?;
    let wv = param::<F>(w)?;
    let gs = gsum.map(|s| s.to_dtype(F::DTYPE)?.contiguous()?.to_vec::<F>()).transpose()?;
    let gx = if want[0] { Some(Tensor::empty(x.shape(), x.dtype(), x.device())?) } else { None };
    let (mut gw, mut gb) = (filled(shp.c, F::ZERO)?, filled(shp.c, F::ZERO)?);
    // SAFETY: `g`/`x` are contiguous of dtype T; `gx` is fresh.
    let (gd, xd) = unsafe { (elems::<T>(g), elems::<T>(x)) };
    let gxd = gx.as_ref().map(|t| unsafe { elems_mut::<T>(t) });
    batch_norm_backward::<T, F>(
        gd,
        xd,
        shp,
        mean,
        invstd,
        wv.as_deref(),
        train,
        gs.as_deref(),
        gxd,
        want[1].then_some(&mut gw[..]),
        want[2].then_some(&mut gb[..]),
    );
    let gw = if want[1] { Some(Tensor::from_vec(gw, &[shp.c])?) } else { None };
    let gb = if want[2] { Some(Tensor::from_vec(gb, &[shp.c])?) } else { None };
    Ok((gx, gw, gb))
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
        Ok(self.native_batch_norm(weight, bias, running_mean, running_var, training, momentum, eps)?.0)
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
        super::check_cpu("batch_norm", &ts)?;
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
            // ATen's empty-input result: a copy, scaled by weight[0] and shifted by bias[0].
            let mut out = self.clone_data()?;
            if let Some(w) = weight.filter(|w| w.numel() > 0) {
                out = out.mul(&w.reshape(&[-1])?.select(0, 0)?)?;
            }
            if let Some(b) = bias.filter(|b| b.numel() > 0) {
                out = out.add(&b.reshape(&[-1])?.select(0, 0)?)?;
            }
            let e = || Tensor::empty(&[0], pdt, self.device());
            return Ok((out, e()?, e()?));
        }
        let strided = !self.is_contiguous();
        let dims = bn_dims(nd);
        let (out, saved, stats) = {
            let _no_grad = GradModeGuard::new(false);
            // Strided inputs: PyTorch takes the mean with at::mean, then
            // walks the elements around it (here over a contiguous copy).
            let sm = if training && strided { Some(self.mean_dims(Some(&dims), false, Some(pdt))?) } else { None };
            let x = self.contiguous()?;
            let (w, b, rm, rv) = (weight, bias, running_mean, running_var);
            by_float!(dt, bn_forward_typed(&x, w, b, rm, rv, training, momentum, eps, strided, sm.as_ref(), pdt))?
        };
        let sx = SavedTensor::input(self);
        let sw = weight.map(SavedTensor::input);
        let want = [self.requires_grad(), weight.is_some_and(|w| w.requires_grad()), bias.is_some_and(|b| b.requires_grad())];
        let (wdt, bdt) = (weight.map(|w| w.dtype()), bias.map(|b| b.dtype()));
        let pshape: Vec<i64> = weight.or(bias).map(|p| p.shape().iter().map(|&s| s as i64).collect()).unwrap_or_default();
        let c = nf;
        record("NativeBatchNormBackward0", &[Some(self), weight, bias], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let x = sx.unpack(node)?;
                let w = sw.as_ref().map(|s| s.unpack(node)).transpose()?;
                let nd = x.ndim();
                let dims = bn_dims(nd);
                if is_grad_enabled() {
                    let (mean, rstd) = match &saved {
                        BnSaved::F32 { mean, invstd } => (Tensor::from_vec(mean.clone(), &[c])?, Tensor::from_vec(invstd.clone(), &[c])?),
                        BnSaved::F64 { mean, invstd } => (Tensor::from_vec(mean.clone(), &[c])?, Tensor::from_vec(invstd.clone(), &[c])?),
                    };
                    let fixed = (!training).then_some((mean, rstd));
                    let mut bshape = vec![1i64; nd];
                    bshape[1] = -1;
                    return composite_channel_backward(&g, &x, w.as_ref(), &dims, &bshape, None, fixed, eps, want, wdt, bdt);
                }
                let _no_grad = GradModeGuard::new(false);
                let g = g.to_dtype(dt)?;
                let gstrided = strided || !g.is_contiguous();
                let gsum = if gstrided { Some(g.sum_dims(Some(&dims), false, None)?) } else { None };
                let (gc, xc) = (g.contiguous()?, x.contiguous()?);
                let (gx, gw, gb) = by_float!(dt, bn_backward_typed(&gc, &xc, &saved, w.as_ref(), training, gsum.as_ref(), want))?;
                let gw = gw.map(|t| t.reshape(&pshape)?.to_dtype(wdt.unwrap_or(dt))).transpose()?;
                let gb = gb.map(|t| t.reshape(&pshape)?.to_dtype(bdt.unwrap_or(dt))).transpose()?;
                Ok(vec![gx, gw, gb])
            })
        });
        let (sm, si) = match stats {
            Some(s) => s,
            None => (Tensor::empty(&[0], pdt, self.device())?, Tensor::empty(&[0], pdt, self.device())?),
        };
        Ok((out, sm, si))
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
        super::check_cpu("group_norm", &ts)?;
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
        if !dt.is_floating_point() {
            return Err(Error::not_implemented(format!("\"GroupNormKernelImpl\" not implemented for '{}'", pretty(dt))));
        }
        let params: Vec<&Tensor> = [weight, bias].into_iter().flatten().collect();
        let pdt = check_param_dtypes(dt, &params)?;
        let (out, saved, mean, rstd) = {
            let _no_grad = GradModeGuard::new(false);
            let x = self.contiguous()?;
            by_float!(dt, gn_forward_typed(&x, groups, weight, bias, eps, pdt))?
        };
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
                let (gx, gw, gb) = by_float!(dt, gn_backward_typed(&gc, &xc, groups, &saved, w.as_ref(), want))?;
                let gw = gw.map(|t| t.to_dtype(wdt.unwrap_or(dt))).transpose()?;
                let gb = gb.map(|t| t.to_dtype(bdt.unwrap_or(dt))).transpose()?;
                Ok(vec![gx, gw, gb])
            })
        });
        Ok((out, mean, rstd))
    }
}

/// The group-norm forward for one dtype: (output, saved statistics, mean,
/// rstd), the last two `[N, groups]` in `pdt`.
fn gn_forward_typed<T: Element, F: MomentFloat + SaveAs>(
    x: &Tensor,
    groups: usize,
    w: Option<&Tensor>,
    b: Option<&Tensor>,
    eps: f64,
    pdt: DType,
) -> Result<(Tensor, BnSaved, Tensor, Tensor)> {
    let shp = ncs(x);
    let (wv, bv) = (param::<F>(w)?, param::<F>(b)?);
    let rows = shp.n * groups;
    let (mut mean, mut rstd) = (filled(rows, F::ZERO)?, filled(rows, F::ZERO)?);
    let out = Tensor::empty(x.shape(), x.dtype(), x.device())?;
    // SAFETY: `x` is contiguous of dtype T; `out` is fresh, contiguous, of dtype T.
    let (xd, od) = unsafe { (elems::<T>(x), elems_mut::<T>(&out)) };
    group_norm_forward::<T, F>(xd, shp, groups, wv.as_deref(), bv.as_deref(), eps, od, &mut mean, &mut rstd);
    // The statistics are stored (and read back by the backward) in the parameters' dtype.
    let round = rounder::<T, F>(pdt);
    mean.iter_mut().for_each(|v| *v = round(*v));
    rstd.iter_mut().for_each(|v| *v = round(*v));
    let mt = Tensor::from_vec(mean.clone(), &[shp.n, groups])?.to_dtype(pdt)?;
    let rt = Tensor::from_vec(rstd.clone(), &[shp.n, groups])?.to_dtype(pdt)?;
    Ok((out, F::save(mean, rstd), mt, rt))
}

/// The group-norm backward for one dtype: (gx, gw, gb), the parameter
/// gradients in the compute type.
fn gn_backward_typed<T: Element, F: MomentFloat + SaveAs>(
    g: &Tensor,
    x: &Tensor,
    groups: usize,
    saved: &BnSaved,
    w: Option<&Tensor>,
    want: [bool; 3],
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    let shp = ncs(x);
    let (mean, rstd) = F::load(saved).ok_or_else(|| Error::runtime("group_norm backward: statistics do not match the input dtype"))?;
    let wv = param::<F>(w)?;
    let gx = if want[0] { Some(Tensor::empty(x.shape(), x.dtype(), x.device())?) } else { None };
    let (mut gw, mut gb) = (filled(shp.c, F::ZERO)?, filled(shp.c, F::ZERO)?);
    // SAFETY: `g`/`x` are contiguous of dtype T; `gx` is fresh.
    let (gd, xd) = unsafe { (elems::<T>(g), elems::<T>(x)) };
    let gxd = gx.as_ref().map(|t| unsafe { elems_mut::<T>(t) });
    group_norm_backward::<T, F>(gd, xd, shp, groups, mean, rstd, wv.as_deref(), gxd, want[1].then_some(&mut gw[..]), want[2].then_some(&mut gb[..]));
    let gw = if want[1] { Some(Tensor::from_vec(gw, &[shp.c])?) } else { None };
    let gb = if want[2] { Some(Tensor::from_vec(gb, &[shp.c])?) } else { None };
    Ok((gx, gw, gb))
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
