//! [`Cuda`]: the `Backend` of the `cuda` device. Elementwise ops, casts,
//! fills, reductions and softmax run the NVRTC-compiled kernels of
//! [`crate::kernels`], matrix products cuBLAS (`blas.rs`), convolutions
//! column matrices and cuBLAS (`conv.rs`), poolings `pool.rs`; of the other
//! structured families (`families.rs`) some have kernels and the rest return
//! an error naming the op.
//!
//! Operands are device pointers plus layouts; each launch packs the layouts
//! by value ([`crate::geometry`]) and runs on the device's stream.

mod blas;
mod compact;
mod conv;
mod families;
mod folds;
mod index;
mod norm;
mod optim;
mod pool;
mod sort;

pub use blas::BlasHandle;

use crate::alloc::{lock, oom_error, DeviceBlock};
use crate::device::{current_device, device_of, state, DeviceState};
use crate::geometry::{elementwise, grid_for, reduction, KLayout, BLOCK};
use crate::kernels::{binary_entry, copy_entry, dtype_code, reduce_entry, unary_entry, unary_params, Family};
use cudarc::driver::{result, CudaFunction, DriverError, LaunchConfig, PushKernelArg};
use ferrotorch_alloc::DEFAULT_STREAM;
use ferrotorch_core::element::Element;
use ferrotorch_core::op::{ArgKind, CumKind, ReduceKind, TernaryOp};
use ferrotorch_core::{
    dispatch_dtype, Backend, BinaryOp, DType, Device, DeviceType, Dst, Error, Layout, Result, Scalar, Src, Storage,
    UnaryOp,
};

/// The `cuda` device's backend.
pub struct Cuda;

/// The error for an op without a CUDA kernel: PyTorch's wording for a
/// kernel missing on a backend (a `NotImplementedError`).
pub(crate) fn no_kernel(op: &str) -> Error {
    Error::not_implemented(format!(
        "Could not run '{op}' with arguments from the 'CUDA' backend: ferrotorch has no CUDA kernel for it yet"
    ))
}

fn drv(e: DriverError) -> Error {
    Error::runtime(format!("CUDA error: {e}"))
}

/// The state of the device holding `ptr`.
fn device_at(ptr: *const u8) -> Result<&'static DeviceState> {
    state(device_of(ptr)?)
}

fn function(dev: &DeviceState, family: Family, dtype: DType, name: &'static str) -> Result<CudaFunction> {
    // The kernel sources are written for the real dtypes; complex operands
    // must not reach the real-only dispatch below.
    if dtype.is_complex() {
        return Err(no_kernel(&format!("{name} ({dtype})")));
    }
    dev.kernels.function(&dev.ctx, family, dtype, dev.arch, name)
}

fn grid(n: usize) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid_for(n), 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// One block per row/output (capped; the kernels loop over the rest).
fn per_row(rows: usize, threads: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (rows.clamp(1, 65_535 * 8) as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

fn ptr(p: *const u8) -> u64 {
    p as u64
}

/// The bit pattern of `value` converted to `dtype` by the engine's one
/// conversion rule, in the low bytes of a `u64` (what `fill.cu` takes).
fn scalar_bits(dtype: DType, value: Scalar) -> u64 {
    dispatch_dtype!(dtype, T => {
        let v: T = value.to_element::<T>();
        let mut bytes = [0u8; 8];
        // SAFETY: T is at most 8 bytes and plain data; copying its bytes
        // into the buffer is a reinterpretation, which the kernel undoes.
        unsafe { std::ptr::copy_nonoverlapping((&v as *const T).cast::<u8>(), bytes.as_mut_ptr(), std::mem::size_of::<T>()) };
        u64::from_le_bytes(bytes)
    })
}

/// The value of the bytes of one element of `dtype`.
fn decode_scalar(dtype: DType, bytes: &[u8; 8]) -> Scalar {
    dispatch_dtype!(dtype, T => {
        // SAFETY: the buffer holds at least size_of::<T>() initialised bytes;
        // every bit pattern is a valid T except for bool, whose element the
        // device wrote as 0 or 1.
        let v: T = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) };
        if dtype.is_floating_point() {
            Scalar::Float(v.to_f64())
        } else if dtype == DType::Bool {
            Scalar::Bool(v.to_i64() != 0)
        } else {
            Scalar::Int(v.to_i64())
        }
    })
}

