//! The op layer: every op enters here once, checks its arguments, decides the
//! result dtype and shape, and dispatches to a backend kernel by (device, dtype).
//!
//! ```
//! use ferrotorch::{DType, Tensor};
//! let a = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
//! let b = Tensor::from_vec(vec![0.5f32], &[1]).unwrap();
//! let c = a.mul(&b).unwrap(); // broadcast, promoted to float32 as in PyTorch
//! assert_eq!(c.dtype(), DType::Float32);
//! assert_eq!(c.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 1.5]);
//! ```

pub mod activation;
pub mod arith;
mod arith_grad;
mod special_grad;
pub mod complex;
pub(crate) mod conj_bit;
mod complex_grad;
pub mod conv;
pub mod copy;
pub mod creation;
pub mod einsum;
pub mod factorize;
pub mod fft;
pub mod indexing;
pub mod linalg;
pub mod loss;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod rnn;
pub mod reduce;
pub mod shape;
pub mod reduction;
pub mod softmax;
pub mod sort;
pub mod ternary;
pub mod view;
pub mod view_grad;

use crate::Tensor;
use std::borrow::Cow;
use ferrotorch_core::{Device, Error, Layout, Result};

impl Tensor {
    /// This tensor as the input of its backend's kernel (`.src()` of the
    /// holder; a conjugate-bit tensor reads its conjugated values, see
    /// [`conj_bit`]).
    pub(crate) fn operand(&self) -> Result<conj_bit::Read<'_>> {
        conj_bit::read(self, self.layout())
    }
    /// This tensor's storage seen through `layout` (a broadcast or other
    /// re-strided view of it) as the input of its backend's kernel.
    pub(crate) fn operand_as<'a>(&self, layout: &'a Layout) -> Result<conj_bit::Read<'a>> {
        conj_bit::read(self, layout)
    }
    /// This tensor's storage seen through `layout` as the output of its
    /// backend's kernel (a reduction's keepdim-shaped view of its result).
    pub(crate) fn operand_mut_as<'a>(&'a self, layout: &'a Layout) -> Result<conj_bit::Write<'a>> {
        conj_bit::write(self, layout)
    }
    /// This tensor as the output of its backend's kernel (`.dst()` of the
    /// holder; a conjugate-bit tensor is written through, see [`conj_bit`]).
    pub(crate) fn operand_mut(&self) -> Result<conj_bit::Write<'_>> {
        conj_bit::write(self, self.layout())
    }
}

/// `t`'s layout broadcast to `shape` (stride 0 on new or size-1 dims),
/// borrowed when the shapes already agree (the common case, on every
/// elementwise op's hot path).
pub(crate) fn broadcast_layout<'a>(t: &'a Tensor, shape: &[usize]) -> Result<Cow<'a, Layout>> {
    if t.shape() == shape {
        return Ok(Cow::Borrowed(t.layout()));
    }
    let sizes: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
    Ok(Cow::Owned(t.layout().expand(&sizes)?))
}

/// `t` where a kernel writing on `device` can read it: itself, or for the
/// one operand [`common_device`] lets differ (a 0-d CPU tensor, a number) a
/// copy on `device`, since a GPU kernel cannot read host memory.
pub(crate) fn on_device(t: &Tensor, device: Device) -> Result<Cow<'_, Tensor>> {
    if t.device() == device || t.device().is_meta() || device.is_meta() {
        return Ok(Cow::Borrowed(t));
    }
    let _no_grad = crate::autograd::GradModeGuard::new(false);
    Ok(Cow::Owned(t.to_device(device, t.dtype(), true)?))
}

/// The device an op's inputs share, which its output lives on. As in
/// PyTorch, a 0-d CPU tensor counts as a number and goes with any device;
/// any other mix is an error.
pub(crate) fn common_device(ts: &[&Tensor]) -> Result<Device> {
    let is_scalar = |t: &Tensor| t.ndim() == 0 && t.device().is_cpu();
    let device = match ts.iter().find(|t| !is_scalar(t)).or(ts.first()) {
        Some(t) => t.device(),
        None => return Ok(Device::CPU),
    };
    for t in ts {
        let d = t.device();
        if d != device && !is_scalar(t) {
            return Err(if device.is_meta() {
                Error::runtime(format!("Tensor on device {d} is not on the expected device {device}!"))
            } else {
                Error::runtime(format!("Expected all tensors to be on the same device, but found at least two devices, {device} and {d}!"))
            });
        }
    }
    Ok(device)
}
