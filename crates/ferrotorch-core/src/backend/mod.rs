//! The backend seam: what a device implements so that the op layer can run
//! on it.
//!
//! The op layer validates arguments, promotes dtypes, broadcasts layouts and
//! records autograd; it never reads element memory. Everything that touches
//! the bytes of a tensor goes through one [`Backend`] per device type, chosen
//! by the tensor's device: allocation, strided copies and casts, fills,
//! reading one element, matrix products, and the elementwise, reduction,
//! arg-reduction, cumulative and softmax ops of the [`op`](crate::op)
//! vocabulary. Kernels take each operand as a device pointer plus its
//! [`Layout`] (sizes, strides and offset in elements), by value.
//!
//! Structured ops (convolution, pooling, ...) are family traits of their own, one
//! submodule each, that [`Backend`] requires: a device implements them all,
//! and the op layer calls them through `&dyn Backend` with the family trait
//! in scope.
//!
//! [`Meta`] is the backend of the `meta` device: storage without memory, so
//! every kernel is a no-op and every op computes only its output metadata,
//! which is how PyTorch's meta tensors behave.

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

pub use conv::ConvKernels;
pub use factory::FactoryKernels;
pub use fft::FftKernels;
pub use index::{IndexKernels, IndexTerm};
pub use linalg::LinalgKernels;
pub use norm::{NormGrads, NormKernels};
pub use optim::{OptimKernels, ParamOperands};
pub use pool::PoolKernels;
pub use rnn::RnnKernels;
pub use sort::SortKernels;

use crate::device::{Device, DeviceType};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::op::{ArgKind, BinaryOp, CumKind, ReduceKind, TernaryOp, UnaryOp};
use crate::scalar::Scalar;
use crate::storage::Storage;

/// A read-only kernel operand: the start of its storage plus its layout.
#[derive(Clone, Copy)]
pub struct Src<'a> {
    /// Start of the storage (the element offset is in `layout`).
    pub base: *const u8,
    /// Sizes/strides/offset in elements.
    pub layout: &'a Layout,
}

/// A written kernel operand.
#[derive(Clone, Copy)]
pub struct Dst<'a> {
    /// Start of the storage (the element offset is in `layout`).
    pub base: *mut u8,
    /// Sizes/strides/offset in elements.
    pub layout: &'a Layout,
}

