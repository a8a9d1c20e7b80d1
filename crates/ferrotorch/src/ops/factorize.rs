//! Matrix factorisations and solves: LU and the symmetric-indefinite
//! `L D Lᵀ` (each with the solve from its factors), Cholesky, QR, the
//! symmetric eigendecomposition and triangular solves,
//! batched over the leading dims, on the tensor's backend
//! ([`LinalgKernels`](ferrotorch_core::backend::LinalgKernels)).
//!
//! The factors come out column-major (the strides PyTorch's LAPACK-backed
//! kernels return) and detached: the Python layer records the derivative
//! formulas, as for the SVD. The `L D Lᵀ` ops have no derivative in
//! PyTorch: they record its `NotImplemented` node here.

use super::creation::pretty;
use crate::autograd::{without_derivative, GradModeGuard};
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::op::linalg::{CholeskySpec, EigSpec, EighSpec, LdlSolveSpec, LdlSpec, LuSolveSpec, LuSpec, QrMode, QrSpec, TriangularSpec};
use ferrotorch_core::{DType, Device, Error, Result};

/// The packed LU factors, pivots and info of [`Tensor::linalg_lu_factor_ex`].
pub type LuFactors = (Tensor, Tensor, Tensor);

impl Tensor {
    /// `torch.linalg.lu_factor_ex(A)`: `A = P L U` with partial pivoting for
    /// `A` of shape `(*, m, n)` (float32/float64). Returns the packed
    /// factors `LU` (`(*, m, n)`, column-major: `L` unit lower below the
    /// diagonal, `U` on and above it), the 1-based LAPACK `pivots` (int32,
    /// `(*, min(m, n))`) and `info` (int32, `(*)`: the 1-based index of the
    /// first zero on `U`'s diagonal, or 0).
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0, 4.0, 2.0], &[2, 2])?;
    /// let (lu, pivots, info) = a.linalg_lu_factor_ex()?;
    /// // Row 1 holds the larger pivot, 4: L = [[1, 0], [0.25, 1]], U = [[4, 2], [0, 1.5]].
    /// assert_eq!(pivots.to_f64_vec()?, vec![2.0, 2.0]);
    /// assert_eq!(lu.to_f64_vec()?, vec![4.0, 2.0, 0.25, 1.5]);
    /// assert_eq!(info.to_f64_vec()?, vec![0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_lu_factor_ex(&self) -> Result<LuFactors> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {} instead",
                fmt_shape(self.shape())
            )));
        }
        check_float_kernel(self, "lu_cpu")?;
        let _no_grad = GradModeGuard::new(false);
        let (lead, m, n) = split(self.shape());
        let spec = LuSpec { batch: lead.iter().product(), m, n };
        let (dt, device) = (self.dtype(), self.device());
        let lu = col_major_output(&lead, m, n, dt, device)?;
        let pivots = Tensor::empty(&[lead.as_slice(), &[spec.k()]].concat(), DType::Int32, device)?;
        let info = Tensor::zeros(&lead, DType::Int32, device)?;
        if spec.batch * m * n > 0 {
            let a = col_major_input(self)?;
            a.backend()?.lu_factor(&spec, dt, a.operand()?.src(), lu.operand_mut()?.dst(), pivots.operand_mut()?.dst(), info.operand_mut()?.dst())?;
        }
        Ok((lu.transpose(-2, -1)?, pivots, info))
    }

    /// `torch.linalg.lu_solve(LU, pivots, B, adjoint=adjoint)` with
    /// `left=True`: `X = A⁻¹ B` (or `A⁻ᵀ B`) from the factors of
    /// [`linalg_lu_factor_ex`](Self::linalg_lu_factor_ex) of a square `A`
    /// (`self` is `LU`, `(*, n, n)`; `B` is `(*, n, k)`; the batch dims
    /// broadcast). `X` is column-major.
    pub fn linalg_lu_solve(&self, pivots: &Tensor, b: &Tensor, adjoint: bool) -> Result<Tensor> {
        super::common_device(&[self, pivots, b])?;
        check_square(self, "linalg.lu_solve", "LU")?;
        if b.ndim() < 2 {
            return Err(Error::runtime("linalg.lu_solve: The input tensor B must have at least 2 dimensions."));
        }
        if pivots.dtype() != DType::Int32 {
            return Err(Error::runtime("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"));
        }
        if self.dtype() != b.dtype() {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type {} and B of type {} instead",
                pretty(self.dtype()),
                pretty(b.dtype())
            )));
        }
        check_float_kernel(self, "lu_solve_cpu")?;
        let (lead_a, n, _) = split(self.shape());
        let (lead_b, nb, k) = split(b.shape());
        if nb != n {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {nb}x{k})"
            )));
        }
        if pivots.shape() != [lead_a.as_slice(), &[n]].concat().as_slice() {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: Expected pivots of shape {} to match LU of shape {}",
                fmt_shape(pivots.shape()),
                fmt_shape(self.shape())
            )));
        }
        let _no_grad = GradModeGuard::new(false);
        let lead = broadcast_shapes(&lead_a, &lead_b)?.to_vec();
        let spec = LuSolveSpec { batch: lead.iter().product(), n, k, adjoint };
        let x = col_major_output(&lead, n, k, b.dtype(), b.device())?;
        if spec.batch * n * k > 0 {
            let lu = col_major_input(&expand_lead(self, &lead)?)?;
            let piv_sizes: Vec<i64> = lead.iter().chain(&[n]).map(|&s| s as i64).collect();
            let piv = pivots.expand(&piv_sizes)?.contiguous()?;
            let bc = col_major_input(&expand_lead(b, &lead)?)?;
            lu.backend()?.lu_solve(&spec, self.dtype(), lu.operand()?.src(), piv.operand()?.src(), bc.operand()?.src(), x.operand_mut()?.dst())?;
        }
        x.transpose(-2, -1)
    }

    /// `torch.linalg.ldl_factor_ex(A, hermitian=hermitian)`: the
    /// Bunch–Kaufman factorisation `A = L D Lᵀ` of each symmetric matrix of
    /// `A` (`(*, n, n)`, float32/float64, only the lower triangle read) in
    /// LAPACK's compact form (`sytrf`): `LD` (`(*, n, n)`, column-major,
    /// zero above the diagonal), the 1-based `pivots` (int32, `(*, n)`,
    /// negative pairs for 2x2 blocks of `D`) and `info` (int32, `(*)`: the
    /// 1-based index of the first zero block of `D`, or 0).
    /// `hermitian` changes nothing for real dtypes. `LD` records PyTorch's
    /// `NotImplemented` node: the factorisation has no derivative.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![4.0f64, 2.0, 2.0, 5.0], &[2, 2])?;
    /// let (ld, pivots, info) = a.linalg_ldl_factor_ex(false)?;
    /// // D = diag(4, 4), L = [[1, 0], [0.5, 1]]: 1x1 blocks, no interchange.
    /// assert_eq!(ld.to_f64_vec()?, vec![4.0, 0.0, 0.5, 4.0]);
    /// assert_eq!(pivots.to_f64_vec()?, vec![1.0, 2.0]);
    /// assert_eq!(info.to_f64_vec()?, vec![0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_ldl_factor_ex(&self, hermitian: bool) -> Result<LuFactors> {
        const FNAME: &str = "torch.linalg.ldl_factor_ex";
        // PyTorch checks squareness before the dtype here (unlike check_square).
        check_matrix_ndim(self, FNAME, "A")?;
        check_is_square(self, FNAME, "A")?;
        check_floating(self, FNAME)?;
        let (lead, n, _) = split(self.shape());
        check_float_kernel(self, "ldl_factor_kernel_cpu")?;
        let spec = LdlSpec { batch: lead.iter().product(), n, hermitian };
        let (dt, device) = (self.dtype(), self.device());
        let pivots = Tensor::empty(&[lead.as_slice(), &[n]].concat(), DType::Int32, device)?;
        let info = Tensor::zeros(&lead, DType::Int32, device)?;
        let ld = without_derivative("linalg_ldl_factor_ex", &[Some(self)], || {
            let ld = col_major_output(&lead, n, n, dt, device)?;
            if spec.batch * n > 0 {
                let a = col_major_input(self)?;
                a.backend()?.ldl_factor(&spec, dt, a.operand()?.src(), ld.operand_mut()?.dst(), pivots.operand_mut()?.dst(), info.operand_mut()?.dst())?;
            }
            ld.transpose(-2, -1)
        })?;
        Ok((ld, pivots, info))
    }

    /// `torch.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)`:
    /// `X = A⁻¹ B` from the compact factors of
    /// [`linalg_ldl_factor_ex`](Self::linalg_ldl_factor_ex) (`self` is `LD`,
    /// `(*, n, n)`; `pivots` any integer dtype, `(*, n)`; `B` `(*, n, k)` of
    /// `LD`'s dtype; the batch dims broadcast). `X` is column-major and
    /// records PyTorch's `NotImplemented` node.
    pub fn linalg_ldl_solve(&self, pivots: &Tensor, b: &Tensor, hermitian: bool) -> Result<Tensor> {
        const FNAME: &str = "torch.linalg.ldl_solve";
        super::common_device(&[self, pivots, b])?;
        check_matrix_ndim(self, FNAME, "A")?;
        check_is_square(self, FNAME, "A")?;
        check_floating(self, FNAME)?;
        let (lead_a, n, _) = split(self.shape());
        if self.dtype() != b.dtype() {
            return Err(Error::runtime(format!(
                "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
                pretty(b.dtype()),
                pretty(self.dtype())
            )));
        }
        if b.ndim() < 2 {
            // PyTorch reads `B.size(-2)` before checking B's dims.
            let nd = b.ndim().max(1) as i64;
            return Err(Error::index(format!("Dimension out of range (expected to be in range of [{}, {}], but got -2)", -nd, nd - 1)));
        }
        let (lead_b, nb, k) = split(b.shape());
        if nb != n {
            return Err(Error::runtime(format!(
                "Incompatible matrix sizes for {FNAME}: each A matrix is {n} by {n} but each b matrix is {nb} by {k}"
            )));
        }
        if pivots.dtype().is_floating_point() || pivots.dtype() == DType::Bool {
            return Err(Error::runtime(format!("{FNAME}: Expected pivots to be integers. Got {}", pretty(pivots.dtype()))));
        }
        if pivots.shape() != &self.shape()[..self.ndim() - 1] {
            return Err(Error::runtime(format!(
                "{FNAME}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape {} instead",
                fmt_shape(pivots.shape())
            )));
        }
        check_float_kernel(self, "ldl_solve_kernel_cpu")?;
        let lead = broadcast_shapes(&lead_a, &lead_b)?.to_vec();
        let spec = LdlSolveSpec { batch: lead.iter().product(), n, k, hermitian };
        let piv_sizes: Vec<i64> = lead.iter().chain(&[n]).map(|&s| s as i64).collect();
        without_derivative("linalg_ldl_solve", &[Some(self), Some(b)], || {
            let x = col_major_output(&lead, n, k, b.dtype(), b.device())?;
            if spec.batch * n * k > 0 {
                let ld = col_major_input(&expand_lead(self, &lead)?)?;
                let piv = pivots.detach().to_dtype(DType::Int32)?.expand(&piv_sizes)?.contiguous()?;
                let bc = col_major_input(&expand_lead(b, &lead)?)?;
                ld.backend()?.ldl_solve(&spec, self.dtype(), ld.operand()?.src(), piv.operand()?.src(), bc.operand()?.src(), x.operand_mut()?.dst())?;
            }
            x.transpose(-2, -1)
        })
    }

    /// `torch.linalg.cholesky_ex(A, upper)`: the triangular factor of each
    /// symmetric positive-definite matrix of `A` (`(*, n, n)`,
    /// float32/float64; only the lower triangle is read, or the upper one
    /// when `upper`), column-major, with `info` (int32, `(*)`: the order of
    /// the first leading minor that is not positive-definite, or 0).
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![4.0f64, 2.0, 2.0, 5.0], &[2, 2])?;
    /// let (l, info) = a.linalg_cholesky_ex(false)?;
    /// assert_eq!(l.to_f64_vec()?, vec![2.0, 0.0, 1.0, 2.0]);
    /// assert_eq!(info.to_f64_vec()?, vec![0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_cholesky_ex(&self, upper: bool) -> Result<(Tensor, Tensor)> {
        check_square(self, "linalg.cholesky", "A")?;
        check_float_kernel(self, "cholesky_cpu")?;
        let _no_grad = GradModeGuard::new(false);
        let (lead, n, _) = split(self.shape());
        let spec = CholeskySpec { batch: lead.iter().product(), n, upper };
        let factor = col_major_output(&lead, n, n, self.dtype(), self.device())?;
        let info = Tensor::zeros(&lead, DType::Int32, self.device())?;
        if spec.batch * n > 0 {
            let a = col_major_input(self)?;
            a.backend()?.cholesky(&spec, self.dtype(), a.operand()?.src(), factor.operand_mut()?.dst(), info.operand_mut()?.dst())?;
        }
        Ok((factor.transpose(-2, -1)?, info))
    }

    /// `torch.linalg.qr(A, mode)`: `A = Q R` for `A` of shape `(*, m, n)`
    /// (float32/float64), `Q` with orthonormal columns and `R` upper
    /// triangular, both column-major. `mode` is `"reduced"`, `"complete"`
    /// or `"r"` (then `Q` is an empty tensor, as PyTorch returns).
    pub fn linalg_qr(&self, mode: &str) -> Result<(Tensor, Tensor)> {
        let mode = match mode {
            "reduced" => QrMode::Reduced,
            "complete" => QrMode::Complete,
            "r" => QrMode::R,
            other => {
                return Err(Error::runtime(format!(
                    "qr received unrecognized mode '{other}' but expected one of 'reduced' (default), 'r', or 'complete'"
                )))
            }
        };
        if self.ndim() < 2 {
            return Err(Error::runtime("linalg.qr: The input tensor A must have at least 2 dimensions."));
        }
        check_float_kernel(self, "geqrf_cpu")?;
        let _no_grad = GradModeGuard::new(false);
        let (lead, m, n) = split(self.shape());
        let spec = QrSpec { batch: lead.iter().product(), m, n, mode };
        let (dt, device) = (self.dtype(), self.device());
        let qc = spec.q_cols();
        let q = if mode == QrMode::R { None } else { Some(col_major_output(&lead, m, qc, dt, device)?) };
        let r = col_major_output(&lead, qc, n, dt, device)?;
        if spec.batch * m * n > 0 {
            let a = col_major_input(self)?;
            a.backend()?.qr(&spec, dt, a.operand()?.src(), super::conj_bit::write_opt(q.as_ref())?.as_ref().map(|w| w.dst()), r.operand_mut()?.dst())?;
        } else if let Some(q) = &q {
            // An empty A still has a complete Q: the identity.
            if qc > 0 && spec.batch > 0 {
                let eye = Tensor::eye(m, m, dt)?.to_device(device, dt, false)?.expand(&q.shape().iter().map(|&s| s as i64).collect::<Vec<_>>())?;
                q.copy_(&eye)?;
            }
        }
        let r = r.transpose(-2, -1)?;
        match q {
            Some(q) => Ok((q.transpose(-2, -1)?, r)),
            None => Ok((Tensor::empty(&[0], dt, device)?, r)),
        }
    }

    /// `torch.linalg.eigh(A, UPLO)` / `eigvalsh`: the eigenvalues
    /// (ascending, `(*, n)`) and, when `vectors`, the column-major
    /// orthonormal eigenvectors (`(*, n, n)`) of each symmetric matrix of
    /// `A` (float32/float64), read from its lower triangle or, when
    /// `upper`, its upper one. A matrix holding NaN gives NaN.
    ///
    /// ```
    /// use ferrotorch::Tensor;
    /// # fn main() -> ferrotorch::Result<()> {
    /// let a = Tensor::from_vec(vec![2.0f64, 0.0, 0.0, 1.0], &[2, 2])?;
    /// let (w, _) = a.linalg_eigh(false, false)?;
    /// assert_eq!(w.to_f64_vec()?, vec![1.0, 2.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn linalg_eigh(&self, upper: bool, vectors: bool) -> Result<(Tensor, Option<Tensor>)> {
        check_square(self, "linalg.eigh", "A")?;
        check_float_kernel(self, "linalg_eigh_cpu")?;
        let _no_grad = GradModeGuard::new(false);
        let (lead, n, _) = split(self.shape());
        let spec = EighSpec { batch: lead.iter().product(), n, upper, vectors };
        let (dt, device) = (self.dtype(), self.device());
        let w = Tensor::empty(&[lead.as_slice(), &[n]].concat(), dt, device)?;
        let v = if vectors { Some(col_major_output(&lead, n, n, dt, device)?) } else { None };
        if spec.batch * n > 0 {
            let a = col_major_input(self)?;
            a.backend()?.eigh(&spec, dt, a.operand()?.src(), w.operand_mut()?.dst(), super::conj_bit::write_opt(v.as_ref())?.as_ref().map(|w| w.dst()))?;
        }
        Ok((w, v.map(|v| v.transpose(-2, -1)).transpose()?))
    }

    /// `torch.linalg.eig(A)` / `eigvals`: the eigenvalues and (with
    /// `vectors`) the eigenvectors, as columns, of each square matrix of
    /// `self` (float32/float64 or complex), both complex of its precision.
    /// Eigenvectors have unit norm and their largest component real, as
    /// LAPACK's; the eigenvalues come in the algorithm's order. Records
    /// nothing (the gradient is `ferrotorch/_linalg_eig.py`'s).
    pub fn linalg_eig(&self, vectors: bool) -> Result<(Tensor, Option<Tensor>)> {
        check_matrix_ndim(self, "linalg.eig", "A")?;
        let dt = self.dtype();
        let Some(cdt) = dt.to_complex().filter(|_| matches!(dt, DType::Float32 | DType::Float64) || dt.is_complex()) else {
            return Err(Error::runtime(format!("Unknown Complex ScalarType for {}", pretty(dt))));
        };
        check_is_square(self, "linalg.eig", "A")?;
        let (lead, n, _) = split(self.shape());
        let _no_grad = GradModeGuard::new(false);
        let spec = EigSpec { batch: lead.iter().product(), n, vectors };
        let device = self.device();
        let w = Tensor::empty(&[lead.as_slice(), &[n]].concat(), cdt, device)?;
        let v = if vectors { Some(col_major_output(&lead, n, n, cdt, device)?) } else { None };
        if spec.batch * n > 0 {
            let a = col_major_input(self)?;
            a.backend()?.eig(&spec, dt, a.operand()?.src(), w.operand_mut()?.dst(), super::conj_bit::write_opt(v.as_ref())?.as_ref().map(|w| w.dst()))?;
        }
        Ok((w, v.map(|v| v.transpose(-2, -1)).transpose()?))
    }

    /// `torch.linalg.solve_triangular(A, B, upper=upper, left=True,
    /// unitriangular=unit)`: `X = A⁻¹ B` for triangular `A` (`self`,
    /// `(*, n, n)`, only the `upper` or lower triangle read, the diagonal
    /// taken as ones when `unit`) and `B` (`(*, n, k)`) of the same dtype;
    /// the batch dims broadcast. `X` is column-major.
    pub fn linalg_solve_triangular(&self, b: &Tensor, upper: bool, unit: bool) -> Result<Tensor> {
        super::common_device(&[self, b])?;
        if b.ndim() < 2 {
            return Err(Error::runtime("linalg.solve_triangular: The input tensor B must have at least 2 dimensions."));
        }
        check_square(self, "linalg.solve_triangular", "A")?;
        if self.dtype() != b.dtype() {
            return Err(Error::runtime(format!(
                "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
                pretty(self.dtype()),
                pretty(b.dtype())
            )));
        }
        check_float_kernel(self, "triangular_solve_cpu")?;
        let (lead_a, n, _) = split(self.shape());
        let (lead_b, nb, k) = split(b.shape());
        if nb != n {
            return Err(Error::runtime(format!(
                "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {nb}x{k})"
            )));
        }
        let _no_grad = GradModeGuard::new(false);
        let lead = broadcast_shapes(&lead_a, &lead_b)?.to_vec();
        let spec = TriangularSpec { batch: lead.iter().product(), n, k, upper, unit };
        let x = col_major_output(&lead, n, k, b.dtype(), b.device())?;
        if spec.batch * n * k > 0 {
            let a = col_major_input(&expand_lead(self, &lead)?)?;
            let bc = col_major_input(&expand_lead(b, &lead)?)?;
            a.backend()?.solve_triangular(&spec, self.dtype(), a.operand()?.src(), bc.operand()?.src(), x.operand_mut()?.dst())?;
        }
        x.transpose(-2, -1)
    }
}

