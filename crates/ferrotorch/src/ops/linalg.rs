//! Matrix products: `mm`, `bmm`, `matmul` (PyTorch's rules for 1-D/2-D/N-D),
//! and the singular value decomposition (`linalg.svd`, `linalg.svdvals`).

use super::common_device;
use super::creation::pretty;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::op::linalg::SvdSpec;
use ferrotorch_core::{DType, Error, Result, Scalar};
use super::arith_grad::{g0, reduce_grad};
use crate::autograd::{record, rule, GradModeGuard, SavedTensor};

/// Is `t` a column-major matrix (a transposed contiguous one, as the weight
/// `linear` multiplies by)? PyTorch's `mm_mat1_backward`/`mm_mat2_backward`
/// test exactly this.
fn col_major(t: &Tensor) -> bool {
    t.ndim() == 2 && t.strides()[0] == 1 && t.strides()[1] == t.shape()[0] as isize
}

/// The gradient of `mat1` in `mat1 @ mat2`: `g @ mat2ᵀ`, computed as
/// `(mat2 @ gᵀ)ᵀ` when `mat1` is column-major so it comes out in that layout
/// (accumulating it into a transposed weight's grad then reads memory in order).
fn mm_mat1_grad(g: &Tensor, mat2: &Tensor, mat1_col_major: bool) -> Result<Tensor> {
    if mat1_col_major {
        mat2.mm(&g.t()?)?.t()
    } else {
        g.mm(&mat2.t()?)
    }
}

/// The gradient of `mat2` in `mat1 @ mat2`: `mat1ᵀ @ g`, or `(gᵀ @ mat1)ᵀ`
/// when `mat2` is column-major (see [`mm_mat1_grad`]).
fn mm_mat2_grad(g: &Tensor, mat1: &Tensor, mat2_col_major: bool) -> Result<Tensor> {
    if mat2_col_major {
        g.t()?.mm(mat1)?.t()
    } else {
        mat1.t()?.mm(g)
    }
}

impl Tensor {
    /// `mm(self, other)` for two 2-D tensors of one dtype (records `MmBackward0`).
    pub fn mm(&self, other: &Tensor) -> Result<Tensor> {
        common_device(&[self, other])?;
        if self.ndim() != 2 {
            return Err(Error::runtime("self must be a matrix"));
        }
        if other.ndim() != 2 {
            return Err(Error::runtime("mat2 must be a matrix"));
        }
        let out = self.bmm_impl(other, "mm")?;
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(other));
        let (wa, wb) = (self.requires_grad(), other.requires_grad());
        let (a_cm, b_cm) = (col_major(self), col_major(other));
        record("MmBackward0", &[Some(self), Some(other)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                let ga = if wa { Some(mm_mat1_grad(&g, &sb.unpack(node)?, a_cm)?) } else { None };
                let gb = if wb { Some(mm_mat2_grad(&g, &sa.unpack(node)?, b_cm)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// `bmm(self, other)` for two 3-D tensors (records `BmmBackward0`).
    pub fn bmm(&self, other: &Tensor) -> Result<Tensor> {
        let device = common_device(&[self, other])?;
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
        if self.shape()[2] != other.shape()[1] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                self.shape()[0],
                self.shape()[2],
                other.shape()[0],
                other.shape()[1]
            )));
        }
        let out = if self.dtype() != other.dtype() {
            // PyTorch's bmm allocates its result with batch2's dtype and returns
            // zeros before its kernel (which needs one dtype) when there is
            // nothing to multiply.
            let shape = [self.shape()[0], self.shape()[1], other.shape()[2]];
            if shape.contains(&0) || self.shape()[2] == 0 {
                Tensor::zeros(&shape, other.dtype(), device)?
            } else if self.dtype() == DType::Bool {
                return Err(Error::not_implemented("\"bmm\" not implemented for 'Bool'"));
            } else {
                return Err(Error::runtime(format!(
                    "expected scalar type {} but found {}",
                    pretty(self.dtype()),
                    pretty(other.dtype())
                )));
            }
        } else {
            self.bmm_impl(other, "bmm")?
        };
        if !out.dtype().is_differentiable() && crate::autograd::needs_grad(&[self, other]) {
            return Err(Error::runtime(format!("Autograd not support dtype: {}", pretty(out.dtype()))));
        }
        let (sa, sb) = (SavedTensor::input(self), SavedTensor::input(other));
        let (wa, wb) = (self.requires_grad(), other.requires_grad());
        let (da, db) = (self.dtype(), other.dtype());
        record("BmmBackward0", &[Some(self), Some(other)], &[&out], move || {
            rule(move |node, g| {
                let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                // Mixed dtypes only reach here with an empty product (zero
                // gradients); each is cast to its input's dtype, as PyTorch's engine does.
                let ga = if wa { Some(g.bmm(&sb.unpack(node)?.transpose(1, 2)?)?.to_dtype(da)?) } else { None };
                let gb = if wb { Some(sa.unpack(node)?.transpose(1, 2)?.bmm(&g)?.to_dtype(db)?) } else { None };
                Ok(vec![ga, gb])
            })
        });
        Ok(out)
    }

