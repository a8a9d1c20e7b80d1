//! Matrix products: `mm`, `bmm`, `matmul` (PyTorch's rules for 1-D/2-D/N-D).

use super::check_cpu;
use super::creation::pretty;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{dispatch_dtype, DType, Device, Error, Result};
use ferrotorch_cpu::matmul::{matmul_threads as kernel_threads, Mat};
use super::arith_grad::{g0, reduce_grad};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};

fn mat(t: &Tensor, batch_off: isize) -> Mat {
    let n = t.ndim();
    // SAFETY: batch_off addresses a matrix inside t's layout.
    let ptr = unsafe { (t.data_ptr_mut()).offset(batch_off * t.dtype().itemsize() as isize) };
    Mat { ptr, rs: t.strides()[n - 2], cs: t.strides()[n - 1] }
}

impl Tensor {
    /// `mm(self, other)` for two 2-D tensors of one dtype (records `MmBackward0`).
    pub fn mm(&self, other: &Tensor) -> Result<Tensor> {
        check_cpu("mm", &[self, other])?;
        if self.ndim() != 2 {
            return Err(Error::runtime("self must be a matrix"));
        }
        if other.ndim() != 2 {
            return Err(Error::runtime("mat2 must be a matrix"));
        }
        let out = self.bmm_impl(other, "mm")?;
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(other));
        let (wa, wb) = (self.requires_grad(), other.requires_grad());
        record("MmBackward0", &[Some(self), Some(other)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(g.mm(&sb.unpack(node)?.t()?)?) } else { None };
                let gb = if wb { Some(sa.unpack(node)?.t()?.mm(&g)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// `bmm(self, other)` for two 3-D tensors (records `BmmBackward0`).
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
        let out = self.bmm_impl(other, "bmm")?;
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(other));
        let (wa, wb) = (self.requires_grad(), other.requires_grad());
        record("BmmBackward0", &[Some(self), Some(other)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(g.bmm(&sb.unpack(node)?.transpose(1, 2)?)?) } else { None };
                let gb = if wb { Some(sa.unpack(node)?.transpose(1, 2)?.bmm(&g)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// `addmm(self, mat1, mat2, beta=1, alpha=1)` with unit scales: `self + mat1 @ mat2`
    /// (records `AddmmBackward0`, what `nn.Linear` shows).
    pub fn addmm(&self, mat1: &Tensor, mat2: &Tensor) -> Result<Tensor> {
        let out = {
            let _no_grad = GradModeGuard::new(false);
            // float16/bfloat16: product and bias added in float32, rounded once (PyTorch's gemm).
            let work = crate::ops::arith::opmath(mat1.dtype());
            if work != mat1.dtype() {
                let r = mat1.to_dtype(work)?.mm(&mat2.to_dtype(work)?)?;
                let b = if self.dtype() == mat1.dtype() { self.to_dtype(work)? } else { self.clone() };
                let r = r.add(&b)?;
                if r.dtype() == work { r.to_dtype(mat1.dtype())? } else { r }
            } else {
                mat1.mm(mat2)?.add(self)?
            }
        };
        let bias_shape = self.shape().to_vec();
        let (s1, s2) = (SavedTensor::input(mat1), SavedTensor::input(mat2));
        let (wb, w1, w2) = (self.requires_grad(), mat1.requires_grad(), mat2.requires_grad());
        let dt = self.dtype();
        record("AddmmBackward0", &[Some(self), Some(mat1), Some(mat2)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
                let gbias = if wb { Some(reduce_grad(&g, &bias_shape, dt)?) } else { None };
                let g1 = if w1 { Some(g.mm(&s2.unpack(node)?.t()?)?) } else { None };
                let g2 = if w2 { Some(s1.unpack(node)?.t()?.mm(&g)?) } else { None };
                Ok(vec![gbias, g1, g2])
            })
        });
        Ok(out)
    }

    /// Shared by mm/bmm/matmul: inputs are 2-D, or N-D with equal batch dims.
    fn bmm_impl(&self, other: &Tensor, op: &str) -> Result<Tensor> {
        let _no_grad = GradModeGuard::new(false);
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
        if self.dtype() == DType::Bool {
            // PyTorch's mm/bmm/mv return before reaching the (missing) boolean
            // kernel when there is nothing to multiply: an empty result, or an
            // empty inner dim (all-False result). `dot` has no such early exit.
            if op != "dot" && (k == 0 || out_shape.contains(&0)) {
                return Tensor::zeros(&out_shape, DType::Bool, Device::CPU);
            }
            // PyTorch has no boolean GEMM: every product (einsum and tensordot
            // included) fails here, named after the CPU kernel it reaches.
            let kernel = match op {
                "bmm" => "bmm",
                "dot" => "dot",
                "mv" => "addmv_impl_cpu",
                _ => "addmm_impl_cpu_",
            };
            return Err(Error::not_implemented(format!("\"{kernel}\" not implemented for 'Bool'")));
        }
        let dtype = self.dtype();
        let compute = if dtype == DType::BFloat16 { DType::Float32 } else { dtype };
        let (a, b) = (self.to_dtype(compute)?, other.to_dtype(compute)?);
        let out = Tensor::empty(&out_shape, compute, Device::CPU)?;
        let nb: usize = batch.iter().product();
        let offsets = |bi: usize| {
            let (mut oa, mut ob, mut oo) = (0isize, 0isize, 0isize);
            let mut rem = bi;
            for d in (0..batch.len()).rev() {
                let i = (rem % batch[d]) as isize;
                rem /= batch[d];
                oa += i * a.strides()[d];
                ob += i * b.strides()[d];
                oo += i * out.strides()[d];
            }
            (oa, ob, oo)
        };
        // Many small products run one per thread; big ones thread inside GEMM.
        let per_batch = m.saturating_mul(p).saturating_mul(k);
        let across_batch = nb >= 2 && per_batch <= 256 * 256 * 256 && rayon::current_num_threads() > 1;
        dispatch_dtype!(compute, T => {
            if across_batch {
                use rayon::prelude::*;
                (0..nb).into_par_iter().for_each(|bi| {
                    let (oa, ob, oo) = offsets(bi);
                    // SAFETY: all three matrices lie inside their tensors'
                    // layouts; out is fresh and each batch writes its own matrix.
                    unsafe { kernel_threads::<T>(m, p, k, mat(&out, oo), mat(&a, oa), mat(&b, ob), false) }
                });
            } else {
                for bi in 0..nb {
                    let (oa, ob, oo) = offsets(bi);
                    // SAFETY: as above.
                    unsafe { kernel_threads::<T>(m, p, k, mat(&out, oo), mat(&a, oa), mat(&b, ob), true) }
                }
            }
        });
        out.to_dtype(dtype)
    }

    /// `matmul(self, other)` with PyTorch's rules for 1-D and batched operands,
    /// built from differentiable pieces (dot, mv, mm, bmm, views).
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        check_cpu("matmul", &[self, other])?;
        let (da, db) = (self.ndim(), other.ndim());
        if da == 0 || db == 0 {
            return Err(Error::runtime(format!(
                "both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
            )));
        }
        match (da, db) {
            (1, 1) => return self.dot(other),
            (2, 2) => return self.mm(other),
            (2, 1) => return self.mv(other),
            (1, 2) => return self.unsqueeze(0)?.mm(other)?.squeeze(Some(&[0])),
            _ => {}
        }
        let a = if da == 1 { self.unsqueeze(0)? } else { self.clone() };
        let b = if db == 1 { other.unsqueeze(1)? } else { other.clone() };
        let (na, nb) = (a.ndim(), b.ndim());
        let (n, k) = (a.shape()[na - 2], a.shape()[na - 1]);
        let (k2, p) = (b.shape()[nb - 2], b.shape()[nb - 1]);
        if k != k2 {
            return Err(Error::runtime(format!(
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                a.shape()[..na - 1].iter().product::<usize>(),
                k,
                k2,
                p
            )));
        }
        let batch = broadcast_shapes(&a.shape()[..na - 2], &b.shape()[..nb - 2]).map_err(|_| {
            Error::runtime(format!(
                "The size of tensor a must match the size of tensor b for batch dims: {} and {}",
                fmt_shape(self.shape()),
                fmt_shape(other.shape())
            ))
        })?;
        let bsz: usize = batch.iter().product();
        let mut sa: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
        let mut sb = sa.clone();
        sa.extend([n as i64, k as i64]);
        sb.extend([k as i64, p as i64]);
        let a3 = a.expand(&sa)?.reshape(&[bsz as i64, n as i64, k as i64])?;
        let b3 = b.expand(&sb)?.reshape(&[bsz as i64, k as i64, p as i64])?;
        let r = a3.bmm(&b3)?;
        // Drop the dims that were added for 1-D operands.
        let mut shape: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
        if da > 1 {
            shape.push(n as i64);
        }
        if db > 1 {
            shape.push(p as i64);
        }
        r.reshape(&shape)
    }

    /// `dot(self, other)` of two 1-D tensors (records `DotBackward0`).
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        if self.ndim() != 1 || other.ndim() != 1 {
            return Err(Error::runtime(format!(
                "1D tensors expected, but got {}D and {}D tensors",
                self.ndim(),
                other.ndim()
            )));
        }
        if self.shape()[0] != other.shape()[0] {
            return Err(Error::runtime(format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                self.shape()[0], other.shape()[0], self.shape()[0], other.shape()[0]
            )));
        }
        let out = {
            let _no_grad = GradModeGuard::new(false);
            self.unsqueeze(0)?.bmm_impl(&other.unsqueeze(1)?, "dot")?.reshape(&[])?
        };
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(other));
        let (wa, wb) = (self.requires_grad(), other.requires_grad());
        record("DotBackward0", &[Some(self), Some(other)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(sb.unpack(node)?.mul(&g)?) } else { None };
                let gb = if wb { Some(sa.unpack(node)?.mul(&g)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// `mv(self, vec)`: matrix times vector (records `MvBackward0`).
    pub fn mv(&self, vec: &Tensor) -> Result<Tensor> {
        if self.ndim() != 2 || vec.ndim() != 1 {
            return Err(Error::runtime(format!(
                "vector + matrix @ vector expected, got {}, {}, {}",
                1,
                self.ndim(),
                vec.ndim()
            )));
        }
        let out = {
            let _no_grad = GradModeGuard::new(false);
            if self.shape()[1] != vec.shape()[0] {
                return Err(Error::runtime(format!(
                    "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                    self.shape()[0], self.shape()[0], self.shape()[1], vec.shape()[0]
                )));
            }
            self.bmm_impl(&vec.unsqueeze(1)?, "mv")?.reshape(&[self.shape()[0] as i64])?
        };
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(vec));
        let (wa, wb) = (self.requires_grad(), vec.requires_grad());
        record("MvBackward0", &[Some(self), Some(vec)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(g.unsqueeze(1)?.mm(&sb.unpack(node)?.unsqueeze(0)?)?) } else { None };
                let gb = if wb { Some(sa.unpack(node)?.t()?.mv(&g)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }
}

fn pretty_long(d: DType) -> &'static str {
    pretty(d)
}
