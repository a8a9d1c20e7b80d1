//! Max, average, adaptive-average and adaptive-max pooling over 1, 2 or 3
//! spatial dims as native ops: PyTorch's argument checks and messages, the
//! output shape, and autograd nodes named as PyTorch's
//! (`MaxPool2DWithIndicesBackward0`, `AvgPool3DBackward0`,
//! `AdaptiveMaxPool2DBackward0`, ...). The kernels are the tensor's
//! backend's ([`PoolKernels`](ferrotorch_core::backend::PoolKernels)); 1-d poolings are the 2-d ones over an
//! unsqueezed input, as in PyTorch (so their `grad_fn` is `SqueezeBackward1`).
//!
//! Each backward is itself a recorded op (`...BackwardBackward0`), so a
//! gradient taken with `create_graph` can be differentiated again: the
//! adjoint of a max backward gathers at the indices, that of an average
//! backward is the forward pooling itself.

use super::arith_grad::g0;
use super::creation::pretty;
use crate::autograd::{is_grad_enabled, record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result};
use ferrotorch_core::op::pool::{pool_out_len, PoolGeom, PoolSpec as Spec};

/// PyTorch's node names of a pooling's forward and of its backward's
/// backward.
trait NodeNames {
    fn names(&self, nd: usize) -> (&'static str, &'static str);
}

impl NodeNames for Spec {
    fn names(&self, nd: usize) -> (&'static str, &'static str) {
        let three = nd == 3;
        match (self, three) {
            (Spec::Max(_), false) => ("MaxPool2DWithIndicesBackward0", "MaxPool2DWithIndicesBackwardBackward0"),
            (Spec::Max(_), true) => ("MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0"),
            (Spec::Avg { .. }, false) => ("AvgPool2DBackward0", "AvgPool2DBackwardBackward0"),
            (Spec::Avg { .. }, true) => ("AvgPool3DBackward0", "AvgPool3DBackwardBackward0"),
            (Spec::AdaptiveAvg { .. }, false) => ("AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0"),
            (Spec::AdaptiveAvg { .. }, true) => ("AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0"),
            (Spec::AdaptiveMax { .. }, false) => ("AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool2DBackwardBackward0"),
            (Spec::AdaptiveMax { .. }, true) => ("AdaptiveMaxPool3DBackward0", "AdaptiveMaxPool3DBackwardBackward0"),
        }
    }
}

fn join(v: &[i64], sep: &str) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(sep)
}

