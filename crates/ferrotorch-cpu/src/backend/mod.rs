//! The CPU as a [`Backend`]: host memory from the caching pool, and this
//! crate's kernels. The structured op families have a file each.

mod conv;
mod factory;
mod fft;
mod index;
mod linalg;
mod norm;
mod optim;
mod pool;
mod rnn;
mod sort;

use crate::{cascade, complex, copy, pointwise, reduction, Dst, Src};
use ferrotorch_core::op::{ArgKind, CumKind, ReduceKind, TernaryOp};
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
        if dst_dtype.is_complex() || src_dtype.is_complex() {
            complex::copy_cast(dst, dst_dtype, src, src_dtype);
        } else {
            copy::copy_cast(dst, dst_dtype, src, src_dtype);
        }
        Ok(())
    }
    fn fill(&self, dst: Dst, dtype: DType, value: Scalar) -> Result<()> {
        if dtype.is_complex() {
            complex::fill(dst, dtype, value);
        } else {
            copy::fill(dst, dtype, value);
        }
        Ok(())
    }
    fn accumulate(&self, dtype: DType, dst: Dst, src: Src, row_major: bool) -> Result<()> {
        if dtype.is_complex() {
            complex::accumulate(dtype, dst, src, row_major);
        } else {
            copy::accumulate(dtype, dst, src, row_major);
        }
        Ok(())
    }
    unsafe fn read_scalar(&self, base: *const u8, dtype: DType, offset: usize) -> Result<Scalar> {
        // SAFETY: the caller guarantees `offset` addresses an element of `dtype`.
        Ok(unsafe { if dtype.is_complex() { complex::read_scalar(base, dtype, offset) } else { copy::read_scalar(base, dtype, offset) } })
    }
    fn unary(&self, op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()> {
        if dtype.is_complex() {
            return complex::unary(op, dtype, out, x);
        }
        pointwise::unary(op, dtype, out, x)
    }
    fn binary(&self, op: BinaryOp, compute: DType, out: Dst, a: Src, b: Src) -> Result<()> {
        if compute.is_complex() {
            return complex::binary(op, compute, out, a, b);
        }
        pointwise::binary(op, compute, out, a, b)
    }
    fn add_scaled(&self, dtype: DType, out: Dst, a: Src, b: Src, s: f64) -> Result<()> {
        if dtype.is_complex() {
            return Err(complex::not_impl("add", dtype));
        }
        crate::binary::add_scaled(s, dtype, out, a, b)
    }
    fn select(&self, dtype: DType, out: Dst, cond: Src, x: Src, y: Src) -> Result<()> {
        if dtype.is_complex() {
            return complex::select(dtype, out, cond, x, y);
        }
        pointwise::select(dtype, out, cond, x, y)
    }
    fn ternary(&self, op: TernaryOp, dtype: DType, out: Dst, a: Src, b: Src, c: Src) -> Result<()> {
        if dtype.is_complex() {
            return Err(complex::not_impl(&format!("{op:?}").to_lowercase(), dtype));
        }
        pointwise::ternary(op, dtype, out, a, b, c)
    }
    fn matmul(&self, dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool) -> Result<()> {
        if dtype.is_complex() {
            return complex::matmul(dtype, out, a, b, accumulate, [false; 2]);
        }
        crate::matmul::batched(dtype, out, a, b, accumulate)
    }
    fn matmul_conj(&self, dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool, conj: [bool; 2]) -> Result<bool> {
        if !dtype.is_complex() {
            return Ok(false);
        }
        complex::matmul(dtype, out, a, b, accumulate, conj)?;
        Ok(true)
    }
    fn reduce(&self, kind: ReduceKind, x: Src, x_dtype: DType, dims: &[bool], out: Dst, out_dtype: DType) -> Result<()> {
        if x_dtype.is_complex() || out_dtype.is_complex() {
            return match kind {
                ReduceKind::Sum | ReduceKind::Mean | ReduceKind::Prod if x_dtype == out_dtype => complex::reduce(kind, x, x_dtype, dims, out),
                _ => Err(complex::not_impl(&format!("{kind:?}").to_lowercase(), x_dtype)),
            };
        }
        reduction::reduce(kind, x, x_dtype, dims, out, out_dtype)
    }
    fn sum_float(&self, x: Src, dtype: DType, dims: &[bool], keepdim: bool, out: Dst) -> Result<()> {
        if dtype.is_complex() {
            return complex::sum(x, dtype, dims, keepdim, out);
        }
        cascade::sum(x, dtype, dims, keepdim, out)
    }
    fn sums_half_in_f32(&self, x: &ferrotorch_core::Layout, dims: &[bool], keepdim: bool) -> bool {
        // PyTorch's `should_use_acc_buffer`.
        cascade::needs_f32_buffer(&x.shape, &x.strides, dims, keepdim)
    }
    fn var_mean(&self, x: Src, dtype: DType, dims: &[bool], correction: f64, sqrt: bool, var: Dst, mean: Option<Dst>) -> Result<()> {
        // PyTorch's CPU `var`/`std` of one output element of float32/float64
        // is a two-pass kernel of its own; everything else is Welford's.
        if dtype.is_complex() {
            return Err(complex::not_impl("var", dtype));
        }
        let all = var.layout.numel() == 1 && x.layout.numel() > 0;
        if mean.is_none() && all && matches!(dtype, DType::Float32 | DType::Float64) {
            return reduction::var_all_two_pass(x, dtype, correction, sqrt, var);
        }
        reduction::var_mean(x, dtype, dims, correction, sqrt, var, mean)
    }
    fn reduce_arg(&self, kind: ArgKind, x: Src, dtype: DType, dims: &[bool], values: Option<Dst>, indices: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(complex::not_impl(&format!("{kind:?}").to_lowercase(), dtype));
        }
        reduction::reduce_arg(kind, x, dtype, dims, values, indices)
    }
    fn cumulative(&self, kind: CumKind, x: Src, x_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()> {
        if x_dtype.is_complex() || out_dtype.is_complex() {
            return complex::cumulative(kind, x, x_dtype, dim, out, out_dtype);
        }
        reduction::cumulative(kind, x, x_dtype, dim, out, out_dtype)
    }
    fn cumulative_arg(&self, kind: ArgKind, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(complex::not_impl(&format!("{kind:?}").to_lowercase(), dtype));
        }
        reduction::cumulative_arg(kind, x, dtype, dim, values, indices)
    }
    fn cumprod_backward(&self, x: Src, g: Src, out: Src, dim: usize, exact: bool, w_dtype: DType, x_dtype: DType, grad: Dst) -> Result<()> {
        reduction::cumprod_backward(x, g, out, dim, exact, w_dtype, x_dtype, grad)
    }
    fn softmax(&self, x: Src, out: Dst, dtype: DType, dim: usize, log: bool) -> Result<()> {
        if dtype.is_complex() {
            return Err(complex::not_impl("softmax", dtype));
        }
        reduction::softmax(x, out, dtype, dim, log)
    }
}
