//! Convolution in 1, 2 and 3 spatial dimensions, plain and transposed, as one
//! op (`aten::convolution`) recording one node, `ConvolutionBackward0`, as
//! PyTorch does for every variant on the CPU.
//!
//! Three kernels of the tensor's backend ([`ConvKernels`](ferrotorch_core::backend::ConvKernels)) do all the work: the forward convolution
//! (vol2col + GEMM), its input gradient (GEMM + col2vol, which is also the
//! transposed convolution) and its weight gradient. Each is bilinear in its
//! two tensor operands, and the derivative of each in either operand is
//! another of the three, so every backward is built from recorded calls of
//! the same kernels (`ConvolutionBackwardBackward0` nodes) and gradients of
//! gradients come for free.

use super::arith_grad::g0;
use super::creation::pretty;
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};
use crate::Tensor;
use ferrotorch_core::{DType, Error, Result};
use ferrotorch_core::op::conv::{conv_output_size, ConvRole, ConvSpec, MAX_SPATIAL};

/// Stride, padding, dilation, transposition, output padding and groups of a
/// convolution: the arguments of PyTorch's `torch.convolution` besides the
/// tensors. A one-element list applies to every spatial dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvParams {
    /// Step between output positions (plain) or input positions (transposed).
    pub stride: Vec<usize>,
    /// Implicit zero padding on each side (for a transposed convolution: the
    /// padding of the plain convolution it is the gradient of).
    pub padding: Vec<usize>,
    /// Spacing between kernel taps.
    pub dilation: Vec<usize>,
    /// Whether this is the transposed convolution ("deconvolution"): the
    /// weight is then `(C_in, C_out / groups, *kernel)`.
    pub transposed: bool,
    /// Extra size added to one side of a transposed convolution's output.
    pub output_padding: Vec<usize>,
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for ConvParams {
    fn default() -> Self {
        ConvParams { stride: vec![1], padding: vec![0], dilation: vec![1], transposed: false, output_padding: vec![0], groups: 1 }
    }
}

impl ConvParams {
    /// Sets the stride.
    pub fn stride(mut self, s: &[usize]) -> Self {
        self.stride = s.to_vec();
        self
    }
    /// Sets the padding.
    pub fn padding(mut self, p: &[usize]) -> Self {
        self.padding = p.to_vec();
        self
    }
    /// Sets the dilation.
    pub fn dilation(mut self, d: &[usize]) -> Self {
        self.dilation = d.to_vec();
        self
    }
    /// Makes the convolution transposed (or plain).
    pub fn transposed(mut self, t: bool) -> Self {
        self.transposed = t;
        self
    }
    /// Sets the output padding (transposed convolutions).
    pub fn output_padding(mut self, p: &[usize]) -> Self {
        self.output_padding = p.to_vec();
        self
    }
    /// Sets the number of groups.
    pub fn groups(mut self, g: usize) -> Self {
        self.groups = g;
        self
    }
}

use ConvRole as Role;

const BACKWARD_NODE: &str = "ConvolutionBackwardBackward0";

/// Runs the kernel `role` on contiguous copies of the operands on their
/// device's backend (float16 and bfloat16 in float32, rounded once at the
/// end).
fn run_kernel(role: Role, spec: &ConvSpec, a: &Tensor, b: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let _no_grad = GradModeGuard::new(false);
    let dt = a.dtype();
    let cdt = match dt {
        DType::Float32 | DType::Float64 => dt,
        DType::Float16 | DType::BFloat16 => DType::Float32,
        other => return Err(Error::not_implemented(format!("\"slow_conv2d_cpu\" not implemented for '{}'", pretty(other)))),
    };
    let shape = spec.shape_of(role);
    if a.numel() == 0 || b.numel() == 0 || shape.contains(&0) {
        // No terms to sum (an empty batch or output): the output is its bias.
        let z = Tensor::zeros(&shape, dt, a.device())?;
        return match bias {
            Some(bias) => {
                let mut bs = vec![1i64; shape.len()];
                bs[1] = shape[1] as i64;
                z.add(&bias.reshape(&bs)?)
            }
            None => Ok(z),
        };
    }
    let prep = |t: &Tensor| -> Result<Tensor> { t.to_dtype(cdt)?.contiguous() };
    let (a, b, bias) = (prep(a)?, prep(b)?, bias.map(prep).transpose()?);
    let out = Tensor::empty(&shape, cdt, a.device())?;
    out.backend()?.convolution(role, spec, cdt, out.operand_mut()?.dst(), a.operand()?.src(), b.operand()?.src(), super::conj_bit::read_opt(bias.as_ref())?.as_ref().map(|r| r.src()))?;
    if cdt == dt {
        Ok(out)
    } else {
        out.to_dtype(dt)
    }
}

