//! Order statistics along one dim: sort, argsort, topk, kthvalue, median,
//! mode, and unique; plus the gather / scatter-add pair their gradients use.
//!
//! NaN sorts as the largest value, as in PyTorch. Sorting is always stable.

use super::reduction::{record_indexed, scan_rows, Rows};
use crate::autograd::{record, rule, GradModeGuard};
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
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

/// Row-major coordinates of every element of `shape`, visited in order.
fn for_each_coord(shape: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let n: usize = shape.iter().product();
    let mut c = vec![0usize; shape.len()];
    for lin in 0..n {
        f(lin, &c);
        for d in (0..shape.len()).rev() {
            c[d] += 1;
            if c[d] < shape[d] {
                break;
            }
            c[d] = 0;
        }
    }
}

fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

fn indices_of(idx: &Tensor) -> Result<Vec<i64>> {
    idx.to_dtype(DType::Int64)?.to_vec::<i64>()
}

/// `zeros(shape).scatter_add_(d, idx, src)`; records `ScatterAddBackward0`
/// (whose gradient is a gather), so double backward works.
pub(crate) fn scatter_add_dim(shape: &[usize], d: usize, idx: &Tensor, src: &Tensor) -> Result<Tensor> {
    let out = {
        let _no_grad = GradModeGuard::new(false);
        let ix = indices_of(idx)?;
        let sv = src.to_f64_vec()?;
        let st = contiguous_strides(shape);
        let mut acc = vec![0.0f64; shape.iter().product()];
        let mut bad = None;
        for_each_coord(idx.shape(), |lin, c| {
            let i = ix[lin];
            if i < 0 || i as usize >= shape[d] {
                bad = Some(i);
                return;
            }
            let off: usize = c.iter().enumerate().map(|(k, &v)| if k == d { i as usize } else { v } * st[k]).sum();
            acc[off] += sv[lin];
        });
        if let Some(i) = bad {
            return Err(Error::index(format!("index {i} is out of bounds for dimension {d} with size {}", shape[d])));
        }
        Tensor::from_vec(acc, shape)?.to_dtype(src.dtype())?
    };
    let idx = idx.clone();
    record("ScatterAddBackward0", &[Some(src)], &[&out], move || {
        rule(move |_, g| {
            let Some(g) = super::arith_grad::g0(g) else { return Ok(vec![None]) };
            Ok(vec![Some(gather_dim(&g, d, &idx)?)])
        })
    });
    Ok(out)
}

/// `x.gather(d, idx)`; records `GatherBackward0` (a scatter-add).
pub(crate) fn gather_dim(x: &Tensor, d: usize, idx: &Tensor) -> Result<Tensor> {
    let out = {
        let _no_grad = GradModeGuard::new(false);
        let ix = indices_of(idx)?;
        let xc = x.contiguous()?;
        let st = contiguous_strides(x.shape());
        let n = x.shape().get(d).copied().unwrap_or(1);
        dispatch_dtype!(x.dtype(), T => {
            // SAFETY: xc is contiguous with numel elements of T.
            let xs = unsafe { std::slice::from_raw_parts(xc.data_ptr() as *const T, xc.numel()) };
            let mut v = Vec::with_capacity(ix.len());
            let mut bad = None;
            for_each_coord(idx.shape(), |lin, c| {
                let i = ix[lin];
                if i < 0 || i as usize >= n {
                    bad = Some(i);
                    v.push(T::zero());
                    return;
                }
                let off: usize = c.iter().enumerate().map(|(k, &cv)| if k == d { i as usize } else { cv } * st[k]).sum();
                v.push(xs[off]);
            });
            if let Some(i) = bad {
                return Err(Error::index(format!("index {i} is out of bounds for dimension {d} with size {n}")));
            }
            Tensor::from_vec(v, idx.shape())?
        })
    };
    let (shape, idx) = (x.shape().to_vec(), idx.clone());
    record("GatherBackward0", &[Some(x)], &[&out], move || {
        rule(move |_, g| {
            let Some(g) = super::arith_grad::g0(g) else { return Ok(vec![None]) };
            Ok(vec![Some(scatter_add_dim(&shape, d, &idx, &g)?)])
        })
    });
    Ok(out)
}

