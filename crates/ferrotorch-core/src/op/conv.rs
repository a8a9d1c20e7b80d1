//! The geometry of a convolution, shared by the op layer (which computes
//! it from the operands and PyTorch's arguments) and every backend's
//! convolution kernels (which run it).

use crate::error::{Error, Result};

/// Most spatial dimensions a convolution may have.
pub const MAX_SPATIAL: usize = 3;

/// Shapes and window of one convolution `y = conv(x, w)`, in the forward
/// (not transposed) sense: `x` is `(batch, in_channels, *input)`, `w` is
/// `(out_channels, in_channels / groups, *kernel)` and `y` is
/// `(batch, out_channels, *output)`. Output position `o` along a dimension
/// reads input position `o * stride + k * dilation - padding` for tap `k`;
/// positions outside the input are zeros.
///
/// Spatial arrays hold `dims` entries (1..=3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvSpec {
    /// Number of spatial dimensions (1..=3).
    pub dims: usize,
    /// Batch size.
    pub batch: usize,
    /// Channels of `x`.
    pub in_channels: usize,
    /// Channels of `y` (rows of `w`).
    pub out_channels: usize,
    /// Channel groups: both channel counts are multiples of it.
    pub groups: usize,
    /// Spatial size of `x`.
    pub input: [usize; MAX_SPATIAL],
    /// Spatial size of `w`.
    pub kernel: [usize; MAX_SPATIAL],
    /// Spatial size of `y`; at most [`conv_output_size`] of the others (a
    /// transposed convolution's output padding can make its input larger than
    /// the one its output would need, and the extra positions are never read).
    pub output: [usize; MAX_SPATIAL],
    /// Step between output positions.
    pub stride: [usize; MAX_SPATIAL],
    /// Implicit zero padding on each side.
    pub padding: [usize; MAX_SPATIAL],
    /// Spacing between kernel taps.
    pub dilation: [usize; MAX_SPATIAL],
}

/// Output length of a convolution along one dimension, `None` when the
/// (dilated) kernel does not fit in the padded input or the stride is 0.
pub fn conv_output_size(input: usize, kernel: usize, stride: usize, padding: usize, dilation: usize) -> Option<usize> {
    let reach = dilation.checked_mul(kernel.checked_sub(1)?)?.checked_add(1)?;
    let padded = input.checked_add(padding.checked_mul(2)?)?;
    if stride == 0 || padded < reach {
        return None;
    }
    Some((padded - reach) / stride + 1)
}

impl ConvSpec {
    /// Element counts of `x`, `w` and `y`.
    pub fn lens(&self) -> (usize, usize, usize) {
        let sp = |s: &[usize; MAX_SPATIAL]| s[..self.dims].iter().product::<usize>();
        (
            self.batch * self.in_channels * sp(&self.input),
            self.out_channels * (self.in_channels / self.groups.max(1)) * sp(&self.kernel),
            self.batch * self.out_channels * sp(&self.output),
        )
    }

    /// Checks the channel split and that every output position exists;
    /// the messages are PyTorch's.
    pub fn validate(&self) -> Result<()> {
        let d = self.dims;
        if d == 0 || d > MAX_SPATIAL {
            return Err(Error::runtime(format!("convolution: expected 1 to 3 spatial dimensions, got {d}")));
        }
        let (c, o, g) = (self.in_channels, self.out_channels, self.groups);
        if g == 0 || c % g != 0 || o % g != 0 {
            return Err(Error::runtime(format!(
                "Given groups={g}, expected weight to be divisible by {g} at dimension 0, but got {o} output and {c} input channels"
            )));
        }
        for i in 0..d {
            let natural = conv_output_size(self.input[i], self.kernel[i], self.stride[i], self.padding[i], self.dilation[i]);
            if self.kernel[i] == 0 || self.dilation[i] == 0 || natural.is_none_or(|n| n < self.output[i]) {
                return Err(Error::runtime(format!(
                    "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                    join(self.input[..d].iter().zip(&self.padding).map(|(s, p)| s + 2 * p)),
                    join(self.kernel[..d].iter().zip(&self.dilation).map(|(k, dl)| dl * (k.max(&1) - 1) + 1)),
                )));
            }
        }
        Ok(())
    }
}

