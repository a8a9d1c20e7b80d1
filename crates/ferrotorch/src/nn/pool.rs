//! `MaxPool2d`, `AvgPool2d` and `AdaptiveAvgPool2d`.

use ferrotorch_core::Result;

use super::module::Module;
use crate::Tensor;

fn pair(v: [usize; 2]) -> [i64; 2] {
    [v[0] as i64, v[1] as i64]
}

/// `nn.MaxPool2d(kernel_size, stride=kernel_size, padding=0, dilation=1, ceil_mode=False)`.
#[derive(Clone, Debug)]
pub struct MaxPool2d {
    /// Window size.
    pub kernel_size: [usize; 2],
    /// Step between windows.
    pub stride: [usize; 2],
    /// Implicit -inf padding.
    pub padding: [usize; 2],
    /// Spacing of window taps.
    pub dilation: [usize; 2],
    /// Round the output size up.
    pub ceil_mode: bool,
}

impl MaxPool2d {
    /// Stride equal to the kernel, no padding, as PyTorch's default.
    pub fn new(kernel_size: [usize; 2]) -> MaxPool2d {
        MaxPool2d { kernel_size, stride: kernel_size, padding: [0, 0], dilation: [1, 1], ceil_mode: false }
    }
}

impl Module for MaxPool2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.max_pool2d(&pair(self.kernel_size), &pair(self.stride), &pair(self.padding), &pair(self.dilation), self.ceil_mode)
    }
}

/// `nn.AvgPool2d(kernel_size, stride=kernel_size, padding=0, ceil_mode=False,
/// count_include_pad=True, divisor_override=None)`.
#[derive(Clone, Debug)]
pub struct AvgPool2d {
    /// Window size.
    pub kernel_size: [usize; 2],
    /// Step between windows.
    pub stride: [usize; 2],
    /// Implicit zero padding.
    pub padding: [usize; 2],
    /// Round the output size up.
    pub ceil_mode: bool,
    /// Count padding in the divisor.
    pub count_include_pad: bool,
    /// A fixed divisor.
    pub divisor_override: Option<i64>,
}

impl AvgPool2d {
    /// Stride equal to the kernel, no padding, as PyTorch's default.
    pub fn new(kernel_size: [usize; 2]) -> AvgPool2d {
        AvgPool2d { kernel_size, stride: kernel_size, padding: [0, 0], ceil_mode: false, count_include_pad: true, divisor_override: None }
    }
}

impl Module for AvgPool2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.avg_pool2d(
            &pair(self.kernel_size),
            &pair(self.stride),
            &pair(self.padding),
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )
    }
}

/// `nn.AdaptiveAvgPool2d(output_size)`.
#[derive(Clone, Debug)]
pub struct AdaptiveAvgPool2d {
    /// The output's spatial size.
    pub output_size: [usize; 2],
}

impl Module for AdaptiveAvgPool2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.adaptive_avg_pool2d(&pair(self.output_size))
    }
}
