//! The CPU's linear-algebra kernels ([`crate::linalg`]) behind the seam.

use super::Cpu;
use crate::dense::{elems, elems_mut};
use crate::{Dst, Src};
use ferrotorch_core::backend::LinalgKernels;
use ferrotorch_core::op::linalg::{svd_non_finite, CholeskySpec, EigSpec, EighSpec, LdlSolveSpec, LdlSpec, LuSolveSpec, LuSpec, QrMode, QrSpec, SvdSpec, TriangularSpec};
use ferrotorch_core::{DType, Error, Result};

impl LinalgKernels for Cpu {
    fn svd(&self, spec: &SvdSpec, dtype: DType, batched: bool, a: Src, s: Dst, uv: Option<(Dst, Dst)>) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("svd", dtype));
        }
        const WHAT: &str = "linalg.svd";
        macro_rules! run {
            ($T:ty) => {{
                // SAFETY: the op layer passes live, contiguous operands of
                // `dtype`; the outputs are fresh and alias neither the input
                // nor each other.
                let (ad, sd) = unsafe { (elems::<$T>(WHAT, a)?, elems_mut::<$T>(WHAT, s)?) };
                let uv = match uv {
                    // SAFETY: as above.
                    Some((u, v)) => Some(unsafe { (elems_mut::<$T>(WHAT, u)?, elems_mut::<$T>(WHAT, v)?) }),
                    None => None,
                };
                check_lens(spec, ad.len(), sd.len(), uv.as_ref().map(|(u, v)| (u.len(), v.len())))?;
                crate::linalg::svd::<$T>(spec, ad, sd, uv, |x| x as f64, |x| x as $T, |x| x as $T as f64)
            }};
        }
        let r = match dtype {
            DType::Float32 => run!(f32),
            DType::Float64 => run!(f64),
            other => return Err(Error::not_implemented(format!("linalg.svd: no CPU kernel for {other:?}"))),
        };
        r.map_err(|b| svd_non_finite(batched.then_some(b)))
    }
    fn lu_factor(&self, spec: &LuSpec, dtype: DType, a: Src, lu: Dst, pivots: Dst, info: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("lu_factor", dtype));
        }
        const WHAT: &str = "linalg.lu_factor";
        // SAFETY (every `elems`/`elems_mut` below): the op layer passes live,
        // contiguous operands of the documented dtypes and sizes; the
        // outputs are fresh and alias neither the inputs nor each other.
        let (pd, id) = unsafe { (elems_mut::<i32>(WHAT, pivots)?, elems_mut::<i32>(WHAT, info)?) };
        float_dispatch!(WHAT, dtype, T => {
            let (ad, ld) = unsafe { (elems::<T>(WHAT, a)?, elems_mut::<T>(WHAT, lu)?) };
            check_len(WHAT, &[ad.len(), ld.len()], spec.batch * spec.m * spec.n)?;
            check_len(WHAT, &[pd.len()], spec.batch * spec.k())?;
            check_len(WHAT, &[id.len()], spec.batch)?;
            crate::linalg::lu_factor::<T>(spec, ad, ld, pd, id);
        });
        Ok(())
    }

    fn lu_solve(&self, spec: &LuSolveSpec, dtype: DType, lu: Src, pivots: Src, b: Src, x: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("lu_solve", dtype));
        }
        const WHAT: &str = "linalg.lu_solve";
        let pd = unsafe { elems::<i32>(WHAT, pivots)? };
        check_len(WHAT, &[pd.len()], spec.batch * spec.n)?;
        float_dispatch!(WHAT, dtype, T => {
            let (ld, bd, xd) = unsafe { (elems::<T>(WHAT, lu)?, elems::<T>(WHAT, b)?, elems_mut::<T>(WHAT, x)?) };
            check_len(WHAT, &[ld.len()], spec.batch * spec.n * spec.n)?;
            check_len(WHAT, &[bd.len(), xd.len()], spec.batch * spec.n * spec.k)?;
            crate::linalg::lu_solve::<T>(spec, ld, pd, bd, xd).map_err(|p| {
                Error::runtime(format!("linalg.lu_solve: pivots must be in the range [1, {}], but got {p}", spec.n))
            })?;
        });
        Ok(())
    }

    fn cholesky(&self, spec: &CholeskySpec, dtype: DType, a: Src, factor: Dst, info: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("cholesky", dtype));
        }
        const WHAT: &str = "linalg.cholesky";
        let id = unsafe { elems_mut::<i32>(WHAT, info)? };
        check_len(WHAT, &[id.len()], spec.batch)?;
        float_dispatch!(WHAT, dtype, T => {
            let (ad, fd) = unsafe { (elems::<T>(WHAT, a)?, elems_mut::<T>(WHAT, factor)?) };
            check_len(WHAT, &[ad.len(), fd.len()], spec.batch * spec.n * spec.n)?;
            crate::linalg::cholesky::<T>(spec, ad, fd, id);
        });
        Ok(())
    }

    fn qr(&self, spec: &QrSpec, dtype: DType, a: Src, q: Option<Dst>, r: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("qr", dtype));
        }
        const WHAT: &str = "linalg.qr";
        if (spec.mode == QrMode::R) != q.is_none() {
            return Err(Error::runtime(format!("{WHAT}: Q must be given exactly when mode is not 'r' ({spec:?})")));
        }
        float_dispatch!(WHAT, dtype, T => {
            let (ad, rd) = unsafe { (elems::<T>(WHAT, a)?, elems_mut::<T>(WHAT, r)?) };
            check_len(WHAT, &[ad.len()], spec.batch * spec.m * spec.n)?;
            check_len(WHAT, &[rd.len()], spec.batch * spec.q_cols() * spec.n)?;
            let qd = match q {
                Some(q) => Some(unsafe { elems_mut::<T>(WHAT, q)? }),
                None => None,
            };
            if let Some(qd) = &qd {
                check_len(WHAT, &[qd.len()], spec.batch * spec.m * spec.q_cols())?;
            }
            crate::linalg::qr::<T>(spec, ad, qd, rd);
        });
        Ok(())
    }

    fn eig(&self, spec: &EigSpec, dtype: DType, a: Src, w: Dst, v: Option<Dst>) -> Result<()> {
        const WHAT: &str = "linalg.eig";
        if spec.vectors != v.is_some() {
            return Err(Error::runtime(format!("{WHAT}: the eigenvectors' operand must be given exactly when they are wanted ({spec:?})")));
        }
        macro_rules! run {
            ($T:ty, $complex_in:expr) => {{
                type C = ferrotorch_core::num_complex::Complex<$T>;
                // SAFETY: the op layer passes a live contiguous input of
                // `dtype` and fresh contiguous complex outputs that alias
                // neither it nor each other.
                let wd = unsafe { elems_mut::<C>(WHAT, w)? };
                let vd = match v {
                    Some(v) => Some(unsafe { elems_mut::<C>(WHAT, v)? }),
                    None => None,
                };
                let nn = spec.batch * spec.n * spec.n;
                check_len(WHAT, &[wd.len()], spec.batch * spec.n)?;
                if let Some(vd) = &vd {
                    check_len(WHAT, &[vd.len()], nn)?;
                }
                let r = if $complex_in {
                    let ad = unsafe { elems::<C>(WHAT, a)? };
                    check_len(WHAT, &[ad.len()], nn)?;
                    crate::linalg::eig::<$T>(spec, None, Some(ad), wd, vd)
                } else {
                    let ad = unsafe { elems::<$T>(WHAT, a)? };
                    check_len(WHAT, &[ad.len()], nn)?;
                    crate::linalg::eig::<$T>(spec, Some(ad), None, wd, vd)
                };
                r.map_err(|b| Error::runtime(format!("{WHAT}: the eigenvalue algorithm failed to converge for batch element {b}")))
            }};
        }
        match dtype {
            DType::Float32 => run!(f32, false),
            DType::Float64 => run!(f64, false),
            DType::Complex64 => run!(f32, true),
            DType::Complex128 => run!(f64, true),
            other => Err(Error::not_implemented(format!("\"linalg_eig_out_cpu\" not implemented for '{}'", ferrotorch_core::dtype::pretty(other)))),
        }
    }

    fn eigh(&self, spec: &EighSpec, dtype: DType, a: Src, w: Dst, v: Option<Dst>) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("eigh", dtype));
        }
        const WHAT: &str = "linalg.eigh";
        if spec.vectors != v.is_some() {
            return Err(Error::runtime(format!("{WHAT}: the eigenvectors' operand must be given exactly when they are wanted ({spec:?})")));
        }
        float_dispatch!(WHAT, dtype, T => {
            let (ad, wd) = unsafe { (elems::<T>(WHAT, a)?, elems_mut::<T>(WHAT, w)?) };
            check_len(WHAT, &[ad.len()], spec.batch * spec.n * spec.n)?;
            check_len(WHAT, &[wd.len()], spec.batch * spec.n)?;
            let vd = match v {
                Some(v) => Some(unsafe { elems_mut::<T>(WHAT, v)? }),
                None => None,
            };
            if let Some(vd) = &vd {
                check_len(WHAT, &[vd.len()], spec.batch * spec.n * spec.n)?;
            }
            crate::linalg::eigh::<T>(spec, ad, wd, vd).map_err(|b| {
                let prefix = if spec.batch > 1 { format!("(Batch element {b}): ") } else { String::new() };
                Error::linalg(format!("linalg.eigh: {prefix}The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: {})." , spec.n))
            })?;
        });
        Ok(())
    }

    fn solve_triangular(&self, spec: &TriangularSpec, dtype: DType, a: Src, b: Src, x: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(crate::complex::not_impl("solve_triangular", dtype));
        }
        const WHAT: &str = "linalg.solve_triangular";
        float_dispatch!(WHAT, dtype, T => {
            let (ad, bd, xd) = unsafe { (elems::<T>(WHAT, a)?, elems::<T>(WHAT, b)?, elems_mut::<T>(WHAT, x)?) };
            check_len(WHAT, &[ad.len()], spec.batch * spec.n * spec.n)?;
            check_len(WHAT, &[bd.len(), xd.len()], spec.batch * spec.n * spec.k)?;
            crate::linalg::solve_triangular::<T>(spec, ad, bd, xd);
        });
        Ok(())
    }

    fn ldl_factor(&self, spec: &LdlSpec, dtype: DType, a: Src, ld: Dst, pivots: Dst, info: Dst) -> Result<()> {
        const WHAT: &str = "linalg.ldl_factor";
        // SAFETY (every `elems`/`elems_mut` below): as in `lu_factor`.
        let (pd, id) = unsafe { (elems_mut::<i32>(WHAT, pivots)?, elems_mut::<i32>(WHAT, info)?) };
        check_len(WHAT, &[pd.len()], spec.batch * spec.n)?;
        check_len(WHAT, &[id.len()], spec.batch)?;
        float_dispatch!(WHAT, dtype, T => {
            let (ad, ldd) = unsafe { (elems::<T>(WHAT, a)?, elems_mut::<T>(WHAT, ld)?) };
            check_len(WHAT, &[ad.len(), ldd.len()], spec.batch * spec.n * spec.n)?;
            crate::linalg::ldl_factor::<T>(spec, ad, ldd, pd, id);
        });
        Ok(())
    }

    fn ldl_solve(&self, spec: &LdlSolveSpec, dtype: DType, ld: Src, pivots: Src, b: Src, x: Dst) -> Result<()> {
        const WHAT: &str = "linalg.ldl_solve";
        let pd = unsafe { elems::<i32>(WHAT, pivots)? };
        check_len(WHAT, &[pd.len()], spec.batch * spec.n)?;
        float_dispatch!(WHAT, dtype, T => {
            let (ldd, bd, xd) = unsafe { (elems::<T>(WHAT, ld)?, elems::<T>(WHAT, b)?, elems_mut::<T>(WHAT, x)?) };
            check_len(WHAT, &[ldd.len()], spec.batch * spec.n * spec.n)?;
            check_len(WHAT, &[bd.len(), xd.len()], spec.batch * spec.n * spec.k)?;
            crate::linalg::ldl_solve::<T>(spec, ldd, pd, bd, xd).map_err(|p| {
                Error::runtime(format!("torch.linalg.ldl_solve: invalid pivot {p}: pivots must be the output of torch.linalg.ldl_factor for matrices of order {}", spec.n))
            })?;
        });
        Ok(())
    }
}