/// A [`ConvSpec`]'s window seen in three spatial dims ([`ConvSpec::as_3d`]):
/// 1-d and 2-d problems get leading unit dims with unit stride and dilation
/// and no padding, so a backend needs one loop nest, not one per rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv3d {
    /// Input extent.
    pub input: [usize; 3],
    /// Kernel extent.
    pub kernel: [usize; 3],
    /// Output extent.
    pub output: [usize; 3],
    /// Step between output positions.
    pub stride: [usize; 3],
    /// Implicit zero padding on each side.
    pub padding: [usize; 3],
    /// Spacing between kernel taps.
    pub dilation: [usize; 3],
}

impl Conv3d {
    /// Elements of one input channel.
    pub fn in_plane(&self) -> usize {
        self.input.iter().product()
    }
    /// Kernel taps per channel.
    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }
    /// Elements of one output channel.
    pub fn out_plane(&self) -> usize {
        self.output.iter().product()
    }
    /// Whether the column matrix of a channel is the channel itself (a
    /// 1×1×1 kernel with unit stride, no padding and equal input and output
    /// sizes), so nothing needs unfolding.
    pub fn direct(&self) -> bool {
        self.kernel == [1; 3] && self.stride == [1; 3] && self.padding == [0; 3] && self.input == self.output
    }
}

impl ConvSpec {
    /// The problem in three spatial dims (see [`Conv3d`]).
    pub fn as_3d(&self) -> Conv3d {
        let d = self.dims.clamp(1, MAX_SPATIAL);
        let lead = 3 - d;
        let pad3 = |a: &[usize; MAX_SPATIAL], fill: usize| {
            let mut r = [fill; 3];
            r[lead..].copy_from_slice(&a[..d]);
            r
        };
        Conv3d {
            input: pad3(&self.input, 1),
            kernel: pad3(&self.kernel, 1),
            output: pad3(&self.output, 1),
            stride: pad3(&self.stride, 1),
            padding: pad3(&self.padding, 0),
            dilation: pad3(&self.dilation, 1),
        }
    }
}

fn join(it: impl Iterator<Item = usize>) -> String {
    it.map(|v| v.to_string()).collect::<Vec<_>>().join(" x ")
}


/// Which of a convolution's three kernels runs; operands `(a, b)` and
/// output, all in the sense of the plain convolution a [`ConvSpec`]
/// describes: `Forward (x, w) -> y`, `InputGrad (gy, w) -> x`-shaped (which
/// is also the transposed convolution), `WeightGrad (gy, x) -> w`-shaped.
/// Each is bilinear in its operands and the derivative of each in either
/// operand is another of the three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvRole {
    /// `y = conv(x, w) (+ bias per output channel)`.
    Forward,
    /// The input gradient `conv_transpose(gy, w) (+ bias per input channel)`.
    InputGrad,
    /// The weight gradient from `gy` and `x`.
    WeightGrad,
}

impl ConvSpec {
    /// The output shape of kernel `role`.
    pub fn shape_of(&self, role: ConvRole) -> Vec<usize> {
        let d = self.dims;
        let mut s = match role {
            ConvRole::Forward => vec![self.batch, self.out_channels],
            ConvRole::InputGrad => vec![self.batch, self.in_channels],
            ConvRole::WeightGrad => vec![self.out_channels, self.in_channels / self.groups.max(1)],
        };
        s.extend_from_slice(match role {
            ConvRole::Forward => &self.output[..d],
            ConvRole::InputGrad => &self.input[..d],
            ConvRole::WeightGrad => &self.kernel[..d],
        });
        s
    }
}