fn fmt_shape(s: &[usize]) -> String {
    format!("[{}]", s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

/// An argument of 1 or `nd` ints as `nd` ints (`default` when empty and
/// given), else PyTorch's message.
fn expand(op: &str, what: &str, v: &[i64], nd: usize, default: Option<&[i64]>) -> Result<Vec<i64>> {
    match (v.len(), default) {
        (0, Some(d)) => Ok(d.to_vec()),
        (1, _) => Ok(vec![v[0]; nd]),
        (n, _) if n == nd => Ok(v.to_vec()),
        _ => {
            let count = if nd == 2 { "two" } else { "three" };
            let omitted = if default.is_some() { "omitted, " } else { "" };
            Err(Error::runtime(format!("{op}: {what} must either be {omitted}a single int, or a tuple of {count} ints")))
        }
    }
}

/// Labels of the spatial dims in PyTorch's messages.
fn labels(nd: usize) -> &'static [&'static str] {
    if nd == 3 {
        &["T", "H", "W"]
    } else {
        &["H", "W"]
    }
}

/// Checks a max (`dilation` given) or average pooling's arguments in the
/// order PyTorch's `pool2d_shape_check`/`pool3d_shape_check` do, and returns
/// its geometry and the output shape.
#[allow(clippy::too_many_arguments)]
fn window_geometry(
    x: &Tensor,
    nd: usize,
    op: &str,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: Option<&[i64]>,
    ceil_mode: bool,
) -> Result<(PoolGeom, Vec<usize>)> {
    let kk = expand(op, "kernel_size", kernel_size, nd, None)?;
    let ss = expand(op, "stride", stride, nd, Some(&kk))?;
    let pp = expand(op, "padding", padding, nd, None)?;
    let dd = match dilation {
        Some(d) => expand(op, "dilation", d, nd, None)?,
        None => vec![1; nd],
    };
    let xs = x.shape();
    let ndim = xs.len();
    let is_avg = dilation.is_none();
    if ndim != nd + 1 && ndim != nd + 2 {
        // avg_pool2d reads size(-3) first and checks the rank only with the
        // window (below).
        if is_avg && nd == 2 && ndim < 3 {
            return Err(Error::index(if ndim == 0 {
                "Dimension specified as -3 but tensor has no dimensions".to_string()
            } else {
                format!("Dimension out of range (expected to be in range of [-{ndim}, {}], but got -3)", ndim - 1)
            }));
        }
        if !(is_avg && nd == 2) {
            return Err(Error::runtime(format!("non-empty {}D or {}D (batch mode) tensor expected for input", nd + 1, nd + 2)));
        }
    }
    let sizes: Vec<i64> = xs[ndim - nd..].iter().map(|&v| v as i64).collect();
    let rank_ok = ndim == nd + 1 || ndim == nd + 2;
    let mut outs = Vec::with_capacity(nd);
    for i in 0..nd {
        let (kv, sv, pv, dv) = (kk[i], ss[i], pp[i], dd[i]);
        if sv == 0 {
            return Err(Error::runtime("stride should not be zero"));
        }
        if pv < 0 {
            return Err(Error::runtime(format!("pad must be non-negative, but got pad: {pv}")));
        }
        if pv > ((kv - 1) * dv + 1) / 2 {
            return Err(Error::runtime(format!(
                "pad should be at most half of effective kernel size, but got pad={pv}, kernel_size={kv} and dilation={dv}"
            )));
        }
        outs.push(pool_out_len(sizes[i], kv, sv, pv, dv, ceil_mode));
    }
    let lab = labels(nd);
    let named = |prefix: &str, v: &[i64]| lab.iter().zip(v).map(|(l, x)| format!("{prefix}{l}: {x}")).collect::<Vec<_>>().join(" ");
    if kk.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!("kernel size should be greater than zero, but got {}", named("k", &kk))));
    }
    if ss.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!("stride should be greater than zero, but got {}", named("d", &ss))));
    }
    if dd.iter().any(|&v| v <= 0) {
        return Err(Error::runtime(format!("dilation should be greater than zero, but got {}", named("dilation", &dd))));
    }
    let first_nonbatch = if ndim == nd + 2 { 1 } else { 0 };
    if !rank_ok || xs[first_nonbatch..].contains(&0) {
        return Err(Error::runtime(if nd == 2 {
            format!("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{}", fmt_shape(xs))
        } else {
            let f = if is_avg { "avg_pool3d()" } else { "max_pool3d_with_indices_out_cpu_template()" };
            format!(
                "{f}: Expected input's non-batch dimensions to have positive length, but input has a shape of {} and non-batch dimension 0 has length zero!",
                fmt_shape(xs)
            )
        }));
    }
    let planes_c = xs[ndim - nd - 1] as i64;
    if is_avg && nd == 3 && sizes.iter().zip(&kk).any(|(s, kv)| s < kv) {
        return Err(Error::runtime(format!(
            "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})",
            sizes[0], sizes[1], sizes[2], kk[0], kk[1], kk[2]
        )));
    }
    if nd == 2 && pp.iter().zip(&kk).any(|(p, k)| *p > k / 2) {
        // pool2d_shape_check bounds the padding by the undilated kernel too.
        return Err(Error::runtime(format!(
            "pad should be smaller than or equal to half of kernel size, but got padW = {}, padH = {}, kW = {}, kH = {}",
            pp[1], pp[0], kk[1], kk[0]
        )));
    }
    if nd == 3 && pp.iter().zip(&kk).any(|(p, k)| *p > k / 2) {
        // pool3d_shape_check bounds the padding by the undilated kernel.
        return Err(Error::runtime(format!(
            "pad should be smaller than or equal to half of kernel size, but got kT: {} kW: {} kH: {} padT: {} padW: {} padH: {}",
            kk[0], kk[2], kk[1], pp[0], pp[2], pp[1]
        )));
    }
    if outs.iter().any(|&o| o < 1) {
        return Err(Error::runtime(format!(
            "Given input size: ({}x{}). Calculated output size: ({}x{}). Output size is too small",
            planes_c,
            join(&sizes, "x"),
            planes_c,
            join(&outs, "x")
        )));
    }
    let us = |v: &[i64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let outs_u = us(&outs);
    let geom = PoolGeom::new(&us(&sizes), &outs_u, &us(&kk), &us(&ss), &us(&pp), &us(&dd));
    let mut shape = xs[..ndim - nd].to_vec();
    shape.extend(&outs_u);
    Ok((geom, shape))
}

