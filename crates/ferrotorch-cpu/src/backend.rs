//! The CPU as a [`Backend`]: host memory from the caching pool, and this
//! crate's kernels.

use crate::{copy, pointwise, Dst, Src};
use ferrotorch_core::{Backend, BinaryOp, DType, Device, DeviceType, Result, Scalar, Storage, UnaryOp};

/// The host device's backend.
pub struct Cpu;

impl Backend for Cpu {
    fn device_type(&self) -> DeviceType {
        DeviceType::Cpu
    }
    fn allocate(&self, nbytes: usize, _device: Device) -> Result<Storage> {
        Storage::new_cpu(nbytes)
    }
    fn allocate_zeroed(&self, nbytes: usize, _device: Device) -> Result<(Storage, bool)> {
        Storage::new_cpu_zeroed(nbytes)
    }
    fn copy_cast(&self, dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) -> Result<()> {
        copy::copy_cast(dst, dst_dtype, src, src_dtype);
        Ok(())
    }
    fn fill(&self, dst: Dst, dtype: DType, value: Scalar) -> Result<()> {
        copy::fill(dst, dtype, value);
        Ok(())
    }
    unsafe fn read_scalar(&self, base: *const u8, dtype: DType, offset: usize) -> Result<Scalar> {
        // SAFETY: the caller guarantees `offset` addresses an element of `dtype`.
        Ok(unsafe { copy::read_scalar(base, dtype, offset) })
    }
    fn unary(&self, op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()> {
        pointwise::unary(op, dtype, out, x)
    }
    fn binary(&self, op: BinaryOp, compute: DType, out: Dst, a: Src, b: Src) -> Result<()> {
        pointwise::binary(op, compute, out, a, b)
    }
}
