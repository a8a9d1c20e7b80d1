//! The Rust API without Python: views, ops and the backward engine, checked
//! against closed-form derivatives.

use ferrotorch::autograd;
use ferrotorch::ops::arith::{binary, BinaryOp, Operand};
use ferrotorch::{DType, Device, Scalar, Tensor};

fn leaf(v: Vec<f64>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(v, shape).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn chain_rule_through_mul_add_pow_sum() {
    // loss = sum((x*y + 1)^2), dloss/dx = 2(xy+1) y
    let x = leaf(vec![2.0, -1.0], &[2]);
    let y = leaf(vec![3.0, 0.5], &[2]);
    let z = x.mul(&y).unwrap();
    let w = binary(Operand::T(&z), Operand::S(Scalar::Int(1)), BinaryOp::Add).unwrap();
    let p = binary(Operand::T(&w), Operand::S(Scalar::Int(2)), BinaryOp::Pow).unwrap();
    let loss = p.sum().unwrap();
    assert_eq!(loss.grad_fn().unwrap().name(), "SumBackward0");
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    let gx = x.grad().unwrap().to_vec::<f64>().unwrap();
    let gy = y.grad().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(gx, vec![2.0 * 7.0 * 3.0, 2.0 * 0.5 * 0.5]);
    assert_eq!(gy, vec![2.0 * 7.0 * 2.0, 2.0 * 0.5 * -1.0]);
}

#[test]
fn broadcasting_gradients_are_reduced_to_input_shape() {
    let a = leaf(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = leaf(vec![10.0, 20.0, 30.0], &[3]);
    let loss = a.mul(&b).unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    assert_eq!(b.grad().unwrap().to_vec::<f64>().unwrap(), vec![5.0, 7.0, 9.0]);
    assert_eq!(a.grad().unwrap().shape(), &[2, 3]);
}

#[test]
fn second_backward_without_retain_graph_fails() {
    let x = leaf(vec![1.0, 2.0], &[2]);
    let loss = x.mul(&x).unwrap().sum().unwrap();
    autograd::backward(&[loss.clone()], vec![None], None, false, None).unwrap();
    let err = autograd::backward(&[loss], vec![None], None, false, None).unwrap_err();
    assert!(err.msg.contains("backward through the graph a second time"), "{}", err.msg);
}

#[test]
fn grad_of_grad_with_create_graph() {
    // y = x^3: dy/dx = 3x^2 = 27, d2y/dx2 = 6x = 18 at x = 3.
    let x = leaf(vec![3.0], &[]);
    let y = binary(Operand::T(&x), Operand::S(Scalar::Int(3)), BinaryOp::Pow).unwrap();
    let g = autograd::grad(&[y], &[x.clone()], vec![None], None, true, false).unwrap();
    let dy = g[0].clone().unwrap();
    assert_eq!(dy.item().unwrap().to_f64(), 27.0);
    let g2 = autograd::grad(&[dy], &[x], vec![None], None, false, false).unwrap();
    assert_eq!(g2[0].as_ref().unwrap().item().unwrap().to_f64(), 18.0);
}

#[test]
fn views_share_storage_and_route_gradients() {
    let x = leaf((0..6).map(|v| v as f64).collect(), &[2, 3]);
    let row = x.select(0, 1).unwrap();
    assert_eq!(row.storage_offset(), 3);
    let loss = row.t().unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
}

#[test]
fn no_graph_without_grad_mode() {
    let x = leaf(vec![1.0], &[1]);
    let _g = autograd::GradModeGuard::new(false);
    let y = x.mul(&x).unwrap();
    assert!(y.grad_fn().is_none());
    assert!(!y.requires_grad());
}

#[test]
fn matmul_gradients_match_closed_form() {
    let a = leaf(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let b = Tensor::ones(&[2, 2], DType::Float64, Device::CPU).unwrap();
    let loss = a.matmul(&b).unwrap().sum().unwrap();
    autograd::backward(&[loss], vec![None], None, false, None).unwrap();
    // d/dA sum(A @ 1) = 1 @ 1^T = 2 everywhere
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0; 4]);
}

#[test]
fn svd_layouts_and_errors() {
    // PyTorch's strides: U column-major, Vh row-major (its meta kernel's).
    let a = Tensor::empty(&[2, 3, 5], DType::Float32, Device::META).unwrap();
    let (u, s, vh) = a.linalg_svd(true).unwrap();
    assert_eq!((u.shape(), u.strides()), (&[2usize, 3, 3][..], &[9isize, 1, 3][..]));
    assert_eq!((s.shape(), s.strides()), (&[2usize, 3][..], &[3isize, 1][..]));
    assert_eq!((vh.shape(), vh.strides()), (&[2usize, 5, 5][..], &[25isize, 5, 1][..]));
    // A full factor of a matrix with no singular values is the identity.
    let (u, s, _) = Tensor::zeros(&[2, 0], DType::Float64, Device::CPU).unwrap().linalg_svd(true).unwrap();
    assert_eq!(s.numel(), 0);
    assert_eq!(u.to_vec::<f64>().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
    let nan = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0, f64::NAN, 0.0, 0.0, 1.0], &[2, 2, 2]).unwrap();
    let e = nan.linalg_svdvals().unwrap_err();
    assert_eq!(e.kind, ferrotorch::ErrorKind::LinAlg);
    assert!(e.msg.starts_with("linalg.svd: (Batch element 1): The algorithm failed to converge"), "{}", e.msg);
    let i = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
    assert_eq!(i.linalg_svd(false).unwrap_err().kind, ferrotorch::ErrorKind::Runtime);
}
