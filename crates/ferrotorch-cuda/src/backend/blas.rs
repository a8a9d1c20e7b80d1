//! Matrix products on cuBLAS: one handle per device on the device's stream,
//! running the calls that [`crate::blas_plan`] derives from the layouts.
//! Operands cuBLAS cannot read as they are (no unit stride in the matrix
//! dims) are first copied to contiguous device buffers.

use super::{device_at, drv, no_kernel, Cuda};
use crate::blas_plan::{plan, BlasCall, BlasPlan, Unplannable};
use crate::device::DeviceState;
use cudarc::cublas::{result as blas, sys};
use ferrotorch_core::dtype::pretty;
use ferrotorch_core::{Backend, DType, Device, DeviceType, Dst, Error, Layout, Result, Scalar, Src, Storage};
use std::sync::Mutex;

/// A cuBLAS handle bound to one device's stream.
pub struct BlasHandle(Mutex<sys::cublasHandle_t>);

// SAFETY: a cuBLAS handle may be used from any thread as long as calls on it
// do not overlap; every use goes through the mutex.
unsafe impl Send for BlasHandle {}
// SAFETY: as above: shared access only reaches the handle through the mutex.
unsafe impl Sync for BlasHandle {}

impl Drop for BlasHandle {
    fn drop(&mut self) {
        let h = *self.0.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the handle was created by `create` and is destroyed once.
        let _ = unsafe { blas::destroy_handle(h) };
    }
}

fn blas_err(e: blas::CublasError) -> Error {
    Error::runtime(format!("CUDA error: cuBLAS {e:?}"))
}

impl BlasHandle {
    /// A handle for `dev`, queuing on its stream. cuBLAS's default math mode
    /// keeps float32 products in float32 (no TF32), as PyTorch's default
    /// `torch.backends.cuda.matmul.allow_tf32 = False`.
    fn create(dev: &DeviceState) -> Result<BlasHandle> {
        crate::library::cublas_status()?;
        dev.ctx.bind_to_thread().map_err(drv)?;
        let h = blas::create_handle().map_err(blas_err)?;
        let handle = BlasHandle(Mutex::new(h));
        // SAFETY: `h` is a live handle and the stream belongs to the context
        // bound above (the legacy default stream is the null pointer).
        unsafe { blas::set_stream(h, dev.stream.cu_stream() as sys::cudaStream_t) }.map_err(blas_err)?;
        Ok(handle)
    }

    /// The device's handle, created on first use.
    fn of(dev: &DeviceState) -> Result<&BlasHandle> {
        if let Some(h) = dev.blas.get() {
            return Ok(h);
        }
        // Two threads may both create one; the loser's is dropped.
        let _ = dev.blas.set(BlasHandle::create(dev)?);
        dev.blas.get().ok_or_else(|| Error::runtime("cuBLAS handle missing after creation"))
    }
}

/// `out (+)= a @ b` over the shared batch dims, float32/float64 only (the op
/// layer computes float16/bfloat16 products in float32).
pub(super) fn matmul(be: &Cuda, dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool) -> Result<()> {
    let nd = out.layout.ndim();
    if nd < 2 || a.layout.ndim() != nd || b.layout.ndim() != nd {
        return Err(Error::runtime(format!(
            "CUDA matmul takes (batched) matrices of one rank, got {:?} @ {:?} into {:?}",
            a.layout.shape, b.layout.shape, out.layout.shape
        )));
    }
    let k = a.layout.shape[nd - 1];
    if out.layout.numel() == 0 {
        return Ok(());
    }
    device_at(out.base)?;
    if !matches!(dtype, DType::Float32 | DType::Float64) {
        // PyTorch's CUDA GEMM has no integer kernel either.
        return Err(Error::not_implemented(format!("\"addmm_cuda\" not implemented for '{}'", pretty(dtype))));
    }
    if k == 0 {
        return if accumulate { Ok(()) } else { be.fill(out, dtype, Scalar::Float(0.0)) };
    }
    match plan(out.layout, a.layout, b.layout) {
        Ok(p) => run(dtype, &p, out.base, a.base, b.base, accumulate),
        Err(Unplannable::Operand(which)) => {
            let src = if which == 0 { a } else { b };
            let (storage, layout) = contiguous_copy(be, dtype, src, out.base)?;
            let copy = Src { base: storage.as_ptr(), layout: &layout };
            let (a, b) = if which == 0 { (copy, b) } else { (a, copy) };
            matmul(be, dtype, out, a, b, accumulate)
        }
        Err(Unplannable::Output) => {
            // Compute into a contiguous buffer, then copy into place.
            let tmp_src = Src { base: out.base, layout: out.layout };
            let (storage, layout) = if accumulate {
                contiguous_copy(be, dtype, tmp_src, out.base)?
            } else {
                let layout = Layout::contiguous(&out.layout.shape);
                (be.allocate(layout.numel() * dtype.itemsize(), device_of_ptr(out.base)?)?, layout)
            };
            matmul(be, dtype, Dst { base: storage.as_mut_ptr(), layout: &layout }, a, b, accumulate)?;
            be.copy_cast(out, dtype, Src { base: storage.as_ptr(), layout: &layout }, dtype)
        }
        Err(Unplannable::TooLarge) => Err(Error::runtime(format!(
            "CUDA matmul: sizes {:?} @ {:?} exceed cuBLAS's 32-bit dims",
            a.layout.shape, b.layout.shape
        ))),
    }
}

