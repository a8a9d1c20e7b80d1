//! Copies: `contiguous`, `clone`, `to(dtype)`, `copy_`, `fill_`.

use super::broadcast_layout;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{DType, Device, DeviceType, Error, Layout, Result, Scalar};
use ferrotorch_core::Backend;
use crate::autograd::{record, rule};
use super::arith_grad::g0;

impl Tensor {
    /// A fresh contiguous copy (`clone()`; records `CloneBackward0`).
    pub fn clone_data(&self) -> Result<Tensor> {
        let out = Tensor::empty(self.shape(), self.dtype(), self.device())?;
        copy_kernel(&out, self, self.layout())?;
        record("CloneBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g)])));
        Ok(out)
    }

    /// A fresh copy recording nothing, the snapshot an in-place op computes
    /// from: laid out as `clone()` (preserve_format), or with `own_strides`
    /// with this tensor's own strides (a copy of the memory span it covers;
    /// preserve_format when that span is much larger than the tensor or
    /// elements overlap). Which lambda of PyTorch's backward kernels an
    /// element meets depends on the saved tensor's layout.
    pub(crate) fn clone_same_layout(&self, own_strides: bool) -> Result<Tensor> {
        let layout = self.layout();
        let n = self.numel();
        let span = layout.storage_span();
        let exact = match span {
            Some((lo, hi)) => own_strides && !layout.has_internal_overlap() && hi - lo <= 4 * n + 64
                && layout.strides.iter().all(|&st| st >= 0),
            None => false,
        };
        let out = if exact {
            let (lo, hi) = span.unwrap_or((0, 0));
            let flat = Tensor::empty(&[hi - lo], self.dtype(), self.device())?;
            let own = Layout { shape: layout.shape.clone(), strides: layout.strides.clone(), offset: layout.offset - lo };
            Tensor::from_parts(flat.storage().clone(), own, self.dtype())?
        } else {
            self.empty_like(self.dtype())?
        };
        copy_kernel(&out, self, self.layout())?;
        Ok(out)
    }

    /// A fresh uninitialised tensor of this shape laid out as PyTorch's
    /// `empty_like(preserve_format)`: the same strides when this layout is
    /// non-overlapping and dense, otherwise dense strides in the same memory order.
    pub fn empty_like(&self, dtype: DType) -> Result<Tensor> {
        self.empty_like_on(dtype, self.device())
    }

    /// [`empty_like`](Self::empty_like) on another device.
    pub fn empty_like_on(&self, dtype: DType, device: Device) -> Result<Tensor> {
        let flat = Tensor::empty(&[self.numel()], dtype, device)?;
        let layout = Layout { shape: self.layout().shape.clone(), strides: self.layout().preserved_strides(), offset: 0 };
        Tensor::from_parts(flat.storage().clone(), layout, dtype)
    }

    /// `clone()` and `to(dtype, copy=True)` as PyTorch does them: a fresh copy
    /// converted to `dtype`, in `preserve_format` (see [`Tensor::empty_like`]).
    /// Records `CloneBackward0`, or `ToCopyBackward0` between floating types.
    pub fn clone_as(&self, dtype: DType) -> Result<Tensor> {
        let out = self.empty_like(dtype)?;
        copy_kernel(&out, self, self.layout())?;
        let src = self.dtype();
        if dtype == src {
            record("CloneBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g)])));
        } else if dtype.is_differentiable() {
            record("ToCopyBackward0", &[Some(self)], &[&out], move || {
                rule(move |_, g| g0(g).map(|g| g.to_dtype(src)).transpose().map(|g| vec![g]))
            });
        }
        Ok(out)
    }

    /// `to(dtype)` as PyTorch does it: itself when the dtype already matches,
    /// else a converted copy in `preserve_format`.
    pub fn to_dtype_preserve(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        self.clone_as(dtype)
    }

    /// `to(device, dtype)`: itself when neither changes (unless `copy`), else
    /// a copy on `device` converted to `dtype`, laid out as
    /// [`empty_like`](Self::empty_like). Records `ToCopyBackward0`, whose
    /// gradient goes back to the source's device and dtype. A `meta` tensor
    /// has no values to copy to another device (PyTorch's "no data" error);
    /// any tensor copies to `meta`.
    pub fn to_device(&self, device: Device, dtype: DType, copy: bool) -> Result<Tensor> {
        // `cuda` without an index is taken as the tensor's own GPU (PyTorch
        // resolves it to the current device: the two differ only for a
        // tensor on another GPU than the current one); `cuda:1` is its own.
        let same_gpu = device.index.is_none() || device.index == self.device().index;
        if device.kind == self.device().kind && (device.kind != DeviceType::Cuda || same_gpu) {
            return if copy { self.clone_as(dtype) } else { self.to_dtype_preserve(dtype) };
        }
        let out = self.empty_like_on(dtype, device)?;
        copy_kernel(&out, self, self.layout())?;
        if dtype.is_differentiable() {
            let (src_device, src_dtype) = (self.device(), self.dtype());
            record("ToCopyBackward0", &[Some(self)], &[&out], move || {
                rule(move |_, g| g0(g).map(|g| g.to_device(src_device, src_dtype, false)).transpose().map(|g| vec![g]))
            });
        }
        Ok(out)
    }

    /// `src`'s values (broadcast and converted) written into `self` without
    /// counting as an in-place op: for filling tensors that were just created.
    pub(crate) fn init_from(&self, src: &Tensor) -> Result<()> {
        copy_kernel(self, src, &*broadcast_layout(src, self.shape())?)
    }

    /// A fresh tensor laid out like `self` (preserve_format) holding `src`'s
    /// values converted to `dtype` (`zeros_like`, `rand_like`, ...).
    pub fn new_like_from(&self, src: &Tensor, dtype: DType) -> Result<Tensor> {
        let out = self.empty_like(dtype)?;
        out.init_from(src)?;
        Ok(out)
    }

    /// Itself when already contiguous, else a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.clone_data()
        }
    }