/// Sum of `g` over every dimension but the channels (1): a bias gradient.
fn channel_sum(g: &Tensor) -> Result<Tensor> {
    let dims: Vec<i64> = (0..g.shape().len() as i64).filter(|&d| d != 1).collect();
    g.sum_dims(Some(&dims), false, None)
}

/// Runs kernel `role` on `(a, b)` (+ `bias`, added per channel of the
/// output) and records node `name` whose rule differentiates it with the
/// other kernels, recorded the same way.
fn conv_node(role: Role, name: &'static str, spec: ConvSpec, a: &Tensor, b: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let out = run_kernel(role, &spec, a, b, bias)?;
    let (sa, sb) = (SavedTensor::input(a), SavedTensor::input(b));
    let want = [a.requires_grad(), b.requires_grad(), bias.is_some_and(|t| t.requires_grad())];
    record(name, &[Some(a), Some(b), bias], &[&out], move || {
        rule(move |node, g| {
            let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
            let (a, b) = (sa.unpack(node)?, sb.unpack(node)?);
            let node_of = |r: Role, x: &Tensor, y: &Tensor| conv_node(r, BACKWARD_NODE, spec, x, y, None);
            // Each kernel is bilinear; the partner kernel of each operand is
            // its adjoint (see the module docs).
            let (ga, gb) = match role {
                // y = F(x, w): dx = I(g, w), dw = W(g, x)
                Role::Forward => (want[0].then(|| node_of(Role::InputGrad, &g, &b)), want[1].then(|| node_of(Role::WeightGrad, &g, &a))),
                // x' = I(gy, w): dgy = F(g, w), dw = W(gy, g)
                Role::InputGrad => (want[0].then(|| node_of(Role::Forward, &g, &b)), want[1].then(|| node_of(Role::WeightGrad, &a, &g))),
                // w' = W(gy, x): dgy = F(x, g), dx = I(gy, g)
                Role::WeightGrad => (want[0].then(|| node_of(Role::Forward, &b, &g)), want[1].then(|| node_of(Role::InputGrad, &a, &g))),
            };
            let gbias = if want[2] { Some(channel_sum(&g)?) } else { None };
            Ok(vec![ga.transpose()?, gb.transpose()?, gbias])
        })
    });
    Ok(out)
}

/// Expands a parameter list to `dims` entries as PyTorch does (one value
/// applies to every dimension), with PyTorch's message for a wrong length.
fn expand(name: &str, v: &[usize], dims: usize) -> Result<[usize; MAX_SPATIAL]> {
    let mut r = [0; MAX_SPATIAL];
    match v.len() {
        1 => r[..dims].fill(v[0]),
        n if n == dims => r[..dims].copy_from_slice(v),
        _ => {
            return Err(Error::runtime(format!(
                "expected {name} to be a single integer value or a list of {dims} values to match the convolution dimensions, but got {name}={v:?}"
            )))
        }
    }
    Ok(r)
}