    /// `addmm(self, mat1, mat2, beta=1, alpha=1)` with unit scales: `self + mat1 @ mat2`
    /// (records `AddmmBackward0`, what `nn.Linear` shows).
    pub fn addmm(&self, mat1: &Tensor, mat2: &Tensor) -> Result<Tensor> {
        add_product(AddProd::Addmm, self, mat1, mat2, Scalar::Int(1), Scalar::Int(1))
    }

    /// `torch.addmm(input, mat1, mat2, beta, alpha)`: `beta * input + alpha * (mat1 @ mat2)`
    /// (records `AddmmBackward0`).
    pub fn addmm_scaled(&self, mat1: &Tensor, mat2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        add_product(AddProd::Addmm, self, mat1, mat2, beta, alpha)
    }

    /// `torch.baddbmm(input, b1, b2, beta, alpha)`: `beta * input + alpha * bmm(b1, b2)`
    /// (records `BaddbmmBackward0`).
    pub fn baddbmm(&self, b1: &Tensor, b2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        add_product(AddProd::Baddbmm, self, b1, b2, beta, alpha)
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
                return Tensor::zeros(&out_shape, DType::Bool, common_device(&[self, other])?);
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
        // float16/bfloat16 products and sums in float32, rounded once (PyTorch's
        // opmath), so a product past float16's range still adds as a float.
        let compute = crate::ops::arith::opmath(dtype);
        let (a, b) = (self.to_dtype(compute)?, other.to_dtype(compute)?);
        let device = common_device(&[&a, &b])?;
        let out = Tensor::empty(&out_shape, compute, device)?;
        super::conj_bit::matmul(compute, &out, &a, &b, false)?;
        out.to_dtype(dtype)
    }

    /// `matmul(self, other)` with PyTorch's rules for 1-D and batched operands,
    /// built from differentiable pieces (dot, mv, mm, bmm, views).
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        common_device(&[self, other])?;
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
        if should_fold(self, other) {
            // PyTorch folds the batch of the larger operand into its rows and
            // runs one mm (or mv): no copies of the other operand per batch,
            // and its gradient is one product over the whole batch.
            let transpose = db > da;
            let t1 = if transpose { other.mt()? } else { self.clone() };
            let t2 = if !transpose { other.clone() } else if da == 2 { self.t()? } else { self.clone() };
            let s1 = t1.shape();
            let last = s1[s1.len() - 1] as i64;
            let mut out_shape: Vec<i64> = s1[..s1.len() - 1].iter().map(|&v| v as i64).collect();
            let folded: i64 = out_shape.iter().product();
            let t1f = t1.reshape(&[folded, last])?;
            if t2.ndim() == 2 {
                out_shape.push(t2.shape()[1] as i64);
                let out = t1f.mm(&t2)?.unsafe_view(&out_shape)?;
                return if transpose { out.mt()?.contiguous() } else { Ok(out) };
            }
            return t1f.mv(&t2)?.unsafe_view(&out_shape);
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
        r.unsafe_view(&shape)
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

/// The fused product-plus-input ops that share [`add_product`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum AddProd {
    Addmm,
    Baddbmm,
}

/// The C++ type names PyTorch's `baddbmm` dtype message prints.
fn c10_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "c10::Half",
        DType::BFloat16 => "c10::BFloat16",
        DType::Int64 => "long int",
        DType::Int32 => "int",
        DType::Int16 => "short int",
        DType::Int8 => "signed char",
        DType::UInt8 => "unsigned char",
        DType::Bool => "bool",
        DType::Complex64 => "c10::complex<float>",
        DType::Complex128 => "c10::complex<double>",
    }
}