    /// Converts to `dtype` (itself when the dtype already matches; records
    /// `ToCopyBackward0` between floating types).
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let out = Tensor::empty(self.shape(), dtype, self.device())?;
        copy_kernel(&out, self, self.layout())?;
        if dtype.is_differentiable() {
            let src = self.dtype();
            record("ToCopyBackward0", &[Some(self)], &[&out], move || {
                rule(move |_, g| g0(g).map(|g| g.to_dtype(src)).transpose().map(|g| vec![g]))
            });
        }
        Ok(out)
    }

    /// `self.copy_(src)`: src is broadcast to self's shape and converted to
    /// its dtype. Under autograd records `CopyBackwards` (rebasing a view's
    /// base through `CopySlices`).
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        if crate::autograd::is_grad_enabled() && (self.requires_grad() || src.requires_grad()) {
            return crate::autograd::apply_inplace(self, crate::autograd::OldValue::Alias, |old| {
                let out = Tensor::empty(self.shape(), self.dtype(), self.device())?;
                out.copy_raw_(src)?;
                let (src_shape, src_dtype) = (src.shape().to_vec(), src.dtype());
                record("CopyBackwards", &[Some(old), Some(src)], &[&out], move || {
                    rule(move |node, g| {
                        let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                        let wants = |i: usize| node.next_edges()[i].is_some();
                        let gs = if wants(0) { Some(g.zeros_like_raw()?) } else { None };
                        let gsrc = if wants(1) { Some(super::arith_grad::reduce_grad(&g, &src_shape, src_dtype)?) } else { None };
                        Ok(vec![gs, gsrc])
                    })
                });
                Ok(out)
            });
        }
        self.copy_raw_(src)
    }

    /// Zeros shaped like `self` (not recorded).
    fn zeros_like_raw(&self) -> Result<Tensor> {
        Tensor::zeros(self.shape(), self.dtype(), self.device())
    }

    /// `copy_` without autograd. This is the write-back of every in-place op
    /// computed out of place (autograd's `apply_inplace`, `update_with`,
    /// `copy_` itself), so the refusal of targets whose elements share memory
    /// lives here, once: writing a full result through a broadcast dim would
    /// keep whichever alias is written last.
    pub fn copy_raw_(&self, src: &Tensor) -> Result<()> {
        self.layout().check_no_internal_overlap()?;
        let b = broadcast_shapes(self.shape(), src.shape())?;
        if b.as_slice() != self.shape() {
            return Err(Error::runtime(format!(
                "output with shape {} doesn't match the broadcast shape {}",
                fmt_shape(self.shape()),
                fmt_shape(&b)
            )));
        }
        // Copy through a temporary when source and destination share storage, so
        // overlapping regions read the old values.
        let tmp;
        let src = if std::sync::Arc::ptr_eq(self.storage(), src.storage()) {
            tmp = src.clone_data()?;
            &tmp
        } else {
            src
        };
        copy_kernel(self, src, &*broadcast_layout(src, self.shape())?)?;
        self.bump_version();
        Ok(())
    }

    /// `fill_(value)` (records `FillBackward2` under autograd).
    pub fn fill_(&self, value: Scalar) -> Result<()> {
        ferrotorch_core::dtype::check_scalar_fits(value, self.dtype(), self.numel())?;
        if crate::autograd::is_grad_enabled() && self.requires_grad() {
            // PyTorch fills targets whose elements share memory (expanded views).
            let compute = |old: &Tensor| {
                let out = Tensor::empty(self.shape(), self.dtype(), self.device())?;
                record("FillBackward2", &[Some(old)], &[&out], || {
                    rule(|_, g| Ok(vec![g0(g).map(|g| g.zeros_like_raw()).transpose()?]))
                });
                Ok(out)
            };
            return crate::autograd::apply_inplace_kernel(self, crate::autograd::OldValue::Alias, compute, || self.fill_raw_(value));
        }
        self.fill_raw_(value)
    }

    /// `fill_(value)` with a tensor `value` (records `FillBackward3`).
    ///
    /// PyTorch treats the tensor overload as a copy of the broadcast value,
    /// not as the Scalar overload after `.item()`: the value is converted as
    /// `copy_` converts (no overflow check: -4. into uint8 is 252), a target
    /// whose elements share memory is refused, and the value is
    /// differentiable (its gradient is the sum of the output's gradient).
    pub fn fill_tensor_(&self, value: &Tensor) -> Result<()> {
        if value.ndim() != 0 {
            return Err(Error::runtime(format!(
                "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.",
                value.ndim()
            )));
        }
        if crate::autograd::is_grad_enabled() && (self.requires_grad() || value.requires_grad()) {
            return crate::autograd::apply_inplace(self, crate::autograd::OldValue::Alias, |old| {
                let out = Tensor::empty(self.shape(), self.dtype(), self.device())?;
                out.copy_raw_(value)?;
                let value_dtype = value.dtype();
                record("FillBackward3", &[Some(old), Some(value)], &[&out], move || {
                    rule(move |node, g| {
                        let Some(g) = g0(g) else { return Ok(vec![None, None]) };
                        let wants = |i: usize| node.next_edges()[i].is_some();
                        let gs = if wants(0) { Some(g.zeros_like_raw()?) } else { None };
                        let gv = if wants(1) { Some(super::arith_grad::reduce_grad(&g, &[], value_dtype)?) } else { None };
                        Ok(vec![gs, gv])
                    })
                });
                Ok(out)
            });
        }
        self.copy_raw_(value)
    }

    /// `fill_` without autograd.
    pub fn fill_raw_(&self, value: Scalar) -> Result<()> {
        self.backend()?.fill(self.operand_mut()?.dst(), self.dtype(), value)?;
        self.bump_version();
        Ok(())
    }

    /// Fills a tensor that was just created (not an in-place op: no version bump).
    /// A 0-d `complex128` tensor holding `re + im·j`: what a Python complex
    /// number becomes as an operand (as a Python float becomes float64).
    pub fn scalar_complex(re: f64, im: f64) -> Result<Tensor> {
        let t = Tensor::empty(&[], DType::Complex128, Device::CPU)?;
        t.fill_init(Scalar::Complex(re, im))?;
        Ok(t)
    }

    pub(crate) fn fill_init(&self, value: Scalar) -> Result<()> {
        self.backend()?.fill(self.operand_mut()?.dst(), self.dtype(), value)
    }

    /// `.item()`: the value of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            )));
        }
        // SAFETY: the tensor has exactly one element at its storage offset.
        let v = unsafe { self.backend()?.read_scalar(self.storage().raw_ptr(), self.dtype(), self.storage_offset()) }?;
        Ok(self.seen(v))
    }

    /// Reads element `index` (row-major position) as a scalar.
    pub fn get_flat(&self, index: usize) -> Result<Scalar> {
        if index >= self.numel() {
            return Err(Error::index(format!("index {index} is out of bounds for size {}", fmt_shape(self.shape()))));
        }
        let mut off = self.storage_offset() as isize;
        let mut rem = index;
        for d in (0..self.ndim()).rev() {
            let s = self.shape()[d];
            off += (rem % s) as isize * self.strides()[d];
            rem /= s;
        }
        // SAFETY: off addresses an element inside the layout, which fits the storage.
        let v = unsafe { self.backend()?.read_scalar(self.storage().raw_ptr(), self.dtype(), off as usize) }?;
        Ok(self.seen(v))
    }

    /// A stored value as this tensor's element: conjugated under the
    /// conjugate bit.
    fn seen(&self, v: Scalar) -> Scalar {
        match v {
            Scalar::Complex(re, im) if self.is_conj() => Scalar::Complex(re, -im),
            v => v,
        }
    }
}

