//! The one strided iterator behind every elementwise kernel.
//!
//! Given a common shape and, for each of `N` operands, its strides (stride 0
//! where broadcast), it drops size-1 dims, merges dims that are contiguous
//! across all operands, and yields runs `(offsets, len, inner_strides)` in
//! elements. Outer iterations are split across threads above [`GRAIN`] elements
//! so tiny ops stay on the calling thread.

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

    /// The coalesced dims, outermost first, the inner run last, as
    /// (size, stride per operand). Empty for a 0-d plan.
    pub fn dims(&self) -> Vec<(usize, [isize; N])> {
        let mut d = self.outer.clone();
        if self.numel > 1 || (self.numel == 1 && self.inner_len > 1) {
            d.push((self.inner_len, self.inner_strides));
        }
        d
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
        self.for_each_par_grain(GRAIN, f)
    }

    /// As [`Plan::for_each_par`], with the minimum number of elements per task
    /// given (reductions pass `GRAIN / reduced_size` so that the work, not the
    /// output count, decides).
    pub fn for_each_par_grain<F>(&self, grain: usize, f: F)
    where
        F: Fn([isize; N], usize, [isize; N]) + Sync,
    {
        let grain = grain.max(1);
        let count = self.outer_count();
        if count == 0 {
            return;
        }
        let threads = crate::parallel::threads();
        if self.numel < grain.max(2) || threads <= 1 {
            return self.for_each(f);
        }
        // Tasks of at least `grain` elements, about 4 per thread.
        let per_task = grain.max(self.numel / (threads * 4)).max(1);
        let tasks = self.numel.div_ceil(per_task);
        crate::parallel::parallel_for(tasks, |t| {
            let lo = t * per_task;
            let hi = (lo + per_task).min(self.numel);
            self.for_each_linear(lo, hi, |_, off, n, st| f(off, n, st));
        });
    }

    /// Runs `f(first, offsets, len, strides)` over the elements whose row-major
    /// linear index lies in `lo..hi`, as (partial) runs; `first` is the linear
    /// index of each run's first element.
    #[inline(always)]
    pub fn for_each_linear<F: FnMut(usize, [isize; N], usize, [isize; N])>(&self, lo: usize, hi: usize, mut f: F) {
        let hi = hi.min(self.numel);
        if lo >= hi || self.inner_len == 0 {
            return;
        }
        let len = self.inner_len;
        let mut pos = lo;
        let mut run = pos / len;
        let mut off = self.offsets_of(run);
        let j = pos % len;
        for k in 0..N {
            off[k] += j as isize * self.inner_strides[k];
        }
        let nd = self.outer.len();
        let mut idx = vec![0usize; nd];
        {
            let mut r = run;
            for d in (0..nd).rev() {
                idx[d] = r % self.outer[d].0;
                r /= self.outer[d].0;
            }
        }
        loop {
            let j = pos - run * len;
            let n = (len - j).min(hi - pos);
            f(pos, off, n, self.inner_strides);
            pos += n;
            if pos >= hi {
                break;
            }
            // Next run: back to its start, then the odometer step.
            for k in 0..N {
                off[k] -= j as isize * self.inner_strides[k];
            }
            run += 1;
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

    #[test]
    fn linear_ranges_match_full_walk() {
        // (3, 4, 5) permuted so nothing merges.
        let p = Plan::<1>::new(&[3, 4, 5], [&[1, 15, 3]], [2]);
        let mut all = Vec::new();
        p.for_each(|o, n, st| (0..n as isize).for_each(|i| all.push(o[0] + i * st[0])));
        for (lo, hi) in [(0, 60), (3, 17), (5, 10), (59, 60), (0, 1), (7, 7), (12, 58)] {
            let mut got = Vec::new();
            let mut firsts = Vec::new();
            p.for_each_linear(lo, hi, |first, o, n, st| {
                firsts.push(first);
                (0..n as isize).for_each(|i| got.push(o[0] + i * st[0]))
            });
            assert_eq!(got, all[lo..hi], "range {lo}..{hi}");
            assert!(firsts.first().map_or(true, |&f| f == lo));
        }
    }

    #[test]
    fn parallel_grain_visits_everything_once() {
        let p = Plan::<1>::new(&[1000, 77], [&[77, 1]], [0]);
        let hits: Vec<std::sync::atomic::AtomicU32> = (0..77_000).map(|_| Default::default()).collect();
        p.for_each_par_grain(100, |o, n, _| {
            for i in 0..n {
                hits[o[0] as usize + i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(hits.iter().all(|h| h.load(std::sync::atomic::Ordering::Relaxed) == 1));
    }
}