impl Cuda {
    /// `out = f(operands)` for an elementwise entry taking `(layout, ptr)`
    /// pairs then `n` and `extra` trailing scalars.
    fn launch_elementwise<const N: usize>(
        &self,
        family: Family,
        dtype: DType,
        name: &'static str,
        shape: &[usize],
        operands: [(&Layout, *const u8); N],
        extra: &[f64],
    ) -> Result<()> {
        let n: usize = shape.iter().product();
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(operands[0].1)?;
        let f = function(dev, family, dtype, name)?;
        let layouts: [&Layout; N] = std::array::from_fn(|k| operands[k].0);
        let packed: [KLayout; N] = elementwise(shape, layouts)?;
        let ptrs: [u64; N] = std::array::from_fn(|k| ptr(operands[k].1));
        let n64 = n as i64;
        let mut b = dev.stream.launch_builder(&f);
        for k in 0..N {
            b.arg(&packed[k]).arg(&ptrs[k]);
        }
        b.arg(&n64);
        for x in extra {
            b.arg(x);
        }
        // SAFETY: the entry point's parameters are (FtLayout, pointer) per
        // operand, then i64 n, then `extra.len()` doubles, exactly as pushed;
        // every layout addresses elements inside its storage (the op layer's
        // invariant), and the pointers are device memory of this device.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }
}

impl Backend for Cuda {
    fn device_type(&self) -> DeviceType {
        DeviceType::Cuda
    }

    fn allocate(&self, nbytes: usize, device: Device) -> Result<Storage> {
        Ok(self.allocate_zeroed_or_not(nbytes, device, false)?.0)
    }

    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<(Storage, bool)> {
        self.allocate_zeroed_or_not(nbytes, device, true)
    }

    fn copy_cast(&self, dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) -> Result<()> {
        if src_dtype.is_complex() || dst_dtype.is_complex() {
            return Err(no_kernel(&format!("copy ({src_dtype} to {dst_dtype})")));
        }
        let shape = dst.layout.shape.clone();
        self.launch_elementwise(
            Family::Copy,
            dst_dtype,
            copy_entry(src_dtype),
            &shape,
            [(dst.layout, dst.base as *const u8), (src.layout, src.base)],
            &[],
        )
    }

    fn fill(&self, dst: Dst, dtype: DType, value: Scalar) -> Result<()> {
        let n = dst.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let dev = device_at(dst.base)?;
        let f = function(dev, Family::Fill, dtype, "fill")?;
        let [k] = elementwise(&dst.layout.shape, [dst.layout])?;
        let (p, bits, n64) = (ptr(dst.base), scalar_bits(dtype, value), n as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&k).arg(&p).arg(&bits).arg(&n64);
        // SAFETY: `fill(FtLayout, T*, u64, i64)`, as pushed; the layout is
        // inside the storage.
        unsafe { b.launch(grid(n)) }.map_err(drv)?;
        Ok(())
    }

    fn accumulate(&self, dtype: DType, dst: Dst, src: Src, _row_major: bool) -> Result<()> {
        // Each element is read and written by one thread, so `dst += src`
        // is the add kernel in place, unless dst addresses an element twice.
        if dst.layout.has_internal_overlap() {
            return Err(no_kernel("accumulate into an overlapping view"));
        }
        self.binary(BinaryOp::Add, dtype, dst, Src { base: dst.base, layout: dst.layout }, src)
    }

    unsafe fn read_scalar(&self, base: *const u8, dtype: DType, offset: usize) -> Result<Scalar> {
        if dtype.is_complex() {
            return Err(no_kernel(&format!("item ({dtype})")));
        }
        let dev = device_at(base)?;
        dev.ctx.bind_to_thread().map_err(drv)?;
        let mut bytes = [0u8; 8];
        let size = dtype.itemsize();
        let at = ptr(base) + (offset * size) as u64;
        // SAFETY: the caller guarantees `offset` addresses an element of
        // `dtype` in the storage; the copy is synchronous with the legacy
        // default stream the kernels run on, so it sees their results.
        unsafe { result::memcpy_dtoh_sync(&mut bytes[..size], at) }.map_err(drv)?;
        Ok(decode_scalar(dtype, &bytes))
    }