/// `IndexError` of `t.size(dim)` for a dim past `t`'s dims.
fn size_at(t: &Tensor, dim: usize) -> Result<usize> {
    t.shape().get(dim).copied().ok_or_else(|| {
        let n = t.ndim().max(1) as i64;
        Error::index(format!("Dimension out of range (expected to be in range of [{}, {}], but got {dim})", -n, n - 1))
    })
}

/// `t * s`, skipped when `s` is 1 (PyTorch's `maybe_multiply`).
fn maybe_multiply(t: &Tensor, s: Scalar) -> Result<Tensor> {
    if s.to_f64() == 1.0 {
        return Ok(t.clone());
    }
    crate::ops::arith::binary(crate::ops::arith::Operand::T(t), crate::ops::arith::Operand::S(s), crate::ops::arith::BinaryOp::Mul)
}

/// `acc += lhs @ rhs` (2-D, one dtype, `acc` fresh): the products are added
/// to `acc`'s values one at a time, as PyTorch's BLAS `addmm` does.
fn mm_accumulate(acc: &Tensor, lhs: &Tensor, rhs: &Tensor) -> Result<()> {
    // `acc` is a fresh tensor that overlaps neither input.
    super::conj_bit::matmul(acc.dtype(), acc, lhs, rhs, true)
}

/// Which operand MKL's float32/float64 gemm scales by `alpha` before it adds
/// the products one at a time onto `beta * input`, for PyTorch's CPU `addmm`
/// of `mat1 (m×k) @ mat2 (k×n)`; `None` where the gemm (or the gemv it
/// becomes for one column) computes `beta * input + alpha * (mat1 @ mat2)`.
///
/// PyTorch hands BLAS the column-major problem: for `n > 1` the transposed
/// one, whose first operand is `mat2`, for `n == 1` the direct one, whose
/// first operand is `mat1`. That operand goes in untransposed ('N') when its
/// strides are column-major in BLAS's sense (or when it is not BLAS-compatible
/// and PyTorch copies it: to row-major `mat2` / to `mat1` as 'T'), and MKL
/// then scales the second operand (`mat1` / `mat2`) and accumulates onto
/// `beta * input`; with 'T' it forms the sum first and scales it. A single
/// inner term (`k == 1`) and a 1×1 result follow the accumulating form,
/// except a one-column `k == 1` product, which scales after (unless it is
/// 1×1×1 with a `mat2` BLAS sees transposed).
fn blas_alpha_operand(mat1: &Tensor, mat2: &Tensor) -> Option<AlphaOn> {
    let (m, k, n) = (mat1.shape()[0], mat1.shape()[1], mat2.shape()[1]);
    if n == 1 {
        if k == 1 {
            // A 1×1×1 product whose `mat2` goes in as 'T' (strides other than
            // BLAS's column-major ones) is scaled up front.
            let s = mat2.strides();
            return (m == 1 && !(s[0] == 1 && s[1] >= 1)).then_some(AlphaOn::Mat1);
        }
        if m == 1 {
            return Some(AlphaOn::Mat1);
        }
        let s = mat1.strides();
        let untransposed = s[0] == 1 && s[1] >= m.max(1) as isize;
        return untransposed.then_some(AlphaOn::Mat2);
    }
    if k == 1 {
        return Some(AlphaOn::Mat1);
    }
    let s = mat2.strides();
    let row_major = s[1] == 1 && s[0] >= n.max(1) as isize;
    let col_major = s[0] == 1 && s[1] >= k.max(1) as isize;
    (row_major || !col_major).then_some(AlphaOn::Mat1)
}