/// `dst = src` converted to `dst`'s dtype, reading `src` through `src_layout`
/// (its own layout, or broadcast to `dst`'s shape), on the destination's
/// backend. A `meta` tensor has no values to give: copying one into another
/// device is PyTorch's "no data" error, while anything copies into `meta`.
fn copy_kernel(dst: &Tensor, src: &Tensor, src_layout: &ferrotorch_core::Layout) -> Result<()> {
    let (to, from) = (dst.device(), src.device());
    if from.is_meta() && !to.is_meta() {
        return Err(ferrotorch_core::backend::meta_has_no_data());
    }
    let backend: &dyn Backend = dst.backend()?;
    // Different memories (host and a GPU, or two GPUs): no kernel reads both.
    let across = !to.is_meta() && (to.kind != from.kind || (to.kind == DeviceType::Cuda && to.index != from.index));
    if across {
        return copy_across_devices(dst, src, src_layout);
    }
    backend.copy_cast(dst.operand_mut()?.dst(), dst.dtype(), src.operand_as(src_layout)?.src(), src.dtype())
}

/// [`copy_kernel`] between two memories: `src` (seen through `src_layout`)
/// is made dense in its own dtype on its device, moved as bytes (through a
/// host buffer when neither side is the host), and strided and cast into
/// `dst` by `dst`'s backend. Each backend only ever touches its own memory.
fn copy_across_devices(dst: &Tensor, src: &Tensor, src_layout: &ferrotorch_core::Layout) -> Result<()> {
    let (to, from) = (dst.device(), src.device());
    let shape = &src_layout.shape[..];
    let dt = src.dtype();
    let dense_src = Tensor::empty(shape, dt, from)?;
    src.backend()?.copy_cast(dense_src.operand_mut()?.dst(), dt, src.operand_as(src_layout)?.src(), dt)?;
    let dense_dst = Tensor::empty(shape, dt, to)?;
    let nbytes = dense_src.numel() * dt.itemsize();
    if nbytes > 0 {
        let (s, d) = (dense_src.storage().raw_ptr(), dense_dst.storage().raw_ptr());
        // SAFETY: both buffers are fresh dense allocations of `nbytes` bytes
        // on the device their backend serves; the host side of each call is
        // a CPU tensor's memory.
        unsafe {
            if from.is_cpu() {
                dst.backend()?.copy_from_host(d, s, nbytes)?;
            } else if to.is_cpu() {
                src.backend()?.copy_to_host(d, s, nbytes)?;
            } else {
                let host = Tensor::empty(shape, dt, Device::CPU)?;
                let h = host.storage().raw_ptr();
                src.backend()?.copy_to_host(h, s, nbytes)?;
                dst.backend()?.copy_from_host(d, h, nbytes)?;
            }
        }
    }
    dst.backend()?.copy_cast(dst.operand_mut()?.dst(), dst.dtype(), dense_dst.operand()?.src(), dt)
}