/// Checks an adaptive pooling's input and output size; returns (input
/// extent, output extent, output shape).
fn adaptive_geometry(x: &Tensor, nd: usize, op: &str, output_size: &[i64], max: bool) -> Result<([usize; 3], [usize; 3], Vec<usize>)> {
    let xs = x.shape();
    let ndim = xs.len();
    if ndim != nd + 1 && ndim != nd + 2 {
        let colon = if max { ":" } else { "" };
        return Err(Error::runtime(format!("{op}(): Expected {}D or {}D tensor, but got{colon} {}", nd + 1, nd + 2, fmt_shape(xs))));
    }
    if output_size.len() != nd {
        let count = if nd == 2 { "2" } else { "3" };
        return Err(Error::runtime(if max {
            format!("{op}(): internal error: output_size.size() must be {count}")
        } else {
            format!("{op}: output_size must be {count}")
        }));
    }
    for d in ndim - nd..ndim {
        if xs[d] == 0 {
            return Err(Error::runtime(format!(
                "{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_shape(xs)
            )));
        }
    }
    if let Some(&neg) = output_size.iter().find(|&&o| o < 0) {
        let mut shape: Vec<String> = xs[..ndim - nd].iter().map(|v| v.to_string()).collect();
        shape.extend(output_size.iter().map(|v| v.to_string()));
        return Err(Error::runtime(format!("Trying to create tensor with negative dimension {neg}: [{}]", shape.join(", "))));
    }
    let outs: Vec<usize> = output_size.iter().map(|&o| o as usize).collect();
    let mut shape = xs[..ndim - nd].to_vec();
    shape.extend(&outs);
    let pad = |v: &[usize]| {
        let mut r = [1usize; 3];
        r[3 - nd..].copy_from_slice(v);
        r
    };
    Ok((pad(&xs[ndim - nd..]), pad(&outs), shape))
}

/// The dtype check of PyTorch's CPU kernels: `ints` says which integer
/// dtypes the kernel takes (none, int64 only, or all).
fn check_dtype(x: &Tensor, kernel: &str, ints: Ints) -> Result<()> {
    let dt = x.dtype();
    let ok = dt.is_floating_point()
        || match ints {
            Ints::None => false,
            Ints::Int64 => dt == DType::Int64,
            Ints::All => dt != DType::Bool,
        };
    if ok {
        Ok(())
    } else {
        Err(Error::not_implemented(format!("\"{kernel}\" not implemented for '{}'", pretty(dt))))
    }
}

#[derive(Clone, Copy)]
enum Ints {
    None,
    Int64,
    All,
}

/// Runs the forward kernel of `spec` on contiguous `x` into fresh tensors.
fn forward_kernel(spec: &Spec, x: &Tensor, out_shape: &[usize], want_indices: bool) -> Result<(Tensor, Option<Tensor>)> {
    let out = Tensor::empty(out_shape, x.dtype(), x.device())?;
    let idx = if spec.has_indices() && want_indices { Some(Tensor::empty(out_shape, DType::Int64, x.device())?) } else { None };
    x.backend()?.pool_forward(spec, x.dtype(), x.operand()?.src(), out.operand_mut()?.dst(), super::conj_bit::write_opt(idx.as_ref())?.as_ref().map(|w| w.dst()))?;
    Ok((out, idx))
}