/// The operand [`blas_alpha_operand`] finds MKL scaling by `alpha`.
#[derive(Clone, Copy)]
enum AlphaOn {
    Mat1,
    Mat2,
}

/// `addmm` / `baddbmm`: `beta * input + alpha * product(a, b)`, with PyTorch's
/// checks in its order (shapes, `input` expanding to the result, dtypes), its
/// early returns (an empty result; an empty inner dim gives `beta * input`,
/// whose dtype must cast back, or zeros when `beta == 0`) and its arithmetic:
///
/// * `beta == 0` ignores `input` (NaN included); `alpha == 0` skips the product
///   in `addmm` (BLAS returns early), not in `baddbmm` (its loop multiplies).
/// * float32/float64 `addmm` starts each sum from `beta * input` and adds the
///   products `(alpha * a) * b` or `a * (alpha * b)` in order, or computes
///   `beta * input + alpha * (a @ b)`, as MKL does for the operands' layouts
///   ([`blas_alpha_operand`]);
///   `baddbmm` and float16/bfloat16 compute `beta * input + alpha * (a @ b)`
///   in float32 (or the dtype) and round once.
///
/// These only differ from one another once a term overflows or is not finite.
/// Records `AddmmBackward0` / `BaddbmmBackward0`.
fn add_product(kind: AddProd, input: &Tensor, a: &Tensor, b: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
    use crate::ops::arith::{binary, opmath, scalar_arg, BinaryOp, Operand};
    let device = common_device(&[input, a, b])?;
    let out_shape: Vec<usize> = match kind {
        AddProd::Addmm => {
            for (t, what) in [(a, "mat1"), (b, "mat2")] {
                if t.ndim() != 2 {
                    return Err(Error::runtime(format!("{what} must be a matrix, got {}-D tensor", t.ndim())));
                }
            }
            if a.shape()[1] != b.shape()[0] {
                return Err(Error::runtime(format!(
                    "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                    a.shape()[0],
                    a.shape()[1],
                    b.shape()[0],
                    b.shape()[1]
                )));
            }
            if input.dtype() != b.dtype() {
                return Err(Error::runtime(format!(
                    "self and mat2 must have the same dtype, but got {} and {}",
                    pretty(input.dtype()),
                    pretty(b.dtype())
                )));
            }
            if a.dtype() != b.dtype() {
                return Err(Error::runtime(format!(
                    "mat1 and mat2 must have the same dtype, but got {} and {}",
                    pretty(a.dtype()),
                    pretty(b.dtype())
                )));
            }
            vec![a.shape()[0], b.shape()[1]]
        }
        AddProd::Baddbmm => vec![size_at(a, 0)?, size_at(a, 1)?, size_at(b, 2)?],
    };
    let shape_i64: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
    // `input` must expand to the result (it never broadcasts the product).
    input.expand(&shape_i64)?;
    if kind == AddProd::Baddbmm {
        if input.dtype() != a.dtype() {
            return Err(Error::runtime(format!(
                "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                c10_name(input.dtype()),
                c10_name(a.dtype()),
                c10_name(b.dtype())
            )));
        }
        for (t, what) in [(a, "batch1"), (b, "batch2")] {
            if t.ndim() != 3 {
                return Err(Error::runtime(format!("{what} must be a 3D tensor")));
            }
        }
        if b.shape()[0] != a.shape()[0] || b.shape()[1] != a.shape()[2] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a.shape()[0],
                a.shape()[2],
                b.shape()[0],
                b.shape()[1]
            )));
        }
    }
    // PyTorch allocates the result like `b` (the same dtype as the rest for
    // addmm; baddbmm checks b's dtype only in its kernel).
    let dt = b.dtype();
    let k = a.shape()[a.ndim() - 1];
    let numel: usize = out_shape.iter().product();
    let out = {
        let _no_grad = GradModeGuard::new(false);
        if numel == 0 || k == 0 {
            if numel == 0 || beta.to_f64() == 0.0 {
                Tensor::zeros(&out_shape, dt, device)?
            } else {
                // `result.copy_(input); result.mul_(beta)`: the in-place
                // product's type must cast back (beta=0.5 into an integer fails).
                let r = Tensor::zeros(&out_shape, dt, device)?;
                r.copy_(&input.expand(&shape_i64)?)?;
                crate::ops::arith::binary_(&r, Operand::S(beta), BinaryOp::Mul)?;
                r
            }
        } else {
            if a.dtype() == DType::Bool {
                let kernel = if kind == AddProd::Addmm { "addmm_impl_cpu_" } else { "baddbmm" };
                return Err(Error::not_implemented(format!("\"{kernel}\" not implemented for 'Bool'")));
            }
            if a.dtype() != dt {
                return Err(Error::runtime(format!("expected scalar type {} but found {}", pretty(a.dtype()), pretty(dt))));
            }
            let work = opmath(dt);
            let (be, al) = (scalar_arg(beta, work)?, scalar_arg(alpha, work)?);
            let (aw, bw) = (a.to_dtype(work)?, b.to_dtype(work)?);
            let scaled_input = || -> Result<Option<Tensor>> {
                if be.to_f64() == 0.0 {
                    return Ok(None);
                }
                let input = input.to_dtype(work)?.expand(&shape_i64)?;
                // `x * 1` is `x` bit for bit (NaN and -0 included): skip the
                // pass (a linear layer's bias is added this way on every call).
                if be.to_f64() == 1.0 {
                    return Ok(Some(input));
                }
                Ok(Some(binary(Operand::T(&input), Operand::S(be), BinaryOp::Mul)?))
            };
            // BLAS (float32/float64) returns `beta * input` for alpha == 0; the
            // float16/bfloat16 kernels multiply the product by 0 (NaN stays NaN).
            let r = if kind == AddProd::Addmm && work == dt && al.to_f64() == 0.0 {
                match scaled_input()? {
                    Some(t) => t,
                    None => Tensor::zeros(&out_shape, work, device)?,
                }
            } else if let Some(scale) = (kind == AddProd::Addmm && work == dt).then(|| blas_alpha_operand(a, b)).flatten() {
                let acc = match scaled_input()? {
                    Some(t) => {
                        let acc = Tensor::empty(&out_shape, work, device)?;
                        acc.copy_(&t)?;
                        acc
                    }
                    None => Tensor::zeros(&out_shape, work, device)?,
                };
                match scale {
                    AlphaOn::Mat1 => mm_accumulate(&acc, &maybe_multiply(&aw, al)?, &bw)?,
                    AlphaOn::Mat2 => mm_accumulate(&acc, &aw, &maybe_multiply(&bw, al)?)?,
                }
                acc
            } else {
                let p = if kind == AddProd::Addmm { aw.bmm_impl(&bw, "mm")? } else { aw.bmm_impl(&bw, "bmm")? };
                let ap = maybe_multiply(&p, al)?;
                if kind == AddProd::Addmm && work != dt && be.to_f64() != 0.0 {
                    // oneDNN's float16/bfloat16 addmm adds `beta * input` with a
                    // fused multiply-add in float32 (no overflow of `beta * input`
                    // alone); evaluated in f64, exact for these operands, and
                    // rounded to float32.
                    let wide = |t: &Tensor| t.to_dtype(DType::Float64);
                    let bi = binary(Operand::T(&wide(&input.expand(&shape_i64)?)?), Operand::S(be), BinaryOp::Mul)?;
                    binary(Operand::T(&bi), Operand::T(&wide(&ap)?), BinaryOp::Add)?.to_dtype(work)?
                } else {
                    match scaled_input()? {
                        Some(t) => binary(Operand::T(&t), Operand::T(&ap), BinaryOp::Add)?,
                        None => ap,
                    }
                }
            };
            r.to_dtype(dt)?
        }
    };
    if !out.dtype().is_floating_point() && crate::autograd::needs_grad(&[input, a, b]) {
        return Err(Error::runtime(format!("Autograd not support dtype: {}", pretty(out.dtype()))));
    }
    let in_shape = input.shape().to_vec();
    let in_dtype = input.dtype();
    let (da, db) = (a.dtype(), b.dtype());
    let (s1, s2) = (SavedTensor::input(a), SavedTensor::input(b));
    let (wi, w1, w2) = (input.requires_grad(), a.requires_grad(), b.requires_grad());
    let (a_cm, b_cm) = (col_major(a), col_major(b));
    let node = if kind == AddProd::Addmm { "AddmmBackward0" } else { "BaddbmmBackward0" };
    record(node, &[Some(input), Some(a), Some(b)], &[&out], move || {
        rule(move |node, g| {
            let Some(g) = g0(g) else { return Ok(vec![None, None, None]) };
            let gi = if wi { Some(reduce_grad(&maybe_multiply(&g, beta)?, &in_shape, in_dtype)?) } else { None };
            let (ga, gb) = if kind == AddProd::Addmm {
                let ga = if w1 { Some(maybe_multiply(&mm_mat1_grad(&g, &s2.unpack(node)?, a_cm)?, alpha)?) } else { None };
                let gb = if w2 { Some(maybe_multiply(&mm_mat2_grad(&g, &s1.unpack(node)?, b_cm)?, alpha)?) } else { None };
                (ga, gb)
            } else {
                let ga = if w1 { Some(maybe_multiply(&g.bmm(&s2.unpack(node)?.transpose(1, 2)?)?, alpha)?) } else { None };
                let gb = if w2 { Some(maybe_multiply(&s1.unpack(node)?.transpose(1, 2)?.bmm(&g)?, alpha)?) } else { None };
                (ga, gb)
            };
            // Mixed dtypes only reach here with an empty product; each gradient
            // takes its input's dtype, as PyTorch's engine casts it.
            let ga = ga.map(|t| t.to_dtype(da)).transpose()?;
            let gb = gb.map(|t| t.to_dtype(db)).transpose()?;
            Ok(vec![gi, ga, gb])
        })
    });
    Ok(out)
}

