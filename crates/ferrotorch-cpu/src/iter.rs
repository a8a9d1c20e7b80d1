//! The one strided iterator behind every elementwise kernel.
//!
//! Given a common shape and, for each of `N` operands, its strides (stride 0
//! where broadcast), it drops size-1 dims, merges dims that are contiguous
//! across all operands, and yields runs `(offsets, len, inner_strides)` in
//! elements. Outer iterations are split across rayon above [`GRAIN`] elements
//! so tiny ops stay on the calling thread.

use rayon::prelude::*;

/// Minimum number of elements before a loop is split across threads.
pub const GRAIN: usize = 32 * 1024;

/// Coalesced dims as (size, stride per operand), outermost first.
type Dims<const N: usize> = Vec<(usize, [isize; N])>;

/// Coalesced iteration plan for `N` operands.
pub struct Plan<const N: usize> {
    /// Outer dims (outermost first) as (size, strides per operand).
    outer: Dims<N>,
    /// Length of the innermost run.
    pub inner_len: usize,
    /// Stride of each operand along the innermost run.
    pub inner_strides: [isize; N],
    /// Starting element offset of each operand.
    pub base: [isize; N],
    /// Total number of elements.
    pub numel: usize,
}

impl<const N: usize> Plan<N> {
    /// Builds the plan. `strides[k]` must have `shape.len()` entries.
    pub fn new(shape: &[usize], strides: [&[isize]; N], offsets: [usize; N]) -> Plan<N> {
        let numel: usize = shape.iter().product();
        let mut dims: Dims<N> = Vec::with_capacity(shape.len());
        for d in 0..shape.len() {
            if shape[d] == 1 {
                continue;
            }
            let mut st = [0isize; N];
            for k in 0..N {
                st[k] = strides[k][d];
            }
            // Merge with the previous (outer) dim when contiguous for every operand.
            if let Some(last) = dims.last_mut() {
                let inner_size = shape[d] as isize;
                if (0..N).all(|k| last.1[k] == st[k] * inner_size) {
                    last.0 *= shape[d];
                    last.1 = st;
                    continue;
                }
            }
            dims.push((shape[d], st));
        }
        let base = offsets.map(|o| o as isize);
        let (inner_len, inner_strides) = match dims.pop() {
            Some((n, st)) => (n, st),
            None => (if numel == 0 { 0 } else { 1 }, [0; N]),
        };
        Plan { outer: dims, inner_len, inner_strides, base, numel }
    }

    /// Number of inner runs.
    pub fn outer_count(&self) -> usize {
        if self.numel == 0 {
            return 0;
        }
        self.outer.iter().map(|d| d.0).product()
    }

    /// Offsets of outer iteration `idx` (row-major over outer dims).
    #[inline]
    fn offsets_of(&self, mut idx: usize) -> [isize; N] {
        let mut off = self.base;
        for (size, st) in self.outer.iter().rev() {
            let i = (idx % size) as isize;
            idx /= size;
            for k in 0..N {
                off[k] += i * st[k];
            }
        }
        off
    }

    /// Runs `f(offsets, len, inner_strides)` over every run, serially.
    pub fn for_each<F: FnMut([isize; N], usize, [isize; N])>(&self, mut f: F) {
        let count = self.outer_count();
        if count == 0 {
            return;
        }
        // Odometer walk: cheaper than recomputing offsets by division each run.
        let nd = self.outer.len();
        let mut idx = vec![0usize; nd];
        let mut off = self.base;
        for _ in 0..count {
            f(off, self.inner_len, self.inner_strides);
            let mut d = nd;
            while d > 0 {
                d -= 1;
                let (size, st) = &self.outer[d];
                idx[d] += 1;
                for k in 0..N {
                    off[k] += st[k];
                }
                if idx[d] < *size {
                    break;
                }
                for k in 0..N {
                    off[k] -= st[k] * *size as isize;
                }
                idx[d] = 0;
            }
        }
    }

    /// Runs `f` over every run, splitting across threads when the loop is big
    /// enough. `f` must only write to locations owned by the run it is given.
    pub fn for_each_par<F>(&self, f: F)
    where
        F: Fn([isize; N], usize, [isize; N]) + Sync,
    {
        let count = self.outer_count();
        if count == 0 {
            return;
        }
        if self.numel < GRAIN || rayon::current_num_threads() <= 1 {
            return self.for_each(f);
        }
        if count == 1 {
            // One long run: cut it into chunks.
            let len = self.inner_len;
            let chunk = GRAIN.max(len / (rayon::current_num_threads() * 4)).max(1);
            let pieces = len.div_ceil(chunk);
            (0..pieces).into_par_iter().for_each(|p| {
                let start = p * chunk;
                let n = chunk.min(len - start);
                let mut off = self.base;
                for k in 0..N {
                    off[k] += start as isize * self.inner_strides[k];
                }
                f(off, n, self.inner_strides);
            });
            return;
        }
        let runs_per_task = (GRAIN / self.inner_len.max(1)).max(1);
        let tasks = count.div_ceil(runs_per_task);
        (0..tasks).into_par_iter().for_each(|t| {
            let start = t * runs_per_task;
            let end = (start + runs_per_task).min(count);
            for i in start..end {
                f(self.offsets_of(i), self.inner_len, self.inner_strides);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_contiguous_dims() {
        let p = Plan::<1>::new(&[2, 3, 4], [&[12, 4, 1]], [0]);
        assert_eq!(p.outer_count(), 1);
        assert_eq!(p.inner_len, 24);
    }

    #[test]
    fn transposed_keeps_two_dims_and_visits_all() {
        let p = Plan::<2>::new(&[3, 2], [&[1, 3], &[2, 1]], [0, 0]);
        let mut seen = Vec::new();
        p.for_each(|off, n, st| {
            for i in 0..n as isize {
                seen.push((off[0] + i * st[0], off[1] + i * st[1]));
            }
        });
        assert_eq!(seen, vec![(0, 0), (3, 1), (1, 2), (4, 3), (2, 4), (5, 5)]);
    }

    #[test]
    fn broadcast_and_empty() {
        let p = Plan::<2>::new(&[2, 3], [&[0, 1], &[3, 1]], [0, 0]);
        assert_eq!(p.outer_count(), 2);
        let e = Plan::<1>::new(&[0, 3], [&[3, 1]], [0]);
        assert_eq!(e.outer_count(), 0);
        let s = Plan::<1>::new(&[], [&[]], [5]);
        let mut v = vec![];
        s.for_each(|o, n, _| v.push((o[0], n)));
        assert_eq!(v, vec![(5, 1)]);
    }
}
