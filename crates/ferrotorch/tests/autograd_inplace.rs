//! In-place ops under autograd from Rust: `CopySlices` rebase of a view's
//! base, `copy_` recording, leaf errors, and saved-tensor hooks.

use ferrotorch::autograd::{self, saved};
use ferrotorch::ops::arith::{binary_, BinaryOp, Operand};
use ferrotorch::{Scalar, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn leaf(v: Vec<f64>) -> Tensor {
    let n = v.len();
    let t = Tensor::from_vec(v, &[n]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn inplace_mul_on_view_rebases_base_with_copyslices() {
    // x = w.clone(); x[1:] *= 3; loss = sum(x * [1, 2, 3])
    let w = leaf(vec![1.0, 2.0, 3.0]);
    let x = w.clone_data().unwrap();
    let v = x.slice(0, 1, 3, 1).unwrap();
    binary_(&v, Operand::S(Scalar::Float(3.0)), BinaryOp::Mul).unwrap();
    assert_eq!(x.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 6.0, 9.0]);
    let k = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let loss = x.mul(&k).unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    assert_eq!(w.grad().unwrap().to_vec::<f64>().unwrap(), vec![1.0, 6.0, 9.0]);
}

#[test]
fn copy_into_plain_tensor_records_copy_backwards() {
    let y = leaf(vec![5.0, 7.0]);
    let z = Tensor::zeros(&[2], ferrotorch::DType::Float64, ferrotorch::Device::CPU).unwrap();
    z.copy_(&y).unwrap();
    assert_eq!(z.grad_fn().unwrap().name(), "CopyBackwards");
    let loss = z.mul(&z).unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    assert_eq!(y.grad().unwrap().to_vec::<f64>().unwrap(), vec![10.0, 14.0]);
}

#[test]
fn inplace_on_leaf_and_view_of_leaf_are_refused() {
    let w = leaf(vec![1.0, 2.0]);
    let e = binary_(&w, Operand::S(Scalar::Float(2.0)), BinaryOp::Mul).unwrap_err();
    assert!(e.to_string().contains("a leaf Variable that requires grad is being used in an in-place operation."));
    let v = w.slice(0, 0, 1, 1).unwrap();
    let e = binary_(&v, Operand::S(Scalar::Float(2.0)), BinaryOp::Mul).unwrap_err();
    assert!(e.to_string().contains("a view of a leaf Variable that requires grad"));
}

struct Counting(Arc<AtomicUsize>, Arc<AtomicUsize>);

impl saved::SavedTensorHooks for Counting {
    fn pack(&self, t: &Tensor) -> ferrotorch::Result<saved::Packed> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(t.clone()))
    }
    fn unpack(&self, p: &saved::Packed) -> ferrotorch::Result<Tensor> {
        self.1.fetch_add(1, Ordering::Relaxed);
        Ok(p.downcast_ref::<Tensor>().unwrap().clone())
    }
}

#[test]
fn saved_tensor_hooks_pack_and_unpack_builtin_saves() {
    let (packs, unpacks) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let x = leaf(vec![1.0, 2.0]);
    saved::push_hooks(Arc::new(Counting(packs.clone(), unpacks.clone())));
    let y = x.mul(&x).unwrap().sum().unwrap();
    saved::pop_hooks();
    assert!(packs.load(Ordering::Relaxed) >= 2);
    autograd::backward(&[y], vec![None], None, false, None).unwrap();
    assert!(unpacks.load(Ordering::Relaxed) >= 2);
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 4.0]);
}