/// PyTorch's `should_fold` for `matmul` (without `out=`): whether the larger
/// operand (at least 3-D, against a 1-D or 2-D one) is folded into a matrix
/// for one mm/mv. Always when the smaller operand requires grad (its gradient
/// is then one product, not a batch summed afterwards); otherwise only when
/// the fold is a view: not for a 2-D left operand (the result would need a
/// transposed copy), and only when the batch dims are contiguous.
fn should_fold(a: &Tensor, b: &Tensor) -> bool {
    let a_larger = a.ndim() >= b.ndim();
    let (dim_t1, dim_t2) = if a_larger { (a.ndim(), b.ndim()) } else { (b.ndim(), a.ndim()) };
    if !(dim_t1 >= 3 && dim_t2 <= 2) {
        return false;
    }
    if (if a_larger { b } else { a }).requires_grad() {
        return true;
    }
    if a.ndim() == 2 {
        return false;
    }
    let larger = if a_larger { a } else { b };
    if larger.numel() == 0 {
        return true;
    }
    let (mut shape, mut strides) = (larger.shape().to_vec(), larger.strides().to_vec());
    if !a_larger {
        // t1 is `b.mT()`.
        shape.swap(dim_t1 - 2, dim_t1 - 1);
        strides.swap(dim_t1 - 2, dim_t1 - 1);
    }
    (0..dim_t1 - 2).all(|i| strides[i] == strides[i + 1] * shape[i + 1] as isize)
}