    fn unary(&self, op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()> {
        let name = unary_entry(op, dtype).ok_or_else(|| no_kernel(op.name()))?;
        let shape = out.layout.shape.clone();
        self.launch_elementwise(
            Family::Unary,
            dtype,
            name,
            &shape,
            [(out.layout, out.base as *const u8), (x.layout, x.base)],
            &unary_params(op, dtype),
        )
    }

    fn binary(&self, op: BinaryOp, compute: DType, out: Dst, a: Src, b: Src) -> Result<()> {
        let name = binary_entry(op, compute).ok_or_else(|| no_kernel(op.name()))?;
        let shape = out.layout.shape.clone();
        self.launch_elementwise(
            Family::Binary,
            compute,
            name,
            &shape,
            [(out.layout, out.base as *const u8), (a.layout, a.base), (b.layout, b.base)],
            &[],
        )
    }

    fn add_scaled(&self, dtype: DType, out: Dst, a: Src, b: Src, s: f64) -> Result<()> {
        if !dtype.is_floating_point() {
            return Err(no_kernel("add"));
        }
        let shape = out.layout.shape.clone();
        self.launch_elementwise(
            Family::Binary,
            dtype,
            "add_scaled",
            &shape,
            [(out.layout, out.base as *const u8), (a.layout, a.base), (b.layout, b.base)],
            &[s],
        )
    }

    fn select(&self, dtype: DType, out: Dst, cond: Src, x: Src, y: Src) -> Result<()> {
        let shape = out.layout.shape.clone();
        self.launch_elementwise(
            Family::Ternary,
            dtype,
            "where_select",
            &shape,
            [(out.layout, out.base as *const u8), (cond.layout, cond.base), (x.layout, x.base), (y.layout, y.base)],
            &[],
        )
    }

    fn ternary(&self, op: TernaryOp, dtype: DType, out: Dst, a: Src, b: Src, c: Src) -> Result<()> {
        let TernaryOp::MulAdd = op;
        if !dtype.is_floating_point() {
            return Err(no_kernel("addcmul"));
        }
        let shape = out.layout.shape.clone();
        self.launch_elementwise(
            Family::Ternary,
            dtype,
            "ternary_mul_add",
            &shape,
            [(out.layout, out.base as *const u8), (a.layout, a.base), (b.layout, b.base), (c.layout, c.base)],
            &[],
        )
    }

    fn matmul(&self, dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool) -> Result<()> {
        blas::matmul(self, dtype, out, a, b, accumulate)
    }

    fn reduce(&self, kind: ReduceKind, x: Src, x_dtype: DType, dims: &[bool], out: Dst, out_dtype: DType) -> Result<()> {
        let g = reduction(x.layout, out.layout, dims)?;
        let entry = reduce_entry(kind, x_dtype, g.n_in).ok_or_else(|| no_kernel(reduce_name(kind)))?;
        if g.n_out == 0 {
            return Ok(());
        }
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Reduce, x_dtype, entry.name)?;
        let (xp, op) = (ptr(x.base), ptr(out.base));
        let (code, n_out, n_in) = (dtype_code(out_dtype), g.n_out as i64, g.n_in as i64);
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&g.outer_x).arg(&g.outer_out).arg(&g.inner_x).arg(&xp).arg(&op).arg(&code).arg(&n_out).arg(&n_in).arg(&entry.p);
        // SAFETY: `reduce_<kind>(FtLayout, FtLayout, FtLayout, const T*,
        // void*, int, i64, i64, double)`, as pushed; the geometry addresses
        // elements of x and out inside their storages.
        unsafe { b.launch(per_row(g.n_out, BLOCK)) }.map_err(drv)?;
        Ok(())
    }

    fn sum_float(&self, x: Src, dtype: DType, dims: &[bool], _keepdim: bool, out: Dst) -> Result<()> {
        self.reduce(ReduceKind::Sum, x, dtype, dims, out, dtype)
    }

    fn sums_half_in_f32(&self, _x: &Layout, _dims: &[bool], _keepdim: bool) -> bool {
        // The kernel accumulates float16/bfloat16 in float32 and rounds once.
        false
    }

    fn var_mean(&self, x: Src, dtype: DType, dims: &[bool], correction: f64, sqrt: bool, var: Dst, mean: Option<Dst>) -> Result<()> {
        self.var_mean_impl(x, dtype, dims, correction, sqrt, var, mean)
    }

    fn reduce_arg(&self, kind: ArgKind, x: Src, dtype: DType, dims: &[bool], values: Option<Dst>, indices: Dst) -> Result<()> {
        self.reduce_arg_impl(kind, x, dtype, dims, values, indices)
    }