/// Per-row selection: for each row, the `k` chosen positions (in output order).
///
/// The output shape comes from `(x.shape, d, k)` alone, never from the picked
/// rows, so inputs with no rows (a zero-size dim other than `d`) keep their
/// shape. A 0-d tensor is one row of one element: every op here returns that
/// element at index 0, whatever `k` (PyTorch's `topk(0)` of a 0-d tensor too).
fn select_rows(x: &Tensor, d: usize, k: usize, pick: impl Fn(DType, &Rows) -> Vec<Vec<usize>>) -> Result<(Tensor, Tensor)> {
    let _no_grad = GradModeGuard::new(false);
    if x.ndim() == 0 {
        return Ok((x.detach().clone_data()?, Tensor::zeros(&[], DType::Int64, x.device())?));
    }
    let (rows, _) = scan_rows(x, d)?;
    let sel = pick(x.dtype(), &rows);
    // Output rows in the permuted layout: kept dims then d.
    let mut permuted: Vec<usize> = (0..x.ndim()).filter(|&j| j != d).map(|j| x.shape()[j]).collect();
    permuted.push(k);
    let n = rows.inner;
    let (vals, idx) = dispatch_dtype!(x.dtype(), T => {
        let data = rows.data::<T>();
        let mut v = Vec::with_capacity(rows.outer * k);
        let mut ix = Vec::with_capacity(rows.outer * k);
        for (r, s) in sel.iter().enumerate() {
            debug_assert_eq!(s.len(), k);
            for &j in s {
                v.push(data[r * n + j]);
                ix.push(j as i64);
            }
        }
        (Tensor::from_vec(v, &permuted)?, Tensor::from_vec(ix, &permuted)?)
    });
    // Undo the permutation: the rows layout has d last.
    let nd = x.ndim();
    let perm: Vec<i64> = (0..nd).map(|j| if j == d { (nd - 1) as i64 } else if j < d { j as i64 } else { (j - 1) as i64 }).collect();
    let back = |t: &Tensor| -> Result<Tensor> { t.permute(&perm)?.contiguous() };
    Ok((back(&vals)?, back(&idx)?))
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
        super::stl_sort::partial_sort(&mut q, k, &less);
    } else {
        super::stl_sort::nth_element(&mut q, k - 1, &less);
        super::stl_sort::sort(&mut q[..k - 1], &less);
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
    super::stl_sort::sort(&mut e, &|a: &(T, usize), b: &(T, usize)| a.0 < b.0);
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

fn check_dim_nonempty(name: &str, x: &Tensor, d: usize) -> Result<()> {
    if x.ndim() > 0 && x.shape()[d] == 0 {
        return Err(Error::index(format!("{name}(): Expected reduction dim {d} to have non-zero size.")));
    }
    Ok(())
}

impl Tensor {
    /// `sort(dim, descending, stable)`: values and int64 indices. Records `SortBackward0`.
    pub fn sort_dim(&self, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        let n = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        let (v, i) = select_rows(self, d, n, |dt, rows| dispatch_dtype!(dt, T => rows.map::<T, Vec<usize>>(|r| order(r, descending))))?;
        record_indexed("SortBackward0", self, &v, &i, d, true);
        Ok((v, i))
    }

    /// `topk(k, dim, largest, sorted)`. Records `TopkBackward0`.
    pub fn topk(&self, k: i64, dim: i64, largest: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        let n = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        if k < 0 || k as usize > n {
            return Err(Error::runtime("selected index k out of range"));
        }
        let k = k as usize;
        let (v, i) = select_rows(self, d, k, |dt, rows| dispatch_dtype!(dt, T => rows.map::<T, Vec<usize>>(|r| topk_pos(r, k, largest))))?;
        record_indexed("TopkBackward0", self, &v, &i, d, true);
        Ok((v, i))
    }

    /// `kthvalue(k, dim, keepdim)` (k-th smallest, 1-based). Records `KthvalueBackward0`.
    pub fn kthvalue(&self, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        check_dim_nonempty("kthvalue", self, d)?;
        let n = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        if k < 1 || k as usize > n {
            return Err(Error::runtime(format!("kthvalue(): selected number k out of range for dimension {d}")));
        }
        let k = k as usize;
        self.pick_one("KthvalueBackward0", d, keepdim, move |dt, rows| {
            dispatch_dtype!(dt, T => rows.map::<T, Vec<usize>>(|r| vec![quick_select_pos(r, k - 1)]))
        })
    }

    /// `median(dim, keepdim)`: the lower median, NaN if the row has one.
    /// Records `MedianBackward1`.
    pub fn median_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        check_dim_nonempty("median", self, d)?;
        self.pick_one("MedianBackward1", d, keepdim, |dt, rows| dispatch_dtype!(dt, T => rows.map::<T, Vec<usize>>(|r| vec![median_pos(r)])))
    }

    /// `median()` over every element (NaN if any). Records `MedianBackward0`.
    pub fn median_all(&self) -> Result<Tensor> {
        let out = {
            let _no_grad = GradModeGuard::new(false);
            if self.numel() == 0 {
                // PyTorch fills NaN and casts it like any float->int store
                // (x86: INT_MIN for signed ints, 0 for uint8, True for bool).
                Tensor::full(&[], ferrotorch_core::Scalar::Float(f64::NAN), DType::Float64, self.device())?.to_dtype(self.dtype())?
            } else {
                self.reshape(&[-1])?.median_dim(0, false)?.0
            }
        };
        super::reduction::record_even_pub(self, "MedianBackward0", &out);
        Ok(out)
    }

    /// `mode(dim, keepdim)`: the most frequent value (smallest on ties) and its
    /// last index. Records `ModeBackward0`.
    pub fn mode(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        check_dim_nonempty("mode", self, d)?;
        self.pick_one("ModeBackward0", d, keepdim, |dt, rows| dispatch_dtype!(dt, T => rows.map::<T, Vec<usize>>(|r| vec![mode_pos(r)])))
    }

    /// Selects one position per row along `d` and records `name`.
    fn pick_one(&self, name: &'static str, d: usize, keepdim: bool, pick: impl Fn(DType, &Rows) -> Vec<Vec<usize>>) -> Result<(Tensor, Tensor)> {
        let (v, i) = select_rows(self, d, 1, pick)?;
        let (v, i) = if keepdim || self.ndim() == 0 { (v, i) } else { (v.squeeze(Some(&[d as i64]))?, i.squeeze(Some(&[d as i64]))?) };
        let (v, i) = (v.detach(), i.detach());
        record_indexed(name, self, &v, &i, d, keepdim);
        Ok((v, i))
    }

    /// `unique(sorted, return_inverse, return_counts)` over the flattened tensor:
    /// (values, inverse indices shaped like the input, counts).
    pub fn unique(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let _no_grad = GradModeGuard::new(false);
        let flat = self.reshape(&[-1])?.contiguous()?;
        dispatch_dtype!(self.dtype(), T => {
            // SAFETY: flat is contiguous with numel elements of T.
            let xs = unsafe { std::slice::from_raw_parts(flat.data_ptr() as *const T, flat.numel()) };
            let o = order(xs, false);
            let mut vals: Vec<T> = Vec::new();
            let mut counts: Vec<i64> = Vec::new();
            let mut inv = vec![0i64; xs.len()];
            for &j in &o {
                // NaNs are all distinct, as in PyTorch.
                let same = vals.last().is_some_and(|l| *l == xs[j]);
                if !same {
                    vals.push(xs[j]);
                    counts.push(0);
                }
                *counts.last_mut().unwrap_or(&mut 0) += 1;
                inv[j] = vals.len() as i64 - 1;
            }
            let n = vals.len();
            let shape: Vec<i64> = self.shape().iter().map(|&s| s as i64).collect();
            Ok((Tensor::from_vec(vals, &[n])?, Tensor::from_vec(inv, &[xs.len()])?.reshape(&shape)?, Tensor::from_vec(counts, &[n])?))
        })
    }
}

