//! `Conv1d`, `Conv2d` and `ConvTranspose2d`, over the op layer's convolution.

use ferrotorch_core::{Error, Result};

use super::init;
use super::module::{Entry, Module};
use crate::ops::conv::ConvParams;
use crate::Tensor;

/// The hyper-parameters of a convolution layer, one value per spatial dim.
#[derive(Clone, Debug)]
pub struct ConvOptions {
    /// Step between windows.
    pub stride: Vec<usize>,
    /// Zeros added on each side.
    pub padding: Vec<usize>,
    /// Spacing of the kernel taps.
    pub dilation: Vec<usize>,
    /// Channel groups (`in_channels` and `out_channels` must divide by it).
    pub groups: usize,
    /// Whether the layer has a bias.
    pub bias: bool,
    /// Extra size on one side of a transposed convolution's output.
    pub output_padding: Vec<usize>,
}

impl ConvOptions {
    /// PyTorch's defaults for `dims` spatial dims: stride 1, no padding,
    /// dilation 1, one group, a bias.
    pub fn new(dims: usize) -> ConvOptions {
        ConvOptions { stride: vec![1; dims], padding: vec![0; dims], dilation: vec![1; dims], groups: 1, bias: true, output_padding: vec![0; dims] }
    }
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
    /// Sets the groups.
    pub fn groups(mut self, g: usize) -> Self {
        self.groups = g;
        self
    }
    /// Sets whether there is a bias.
    pub fn bias(mut self, b: bool) -> Self {
        self.bias = b;
        self
    }
    /// Sets a transposed convolution's output padding.
    pub fn output_padding(mut self, p: &[usize]) -> Self {
        self.output_padding = p.to_vec();
        self
    }
    fn params(&self, transposed: bool) -> ConvParams {
        ConvParams::default()
            .stride(&self.stride)
            .padding(&self.padding)
            .dilation(&self.dilation)
            .groups(self.groups)
            .transposed(transposed)
            .output_padding(&self.output_padding)
    }
}

/// A convolution over `dims` spatial dims (`Conv1d`, `Conv2d`) or its
/// transpose (`ConvTranspose2d`): weight `(out, in/groups, *kernel)`, or
/// `(in, out/groups, *kernel)` when transposed, as in PyTorch.
pub struct Conv {
    /// The kernel.
    pub weight: Tensor,
    /// `(out_channels,)`, when the layer has one.
    pub bias: Option<Tensor>,
    /// The layer's hyper-parameters.
    pub options: ConvOptions,
    transposed: bool,
    name: &'static str,
}

/// `nn.Conv1d`.
pub type Conv1d = Conv;
/// `nn.Conv2d`.
pub type Conv2d = Conv;
/// `nn.ConvTranspose2d`.
pub type ConvTranspose2d = Conv;

impl Conv {
    fn build(name: &'static str, in_ch: usize, out_ch: usize, kernel: &[usize], options: ConvOptions, transposed: bool) -> Result<Conv> {
        let g = options.groups;
        if g == 0 || in_ch % g != 0 || out_ch % g != 0 {
            return Err(Error::value(if g == 0 {
                "groups must be a positive integer".to_string()
            } else if in_ch % g != 0 {
                "in_channels must be divisible by groups".to_string()
            } else {
                "out_channels must be divisible by groups".to_string()
            }));
        }
        for (what, v) in [("stride", &options.stride), ("padding", &options.padding), ("dilation", &options.dilation), ("output_padding", &options.output_padding)] {
            if v.len() != kernel.len() {
                return Err(Error::value(format!("{name}: {what} needs {} values, got {}", kernel.len(), v.len())));
            }
        }
        let mut shape = if transposed { vec![in_ch, out_ch / g] } else { vec![out_ch, in_ch / g] };
        shape.extend_from_slice(kernel);
        // PyTorch's fan_in is weight.size(1) * prod(kernel), also when transposed.
        let bound = init::fan_in_bound(shape[1] * kernel.iter().product::<usize>());
        let weight = init::uniform(&shape, bound)?;
        let bias = if options.bias { Some(init::uniform(&[out_ch], bound)?) } else { None };
        Ok(Conv { weight, bias, options, transposed, name })
    }

    /// `nn.Conv1d(in_channels, out_channels, kernel_size, ...)`.
    pub fn conv1d(in_channels: usize, out_channels: usize, kernel_size: usize, options: ConvOptions) -> Result<Conv> {
        Self::build("Conv1d", in_channels, out_channels, &[kernel_size], options, false)
    }

    /// `nn.Conv2d(in_channels, out_channels, kernel_size, ...)`.
    ///
    /// ```
    /// use ferrotorch::nn::{Conv2d, ConvOptions, Module};
    /// use ferrotorch::{DType, Device, Tensor};
    /// let conv = Conv2d::conv2d(3, 8, [3, 3], ConvOptions::new(2).padding(&[1, 1])).unwrap();
    /// let x = Tensor::zeros(&[1, 3, 16, 16], DType::Float32, Device::CPU).unwrap();
    /// assert_eq!(conv.forward(&x).unwrap().shape(), &[1, 8, 16, 16]);
    /// ```
    pub fn conv2d(in_channels: usize, out_channels: usize, kernel_size: [usize; 2], options: ConvOptions) -> Result<Conv> {
        Self::build("Conv2d", in_channels, out_channels, &kernel_size, options, false)
    }

    /// `nn.ConvTranspose2d(in_channels, out_channels, kernel_size, ...)`.
    pub fn conv_transpose2d(in_channels: usize, out_channels: usize, kernel_size: [usize; 2], options: ConvOptions) -> Result<Conv> {
        Self::build("ConvTranspose2d", in_channels, out_channels, &kernel_size, options, true)
    }
}

impl Module for Conv {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let p = self.options.params(self.transposed);
        // An unbatched input (one dim fewer than the weight) runs as a batch of one.
        if input.ndim() + 1 == self.weight.ndim() {
            return input.unsqueeze(0)?.convolution(&self.weight, self.bias.as_ref(), &p)?.squeeze(Some(&[0]));
        }
        input.convolution(&self.weight, self.bias.as_ref(), &p)
    }
    fn visit<'a>(&'a self, f: &mut dyn FnMut(Entry<'a>)) {
        f(Entry::Parameter("weight", &self.weight));
        if let Some(b) = &self.bias {
            f(Entry::Parameter("bias", b));
        }
    }
    fn type_name(&self) -> &'static str {
        self.name
    }
}