/// The kernels one device type provides.
///
/// Every method works on operands that live on this backend's device; the op
/// layer has already checked shapes, dtypes and devices, broadcast the
/// inputs' layouts to the output's shape, and converted inputs to the dtype
/// the op computes in.
pub trait Backend:
    Send + Sync + ConvKernels + FactoryKernels + FftKernels + IndexKernels + LinalgKernels + NormKernels + OptimKernels + PoolKernels + RnnKernels + SortKernels
{
    /// The device type this backend serves.
    fn device_type(&self) -> DeviceType;

    /// Fresh storage of `nbytes` bytes on `device` (contents undefined).
    fn allocate(&self, nbytes: usize, device: Device) -> Result<Storage>;

    /// Fresh storage for a tensor of zeros, and whether its bytes already
    /// read as zero (when `false` the caller fills it).
    fn allocate_zeroed(&self, nbytes: usize, device: Device) -> Result<(Storage, bool)>;

    /// `dst = src` converted from `src_dtype` to `dst_dtype`, elementwise
    /// over `dst`'s shape (`src` is already broadcast to it).
    fn copy_cast(&self, dst: Dst, dst_dtype: DType, src: Src, src_dtype: DType) -> Result<()>;

    /// Every element of `dst` set to `value` converted to `dtype`.
    fn fill(&self, dst: Dst, dtype: DType, value: Scalar) -> Result<()>;

    /// `dst += src` elementwise over `dst`'s shape, both of `dtype` (`src`
    /// broadcast to it), where `dst`'s layout may address an element more
    /// than once (the gradient of an overlapping view): every term is added.
    /// With `row_major` the terms are added in row-major order of the shape.
    fn accumulate(&self, dtype: DType, dst: Dst, src: Src, row_major: bool) -> Result<()>;

    /// The element at element offset `offset` of the storage at `base`.
    ///
    /// # Safety
    /// `offset` must address an element of `dtype` inside the storage.
    unsafe fn read_scalar(&self, base: *const u8, dtype: DType, offset: usize) -> Result<Scalar>;

    /// `out = op(x)`: `x` is in the dtype the op computes in, `out` in the
    /// op's result dtype (bool for predicates).
    fn unary(&self, op: UnaryOp, dtype: DType, out: Dst, x: Src) -> Result<()>;

    /// `out = a <op> b`: both inputs in `compute`, `out` in the op's result
    /// dtype (bool for comparisons).
    fn binary(&self, op: BinaryOp, compute: DType, out: Dst, a: Src, b: Src) -> Result<()>;

    /// `out = a + s * b` for float32/float64 operands of `dtype` (broadcast
    /// to `out`'s shape), with one rounding: `add`/`sub` with `alpha`.
    fn add_scaled(&self, dtype: DType, out: Dst, a: Src, b: Src, s: f64) -> Result<()>;

    /// `out = cond ? x : y` elementwise (`where`): `cond` bool, the others
    /// of `dtype`, all broadcast to `out`'s shape.
    fn select(&self, dtype: DType, out: Dst, cond: Src, x: Src, y: Src) -> Result<()>;

    /// `out = op(a, b, c)` elementwise, all of `dtype` and broadcast to
    /// `out`'s shape.
    fn ternary(&self, op: TernaryOp, dtype: DType, out: Dst, a: Src, b: Src, c: Src) -> Result<()>;

    /// `out[i] (+)= a[i] @ b[i]` over the batch dims the three share: `a` is
    /// (.., m, k), `b` (.., k, p), `out` (.., m, p), all of `dtype` (the op
    /// layer computes float16/bfloat16 products in float32). With
    /// `accumulate` the products add onto `out`'s values.
    fn matmul(&self, dtype: DType, out: Dst, a: Src, b: Src, accumulate: bool) -> Result<()>;

    /// [`matmul`](Self::matmul) of complex operands reading `a` (`conj[0]`)
    /// and/or `b` (`conj[1]`) conjugated: the product of conjugate-bit
    /// tensors (`x.mH @ y`) without a conjugated copy. Returns `Ok(false)`,
    /// having done nothing, where the backend has no such kernel; the op
    /// layer then resolves the operands and calls `matmul`.
    fn matmul_conj(&self, _dtype: DType, _out: Dst, _a: Src, _b: Src, _accumulate: bool, _conj: [bool; 2]) -> Result<bool> {
        Ok(false)
    }

    /// `out = kind(x)` over the dims flagged in `dims`; `out` has `x`'s shape
    /// with those dims of size 1, in `out_dtype`.
    fn reduce(&self, kind: ReduceKind, x: Src, x_dtype: DType, dims: &[bool], out: Dst, out_dtype: DType) -> Result<()>;

    /// A floating sum over `dims` in the order and rounding of PyTorch's
    /// kernel for this device, into the keepdim-shaped `out` of `x`'s dtype
    /// (`keepdim` is the caller's flag: PyTorch's summation order depends on
    /// the output's layout).
    fn sum_float(&self, x: Src, dtype: DType, dims: &[bool], keepdim: bool, out: Dst) -> Result<()>;

    /// Whether [`sum_float`](Self::sum_float) of a float16/bfloat16 tensor
    /// laid out as `x` over `dims` goes through a float32 copy of it (and
    /// rounds the float32 sum once), as PyTorch's kernel for this device
    /// does for some layouts.
    fn sums_half_in_f32(&self, x: &Layout, dims: &[bool], keepdim: bool) -> bool;

    /// Variance (or standard deviation when `sqrt`) with `correction` over
    /// `dims`, and optionally the mean, both keepdim-shaped in `x`'s dtype.
    #[allow(clippy::too_many_arguments)]
    fn var_mean(&self, x: Src, dtype: DType, dims: &[bool], correction: f64, sqrt: bool, var: Dst, mean: Option<Dst>) -> Result<()>;

    /// The extreme value (optional) and its int64 index along the one dim
    /// flagged in `dims`, keepdim-shaped.
    fn reduce_arg(&self, kind: ArgKind, x: Src, dtype: DType, dims: &[bool], values: Option<Dst>, indices: Dst) -> Result<()>;

    /// A running fold of `x` along `dim` into `out` (same shape, `out_dtype`).
    fn cumulative(&self, kind: CumKind, x: Src, x_dtype: DType, dim: usize, out: Dst, out_dtype: DType) -> Result<()>;

    /// `cummax` (or `cummin`) of `x` along `dim`: the running extreme into
    /// `values` (`x`'s dtype) and the index it was last taken at into the
    /// int64 `indices`, both of `x`'s shape. Later ties win; a NaN sticks.
    fn cumulative_arg(&self, kind: ArgKind, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()>;

    /// PyTorch's `cumprod_backward` along `dim` for an `x` holding zeros:
    /// `x`, the incoming gradient `g` and the forward's `out` are float64
    /// of one shape, as is `grad`. With `exact` (a graph of the gradient is
    /// being built) every entry is the exact sum of products of the other
    /// factors; otherwise PyTorch's O(n) masked formula, its intermediates
    /// rounded to `w_dtype` (`out * g`) and `x_dtype` (the masked products).
    #[allow(clippy::too_many_arguments)]
    fn cumprod_backward(&self, x: Src, g: Src, out: Src, dim: usize, exact: bool, w_dtype: DType, x_dtype: DType, grad: Dst) -> Result<()>;

    /// `softmax` (or `log_softmax` when `log`) of `x` along `dim`, same dtype.
    fn softmax(&self, x: Src, out: Dst, dtype: DType, dim: usize, log: bool) -> Result<()>;

    /// Copies `nbytes` bytes of host memory at `host` to `dst`, memory of
    /// this backend's device. Devices with memory of their own implement
    /// it; the op layer stages strided and cross-dtype copies between
    /// devices through dense buffers on each side.
    ///
    /// # Safety
    /// `host` must be readable and `dst` (device memory of this backend)
    /// writable for `nbytes` bytes.
    unsafe fn copy_from_host(&self, dst: *mut u8, host: *const u8, nbytes: usize) -> Result<()> {
        let _ = (dst, host, nbytes);
        Err(Error::runtime(format!("no host copy into {:?} memory", self.device_type())))
    }

    /// Copies `nbytes` bytes of this backend's device memory at `src` to
    /// host memory at `host` (see [`copy_from_host`](Self::copy_from_host)).
    ///
    /// # Safety
    /// `src` must be readable device memory of this backend and `host`
    /// writable for `nbytes` bytes.
    unsafe fn copy_to_host(&self, host: *mut u8, src: *const u8, nbytes: usize) -> Result<()> {
        let _ = (host, src, nbytes);
        Err(Error::runtime(format!("no host copy out of {:?} memory", self.device_type())))
    }
}

/// The `meta` device's backend: storage has a size but no memory, kernels
/// do nothing, and reading a value is PyTorch's error.
pub struct Meta;

impl Backend for Meta {
    fn device_type(&self) -> DeviceType {
        DeviceType::Meta
    }
    fn allocate(&self, nbytes: usize, _device: Device) -> Result<Storage> {
        Ok(Storage::new_meta(nbytes))
    }
    fn allocate_zeroed(&self, nbytes: usize, _device: Device) -> Result<(Storage, bool)> {
        Ok((Storage::new_meta(nbytes), true))
    }
    fn copy_cast(&self, _dst: Dst, _dst_dtype: DType, _src: Src, _src_dtype: DType) -> Result<()> {
        Ok(())
    }
    fn fill(&self, _dst: Dst, _dtype: DType, _value: Scalar) -> Result<()> {
        Ok(())
    }
    fn accumulate(&self, _dtype: DType, _dst: Dst, _src: Src, _row_major: bool) -> Result<()> {
        Ok(())
    }
    unsafe fn read_scalar(&self, _base: *const u8, _dtype: DType, _offset: usize) -> Result<Scalar> {
        Err(Error::runtime("Tensor.item() cannot be called on meta tensors"))
    }
    fn unary(&self, _op: UnaryOp, _dtype: DType, _out: Dst, _x: Src) -> Result<()> {
        Ok(())
    }
    fn binary(&self, _op: BinaryOp, _compute: DType, _out: Dst, _a: Src, _b: Src) -> Result<()> {
        Ok(())
    }
    fn add_scaled(&self, _dtype: DType, _out: Dst, _a: Src, _b: Src, _s: f64) -> Result<()> {
        Ok(())
    }
    fn select(&self, _dtype: DType, _out: Dst, _cond: Src, _x: Src, _y: Src) -> Result<()> {
        Ok(())
    }
    fn ternary(&self, _op: TernaryOp, _dtype: DType, _out: Dst, _a: Src, _b: Src, _c: Src) -> Result<()> {
        Ok(())
    }
    fn matmul(&self, _dtype: DType, _out: Dst, _a: Src, _b: Src, _accumulate: bool) -> Result<()> {
        Ok(())
    }
    fn reduce(&self, _kind: ReduceKind, _x: Src, _x_dtype: DType, _dims: &[bool], _out: Dst, _out_dtype: DType) -> Result<()> {
        Ok(())
    }
    fn sum_float(&self, _x: Src, _dtype: DType, _dims: &[bool], _keepdim: bool, _out: Dst) -> Result<()> {
        Ok(())
    }
    fn sums_half_in_f32(&self, _x: &Layout, _dims: &[bool], _keepdim: bool) -> bool {
        false
    }
    fn var_mean(&self, _x: Src, _dtype: DType, _dims: &[bool], _correction: f64, _sqrt: bool, _var: Dst, _mean: Option<Dst>) -> Result<()> {
        Ok(())
    }
    fn reduce_arg(&self, _kind: ArgKind, _x: Src, _dtype: DType, _dims: &[bool], _values: Option<Dst>, _indices: Dst) -> Result<()> {
        Ok(())
    }
    fn cumulative(&self, _kind: CumKind, _x: Src, _x_dtype: DType, _dim: usize, _out: Dst, _out_dtype: DType) -> Result<()> {
        Ok(())
    }
    fn cumulative_arg(&self, _kind: ArgKind, _x: Src, _dtype: DType, _dim: usize, _values: Dst, _indices: Dst) -> Result<()> {
        Ok(())
    }
    fn cumprod_backward(&self, _x: Src, _g: Src, _out: Src, _dim: usize, _exact: bool, _w_dtype: DType, _x_dtype: DType, _grad: Dst) -> Result<()> {
        Ok(())
    }
    fn softmax(&self, _x: Src, _out: Dst, _dtype: DType, _dim: usize, _log: bool) -> Result<()> {
        Ok(())
    }
}

/// PyTorch's error for reading the values of a meta tensor into another
/// device's memory (`.cpu()`, `.tolist()`, `copy_` from meta).
pub fn meta_has_no_data() -> Error {
    Error::not_implemented("Cannot copy out of meta tensor; no data!")
}
