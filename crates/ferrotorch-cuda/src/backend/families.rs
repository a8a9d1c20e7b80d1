//! The structured op families without a module of their own on CUDA
//! (indexing, factories, RNN cells, optimizer steps, linear
//! algebra, Fourier transforms): ranges (`sequence`), uniform/normal/integer
//! random draws, `masked_fill`, indexed reads/writes (`index.rs`),
//! `nonzero`/`masked_scatter` (`compact.rs`) and the Adam/SGD steps
//! (`optim.rs`) have kernels, the rest not yet. Convolution (`conv.rs`), pooling (`pool.rs`),
//! normalisation (`norm.rs`) and sorting (`sort.rs`) live beside this file. Each missing entry is an error naming the op
//! and the device, as PyTorch's "Could not run ... with arguments from the
//! 'CUDA' backend", never a panic.

use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::Backend;
use ferrotorch_core::backend::{
    FactoryKernels, FftKernels, IndexKernels, IndexTerm, LinalgKernels, OptimKernels,
    ParamOperands, RnnKernels,
};
use ferrotorch_core::op::factory::{Distribution, Sequence};
use ferrotorch_core::op::index::IndexReduce;
use ferrotorch_core::op::fft::FftSpec;
use ferrotorch_core::op::linalg::{CholeskySpec, EigSpec, EighSpec, LdlSolveSpec, LdlSpec, LuSolveSpec, LuSpec, QrSpec, SvdSpec, TriangularSpec};
use ferrotorch_core::op::optim::OptimStep;
use ferrotorch_core::random::Generator;
use ferrotorch_core::{DType, Dst, Layout, Result, Src};

impl FactoryKernels for Cuda {
    fn sequence(&self, seq: Sequence, dtype: DType, out: Dst) -> Result<()> {
        let n = out.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(out.base)?;
        let (p, n64) = (ptr(out.base), n as i64);
        // `out` is fresh and contiguous: element i is at p + i (its offset is 0).
        let name = match seq {
            Sequence::Affine { .. } => "seq_affine",
            Sequence::AffineInt { .. } => "seq_affine_int",
            Sequence::Linspace { .. } | Sequence::Logspace { .. } => "seq_linspace",
        };
        let f = function(dev, Family::Fill, dtype, name)?;
        let p = p + (out.layout.offset * dtype.itemsize()) as u64;
        // The kernel's scalar parameters, by variant (unused ones stay 0).
        let (f0, f1, f2, flag, i0, i1) = match seq {
            Sequence::Affine { start, step } => (start, step, 0.0, 0i32, 0i64, 0i64),
            Sequence::AffineInt { start, step } => (0.0, 0.0, 0.0, 0, start, step),
            Sequence::Linspace { start, end } => (start, end, 1.0, 0, 0, 0),
            Sequence::Logspace { start, end, base } => (start, end, base, 1, 0, 0),
        };
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&p).arg(&n64);
        match seq {
            Sequence::Affine { .. } => b.arg(&f0).arg(&f1),
            Sequence::AffineInt { .. } => b.arg(&i0).arg(&i1),
            Sequence::Linspace { .. } | Sequence::Logspace { .. } => b.arg(&f0).arg(&f1).arg(&f2).arg(&flag),
        };
        // SAFETY: `seq_affine(T*, i64, double, double)`, `seq_affine_int(T*,
        // i64, i64, i64)` or `seq_linspace(T*, i64, double, double, double,
        // int)`, as pushed; `out` holds n contiguous elements of `dtype`.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }
    /// Uniform, normal and integer draws on `random.cu`'s Philox generator,
    /// keyed by two draws of the host generator `gen` (so `manual_seed`
    /// makes them reproducible); Poisson, binomial and permutations have no
    /// CUDA kernel yet.
    fn random(&self, dist: Distribution, gen: &mut Generator, dtype: DType, out: Dst, _params: &[Src]) -> Result<()> {
        let name = match dist {
            Distribution::Uniform if dtype.is_floating_point() => "random_uniform",
            Distribution::Normal { .. } if dtype.is_floating_point() => "random_normal",
            Distribution::Integers { .. } => "random_integers",
            other => return Err(no_kernel(&format!("random {other:?} ({dtype})"))),
        };
        let n = out.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Random, dtype, name)?;
        let p = ptr(out.base) + (out.layout.offset * dtype.itemsize()) as u64;
        let (n64, key, base) = (n as i64, gen.next_u64(), gen.next_u64());
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&p).arg(&n64).arg(&key).arg(&base);
        let (mean, std, low, span) = match dist {
            Distribution::Normal { mean, std } => (mean, std, 0i64, 0u64),
            Distribution::Integers { low, span } => (0.0, 0.0, low, span.max(1)),
            _ => (0.0, 0.0, 0, 0),
        };
        match dist {
            Distribution::Normal { .. } => {
                b.arg(&mean).arg(&std);
            }
            Distribution::Integers { .. } => {
                b.arg(&low).arg(&span);
            }
            _ => {}
        }
        // SAFETY: `random_uniform(T*, i64, u64, u64)`, `random_normal(T*,
        // i64, u64, u64, double, double)` or `random_integers(T*, i64, u64,
        // u64, i64, u64)`, as pushed; `out` is fresh and holds n contiguous
        // elements of `dtype` from p.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }
}

