//! 2-d convolution: the forward runs the im2col + GEMM kernel of
//! `ferrotorch-cpu`, the input gradient its GEMM + col2im kernel (recorded as
//! a differentiable node); the weight gradient is written with `conv2d`
//! itself, so gradients of gradients come for free.

use super::arith_grad::g0;
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result};
use ferrotorch_cpu::nn::{conv2d as conv2d_kernel, conv2d_input_grad as conv2d_input_grad_kernel, conv2d_out_shape, Window2d};

/// Stride, padding, dilation and groups of a 2-d convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dParams {
    /// Step between output positions (height, width).
    pub stride: (usize, usize),
    /// Implicit zero padding on each side (height, width).
    pub padding: (usize, usize),
    /// Spacing between kernel taps (height, width).
    pub dilation: (usize, usize),
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for Conv2dParams {
    fn default() -> Self {
        Conv2dParams { stride: (1, 1), padding: (0, 0), dilation: (1, 1), groups: 1 }
    }
}

fn shape4(t: &Tensor, what: &str) -> Result<[usize; 4]> {
    <[usize; 4]>::try_from(t.shape()).map_err(|_| {
        Error::runtime(format!("conv2d: expected a 4-D {what}, but got {what} of size {:?}", t.shape()))
    })
}

impl Tensor {
    /// `conv2d(input (N, C, H, W), weight (O, C/groups, kh, kw), bias (O))`
    /// for float32/float64 CPU tensors. Records `ConvolutionBackward0` with
    /// edges (input, weight, bias) as PyTorch does.
    pub fn conv2d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &Conv2dParams) -> Result<Tensor> {
        super::check_cpu("conv2d", &[self, weight])?;
        let xs = shape4(self, "input")?;
        let ws = shape4(weight, "weight")?;
        let dt = self.dtype();
        if weight.dtype() != dt || bias.is_some_and(|b| b.dtype() != dt) {
            return Err(Error::runtime(format!(
                "Input type ({}) and weight type ({}) should be the same",
                super::creation::pretty(dt),
                super::creation::pretty(weight.dtype())
            )));
        }
        if let Some(b) = bias {
            if b.shape() != [ws[0]] {
                return Err(Error::runtime(format!(
                    "Given weight of size {:?}, expected bias to be 1-dimensional with {} elements, but got bias of size {:?} instead",
                    ws, ws[0], b.shape()
                )));
            }
        }
        if p.stride.0 == 0 || p.stride.1 == 0 || p.dilation.0 == 0 || p.dilation.1 == 0 {
            return Err(Error::runtime("non-positive stride or dilation is not supported"));
        }
        if ws[2] == 0 || ws[3] == 0 {
            return Err(Error::runtime(format!(
                "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
                ws[2], ws[3]
            )));
        }
        let win = Window2d { stride: p.stride, padding: p.padding, dilation: p.dilation };
        let os = conv2d_out_shape(xs, ws, &win, p.groups)?;
        let out = {
            let _no_grad = GradModeGuard::new(false);
            let (x, w) = (self.contiguous()?, weight.contiguous()?);
            let b = bias.map(|b| b.contiguous()).transpose()?;
            let out = Tensor::empty(&os, dt, self.device())?;
            macro_rules! run {
                ($T:ty) => {{
                    // SAFETY: each tensor is contiguous, so its elements are the
                    // `numel` values starting at its data pointer; `out` is fresh
                    // and aliases none of the inputs.
                    let (xd, wd, od) = unsafe {
                        (
                            std::slice::from_raw_parts(x.data_ptr() as *const $T, x.numel()),
                            std::slice::from_raw_parts(w.data_ptr() as *const $T, w.numel()),
                            std::slice::from_raw_parts_mut(out.data_ptr_mut() as *mut $T, out.numel()),
                        )
                    };
                    let bd = b.as_ref().map(|b| unsafe { std::slice::from_raw_parts(b.data_ptr() as *const $T, b.numel()) });
                    conv2d_kernel::<$T>(xd, xs, wd, ws, bd, &win, p.groups, od)?;
                }};
            }
            match dt {
                DType::Float32 => run!(f32),
                DType::Float64 => run!(f64),
                other => {
                    return Err(Error::not_implemented(format!(
                        "\"slow_conv2d_cpu\" not implemented for '{}'",
                        super::creation::pretty(other)
                    )))
                }
            }
            out
        };
        let (sx, sw) = (SavedTensor::input(self), SavedTensor::input(weight));
        let (gx_wanted, gw_wanted, gb_wanted) =
            (self.requires_grad(), weight.requires_grad(), bias.is_some_and(|b| b.requires_grad()));
        let p = *p;
        record("ConvolutionBackward0", &[Some(self), Some(weight), bias], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let gx = if gx_wanted { Some(conv2d_input_grad(&g, &sw.unpack(node)?, xs, &p)?) } else { None };
                let gw = if gw_wanted { Some(conv2d_weight_grad(&g, &sx.unpack(node)?, ws, &p)?) } else { None };
                let gb = if gb_wanted { Some(g.sum_dims(Some(&[0, 2, 3]), false, None)?) } else { None };
                Ok(vec![gx, gw, gb])
            })
        });
        Ok(out)
    }
}

