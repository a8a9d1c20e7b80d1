//! Matrix products: `mm`, `bmm`, `matmul` (PyTorch's rules for 1-D/2-D/N-D).

use super::check_cpu;
use super::creation::pretty;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{dispatch_dtype, DType, Device, Error, Result};
use ferrotorch_cpu::matmul::{matmul as kernel, Mat};

fn mat(t: &Tensor, batch_off: isize) -> Mat {
    let n = t.ndim();
    // SAFETY: batch_off addresses a matrix inside t's layout.
    let ptr = unsafe { (t.data_ptr_mut()).offset(batch_off * t.dtype().itemsize() as isize) };
    Mat { ptr, rs: t.strides()[n - 2], cs: t.strides()[n - 1] }
}

impl Tensor {
    /// `mm(self, other)` for two 2-D tensors of one dtype.
    pub fn mm(&self, other: &Tensor) -> Result<Tensor> {
        check_cpu("mm", &[self, other])?;
        if self.ndim() != 2 {
            return Err(Error::runtime(format!("self must be a matrix")));
        }
        if other.ndim() != 2 {
            return Err(Error::runtime(format!("mat2 must be a matrix")));
        }
        self.bmm_impl(other, "mm")
    }

    /// `bmm(self, other)` for two 3-D tensors.
    pub fn bmm(&self, other: &Tensor) -> Result<Tensor> {
        check_cpu("bmm", &[self, other])?;
        if self.ndim() != 3 || other.ndim() != 3 {
            return Err(Error::runtime(format!(
                "batch1 must be a 3D tensor, got {}D and {}D",
                self.ndim(),
                other.ndim()
            )));
        }
        if self.shape()[0] != other.shape()[0] {
            return Err(Error::runtime(format!(
                "batch1 and batch2 must have same number of batches, got {} and {}",
                self.shape()[0],
                other.shape()[0]
            )));
        }
        self.bmm_impl(other, "bmm")
    }

    /// Shared by mm/bmm/matmul: inputs are 2-D, or N-D with equal batch dims.
    fn bmm_impl(&self, other: &Tensor, op: &str) -> Result<Tensor> {
        if self.dtype() != other.dtype() {
            return Err(Error::runtime(format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                pretty_long(self.dtype()),
                pretty_long(other.dtype())
            )));
        }
        let n = self.ndim();
        let (m, k) = (self.shape()[n - 2], self.shape()[n - 1]);
        let (k2, p) = (other.shape()[n - 2], other.shape()[n - 1]);
        if k != k2 {
            let a = format!("{}x{}", m, k);
            let b = format!("{}x{}", k2, p);
            let _ = op;
            return Err(Error::runtime(format!(
                "mat1 and mat2 shapes cannot be multiplied ({a} and {b})"
            )));
        }
        let batch: Vec<usize> = self.shape()[..n - 2].to_vec();
        let mut out_shape = batch.clone();
        out_shape.extend([m, p]);
        let dtype = self.dtype();
        let compute = if dtype == DType::BFloat16 { DType::Float32 } else { dtype };
        let (a, b) = (self.to_dtype(compute)?, other.to_dtype(compute)?);
        let out = Tensor::empty(&out_shape, compute, Device::CPU)?;
        let nb: usize = batch.iter().product();
        for bi in 0..nb {
            let (mut oa, mut ob, mut oo) = (0isize, 0isize, 0isize);
            let mut rem = bi;
            for d in (0..batch.len()).rev() {
                let i = (rem % batch[d]) as isize;
                rem /= batch[d];
                oa += i * a.strides()[d];
                ob += i * b.strides()[d];
                oo += i * out.strides()[d];
            }
            dispatch_dtype!(compute, T => {
                // SAFETY: all three matrices lie inside their tensors' layouts; out is fresh.
                unsafe { kernel::<T>(m, p, k, mat(&out, oo), mat(&a, oa), mat(&b, ob)) }
            });
        }
        out.to_dtype(dtype)
    }

    /// `matmul(self, other)` with PyTorch's rules for 1-D and batched operands.
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        check_cpu("matmul", &[self, other])?;
        let (da, db) = (self.ndim(), other.ndim());
        if da == 0 || db == 0 {
            return Err(Error::runtime(format!(
                "both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
            )));
        }
        if da == 1 && db == 1 {
            if self.shape()[0] != other.shape()[0] {
                return Err(Error::runtime(format!(
                    "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                    self.shape()[0], other.shape()[0], self.shape()[0], other.shape()[0]
                )));
            }
            return self.unsqueeze(0)?.bmm_impl(&other.unsqueeze(1)?, "dot")?.reshape(&[]);
        }
        let a = if da == 1 { self.unsqueeze(0)? } else { self.clone() };
        let b = if db == 1 { other.unsqueeze(1)? } else { other.clone() };
        let (na, nb) = (a.ndim(), b.ndim());
        if a.shape()[na - 1] != b.shape()[nb - 2] {
            return Err(Error::runtime(format!(
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a.shape()[..na - 1].iter().product::<usize>(),
                a.shape()[na - 1],
                b.shape()[nb - 2],
                b.shape()[nb - 1]
            )));
        }
        let batch = broadcast_shapes(&a.shape()[..na - 2], &b.shape()[..nb - 2]).map_err(|_| {
            Error::runtime(format!(
                "The size of tensor a must match the size of tensor b for batch dims: {} and {}",
                fmt_shape(self.shape()),
                fmt_shape(other.shape())
            ))
        })?;
        let mut sa: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
        let mut sb = sa.clone();
        sa.extend([a.shape()[na - 2] as i64, a.shape()[na - 1] as i64]);
        sb.extend([b.shape()[nb - 2] as i64, b.shape()[nb - 1] as i64]);
        let r = a.expand(&sa)?.bmm_impl(&b.expand(&sb)?, "matmul")?;
        // Drop the dims that were added for 1-D operands.
        let mut shape: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
        if da > 1 {
            shape.push(a.shape()[na - 2] as i64);
        }
        if db > 1 {
            shape.push(b.shape()[nb - 1] as i64);
        }
        r.reshape(&shape)
    }
}

fn pretty_long(d: DType) -> &'static str {
    pretty(d)
}