/// The factors `(U, S, Vh)` of [`Tensor::linalg_svd`].
pub type SvdFactors = (Tensor, Tensor, Tensor);

impl Tensor {
    /// `torch.linalg.svd(A, full_matrices)`: `A = U diag(S) Vh` for `A` of
    /// shape `(*, m, n)` (float32 or float64), batched over the leading
    /// dims, with `S` `(*, k)` (`k = min(m, n)`) descending and `U`, `Vh`
    /// with orthonormal columns and rows.
    ///
    /// With `full_matrices` `U` is `(*, m, m)` and `Vh` `(*, n, n)`, else
    /// `(*, m, k)` and `(*, k, n)`. `U` is column-major and `Vh` row-major,
    /// the strides PyTorch's meta kernel gives them. The results are
    /// detached: no gradient is recorded (the Python layer adds the
    /// backward formulas). A matrix holding NaN fails with
    /// [`ErrorKind::LinAlg`](ferrotorch_core::ErrorKind::LinAlg); one
    /// holding infinities gives NaN factors. Runs on the tensor's backend
    /// ([`LinalgKernels`](ferrotorch_core::backend::LinalgKernels)).
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![3.0f64, 0.0, 0.0, -2.0], &[2, 2])?;
    /// let (u, s, vh) = a.linalg_svd(false)?;
    /// assert_eq!(s.to_f64_vec()?, vec![3.0, 2.0]);
    /// let back = u.mul(&s.unsqueeze(0)?)?.matmul(&vh)?;
    /// assert_eq!(back.to_f64_vec()?, a.to_f64_vec()?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_svd(&self, full_matrices: bool) -> Result<SvdFactors> {
        let (s, uv) = svd_impl(self, true, full_matrices)?;
        let (ut, vh) = uv.ok_or_else(|| Error::runtime("linalg.svd: the factors were not computed"))?;
        Ok((ut.transpose(-2, -1)?, s, vh))
    }

    /// `torch.linalg.svdvals(A)`: the singular values of `A` (`(*, m, n)`,
    /// float32 or float64), descending, shape `(*, min(m, n))`; detached,
    /// as [`linalg_svd`](Self::linalg_svd), whose `S` it equals.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![0.0f64, 2.0, 0.0, 1.0, 0.0, 0.0], &[2, 3])?;
    /// assert_eq!(a.linalg_svdvals()?.to_f64_vec()?, vec![2.0, 1.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_svdvals(&self) -> Result<Tensor> {
        Ok(svd_impl(self, false, false)?.0)
    }
}