impl IndexKernels for Cuda {
    fn index_read(&self, dtype: DType, src: Src, terms: &[IndexTerm], block: &Layout, out: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(no_kernel(&format!("index_read ({dtype})")));
        }
        self.index_read_impl(dtype, src, terms, block, out)
    }
    fn index_write(&self, dtype: DType, dst: Dst, terms: &[IndexTerm], block: &Layout, vals: Src, mode: IndexReduce) -> Result<()> {
        if dtype.is_complex() {
            return Err(no_kernel(&format!("index_write ({dtype})")));
        }
        self.index_write_impl(dtype, dst, terms, block, vals, mode)
    }
    fn count_nonzero(&self, x: Src, dtype: DType) -> Result<usize> {
        self.count_nonzero_impl(x, dtype)
    }
    fn nonzero(&self, x: Src, dtype: DType, out: Dst) -> Result<()> {
        self.nonzero_impl(x, dtype, out)
    }
    fn masked_fill(&self, dtype: DType, dst: Dst, mask: Src, value: Src) -> Result<()> {
        // `where(mask, value, dst)` in place: each element is read and
        // written by one thread, unless dst addresses an element twice
        // (then an unmasked write-back could race with a masked one).
        if dst.layout.has_internal_overlap() {
            return Err(no_kernel("masked_fill into an overlapping view"));
        }
        let ndim = dst.layout.ndim();
        let value_everywhere = Layout { shape: dst.layout.shape.clone(), strides: vec![0; ndim].into(), offset: value.layout.offset };
        let keep = Src { base: dst.base, layout: dst.layout };
        self.select(dtype, dst, mask, Src { base: value.base, layout: &value_everywhere }, keep)
    }
    fn masked_scatter(&self, dtype: DType, dst: Dst, mask: Src, source: Src) -> Result<()> {
        self.masked_scatter_impl(dtype, dst, mask, source)
    }
}

impl LinalgKernels for Cuda {
    fn svd(&self, _spec: &SvdSpec, _dtype: DType, _batched: bool, _a: Src, _s: Dst, _uv: Option<(Dst, Dst)>) -> Result<()> {
        Err(no_kernel("svd"))
    }
    fn lu_factor(&self, _spec: &LuSpec, _dtype: DType, _a: Src, _lu: Dst, _pivots: Dst, _info: Dst) -> Result<()> {
        Err(no_kernel("lu_factor"))
    }
    fn lu_solve(&self, _spec: &LuSolveSpec, _dtype: DType, _lu: Src, _pivots: Src, _b: Src, _x: Dst) -> Result<()> {
        Err(no_kernel("lu_solve"))
    }
    fn cholesky(&self, _spec: &CholeskySpec, _dtype: DType, _a: Src, _factor: Dst, _info: Dst) -> Result<()> {
        Err(no_kernel("cholesky"))
    }
    fn qr(&self, _spec: &QrSpec, _dtype: DType, _a: Src, _q: Option<Dst>, _r: Dst) -> Result<()> {
        Err(no_kernel("qr"))
    }
    fn eigh(&self, _spec: &EighSpec, _dtype: DType, _a: Src, _w: Dst, _v: Option<Dst>) -> Result<()> {
        Err(no_kernel("eigh"))
    }
    fn solve_triangular(&self, _spec: &TriangularSpec, _dtype: DType, _a: Src, _b: Src, _x: Dst) -> Result<()> {
        Err(no_kernel("solve_triangular"))
    }
    fn eig(&self, _spec: &EigSpec, _dtype: DType, _a: Src, _w: Dst, _v: Option<Dst>) -> Result<()> {
        Err(no_kernel("eig"))
    }
    fn ldl_factor(&self, _spec: &LdlSpec, _dtype: DType, _a: Src, _ld: Dst, _pivots: Dst, _info: Dst) -> Result<()> {
        Err(no_kernel("ldl_factor"))
    }
    fn ldl_solve(&self, _spec: &LdlSolveSpec, _dtype: DType, _ld: Src, _pivots: Src, _b: Src, _x: Dst) -> Result<()> {
        Err(no_kernel("ldl_solve"))
    }
}

impl FftKernels for Cuda {
    fn fft(&self, _spec: &FftSpec, _dtype: DType, _x: Src, _out: Dst) -> Result<()> {
        Err(no_kernel("fft"))
    }
}

impl OptimKernels for Cuda {
    fn optimizer_step(&self, dtype: DType, _slots: usize, steps: &[OptimStep], params: &[ParamOperands]) -> Result<()> {
        self.optimizer_step_impl(dtype, steps, params)
    }
}

impl RnnKernels for Cuda {
    fn lstm_cell(&self, _dtype: DType, _igates: Src, _hgates: Src, _cx: Src, _hy: Dst, _cy: Dst, _workspace: Dst) -> Result<()> {
        Err(no_kernel("lstm_cell"))
    }
    fn lstm_cell_backward(&self, _dtype: DType, _workspace: Src, _cx: Src, _cy: Src, _dhy: Option<Src>, _dcy: Option<Src>, _dgates: Dst, _dcx: Dst) -> Result<()> {
        Err(no_kernel("lstm_cell_backward"))
    }
    fn gru_cell(&self, _dtype: DType, _igates: Src, _hgates: Src, _hx: Src, _hy: Dst, _workspace: Dst) -> Result<()> {
        Err(no_kernel("gru_cell"))
    }
    fn gru_cell_backward(&self, _dtype: DType, _workspace: Src, _hx: Src, _dhy: Src, _digates: Dst, _dhgates: Dst, _dhx: Dst) -> Result<()> {
        Err(no_kernel("gru_cell_backward"))
    }
}

