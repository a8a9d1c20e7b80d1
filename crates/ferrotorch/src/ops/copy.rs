//! Copies: `contiguous`, `clone`, `to(dtype)`, `copy_`, `fill_`.

use super::broadcast_layout;
use crate::Tensor;
use ferrotorch_core::layout::{broadcast_shapes, fmt_shape};
use ferrotorch_core::{DType, Error, Result, Scalar};
use ferrotorch_cpu::copy as k;
use crate::autograd::{record, rule};
use super::arith_grad::g0;

impl Tensor {
    /// A fresh contiguous copy (`clone()`; records `CloneBackward0`).
    pub fn clone_data(&self) -> Result<Tensor> {
        let out = Tensor::empty(self.shape(), self.dtype(), self.device())?;
        k::copy_cast(out.dst(), out.dtype(), self.src(), self.dtype());
        record("CloneBackward0", &[Some(self)], &[&out], || rule(|_, g| Ok(vec![g0(g)])));
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
        k::copy_cast(out.dst(), dtype, self.src(), self.dtype());
        if dtype.is_floating_point() {
            let src = self.dtype();
            record("ToCopyBackward0", &[Some(self)], &[&out], move || {
                rule(move |_, g| g0(g).map(|g| g.to_dtype(src)).transpose().map(|g| vec![g]))
            });
        }
        Ok(out)
    }

    /// `self.copy_(src)`: src is broadcast to self's shape and converted to its dtype.
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
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
        let layout = broadcast_layout(src, self.shape())?;
        let s = ferrotorch_cpu::Src { base: src.storage().as_ptr(), layout: &layout };
        k::copy_cast(self.dst(), self.dtype(), s, src.dtype());
        self.bump_version();
        Ok(())
    }

    /// `fill_(value)`.
    pub fn fill_(&self, value: Scalar) -> Result<()> {
        k::fill(self.dst(), self.dtype(), value);
        self.bump_version();
        Ok(())
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
        Ok(unsafe { k::read_scalar(self.storage().as_ptr(), self.dtype(), self.storage_offset()) })
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
        Ok(unsafe { k::read_scalar(self.storage().as_ptr(), self.dtype(), off as usize) })
    }
}
