//! The geometry of a pooling, shared by the op layer (which computes it
//! from PyTorch's arguments) and every backend's pooling kernels. Kernels
//! see three spatial dims `(D, H, W)`: a 1-d or 2-d pooling is the 3-d one
//! with leading unit dims, so a backend has one loop nest, not one per rank.

/// Window geometry of a (max or average) pooling over `(D, H, W)`; lower
/// ranks put unit dims first (see [`PoolGeom::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolGeom {
    /// Input extent.
    pub input: [usize; 3],
    /// Output extent.
    pub output: [usize; 3],
    /// Window size.
    pub kernel: [usize; 3],
    /// Step between windows.
    pub stride: [usize; 3],
    /// Implicit padding on each side.
    pub padding: [usize; 3],
    /// Spacing between window taps (max pooling only).
    pub dilation: [usize; 3],
}

/// `v` (1 to 3 entries) right-aligned in three, the rest `fill`.
fn pad3(v: &[usize], fill: usize) -> [usize; 3] {
    let mut r = [fill; 3];
    let off = 3 - v.len().min(3);
    for (i, &x) in v.iter().take(3).enumerate() {
        r[off + i] = x;
    }
    r
}

impl PoolGeom {
    /// Geometry of a pooling over the given spatial dims (1 to 3 entries
    /// each, all of one length), padded to three dims.
    pub fn new(input: &[usize], output: &[usize], kernel: &[usize], stride: &[usize], padding: &[usize], dilation: &[usize]) -> PoolGeom {
        PoolGeom {
            input: pad3(input, 1),
            output: pad3(output, 1),
            kernel: pad3(kernel, 1),
            stride: pad3(stride, 1),
            padding: pad3(padding, 0),
            dilation: pad3(dilation, 1),
        }
    }

    /// Elements of one input plane.
    pub fn in_plane(&self) -> usize {
        self.input.iter().product()
    }

    /// Elements of one output plane.
    pub fn out_plane(&self) -> usize {
        self.output.iter().product()
    }
}

/// Output extent of a window sweep, PyTorch's `pooling_output_shape`
/// (which may be zero or negative: the caller reports it). With
/// `ceil_mode` the last window must still start inside the input or the
/// left padding. `stride` must not be zero.
pub fn pool_out_len(size: i64, kernel: i64, stride: i64, pad: i64, dilation: i64, ceil_mode: bool) -> i64 {
    let (size, k, s, p, d) = (size as i128, kernel as i128, stride as i128, pad as i128, dilation as i128);
    if s == 0 {
        return 0;
    }
    let num = size + 2 * p - d * (k - 1) - 1 + if ceil_mode { s - 1 } else { 0 };
    let mut o = num.div_euclid(s) + 1;
    if ceil_mode && (o - 1) * s >= size + p {
        o -= 1;
    }
    o.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// [`pool_out_len`] when positive.
pub fn pool_out_size(size: usize, kernel: usize, stride: usize, pad: usize, dilation: usize, ceil_mode: bool) -> Option<usize> {
    if stride == 0 {
        return None;
    }
    let o = pool_out_len(size as i64, kernel as i64, stride as i64, pad as i64, dilation as i64, ceil_mode);
    usize::try_from(o).ok().filter(|&o| o > 0)
}

/// What a pooling computes, with its resolved geometry. Inputs and outputs
/// are `(planes, *spatial)`; indices are flat positions `d·H·W + h·W + w`
/// within a plane, as PyTorch's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PoolSpec {
    /// Max pooling (values and, when asked, indices).
    Max(PoolGeom),
    /// Average pooling.
    Avg {
        /// Window geometry.
        geom: PoolGeom,
        /// Whether padding taps count in the divisor.
        count_include_pad: bool,
        /// A fixed divisor instead of the window's size.
        divisor_override: Option<i64>,
    },
    /// Adaptive average pooling from `input` to `output` extents.
    AdaptiveAvg {
        /// Input extent.
        input: [usize; 3],
        /// Output extent.
        output: [usize; 3],
        /// Whether the arithmetic rounds to the element type at each step
        /// (PyTorch's 3-d kernel does; its 1-d and 2-d ones accumulate).
        round_each: bool,
    },
    /// Adaptive max pooling from `input` to `output` extents (values and
    /// indices).
    AdaptiveMax {
        /// Input extent.
        input: [usize; 3],
        /// Output extent.
        output: [usize; 3],
    },
}

impl PoolSpec {
    /// Whether the pooling has indices (max poolings).
    pub fn has_indices(&self) -> bool {
        matches!(self, PoolSpec::Max(_) | PoolSpec::AdaptiveMax { .. })
    }

    /// Input and output extents.
    pub fn dims(&self) -> ([usize; 3], [usize; 3]) {
        match self {
            PoolSpec::Max(g) | PoolSpec::Avg { geom: g, .. } => (g.input, g.output),
            PoolSpec::AdaptiveAvg { input, output, .. } | PoolSpec::AdaptiveMax { input, output } => (*input, *output),
        }
    }
}
