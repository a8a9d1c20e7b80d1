//! The CPU's order statistics along one dim: stable sort (NaN largest),
//! topk, kthvalue, median and mode, each choosing among ties as PyTorch's
//! CPU kernel does, and `unique`.

use crate::dense::{elems, elems_mut};
use crate::{Dst, Src};
use ferrotorch_core::op::sort::RowSelect;
use ferrotorch_core::{dispatch_dtype, DType, Element, Error, Result};
use std::cmp::Ordering;

/// Total order with NaN last.
#[inline]
fn cmp_nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    match (a != a, b != b) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(b).unwrap_or(Ordering::Equal),
    }
}

/// Stable order of a row's indices.
fn order<T: Element>(row: &[T], descending: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    if descending {
        idx.sort_by(|&i, &j| cmp_nan_last(&row[j], &row[i]));
    } else {
        idx.sort_by(|&i, &j| cmp_nan_last(&row[i], &row[j]));
    }
    idx
}

/// The index PyTorch's kthvalue reports for the `k`-th smallest (0-based) of
/// `row`: its CPU kernel runs a median-of-three quickselect over (value, index)
/// pairs, so among ties the one it lands on depends on the partitioning, and
/// the gradient goes there. This replays that quickselect (NaN sorts last).
fn quick_select_pos<T: Element>(row: &[T], k: usize) -> usize {
    let gt = |x: T, y: T| (x != x && y == y) || x > y;
    let mut v: Vec<T> = row.to_vec();
    let mut ix: Vec<usize> = (0..row.len()).collect();
    let mut swap = |v: &mut Vec<T>, a: usize, b: usize| {
        v.swap(a, b);
        ix.swap(a, b);
    };
    if v.is_empty() {
        return 0;
    }
    let (mut l, mut r) = (0usize, v.len() - 1);
    loop {
        if r <= l {
            break;
        }
        if r == l + 1 {
            if gt(v[l], v[r]) {
                swap(&mut v, l, r);
            }
            break;
        }
        let p = l + (r - l) / 2;
        swap(&mut v, p, l + 1);
        if gt(v[l + 1], v[r]) {
            swap(&mut v, l + 1, r);
        }
        if gt(v[l], v[r]) {
            swap(&mut v, l, r);
        }
        if gt(v[l + 1], v[l]) {
            swap(&mut v, l + 1, l);
        }
        let (mut i, mut j) = (l + 1, r);
        let piv = v[l];
        // v[r] >= piv and v[l] == piv bound both scans (the median of three).
        loop {
            i += 1;
            while i < r && gt(piv, v[i]) {
                i += 1;
            }
            j -= 1;
            while j > l && gt(v[j], piv) {
                j -= 1;
            }
            if j < i {
                break;
            }
            swap(&mut v, i, j);
        }
        swap(&mut v, l, j);
        if j <= k {
            l = i;
        }
        if j >= k {
            if j == 0 {
                break;
            }
            r = j - 1;
        }
    }
    ix.get(k).copied().unwrap_or(0)
}

/// The positions PyTorch's CPU topk returns for a row, in output order:
/// `(value, index)` pairs ordered by value alone (NaN above everything), by
/// `std::partial_sort` when `64 k <= n`, else `std::nth_element` at `k - 1`
/// then `std::sort` of the first `k - 1`; so ties resolve as there.
fn topk_pos<T: Element + PartialOrd>(row: &[T], k: usize, largest: bool) -> Vec<usize> {
    if k == 0 {
        return Vec::new();
    }
    let mut q: Vec<(T, usize)> = row.iter().copied().zip(0..).collect();
    let nan = |v: &T| v != v;
    let less = move |a: &(T, usize), b: &(T, usize)| {
        if largest {
            (nan(&a.0) && !nan(&b.0)) || a.0 > b.0
        } else {
            (!nan(&a.0) && nan(&b.0)) || a.0 < b.0
        }
    };
    if k * 64 <= q.len() {
        crate::stl_sort::partial_sort(&mut q, k, &less);
    } else {
        crate::stl_sort::nth_element(&mut q, k - 1, &less);
        crate::stl_sort::sort(&mut q[..k - 1], &less);
    }
    q[..k].iter().map(|p| p.1).collect()
}

/// The position PyTorch's CPU mode reports for a row: `(value, index)` pairs
/// put in order by `std::sort` on `value < value` (NaN compares false, so
/// where NaNs land is that algorithm's doing), then the first longest run of
/// equal values, its last pair. A NaN never equals its neighbour: each is a
/// run of one.
fn mode_pos<T: Element + PartialOrd>(row: &[T]) -> usize {
    let mut e: Vec<(T, usize)> = row.iter().copied().zip(0..).collect();
    crate::stl_sort::sort(&mut e, &|a: &(T, usize), b: &(T, usize)| a.0 < b.0);
    let (mut best, mut best_n, mut run) = (0usize, 0usize, 0usize);
    for i in 0..e.len() {
        run += 1;
        if i + 1 == e.len() || e[i].0 != e[i + 1].0 {
            if run > best_n {
                best = e[i].1;
                best_n = run;
            }
            run = 0;
        }
    }
    best
}