/// Gradient of a convolution with respect to its input: the transposed
/// convolution of `g` (GEMM + col2im in `ferrotorch-cpu`), so that only the
/// (output, tap) pairs that read a real input element contribute, as in
/// PyTorch; building it as a convolution of a zero-stuffed, zero-padded `g`
/// would multiply those zeros by the weight and turn an infinite tap into NaN.
/// Recorded as its own node, differentiable in `g` (a convolution with `w`)
/// and in `w` (the weight gradient with `g` as the output gradient).
fn conv2d_input_grad(g: &Tensor, w: &Tensor, xs: [usize; 4], p: &Conv2dParams) -> Result<Tensor> {
    let ws = shape4(w, "weight")?;
    let os = shape4(g, "gradient")?;
    let win = Window2d { stride: p.stride, padding: p.padding, dilation: p.dilation };
    let dt = g.dtype();
    let out = {
        let _no_grad = GradModeGuard::new(false);
        let (gc, wc) = (g.contiguous()?, w.contiguous()?);
        let out = Tensor::empty(&xs, dt, g.device())?;
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: both operands are contiguous, so their elements are
                // the `numel` values at their data pointers; `out` is fresh.
                let (gd, wd, od) = unsafe {
                    (
                        std::slice::from_raw_parts(gc.data_ptr() as *const $T, gc.numel()),
                        std::slice::from_raw_parts(wc.data_ptr() as *const $T, wc.numel()),
                        std::slice::from_raw_parts_mut(out.data_ptr_mut() as *mut $T, out.numel()),
                    )
                };
                conv2d_input_grad_kernel::<$T>(gd, os, wd, ws, xs, &win, p.groups, od)?;
            }};
        }
        match dt {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            other => {
                return Err(Error::not_implemented(format!(
                    "\"slow_conv2d_cpu\" not implemented for '{}'",
                    super::creation::pretty(other)
                )))
            }
        }
        out
    };
    let (sg, sw) = (SavedTensor::input(g), SavedTensor::input(w));
    let (gg_wanted, gw_wanted) = (g.requires_grad(), w.requires_grad());
    let p = *p;
    record("ConvolutionBackwardBackward0", &[Some(g), Some(w)], &[&out], move || {
        rule(move |node, gr| {
            let Some(gr) = g0(gr) else { return Ok(vec![None, None]) };
            let dg = if gg_wanted { Some(gr.conv2d(&sw.unpack(node)?, None, &p)?) } else { None };
            let dw = if gw_wanted { Some(conv2d_weight_grad(&sg.unpack(node)?, &gr, ws, &p)?) } else { None };
            Ok(vec![dg, dw])
        })
    });
    Ok(out)
}

/// Gradient of a convolution with respect to its weight: a convolution of the
/// input (batch and channels swapped) with the output gradient as the kernel,
/// stride and dilation exchanging roles, cropped to the kernel size.
fn conv2d_weight_grad(g: &Tensor, x: &Tensor, ws: [usize; 4], p: &Conv2dParams) -> Result<Tensor> {
    let [o, cg, kh, kw] = ws;
    let [n, _, h, wd] = shape4(x, "input")?;
    let [_, _, oh, ow] = shape4(g, "gradient")?;
    let groups = p.groups;
    let og = o / groups;
    let (gr, n_, cg_, og_) = (groups as i64, n as i64, cg as i64, og as i64);
    // Input (n, G*cg, h, w) -> (cg, G*n, h, w): channels become the batch.
    let xt = x
        .reshape(&[n_, gr, cg_, h as i64, wd as i64])?
        .permute(&[2, 1, 0, 3, 4])?
        .reshape(&[cg_, gr * n_, h as i64, wd as i64])?;
    // Gradient (n, G*og, oh, ow) -> (G*og, n, oh, ow): the kernel per group.
    let gt = g
        .reshape(&[n_, gr, og_, oh as i64, ow as i64])?
        .permute(&[1, 2, 0, 3, 4])?
        .reshape(&[gr * og_, n_, oh as i64, ow as i64])?;
    let q = Conv2dParams { stride: p.dilation, padding: p.padding, dilation: p.stride, groups };
    // (cg, G*og, >=kh, >=kw) -> (G*og, cg, kh, kw)
    xt.conv2d(&gt, None, &q)?
        .narrow(2, 0, kh as i64)?
        .narrow(3, 0, kw as i64)?
        .transpose(0, 1)?
        .contiguous()
}
