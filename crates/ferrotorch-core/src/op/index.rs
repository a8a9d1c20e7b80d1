//! Indexing kernels' descriptions: how an indexed write combines with what
//! is stored, and what an out-of-range index value raises (PyTorch words and
//! types that error per op, and only the kernel that reads the index values
//! can raise it).

use crate::error::Error;

/// How values combine with what is already stored at a written position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IndexReduce {
    /// Overwrite.
    Assign,
    /// `dst += v`.
    Add,
    /// `dst = fma(v, alpha, dst)` with one rounding (float32/float64 only):
    /// multi-dim `index_add_` with `alpha`, which PyTorch runs as `add_`'s
    /// fused `fmadd(source, alpha, self)` per index.
    AddScaled(f64),
    /// `dst *= v`.
    Mul,
    /// `dst = max(dst, v)`, NaN-propagating.
    Max,
    /// `dst = min(dst, v)`, NaN-propagating.
    Min,
}

/// The error an out-of-range index value `v` raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfRange {
    /// `{prefix}index {v} is out of bounds for dimension {dim} with size
    /// {size}`, an `IndexError` when `index_error`, else a `RuntimeError`.
    Dim {
        /// The dimension named in the message.
        dim: usize,
        /// Text before the message (`"index_copy_(): "`), or empty.
        prefix: &'static str,
        /// `IndexError` rather than `RuntimeError`.
        index_error: bool,
    },
    /// `IndexError: index out of range in self`.
    InSelf,
    /// `RuntimeError: INDICES element is out of DATA bounds, id={v} axis_dim={size}`.
    DataBounds,
    /// `IndexError: out of range: tried to access index {v} on a tensor of {size} elements.`
    Flat,
}

/// The valid values of one index operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexBounds {
    /// Size of the indexed dimension: values lie in `0..size`.
    pub size: usize,
    /// Whether negative values count from the end (`-size..0`).
    pub negative: bool,
    /// What a value outside the range raises.
    pub error: OutOfRange,
}

impl IndexBounds {
    /// `v` as a position in `0..size`, or `None` when out of range.
    #[inline]
    pub fn wrap(&self, v: i64) -> Option<usize> {
        let size = self.size as i64;
        let w = if v < 0 && self.negative { v + size } else { v };
        (0..size).contains(&w).then_some(w as usize)
    }

    /// The error for the out-of-range value `v`.
    pub fn error(&self, v: i64) -> Error {
        let size = self.size;
        match self.error {
            OutOfRange::Dim { dim, prefix, index_error } => {
                let msg = format!("{prefix}index {v} is out of bounds for dimension {dim} with size {size}");
                if index_error {
                    Error::index(msg)
                } else {
                    Error::runtime(msg)
                }
            }
            OutOfRange::InSelf => Error::index("index out of range in self"),
            OutOfRange::DataBounds => Error::runtime(format!("INDICES element is out of DATA bounds, id={v} axis_dim={size}")),
            OutOfRange::Flat => Error::index(format!("out of range: tried to access index {v} on a tensor of {size} elements.")),
        }
    }
}