/// `(leading dims, rows, cols)` of a shape with at least 2 dims.
fn split(shape: &[usize]) -> (Vec<usize>, usize, usize) {
    let nd = shape.len();
    (shape[..nd - 2].to_vec(), shape[nd - 2], shape[nd - 1])
}

/// A fresh buffer for column-major `(*lead, rows, cols)` matrices: its
/// transpose over the last two dims is the result.
fn col_major_output(lead: &[usize], rows: usize, cols: usize, dt: DType, device: Device) -> Result<Tensor> {
    Tensor::empty(&[lead, &[cols, rows]].concat(), dt, device)
}

/// `t`'s matrices column-major: its contiguous transpose (free when `t` is
/// already column-major, as the factors returned here are).
fn col_major_input(t: &Tensor) -> Result<Tensor> {
    t.detach().transpose(-2, -1)?.contiguous()
}

/// `t` with its leading dims broadcast to `lead` (its last two kept).
fn expand_lead(t: &Tensor, lead: &[usize]) -> Result<Tensor> {
    let tail = &t.shape()[t.ndim() - 2..];
    let sizes: Vec<i64> = lead.iter().chain(tail).map(|&s| s as i64).collect();
    t.expand(&sizes)
}

/// PyTorch's checks of a batch of square matrices named `name` in `fname`:
/// at least 2 dims, floating point, square (in that order).
fn check_square(a: &Tensor, fname: &str, name: &str) -> Result<()> {
    check_matrix_ndim(a, fname, name)?;
    check_floating(a, fname)?;
    check_is_square(a, fname, name)
}