/// The CUDA device holding the device pointer `p`.
pub(super) fn device_of_ptr(p: *const u8) -> Result<Device> {
    let index = crate::device::device_of(p)?;
    Ok(Device { kind: DeviceType::Cuda, index: Some(index as u32) })
}

/// A contiguous copy of `src` on the device holding `near`.
fn contiguous_copy(be: &Cuda, dtype: DType, src: Src, near: *const u8) -> Result<(Storage, Layout)> {
    let layout = Layout::contiguous(&src.layout.shape);
    let storage = be.allocate(layout.numel() * dtype.itemsize(), device_of_ptr(near)?)?;
    be.copy_cast(Dst { base: storage.as_mut_ptr(), layout: &layout }, dtype, src, dtype)?;
    Ok((storage, layout))
}

/// Issues the planned calls.
fn run(dtype: DType, p: &BlasPlan, out: *mut u8, a: *const u8, b: *const u8, accumulate: bool) -> Result<()> {
    let dev = device_at(out)?;
    let handle = BlasHandle::of(dev)?;
    dev.ctx.bind_to_thread().map_err(drv)?;
    let h = handle.0.lock().unwrap_or_else(|e| e.into_inner());
    let c: &BlasCall = &p.call;
    let op = |t: bool| if t { sys::cublasOperation_t::CUBLAS_OP_T } else { sys::cublasOperation_t::CUBLAS_OP_N };
    let size = dtype.itemsize() as i64;
    let bases = [a, b];
    for &(sa, sb, so) in &p.starts {
        let starts = [sa, sb];
        let pa = bases[c.a.which].wrapping_offset((starts[c.a.which] * size) as isize);
        let pb = bases[c.b.which].wrapping_offset((starts[c.b.which] * size) as isize);
        let pc = out.wrapping_offset((so * size) as isize);
        // SAFETY: the plan's leading dims, strides and offsets address only
        // elements inside the three layouts (checked against an emulation in
        // `blas_plan`'s tests), whose storages are live device memory of
        // this device; the sizes fit cuBLAS's ints (the plan refuses others).
        // alpha/beta point at host values, cuBLAS's default pointer mode.
        unsafe {
            match dtype {
                DType::Float32 => {
                    let (alpha, beta) = (1.0f32, if accumulate { 1.0f32 } else { 0.0 });
                    blas::sgemm_strided_batched(
                        *h, op(c.a.trans), op(c.b.trans), c.m as i32, c.n as i32, c.k as i32,
                        &alpha, pa.cast(), c.a.ld as i32, c.a.stride,
                        pb.cast(), c.b.ld as i32, c.b.stride,
                        &beta, pc.cast(), c.ldc as i32, c.stride_c, c.batch as i32,
                    )
                }
                DType::Float64 => {
                    let (alpha, beta) = (1.0f64, if accumulate { 1.0f64 } else { 0.0 });
                    blas::dgemm_strided_batched(
                        *h, op(c.a.trans), op(c.b.trans), c.m as i32, c.n as i32, c.k as i32,
                        &alpha, pa.cast(), c.a.ld as i32, c.a.stride,
                        pb.cast(), c.b.ld as i32, c.b.stride,
                        &beta, pc.cast(), c.ldc as i32, c.stride_c, c.batch as i32,
                    )
                }
                _ => return Err(no_kernel("matmul")),
            }
        }
        .map_err(blas_err)?;
    }
    Ok(())
}