    fn cumulative(&self, kind: CumKind, x: Src, x_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()> {
        self.cumulative_impl(kind, x, x_dtype, dim, out, out_dtype)
    }

    fn cumulative_arg(&self, kind: ArgKind, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        self.cumulative_arg_impl(kind, x, dtype, dim, values, indices)
    }

    fn cumprod_backward(&self, _x: Src, _g: Src, _out: Src, _dim: usize, _exact: bool, _w_dtype: DType, _x_dtype: DType, _grad: Dst) -> Result<()> {
        Err(no_kernel("cumprod_backward"))
    }

    unsafe fn copy_from_host(&self, dst: *mut u8, host: *const u8, nbytes: usize) -> Result<()> {
        let dev = device_at(dst)?;
        dev.ctx.bind_to_thread().map_err(drv)?;
        // SAFETY: the caller guarantees `host` is readable for `nbytes`
        // bytes; `dst` is device memory of `dev`, writable for as many.
        // Synchronous with the legacy default stream the kernels run on.
        unsafe { result::memcpy_htod_sync(ptr(dst), std::slice::from_raw_parts(host, nbytes)) }.map_err(drv)
    }

    unsafe fn copy_to_host(&self, host: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        let dev = device_at(src)?;
        dev.ctx.bind_to_thread().map_err(drv)?;
        // SAFETY: the caller guarantees `host` is writable for `nbytes`
        // bytes and `src` readable device memory of `dev`; the copy waits
        // for the kernels queued before it on the legacy default stream.
        unsafe { result::memcpy_dtoh_sync(std::slice::from_raw_parts_mut(host, nbytes), ptr(src)) }.map_err(drv)
    }

    fn softmax(&self, x: Src, out: Dst, dtype: DType, dim: usize, log: bool) -> Result<()> {
        if !dtype.is_floating_point() {
            return Err(no_kernel(if log { "log_softmax" } else { "softmax" }));
        }
        let n = x.layout.numel();
        if n == 0 {
            return Ok(());
        }
        let (kx, xs) = folds::lanes(x.layout, dim)?;
        let (ko, os) = folds::lanes(out.layout, dim)?;
        let len = if x.layout.ndim() == 0 { 1 } else { x.layout.shape[dim] };
        let rows = n / len;
        let dev = device_at(out.base)?;
        let f = function(dev, Family::Softmax, dtype, "softmax")?;
        let (xp, op, rows64, len64, flag) = (ptr(x.base), ptr(out.base), rows as i64, len as i64, log as i32);
        // Short rows need fewer threads; whole warps keep the shuffles simple.
        let threads = (len.div_ceil(32) * 32).clamp(32, BLOCK as usize) as u32;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&kx).arg(&xp).arg(&ko).arg(&op).arg(&rows64).arg(&len64).arg(&xs).arg(&os).arg(&flag);
        // SAFETY: `softmax(FtLayout, const T*, FtLayout, T*, i64, i64, i64,
        // i64, int)`, as pushed; rows and the dim stride stay inside both
        // storages.
        unsafe { b.launch(per_row(rows, threads)) }.map_err(drv)?;
        Ok(())
    }
}

impl Cuda {
    fn allocate_zeroed_or_not(&self, nbytes: usize, device: Device, zeroed: bool) -> Result<(Storage, bool)> {
        let index = match device.index {
            Some(i) => i as usize,
            None => current_device()?,
        };
        let dev = state(index)?;
        let mut pool = lock(&dev.pool);
        let got = if zeroed { pool.allocate_zeroed_on(DEFAULT_STREAM, nbytes) } else { pool.allocate_on(DEFAULT_STREAM, nbytes).map(|b| (b, false)) };
        drop(pool);
        let (block, is_zero) = got.map_err(|e| oom_error(index, &e, dev.mem_info().ok()))?;
        let owner = DeviceBlock { pool: &dev.pool, block, stream: DEFAULT_STREAM };
        let device = Device { kind: DeviceType::Cuda, index: Some(index as u32) };
        // SAFETY: the block is `block.size >= nbytes` bytes of this device's
        // memory, owned by `owner` until the storage drops it; device memory
        // from cuMemAlloc is aligned to at least 256 bytes.
        let storage = unsafe { Storage::from_foreign(block.ptr, nbytes, device, Box::new(owner)) };
        Ok((storage, is_zero || nbytes == 0))
    }
}