/// Position of the lower median (the first NaN if any).
fn median_pos<T: Element>(r: &[T]) -> usize {
    if let Some(p) = r.iter().position(|v| v != v) {
        return p;
    }
    order(r, false)[(r.len() - 1) / 2]
}

/// The positions `sel` picks from `row`, in output order.
fn pick<T: Element>(sel: RowSelect, row: &[T]) -> Vec<usize> {
    match sel {
        RowSelect::Sort { descending } => order(row, descending),
        RowSelect::Topk { k, largest } => topk_pos(row, k, largest),
        RowSelect::Kth { k } => vec![quick_select_pos(row, k)],
        RowSelect::Median => vec![median_pos(row)],
        RowSelect::Mode => vec![mode_pos(row)],
    }
}

/// See [`SortKernels::select_rows`](ferrotorch_core::backend::SortKernels::select_rows).
pub fn select_rows(sel: RowSelect, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
    const WHAT: &str = "select_rows";
    let shape = &x.layout.shape;
    let Some(&n) = shape.get(dim) else {
        return Err(Error::runtime("select_rows: dim out of range"));
    };
    let outer: usize = shape[..dim].iter().product();
    let inner: usize = shape[dim + 1..].iter().product();
    let k = sel.count(n);
    // SAFETY: the op layer passes live contiguous operands of the documented
    // dtypes and shapes; the outputs are fresh and alias nothing.
    let ix = unsafe { elems_mut::<i64>(WHAT, indices)? };
    if ix.len() != outer * k * inner {
        return Err(Error::runtime("internal error: select_rows outputs do not match the selection"));
    }
    dispatch_dtype!(dtype, T => {
        // SAFETY: as above.
        let (xs, vs) = unsafe { (elems::<T>(WHAT, x)?, elems_mut::<T>(WHAT, values)?) };
        // Row `r` is (outer `r / inner`, inner `r % inner`); rows are spread
        // over threads when the input is big enough to pay for it.
        let rows = outer * inner;
        let row_pick = |r: usize| {
            let (o, i) = (r / inner, r % inner);
            let row: Vec<T> = (0..n).map(|j| xs[(o * n + j) * inner + i]).collect();
            pick(sel, &row)
        };
        let picks: Vec<Vec<usize>> = if rows > 1 && rows * n >= crate::iter::GRAIN {
            crate::parallel::parallel_map(rows, row_pick)
        } else {
            (0..rows).map(row_pick).collect()
        };
        for (r, ps) in picks.into_iter().enumerate() {
            let (o, i) = (r / inner, r % inner);
            for (q, p) in ps.into_iter().enumerate() {
                let at = (o * k + q) * inner + i;
                vs[at] = xs[(o * n + p) * inner + i];
                ix[at] = p as i64;
            }
        }
    });
    Ok(())
}

/// The stably sorted order of `x`'s elements and, for each, whether it
/// starts a new distinct value (NaNs are all distinct, as in PyTorch).
fn unique_runs<T: Element>(xs: &[T]) -> (Vec<usize>, Vec<bool>) {
    let o = order(xs, false);
    let starts = o.iter().enumerate().map(|(q, &j)| q == 0 || xs[o[q - 1]] != xs[j]).collect();
    (o, starts)
}

/// See [`SortKernels::unique_count`](ferrotorch_core::backend::SortKernels::unique_count).
pub fn unique_count(x: Src, dtype: DType) -> Result<usize> {
    dispatch_dtype!(dtype, T => {
        // SAFETY: the op layer passes a live contiguous operand of `dtype`.
        let xs = unsafe { elems::<T>("unique", x)? };
        Ok(unique_runs(xs).1.iter().filter(|&&s| s).count())
    })
}

/// See [`SortKernels::unique`](ferrotorch_core::backend::SortKernels::unique).
pub fn unique(x: Src, dtype: DType, values: Dst, inverse: Dst, counts: Dst) -> Result<()> {
    const WHAT: &str = "unique";
    // SAFETY: the op layer passes live contiguous operands of the documented
    // dtypes and shapes; the outputs are fresh and alias nothing.
    let (inv, cnt) = unsafe { (elems_mut::<i64>(WHAT, inverse)?, elems_mut::<i64>(WHAT, counts)?) };
    dispatch_dtype!(dtype, T => {
        // SAFETY: as above.
        let (xs, vs) = unsafe { (elems::<T>(WHAT, x)?, elems_mut::<T>(WHAT, values)?) };
        let (o, starts) = unique_runs(xs);
        if inv.len() != xs.len() || starts.iter().filter(|&&s| s).count() != vs.len() || cnt.len() != vs.len() {
            return Err(Error::runtime("internal error: unique outputs do not match the input"));
        }
        let mut u = 0usize;
        for (q, &j) in o.iter().enumerate() {
            if starts[q] {
                if q > 0 {
                    u += 1;
                }
                vs[u] = xs[j];
                cnt[u] = 0;
            }
            cnt[u] += 1;
            inv[j] = u as i64;
        }
    });
    Ok(())
}
