//! Order statistics along one dim: sort, argsort, topk, kthvalue, median,
//! mode, and unique; plus the gather / scatter-add pair their gradients use.
//!
//! NaN sorts as the largest value, as in PyTorch. Sorting is always stable.
//! The tensor's backend picks the positions ([`SortKernels`](ferrotorch_core::backend::SortKernels)).

use super::reduction::record_indexed;
use crate::autograd::GradModeGuard;
use crate::Tensor;
use ferrotorch_core::error::wrap_dim;
use ferrotorch_core::op::sort::RowSelect;
use ferrotorch_core::{DType, Error, Result};

/// `zeros(shape).scatter_add_(d, idx, src)`; records `ScatterAddBackward0`
/// (whose gradient is a gather), so double backward works.
pub(crate) fn scatter_add_dim(shape: &[usize], d: usize, idx: &Tensor, src: &Tensor) -> Result<Tensor> {
    let z = Tensor::zeros(shape, src.dtype(), src.device())?;
    z.scatter_add(d as i64, idx, src)
}

/// Per-row selection on the tensor's backend: for each row along `d`, the
/// positions `sel` picks (int64) and their values, shaped like `x` with `d`
/// of size `sel.count(n)`.
///
/// The output shape comes from `(x.shape, d, sel)` alone, never from the
/// picked rows, so inputs with no rows (a zero-size dim other than `d`) keep
/// their shape. A 0-d tensor is one row of one element: every op here
/// returns that element at index 0, whatever `k` (PyTorch's `topk(0)` of a
/// 0-d tensor too).
fn select_rows(x: &Tensor, d: usize, sel: RowSelect) -> Result<(Tensor, Tensor)> {
    let _no_grad = GradModeGuard::new(false);
    if x.ndim() == 0 {
        return Ok((x.detach().clone_data()?, Tensor::zeros(&[], DType::Int64, x.device())?));
    }
    let xc = x.contiguous()?;
    let mut shape = x.shape().to_vec();
    shape[d] = sel.count(shape[d]);
    let values = Tensor::empty(&shape, x.dtype(), x.device())?;
    let indices = Tensor::empty(&shape, DType::Int64, x.device())?;
    values.backend()?.select_rows(sel, xc.operand()?.src(), x.dtype(), d, values.operand_mut()?.dst(), indices.operand_mut()?.dst())?;
    Ok((values, indices))
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
        let (v, i) = select_rows(self, d, RowSelect::Sort { descending })?;
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
        let (v, i) = select_rows(self, d, RowSelect::Topk { k, largest })?;
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
        self.pick_one("KthvalueBackward0", d, keepdim, RowSelect::Kth { k: k - 1 })
    }

    /// `median(dim, keepdim)`: the lower median, NaN if the row has one.
    /// Records `MedianBackward1`.
    pub fn median_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.ndim())?;
        check_dim_nonempty("median", self, d)?;
        self.pick_one("MedianBackward1", d, keepdim, RowSelect::Median)
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
        self.pick_one("ModeBackward0", d, keepdim, RowSelect::Mode)
    }

    /// Selects one position per row along `d` and records `name`.
    fn pick_one(&self, name: &'static str, d: usize, keepdim: bool, sel: RowSelect) -> Result<(Tensor, Tensor)> {
        let (v, i) = select_rows(self, d, sel)?;
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
        let (b, dt, device) = (flat.backend()?, self.dtype(), self.device());
        let n = b.unique_count(flat.operand()?.src(), dt)?;
        let values = Tensor::empty(&[n], dt, device)?;
        let inverse = Tensor::empty(&[flat.numel()], DType::Int64, device)?;
        let counts = Tensor::empty(&[n], DType::Int64, device)?;
        b.unique(flat.operand()?.src(), dt, values.operand_mut()?.dst(), inverse.operand_mut()?.dst(), counts.operand_mut()?.dst())?;
        let shape: Vec<i64> = self.shape().iter().map(|&s| s as i64).collect();
        Ok((values, inverse.reshape(&shape)?, counts))
    }
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