/// `name` has at least the two matrix dims.
fn check_matrix_ndim(a: &Tensor, fname: &str, name: &str) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::runtime(format!("{fname}: The input tensor {name} must have at least 2 dimensions.")));
    }
    Ok(())
}

/// The matrices of `name` are square.
fn check_is_square(a: &Tensor, fname: &str, name: &str) -> Result<()> {
    let (_, m, n) = split(a.shape());
    if m != n {
        return Err(Error::runtime(format!("{fname}: {name} must be batches of square matrices, but they are {m} by {n} matrices")));
    }
    Ok(())
}

/// `a` has a floating point (or complex) dtype.
fn check_floating(a: &Tensor, fname: &str) -> Result<()> {
    if !a.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{fname}: Expected a floating point or complex tensor as input. Got {}",
            pretty(a.dtype())
        )));
    }
    Ok(())
}

/// The kernels run in float32 and float64 only: PyTorch's
/// `NotImplementedError` (naming its CPU kernel) for the other dtypes.
fn check_float_kernel(a: &Tensor, kernel: &str) -> Result<()> {
    if matches!(a.dtype(), DType::Float32 | DType::Float64) {
        Ok(())
    } else {
        Err(Error::not_implemented(format!("\"{kernel}\" not implemented for '{}'", pretty(a.dtype()))))
    }
}
