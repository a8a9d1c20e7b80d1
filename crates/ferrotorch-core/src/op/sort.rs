//! Order-statistic kernels' descriptions: which positions of each row along
//! a dim a selection picks, and in what order.

/// What a row selection picks from each row along its dim, in output order.
/// Every selection reports the positions it picked (int64) and their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowSelect {
    /// Every position, stably sorted (NaN largest).
    Sort {
        /// Largest first.
        descending: bool,
    },
    /// The `k` largest (or smallest), in PyTorch's CPU order: by
    /// `std::partial_sort` when `64 k <= n`, else `std::nth_element` then
    /// `std::sort`, so ties resolve as there.
    Topk {
        /// How many.
        k: usize,
        /// Largest rather than smallest.
        largest: bool,
    },
    /// The `k`-th smallest (0-based) at the index PyTorch's quickselect
    /// lands on.
    Kth {
        /// 0-based rank.
        k: usize,
    },
    /// The lower median, or the first NaN.
    Median,
    /// The most frequent value (smallest on ties) at its last index.
    Mode,
}

impl RowSelect {
    /// How many positions it picks from a row of `n`.
    pub fn count(&self, n: usize) -> usize {
        match *self {
            RowSelect::Sort { .. } => n,
            RowSelect::Topk { k, .. } => k,
            RowSelect::Kth { .. } | RowSelect::Median | RowSelect::Mode => 1,
        }
    }
}