/// Runs `$body` with `$T` the Rust type of the float `dtype` (float32 or
/// float64; other dtypes have no kernel).
macro_rules! float_dispatch {
    ($what:expr, $dtype:expr, $T:ident => $body:block) => {
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            other => return Err(Error::not_implemented(format!("{}: no CPU kernel for {other:?}", $what))),
        }
    };
}
use float_dispatch;

/// Every length in `lens` must be `want`: the kernels slice operands by the spec.
fn check_len(what: &str, lens: &[usize], want: usize) -> Result<()> {
    match lens.iter().find(|&&l| l != want) {
        Some(l) => Err(Error::runtime(format!("{what}: an operand holds {l} elements where {want} were expected"))),
        None => Ok(()),
    }
}


/// The operands' element counts must be the ones `spec` describes: the
/// kernel slices them by it.
fn check_lens(spec: &SvdSpec, a: usize, s: usize, uv: Option<(usize, usize)>) -> Result<()> {
    let ok = a == spec.batch * spec.m * spec.n
        && s == spec.batch * spec.k()
        && uv.is_none_or(|(u, v)| u == spec.batch * spec.u_cols() * spec.m && v == spec.batch * spec.vh_rows() * spec.n);
    if ok {
        Ok(())
    } else {
        Err(Error::runtime(format!("linalg.svd: operands do not match {spec:?}")))
    }
}
