//! Layer normalisation as one native op: the forward and backward run the
//! row kernels of `ferrotorch-cpu::norm` (statistics in float32 for
//! float32/float16/bfloat16, float64 for float64), recorded as
//! `NativeLayerNormBackward0` with edges (input, weight, bias) as in PyTorch.

use super::arith::UnaryOp;
use super::arith_grad::{adds, g0, mul, sub, un};
use super::creation::pretty;
use crate::autograd::{is_grad_enabled, record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Element, Error, Result};
use ferrotorch_cpu::norm::{layer_norm_backward, layer_norm_forward, MomentFloat};

fn fmt_list(v: &[impl std::fmt::Display]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

/// The checks of PyTorch's `layer_norm_cpu`, in its order: mixed parameter
/// dtypes, then `normalized_shape` against weight, bias and input. Returns
/// (rows, row length).
fn check_inputs(x: &Tensor, shape: &[i64], w: Option<&Tensor>, b: Option<&Tensor>) -> Result<(usize, usize)> {
    let dt = x.dtype();
    let params: Vec<&Tensor> = w.into_iter().chain(b).collect();
    if params.iter().any(|p| p.dtype() != dt) {
        if params.iter().any(|p| p.dtype() != DType::Float32) {
            return Err(Error::runtime("mixed dtype (CPU): expect parameter to have scalar type of Float"));
        }
        if !matches!(dt, DType::Float16 | DType::BFloat16) {
            return Err(Error::runtime("mixed dtype (CPU): all inputs must share same datatype."));
        }
    }
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
    let (mut mean, mut rstd) = (vec![F::ZERO; rows], vec![F::ZERO; rows]);
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
    let (mut dw, mut db) = if want_wb { (vec![F::ZERO; n], vec![F::ZERO; n]) } else { (Vec::new(), Vec::new()) };
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
        let t1 = sub(&gh, &gh.mean_dims(Some(&dims), true, None)?)?;
        let t2 = mul(&xhat, &mul(&gh, &xhat)?.mean_dims(Some(&dims), true, None)?)?;
        Some(mul(&rstd, &sub(&t1, &t2)?)?.to_dtype(dt)?)
    } else {
        None
    };
    let gw = if want[1] { Some(sum_lead(mul(&gf, &xhat)?)?.to_dtype(wdt.unwrap_or(dt))?) } else { None };
    let gb = if want[2] { Some(sum_lead(gf.clone())?.to_dtype(bdt.unwrap_or(dt))?) } else { None };
    Ok(vec![gx, gw, gb])
}