fn reduce_name(kind: ReduceKind) -> &'static str {
    match kind {
        ReduceKind::Sum => "sum",
        ReduceKind::Mean => "mean",
        ReduceKind::Prod | ReduceKind::ProdAll => "prod",
        ReduceKind::Max => "max",
        ReduceKind::Min => "min",
        ReduceKind::Var { .. } => "var",
        ReduceKind::Std { .. } => "std",
        ReduceKind::LogSumExp => "logsumexp",
        ReduceKind::Norm(_) | ReduceKind::NormShortF32(_) | ReduceKind::Norm2FusedF32 => "norm",
        ReduceKind::All => "all",
        ReduceKind::Any => "any",
        ReduceKind::CountNonzero => "count_nonzero",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn fill_bits_are_the_element_bytes() {
        assert_eq!(scalar_bits(DType::Float32, Scalar::Float(1.5)), u64::from(1.5f32.to_bits()));
        assert_eq!(scalar_bits(DType::Float64, Scalar::Int(-2)), (-2.0f64).to_bits());
        assert_eq!(scalar_bits(DType::Float16, Scalar::Float(0.1)), u64::from(f16::from_f64(0.1).to_bits()));
        assert_eq!(scalar_bits(DType::BFloat16, Scalar::Float(-3.0)), u64::from(bf16::from_f64(-3.0).to_bits()));
        assert_eq!(scalar_bits(DType::Int8, Scalar::Int(-1)), 0xff);
        assert_eq!(scalar_bits(DType::Bool, Scalar::Float(0.5)), 1);
        // -1.0 into uint8 is 255, as PyTorch's fill_.
        assert_eq!(scalar_bits(DType::UInt8, Scalar::Float(-1.0)), 255);
        assert_eq!(scalar_bits(DType::Int64, Scalar::Int(i64::MIN)), i64::MIN as u64);
    }

    #[test]
    fn decoding_reverses_fill_bits() {
        for (dt, v) in [
            (DType::Float32, Scalar::Float(2.25)),
            (DType::Float16, Scalar::Float(-0.5)),
            (DType::Int16, Scalar::Int(-300)),
            (DType::Bool, Scalar::Bool(true)),
            (DType::Int64, Scalar::Int(1 << 40)),
        ] {
            let bytes = scalar_bits(dt, v).to_le_bytes();
            assert_eq!(decode_scalar(dt, &bytes), v, "{dt:?}");
        }
    }

    #[test]
    fn without_a_gpu_the_backend_errors_instead_of_panicking() {
        if crate::is_available() {
            return;
        }
        let err = Cuda.allocate(16, Device { kind: DeviceType::Cuda, index: None }).unwrap_err();
        assert_eq!(err.msg, crate::device::NO_DRIVER);
        let l = Layout::contiguous(&[2]);
        let d = Dst { base: 0x1000 as *mut u8, layout: &l };
        let s = Src { base: 0x2000 as *const u8, layout: &l };
        assert!(Cuda.fill(d, DType::Float32, Scalar::Float(1.0)).is_err());
        assert!(Cuda.unary(UnaryOp::Exp, DType::Float32, d, s).is_err());
        // An op without a kernel names itself, before any device is needed.
        let e = Cuda.unary(UnaryOp::Digamma, DType::Float32, d, s).unwrap_err();
        assert_eq!(e.kind, ferrotorch_core::ErrorKind::NotImplemented);
        assert!(e.msg.contains("'digamma'") && e.msg.contains("'CUDA' backend"), "{}", e.msg);
        let e = Cuda.cumprod_backward(s, s, s, 0, false, DType::Float32, DType::Float32, d).unwrap_err();
        assert!(e.msg.contains("'cumprod_backward'"), "{}", e.msg);
        // Kernels that exist need the device first.
        let e = Cuda.cumulative(CumKind::Sum, s, DType::Float32, 0, d, DType::Float32).unwrap_err();
        assert_eq!(e.msg, crate::device::NO_DRIVER);
        let e = Cuda.reduce_arg(ArgKind::Max, s, DType::Float32, &[true], None, d).unwrap_err();
        assert_eq!(e.msg, crate::device::NO_DRIVER);
        // Products reach cuBLAS only through a device; malformed operands are
        // an error too, never an index panic.
        let m = Layout::contiguous(&[2, 2]);
        let (dm, sm) = (Dst { base: 0x1000 as *mut u8, layout: &m }, Src { base: 0x2000 as *const u8, layout: &m });
        assert_eq!(Cuda.matmul(DType::Float32, dm, sm, sm, false).unwrap_err().msg, crate::device::NO_DRIVER);
        assert!(Cuda.matmul(DType::Float32, d, s, s, false).is_err());
    }
}
