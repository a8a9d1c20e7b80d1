//! Indexing, shape ops and einsum from Rust, with closed-form expectations
//! and gradients (no Python involved).

use ferrotorch::autograd;
use ferrotorch::ops::arith::Operand;
use ferrotorch::ops::indexing::{where_, ScatterReduce, TensorIndex};
use ferrotorch::{ErrorKind, Scalar, Tensor};

fn t(v: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape).unwrap()
}

fn leaf(v: Vec<f64>, shape: &[usize]) -> Tensor {
    let x = t(v, shape);
    x.set_requires_grad(true).unwrap();
    x
}

fn idx(v: Vec<i64>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape).unwrap()
}

fn arange(n: usize, shape: &[usize]) -> Tensor {
    t((0..n).map(|v| v as f64).collect(), shape)
}

#[test]
fn advanced_index_placement_rule() {
    let x = arange(60, &[3, 4, 5]);
    let i = idx(vec![0, 1], &[2]);
    // Adjacent advanced indices keep their place: [3, 2] from x[:, i, :][..., 0]-like shapes.
    let a = x.getitem(&[TensorIndex::Slice { start: 0, stop: i64::MAX, step: 1 }, TensorIndex::Tensor(i.clone())]).unwrap();
    assert_eq!(a.shape(), &[3, 2, 5]);
    // Separated ones go first.
    let b = x.getitem(&[TensorIndex::Tensor(i.clone()), TensorIndex::Slice { start: 0, stop: i64::MAX, step: 1 }, TensorIndex::Tensor(i)]).unwrap();
    assert_eq!(b.shape(), &[2, 4]);
    assert_eq!(b.to_vec::<f64>().unwrap(), vec![0.0, 5.0, 10.0, 15.0, 21.0, 26.0, 31.0, 36.0]);
}

#[test]
fn mask_index_and_put() {
    let x = t(vec![1.0, -2.0, 3.0, -4.0], &[4]);
    let m = Tensor::from_vec(vec![false, true, false, true], &[4]).unwrap();
    assert_eq!(x.getitem(&[TensorIndex::Tensor(m.clone())]).unwrap().to_vec::<f64>().unwrap(), vec![-2.0, -4.0]);
    x.setitem(&[TensorIndex::Tensor(m)], &Tensor::scalar(0.0f64).unwrap()).unwrap();
    assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 0.0, 3.0, 0.0]);
}

#[test]
fn out_of_range_index_is_an_index_error() {
    let x = arange(3, &[3]);
    let e = x.getitem(&[TensorIndex::Tensor(idx(vec![5], &[1]))]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Index);
    assert_eq!(e.msg, "index 5 is out of bounds for dimension 0 with size 3");
}

#[test]
fn index_backward_accumulates_repeats() {
    let x = leaf(vec![1.0, 2.0, 3.0], &[3]);
    let y = x.getitem(&[TensorIndex::Tensor(idx(vec![0, 0, 2], &[3]))]).unwrap();
    assert_eq!(y.grad_fn().unwrap().name(), "IndexBackward0");
    autograd::backward(&[y.sum().unwrap()], vec![None], None, false, None).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 0.0, 1.0]);
}

#[test]
fn gather_scatter_add_and_grad() {
    let src = leaf((0..12).map(|v| v as f64).collect(), &[3, 4]);
    let i = idx(vec![0, 1, 2, 0, 1, 2, 3, 1], &[2, 4]);
    let g = src.gather(1, &i).unwrap();
    assert_eq!(g.to_vec::<f64>().unwrap(), vec![0.0, 1.0, 2.0, 0.0, 5.0, 6.0, 7.0, 5.0]);
    autograd::backward(&[g.sum().unwrap()], vec![None], None, false, None).unwrap();
    assert_eq!(src.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    let z = Tensor::zeros(&[2, 5], ferrotorch::DType::Float64, ferrotorch::Device::CPU).unwrap();
    let s = t(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 4]);
    let r = z.scatter_add(1, &i, &s).unwrap();
    assert_eq!(r.to_vec::<f64>().unwrap(), vec![5.0, 2.0, 3.0, 0.0, 0.0, 0.0, 13.0, 6.0, 7.0, 0.0]);
    let m = z.scatter_reduce(1, &i, &s, ScatterReduce::Amax, false).unwrap();
    assert_eq!(m.to_vec::<f64>().unwrap(), vec![4.0, 2.0, 3.0, 0.0, 0.0, 0.0, 8.0, 6.0, 7.0, 0.0]);
}

#[test]
fn where_promotes_and_routes_gradients() {
    let c = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    let x = leaf(vec![1.0, 2.0], &[2]);
    let y = where_(&c, Operand::T(&x), Operand::S(Scalar::Int(7))).unwrap();
    assert_eq!(y.dtype(), ferrotorch::DType::Float64);
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![1.0, 7.0]);
    autograd::backward(&[y.sum().unwrap()], vec![None], None, false, None).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![1.0, 0.0]);
}

#[test]
fn cat_flip_roll_repeat() {
    let a = leaf(vec![1.0, 2.0], &[1, 2]);
    let b = t(vec![3.0, 4.0], &[1, 2]);
    let c = Tensor::cat(&[a.clone(), b], 0).unwrap();
    assert_eq!(c.shape(), &[2, 2]);
    let f = c.flip(&[0, 1]).unwrap();
    assert_eq!(f.to_vec::<f64>().unwrap(), vec![4.0, 3.0, 2.0, 1.0]);
    let r = f.roll(&[1], &[1]).unwrap();
    assert_eq!(r.to_vec::<f64>().unwrap(), vec![3.0, 4.0, 1.0, 2.0]);
    let p = r.repeat(&[1, 2]).unwrap();
    assert_eq!(p.to_vec::<f64>().unwrap(), vec![3.0, 4.0, 3.0, 4.0, 1.0, 2.0, 1.0, 2.0]);
    autograd::backward(&[p.sum().unwrap()], vec![None], None, false, None).unwrap();
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 2.0]);
}

#[test]
fn einsum_matches_matmul_and_trace() {
    let a = leaf((0..6).map(|v| v as f64).collect(), &[2, 3]);
    let b = t((0..12).map(|v| v as f64).collect(), &[3, 4]);
    let c = Tensor::einsum("ij,jk->ik", &[a.clone(), b.clone()]).unwrap();
    assert_eq!(c.to_vec::<f64>().unwrap(), a.mm(&b).unwrap().to_vec::<f64>().unwrap());
    let m = arange(9, &[3, 3]);
    assert_eq!(Tensor::einsum("ii", &[m]).unwrap().to_vec::<f64>().unwrap(), vec![12.0]);
    autograd::backward(&[c.sum().unwrap()], vec![None], None, false, None).unwrap();
    // d sum(AB)/dA = 1 @ B^T: row sums of B
    assert_eq!(a.grad().unwrap().to_vec::<f64>().unwrap(), vec![6.0, 22.0, 38.0, 6.0, 22.0, 38.0]);
    let e = Tensor::einsum("ij,jk", &[arange(6, &[2, 3])]).unwrap_err();
    assert!(e.msg.contains("fewer operands"));
}