/// Position of the lower median (the first NaN if any).
fn median_pos<T: Element>(r: &[T]) -> usize {
    if let Some(p) = r.iter().position(|v| v != v) {
        return p;
    }
    order(r, false)[(r.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn sort_is_stable_with_nan_last_and_median_is_the_lower_one() {
        let x = Tensor::from_vec(vec![2.0f64, f64::NAN, 1.0, 2.0, 0.5], &[5]).unwrap();
        let (v, i) = x.sort_dim(0, false).unwrap();
        let v = v.to_f64_vec().unwrap();
        assert_eq!(&v[..4], &[0.5, 1.0, 2.0, 2.0]);
        assert!(v[4].is_nan());
        assert_eq!(i.to_vec::<i64>().unwrap(), vec![4, 2, 0, 3, 1]);
        let y = Tensor::from_vec(vec![4.0f64, 1.0, 3.0, 2.0], &[4]).unwrap();
        assert_eq!(y.median_all().unwrap().to_f64_vec().unwrap(), vec![2.0]);
        let m = Tensor::from_vec(vec![3i64, 1, 3, 1, 2], &[5]).unwrap();
        let (mv, mi) = m.mode(0, false).unwrap();
        assert_eq!((mv.to_vec::<i64>().unwrap(), mi.to_vec::<i64>().unwrap()), (vec![1], vec![3]));
    }

    #[test]
    fn unique_counts_and_inverse() {
        let x = Tensor::from_vec(vec![3i64, 1, 3, 2], &[2, 2]).unwrap();
        let (v, inv, c) = x.unique().unwrap();
        assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 2, 3]);
        assert_eq!(inv.shape(), &[2, 2]);
        assert_eq!(inv.to_vec::<i64>().unwrap(), vec![2, 0, 2, 1]);
        assert_eq!(c.to_vec::<i64>().unwrap(), vec![1, 1, 2]);
    }
}