impl Tensor {
    /// PyTorch's `torch.convolution`: a plain or transposed convolution over
    /// 1, 2 or 3 spatial dimensions of a batched, channel-first input, for
    /// float32/float64 (float16/bfloat16 computed in float32) CPU tensors.
    ///
    /// Plain: input `(N, C_in, *size)`, weight `(C_out, C_in / groups,
    /// *kernel)`, bias `(C_out)`. Transposed: weight `(C_in, C_out / groups,
    /// *kernel)`, bias `(C_out)`, the output as large as the input of the
    /// plain convolution this is the gradient of, plus `output_padding`.
    /// Records `ConvolutionBackward0` with edges (input, weight, bias); its
    /// backward is differentiable again.
    ///
    /// ```
    /// use ferrotorch::{ops::conv::ConvParams, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4]).unwrap();
    /// let w = Tensor::from_vec(vec![1.0f32, -1.0], &[1, 1, 2]).unwrap();
    /// let y = x.convolution(&w, None, &ConvParams::default()).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, -1.0, -1.0]);
    /// // The transposed convolution with stride 2 spreads each input over the output.
    /// let t = x.convolution(&w, None, &ConvParams::default().transposed(true).stride(&[2])).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0]);
    /// ```
    pub fn convolution(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        super::common_device(&[Some(self), Some(weight), bias].into_iter().flatten().collect::<Vec<_>>())?;
        let (xs, ws) = (self.shape().to_vec(), weight.shape().to_vec());
        let nd = ws.len();
        if !(3..=MAX_SPATIAL + 2).contains(&nd) {
            return Err(Error::runtime(format!("convolution: expected a weight with 3 to 5 dimensions, but got weight of size {ws:?}")));
        }
        if xs.len() != nd {
            return Err(Error::runtime(format!(
                "Expected {nd}-dimensional input for {nd}-dimensional weight {ws:?}, but got {}-dimensional input of size {xs:?} instead",
                xs.len()
            )));
        }
        let dims = nd - 2;
        let stride = expand("stride", &p.stride, dims)?;
        let padding = expand("padding", &p.padding, dims)?;
        let dilation = expand("dilation", &p.dilation, dims)?;
        let output_padding = expand("output_padding", &p.output_padding, dims)?;
        let groups = p.groups;
        if stride[..dims].contains(&0) {
            return Err(Error::runtime("non-positive stride is not supported"));
        }
        if dilation[..dims].contains(&0) {
            return Err(Error::runtime("dilation should be greater than zero"));
        }
        if groups == 0 {
            return Err(Error::runtime("non-positive groups is not supported"));
        }
        if ws[2..].contains(&0) {
            return Err(Error::runtime(format!("kernel size should be greater than zero, but got kernel of size {:?}", &ws[2..])));
        }
        let dt = self.dtype();
        if weight.dtype() != dt {
            return Err(Error::runtime(format!("expected scalar type {} but found {}", pretty(dt), pretty(weight.dtype()))));
        }
        if let Some(b) = bias.filter(|b| b.dtype() != dt) {
            return Err(Error::runtime(format!(
                "Input type ({}) and bias type ({}) should be the same",
                pretty(dt).to_lowercase(),
                pretty(b.dtype()).to_lowercase()
            )));
        }
        if ws[0] % groups != 0 {
            return Err(Error::runtime(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {ws:?} instead"
            )));
        }
        let (c_in, c_out) = if p.transposed { (ws[0], ws[1] * groups) } else { (ws[1] * groups, ws[0]) };
        if xs[1] != c_in {
            let which = if p.transposed { "transposed=1, ".to_string() } else { format!("groups={groups}, ") };
            return Err(Error::runtime(format!(
                "Given {which}weight of size {ws:?}, expected input{xs:?} to have {c_in} channels, but got {} channels instead",
                xs[1]
            )));
        }
        if let Some(b) = bias.filter(|b| b.shape() != [c_out]) {
            let which = if p.transposed { "transposed=1, " } else { "" };
            return Err(Error::runtime(format!(
                "Given {which}weight of size {ws:?}, expected bias to be 1-dimensional with {c_out} elements, but got bias of size {:?} instead",
                b.shape()
            )));
        }
        let mut spec = ConvSpec {
            dims,
            batch: xs[0],
            in_channels: 0,
            out_channels: 0,
            groups,
            input: [1; MAX_SPATIAL],
            kernel: [1; MAX_SPATIAL],
            output: [1; MAX_SPATIAL],
            stride,
            padding,
            dilation,
        };
        spec.kernel[..dims].copy_from_slice(&ws[2..]);
        if !p.transposed {
            spec.in_channels = c_in;
            spec.out_channels = c_out;
            spec.input[..dims].copy_from_slice(&xs[2..]);
            for i in 0..dims {
                match conv_output_size(xs[2 + i], ws[2 + i], stride[i], padding[i], dilation[i]) {
                    Some(o) => spec.output[i] = o,
                    None => {
                        let join = |v: Vec<usize>| v.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" x ");
                        return Err(Error::runtime(format!(
                            "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                            join((0..dims).map(|i| xs[2 + i] + 2 * padding[i]).collect()),
                            join((0..dims).map(|i| dilation[i] * (ws[2 + i] - 1) + 1).collect()),
                        )));
                    }
                }
            }
            return conv_node(Role::Forward, "ConvolutionBackward0", spec, self, weight, bias);
        }
        if (0..dims).any(|i| output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
            return Err(Error::runtime(format!(
                "output padding must be smaller than either stride or dilation, but got output_padding={:?}, stride={:?}, dilation={:?}",
                &output_padding[..dims],
                &stride[..dims],
                &dilation[..dims]
            )));
        }
        // The transposed convolution is the input gradient of the plain one
        // from its output (this input) to its input (this output).
        spec.in_channels = c_out;
        spec.out_channels = c_in;
        spec.output[..dims].copy_from_slice(&xs[2..]);
        let sizes: Vec<i64> = (0..dims)
            .map(|i| {
                (xs[2 + i] as i64 - 1) * stride[i] as i64 - 2 * padding[i] as i64 + (dilation[i] * (ws[2 + i] - 1)) as i64 + output_padding[i] as i64 + 1
            })
            .collect();
        if sizes.iter().any(|&s| s <= 0) || xs[2..].contains(&0) {
            let join = |v: Vec<String>| v.join(" x ");
            return Err(Error::runtime(format!(
                "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
                join(xs[2..].iter().map(|v| v.to_string()).collect()),
                join(sizes.iter().map(|v| v.to_string()).collect()),
            )));
        }
        for (i, &s) in sizes.iter().enumerate() {
            spec.input[i] = s as usize;
        }
        conv_node(Role::InputGrad, "ConvolutionBackward0", spec, self, weight, bias)
    }

    /// 1-d convolution: [`Tensor::convolution`] with a 3-d weight
    /// `(C_out, C_in / groups, k)` on an input `(N, C_in, L)`.
    pub fn conv1d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(1, false, weight, bias, p)
    }

    /// 2-d convolution: [`Tensor::convolution`] with a 4-d weight
    /// `(C_out, C_in / groups, kh, kw)` on an input `(N, C_in, H, W)`.
    ///
    /// ```
    /// use ferrotorch::{ops::conv::ConvParams, DType, Device, Tensor};
    /// let x = Tensor::ones(&[2, 3, 5, 5], DType::Float64, Device::CPU).unwrap();
    /// let w = Tensor::ones(&[4, 3, 3, 3], DType::Float64, Device::CPU).unwrap();
    /// let y = x.conv2d(&w, None, &ConvParams::default().padding(&[1])).unwrap();
    /// assert_eq!(y.shape(), &[2, 4, 5, 5]);
    /// assert_eq!(y.to_vec::<f64>().unwrap()[6], 27.0); // an interior output sums 3·3·3 ones
    /// ```
    pub fn conv2d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(2, false, weight, bias, p)
    }

    /// 3-d convolution: [`Tensor::convolution`] with a 5-d weight
    /// `(C_out, C_in / groups, kd, kh, kw)` on an input `(N, C_in, D, H, W)`.
    pub fn conv3d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(3, false, weight, bias, p)
    }

    /// 1-d transposed convolution: weight `(C_in, C_out / groups, k)`.
    pub fn conv_transpose1d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(1, true, weight, bias, p)
    }

    /// 2-d transposed convolution: weight `(C_in, C_out / groups, kh, kw)`.
    ///
    /// ```
    /// use ferrotorch::{ops::conv::ConvParams, DType, Device, Tensor};
    /// let x = Tensor::ones(&[1, 2, 3, 3], DType::Float32, Device::CPU).unwrap();
    /// let w = Tensor::ones(&[2, 5, 2, 2], DType::Float32, Device::CPU).unwrap();
    /// let y = x.conv_transpose2d(&w, None, &ConvParams::default().stride(&[2]).output_padding(&[1])).unwrap();
    /// assert_eq!(y.shape(), &[1, 5, 7, 7]);
    /// ```
    pub fn conv_transpose2d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(2, true, weight, bias, p)
    }

    /// 3-d transposed convolution: weight `(C_in, C_out / groups, kd, kh, kw)`.
    pub fn conv_transpose3d(&self, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        self.conv_nd(3, true, weight, bias, p)
    }

    fn conv_nd(&self, dims: usize, transposed: bool, weight: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
        if weight.shape().len() != dims + 2 {
            return Err(Error::runtime(format!(
                "Expected {}-dimensional weight for a {dims}-d convolution, but got weight of size {:?}",
                dims + 2,
                weight.shape()
            )));
        }
        let p = ConvParams { transposed, ..p.clone() };
        self.convolution(weight, bias, &p)
    }
}