/// Runs the backward kernel of `spec`: the input gradient (shape `in_shape`)
/// from the contiguous output gradient `g`.
fn backward_kernel(spec: &Spec, g: &Tensor, idx: Option<&Tensor>, in_shape: &[usize]) -> Result<Tensor> {
    let gx = Tensor::empty(in_shape, g.dtype(), g.device())?;
    g.backend()?.pool_backward(spec, g.dtype(), g.operand()?.src(), super::conj_bit::read_opt(idx)?.as_ref().map(|r| r.src()), gx.operand_mut()?.dst())?;
    Ok(gx)
}

/// The recorded forward: runs the kernel on a contiguous copy of `x` and
/// records `spec`'s node, whose backward is [`pool_backward`]. A plain max
/// pooling computes its indices only when they are returned or needed for
/// a backward (`want_indices`, or `x` requiring grad).
fn pooled(x: &Tensor, nd: usize, spec: Spec, out_shape: &[usize], want_indices: bool) -> Result<(Tensor, Option<Tensor>)> {
    let need = want_indices || !matches!(spec, Spec::Max(_)) || (x.requires_grad() && is_grad_enabled());
    let (out, idx) = {
        let _no_grad = GradModeGuard::new(false);
        forward_kernel(&spec, &x.contiguous()?, out_shape, need)?
    };
    let sx = SavedTensor::input(x);
    let saved_idx = idx.clone();
    record(spec.names(nd).0, &[Some(x)], &[&out], move || {
        rule(move |node, g| {
            let Some(g) = g0(g) else { return Ok(vec![None]) };
            let x = sx.unpack(node)?;
            Ok(vec![Some(pool_backward(&g, &x, nd, spec, saved_idx.clone())?)])
        })
    });
    Ok((out, idx))
}

/// The backward of a pooling as a recorded op (`...BackwardBackward0`, with
/// edges to the output gradient and the input as in PyTorch).
fn pool_backward(g: &Tensor, x: &Tensor, nd: usize, spec: Spec, idx: Option<Tensor>) -> Result<Tensor> {
    let gx = {
        let _no_grad = GradModeGuard::new(false);
        let gc = g.to_dtype(x.dtype())?.contiguous()?;
        let ic = idx.as_ref().map(|i| i.contiguous()).transpose()?;
        backward_kernel(&spec, &gc, ic.as_ref(), x.shape())?
    };
    let out_shape = g.shape().to_vec();
    record(spec.names(nd).1, &[Some(g), Some(x)], &[&gx], move || {
        rule(move |_node, gg| {
            let Some(gg) = g0(gg) else { return Ok(vec![None, None]) };
            let back = match (&spec, &idx) {
                // The adjoint of scattering at the indices: gather there.
                (Spec::Max(_) | Spec::AdaptiveMax { .. }, Some(i)) => {
                    let planes: usize = out_shape[..out_shape.len() - nd].iter().product();
                    let flat = gg.reshape(&[planes as i64, -1])?;
                    let fi = i.reshape(&[planes as i64, -1])?;
                    let shape: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
                    flat.gather(1, &fi)?.reshape(&shape)?
                }
                // Average poolings are linear: their backward's adjoint is the pooling itself.
                _ => pooled(&gg, nd, spec, &out_shape, false)?.0,
            };
            Ok(vec![Some(back), None])
        })
    });
    Ok(gx)
}

/// `x` with a unit dim inserted before its last (1-d poolings run as 2-d ones).
fn unsq(x: &Tensor) -> Result<Tensor> {
    x.unsqueeze(-2)
}

fn sq(x: Tensor) -> Result<Tensor> {
    x.squeeze(Some(&[-2]))
}

fn op1d(v: &[i64], unit: i64) -> Vec<i64> {
    match v.len() {
        0 => vec![],
        _ => vec![unit, v[0]],
    }
}