/// PyTorch's checks of an SVD input, in its order.
fn check_svd_input(a: &Tensor) -> Result<()> {
    if !a.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "linalg.svd: Expected a floating point or complex tensor as input. Got {}",
            pretty(a.dtype())
        )));
    }
    if a.ndim() < 2 {
        return Err(Error::runtime("linalg.svd: The input tensor A must have at least 2 dimensions."));
    }
    if !matches!(a.dtype(), DType::Float32 | DType::Float64) {
        return Err(Error::not_implemented(format!("\"linalg_svd_cpu\" not implemented for '{}'", pretty(a.dtype()))));
    }
    Ok(())
}

/// `S` and, with `compute_uv`, `(Uᵀ, Vh)` of `a` (`Uᵀ` contiguous, so that
/// its transpose is the column-major `U`).
fn svd_impl(a: &Tensor, compute_uv: bool, full_matrices: bool) -> Result<(Tensor, Option<(Tensor, Tensor)>)> {
    check_svd_input(a)?;
    let _no_grad = GradModeGuard::new(false);
    let (dt, device) = (a.dtype(), a.device());
    let shape = a.shape();
    let nd = shape.len();
    let (lead, m, n) = (&shape[..nd - 2], shape[nd - 2], shape[nd - 1]);
    let batch = lead.iter().product();
    let spec = SvdSpec { batch, m, n, compute_uv, full_matrices };
    let with = |tail: &[usize]| [lead, tail].concat();
    let s = Tensor::empty(&with(&[spec.k()]), dt, device)?;
    let uv = if compute_uv {
        let ut = Tensor::empty(&with(&[spec.u_cols(), m]), dt, device)?;
        Some((ut, Tensor::empty(&with(&[spec.vh_rows(), n]), dt, device)?))
    } else {
        None
    };
    if batch > 0 {
        let a = a.detach().contiguous()?;
        let uv_held = uv.as_ref().map(|(u, v)| Ok::<_, ferrotorch_core::Error>((u.operand_mut()?, v.operand_mut()?))).transpose()?;
        let uv_ops = uv_held.as_ref().map(|(u, v)| (u.dst(), v.dst()));
        a.backend()?.svd(&spec, dt, nd > 2, a.operand()?.src(), s.operand_mut()?.dst(), uv_ops)?;
    }
    Ok((s, uv))
}