/// PyTorch's `checkDimRange(op, self, 2, 4)` and `check1d` of a 1-d pooling.
fn check_1d(x: &Tensor, op: &str, nargs: &[(&str, &[i64])]) -> Result<()> {
    if x.ndim() != 2 && x.ndim() != 3 {
        return Err(Error::runtime(format!(
            "Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' (while checking arguments for {op})",
            x.ndim()
        )));
    }
    for (what, v) in nargs {
        if v.len() != 1 && !(v.is_empty() && *what == "stride") {
            return Err(Error::runtime(format!("{op}() argument '{what}' should contain one int (got {})", v.len())));
        }
    }
    Ok(())
}

impl Tensor {
    #[allow(clippy::too_many_arguments)]
    fn max_pool_nd(
        &self,
        nd: usize,
        op: &str,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
        want_indices: bool,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let (geom, shape) = window_geometry(self, nd, op, kernel_size, stride, padding, Some(dilation), ceil_mode)?;
        check_dtype(self, op, Ints::All)?;
        pooled(self, nd, Spec::Max(geom), &shape, want_indices)
    }

    /// As [`Tensor::max_pool2d_with_indices`], the values only (the indices
    /// are computed only when a backward needs them).
    pub fn max_pool2d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
        Ok(self.max_pool_nd(2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode, false)?.0)
    }

    /// As [`Tensor::max_pool3d_with_indices`], the values only.
    pub fn max_pool3d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
        Ok(self.max_pool_nd(3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode, false)?.0)
    }

    /// `max_pool2d_with_indices(kernel_size, stride, padding, dilation,
    /// ceil_mode)` over `(N, C, H, W)` or `(C, H, W)`: the window maxima and
    /// their flat positions `h·W + w` in each plane (int64). Arguments take
    /// one int or one per dim; an empty `stride` means `kernel_size`. A NaN
    /// wins its window. Any dtype but bool; records
    /// `MaxPool2DWithIndicesBackward0`.
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4]).unwrap();
    /// let (y, i) = x.max_pool2d_with_indices(&[2], &[], &[0], &[1], false).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 7.0, 13.0, 15.0]);
    /// assert_eq!(i.to_vec::<i64>().unwrap(), vec![5, 7, 13, 15]);
    /// ```
    pub fn max_pool2d_with_indices(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<(Tensor, Tensor)> {
        let (y, i) = self.max_pool_nd(2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode, true)?;
        Ok((y, i.ok_or_else(|| Error::runtime("max_pool2d: no indices"))?))
    }

    /// As [`Tensor::max_pool2d_with_indices`] over `(N, C, D, H, W)` or
    /// `(C, D, H, W)` (indices `d·H·W + h·W + w`); records
    /// `MaxPool3DWithIndicesBackward0`.
    pub fn max_pool3d_with_indices(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<(Tensor, Tensor)> {
        let (y, i) = self.max_pool_nd(3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode, true)?;
        Ok((y, i.ok_or_else(|| Error::runtime("max_pool3d: no indices"))?))
    }

    /// As [`Tensor::max_pool2d_with_indices`] over `(N, C, L)` or `(C, L)`,
    /// run as the 2-d pooling of the input unsqueezed at dim -2 (the
    /// output's `grad_fn` is `SqueezeBackward1`, as PyTorch's).
    pub fn max_pool1d_with_indices(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<(Tensor, Tensor)> {
        check_1d(self, "max_pool1d", &[("kernel_size", kernel_size), ("stride", stride), ("padding", padding), ("dilation", dilation)])?;
        let (y, i) = unsq(self)?.max_pool2d_with_indices(&op1d(kernel_size, 1), &op1d(stride, 1), &op1d(padding, 0), &op1d(dilation, 1), ceil_mode)?;
        Ok((sq(y)?, sq(i)?))
    }

    /// As [`Tensor::max_pool1d_with_indices`], the values only.
    pub fn max_pool1d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], dilation: &[i64], ceil_mode: bool) -> Result<Tensor> {
        check_1d(self, "max_pool1d", &[("kernel_size", kernel_size), ("stride", stride), ("padding", padding), ("dilation", dilation)])?;
        sq(unsq(self)?.max_pool2d(&op1d(kernel_size, 1), &op1d(stride, 1), &op1d(padding, 0), &op1d(dilation, 1), ceil_mode)?)
    }

    #[allow(clippy::too_many_arguments)]
    fn avg_pool_nd(
        &self,
        nd: usize,
        op: &str,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<Tensor> {
        if divisor_override == Some(0) {
            return Err(Error::runtime("divisor must be not zero"));
        }
        let (geom, shape) = window_geometry(self, nd, op, kernel_size, stride, padding, None, ceil_mode)?;
        check_dtype(self, if nd == 3 { "avg_pool3d_out_frame" } else { "avg_pool2d" }, Ints::Int64)?;
        if nd == 3 && matches!(self.dtype(), DType::Float16 | DType::BFloat16) {
            // PyTorch's CPU avg_pool3d has no reduced-float kernel.
            return Err(Error::not_implemented(format!("\"avg_pool3d_out_frame\" not implemented for '{}'", pretty(self.dtype()))));
        }
        Ok(pooled(self, nd, Spec::Avg { geom, count_include_pad, divisor_override }, &shape, false)?.0)
    }

    /// `avg_pool2d(kernel_size, stride, padding, ceil_mode,
    /// count_include_pad, divisor_override)` over `(N, C, H, W)` or `(C, H,
    /// W)`, with PyTorch's divisors: `divisor_override`, else the window
    /// clipped to the padded input (`count_include_pad`) or to the input.
    /// Floating dtypes (float16/bfloat16 summed in float32) and int64
    /// (truncating division); records `AvgPool2DBackward0`.
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 2, 2]).unwrap();
    /// let y = x.avg_pool2d(&[2], &[], &[0], false, true, None).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.5]);
    /// ```
    pub fn avg_pool2d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool, divisor_override: Option<i64>) -> Result<Tensor> {
        self.avg_pool_nd(2, "avg_pool2d", kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    }

    /// As [`Tensor::avg_pool2d`] over `(N, C, D, H, W)` or `(C, D, H, W)`;
    /// records `AvgPool3DBackward0`.
    pub fn avg_pool3d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool, divisor_override: Option<i64>) -> Result<Tensor> {
        self.avg_pool_nd(3, "avg_pool3d", kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    }

    /// As [`Tensor::avg_pool2d`] over `(N, C, L)` or `(C, L)` (no divisor
    /// override), as the 2-d pooling of the input unsqueezed at dim -2.
    pub fn avg_pool1d(&self, kernel_size: &[i64], stride: &[i64], padding: &[i64], ceil_mode: bool, count_include_pad: bool) -> Result<Tensor> {
        check_1d(self, "avg_pool1d", &[("kernel_size", kernel_size), ("stride", stride), ("padding", padding)])?;
        sq(unsq(self)?.avg_pool2d(&op1d(kernel_size, 1), &op1d(stride, 1), &op1d(padding, 0), ceil_mode, count_include_pad, None)?)
    }

    fn adaptive_avg_nd(&self, nd: usize, output_size: &[i64]) -> Result<Tensor> {
        let op = if nd == 3 { "adaptive_avg_pool3d" } else { "adaptive_avg_pool2d" };
        if output_size.len() != nd {
            return Err(Error::runtime(format!("{op}: output_size must be {nd}")));
        }
        if output_size.iter().any(|&o| o < 0) {
            let o = output_size;
            let got = if nd == 3 { format!("{}, {},{}", o[0], o[1], o[2]) } else { format!("{}, {}", o[0], o[1]) };
            return Err(Error::runtime(format!("{op}: elements of output_size must be greater than or equal to 0 but received {{{got}}}")));
        }
        // PyTorch takes an output of all ones as a mean (recording MeanBackward1).
        if output_size.iter().all(|&o| o == 1) {
            let dims: Vec<i64> = (1..=nd as i64).map(|d| -d).collect();
            return self.mean_dims(Some(&dims), true, None);
        }
        let (input, output, shape) = adaptive_geometry(self, nd, op, output_size, false)?;
        check_dtype(self, if nd == 3 { "adaptive_avg_pool3d_cpu" } else { "adaptive_avg_pool2d" }, Ints::None)?;
        Ok(pooled(self, nd, Spec::AdaptiveAvg { input, output, round_each: nd == 3 }, &shape, false)?.0)
    }

    /// `adaptive_avg_pool2d(output_size)` over `(N, C, H, W)` or `(C, H,
    /// W)`: output `(i, j)` is the mean of rows `⌊i·H/oH⌋..⌈(i+1)·H/oH⌉` and
    /// the like columns. Floating dtypes; records
    /// `AdaptiveAvgPool2DBackward0` (`MeanBackward1` for an output of 1×1,
    /// which PyTorch computes as a mean).
    ///
    /// ```
    /// # use ferrotorch::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0], &[1, 1, 5]).unwrap();
    /// let y = x.adaptive_avg_pool2d(&[1, 3]).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.5, 3.0, 4.5]);
    /// ```
    pub fn adaptive_avg_pool2d(&self, output_size: &[i64]) -> Result<Tensor> {
        self.adaptive_avg_nd(2, output_size)
    }

    /// As [`Tensor::adaptive_avg_pool2d`] over 3 spatial dims; records
    /// `AdaptiveAvgPool3DBackward0`.
    pub fn adaptive_avg_pool3d(&self, output_size: &[i64]) -> Result<Tensor> {
        self.adaptive_avg_nd(3, output_size)
    }

    /// As [`Tensor::adaptive_avg_pool2d`] over `(N, C, L)` or `(C, L)`, as
    /// the 2-d pooling of the input unsqueezed at dim -2.
    pub fn adaptive_avg_pool1d(&self, output_size: &[i64]) -> Result<Tensor> {
        check_1d(self, "adaptive_avg_pool1d", &[("output_size", output_size)])?;
        sq(unsq(self)?.adaptive_avg_pool2d(&[1, output_size[0]])?)
    }

    fn adaptive_max_nd(&self, nd: usize, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        let op = if nd == 3 { "adaptive_max_pool3d" } else { "adaptive_max_pool2d" };
        let (input, output, shape) = adaptive_geometry(self, nd, op, output_size, true)?;
        check_dtype(self, if nd == 3 { "adaptive_max_pool3d_cpu" } else { "adaptive_max_pool2d" }, Ints::None)?;
        let (out, idx) = pooled(self, nd, Spec::AdaptiveMax { input, output }, &shape, true)?;
        Ok((out, idx.ok_or_else(|| Error::runtime("adaptive max pooling: no indices"))?))
    }

    /// `adaptive_max_pool2d(output_size)`: the maxima of the windows of
    /// [`Tensor::adaptive_avg_pool2d`] and their flat positions in each
    /// plane (int64). Floating dtypes; records `AdaptiveMaxPool2DBackward0`.
    pub fn adaptive_max_pool2d(&self, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        self.adaptive_max_nd(2, output_size)
    }

    /// As [`Tensor::adaptive_max_pool2d`] over 3 spatial dims; records
    /// `AdaptiveMaxPool3DBackward0`.
    pub fn adaptive_max_pool3d(&self, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        self.adaptive_max_nd(3, output_size)
    }

    /// As [`Tensor::adaptive_max_pool2d`] over `(N, C, L)` or `(C, L)`, as
    /// the 2-d pooling of the input unsqueezed at dim -2.
    pub fn adaptive_max_pool1d(&self, output_size: &[i64]) -> Result<(Tensor, Tensor)> {
        check_1d(self, "adaptive_max_pool1d", &[("output_size", output_size)])?;
        if let Some(d) = (1..self.ndim()).find(|&d| self.shape()[d] == 0) {
            return Err(Error::runtime(format!(
                "adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_shape(self.shape())
            )));
        }
        let (y, i) = unsq(self)?.adaptive_max_pool2d(&[1, output_size[0]])?;
        Ok((sq(y)?, sq(i)?))
    }
}
