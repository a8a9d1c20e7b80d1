//! The autograd engine: graph recording, saved tensors, the backward pass.
//!
//! Ops record a [`Node`] only when grad mode is on and an input requires grad.
//! Each node keeps edges to the nodes of its inputs (`next_functions`); leaves
//! get an `AccumulateGrad` node. The graph is owned by the tensors that
//! reference it and is freed with them; there is no global tape.
//!
//! ```
//! use ferrotorch::{autograd, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
//! x.set_requires_grad(true).unwrap();
//! let y = x.mul(&x).unwrap().sum().unwrap(); // sum(x²)
//! autograd::backward(&[y], vec![None], None, false, None).unwrap();
//! assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
//! ```

pub mod accumulate;
pub mod anomaly;
pub mod engine;
pub mod inplace;
pub mod grad_mode;
pub mod node;
pub mod saved;

pub use engine::{backward, grad};
pub use grad_mode::{is_grad_enabled, set_grad_enabled, GradModeGuard};
pub use node::{Backward, Edge, Node};
pub use inplace::{apply_inplace, apply_inplace_kernel, check_inplace, rebase_history, OldValue};
pub use saved::SavedTensor;

use crate::Tensor;
use std::sync::Arc;

/// Should an op with these inputs record a node?
pub fn needs_grad(inputs: &[&Tensor]) -> bool {
    is_grad_enabled() && inputs.iter().any(|t| t.requires_grad())
}

/// The leaf's `AccumulateGrad` node, created once and reused while alive.
pub fn grad_accumulator(t: &Tensor) -> Arc<Node> {
    let mut m = t.autograd();
    if let Some(n) = m.grad_accumulator.upgrade() {
        return n;
    }
    let n = Node::accumulate_grad(t.clone());
    m.grad_accumulator = Arc::downgrade(&n);
    n
}

/// The edge along which `t` receives its gradient, if it takes part in autograd.
pub fn gradient_edge(t: &Tensor) -> Option<Edge> {
    inplace::refresh_view(t);
    let (grad_fn, output_nr, leaf_rg) = {
        let m = t.autograd();
        (m.grad_fn.clone(), m.output_nr, m.requires_grad)
    };
    match grad_fn {
        Some(node) => Some(Edge { node, input_nr: output_nr }),
        None if leaf_rg => Some(Edge { node: grad_accumulator(t), input_nr: 0 }),
        None => None,
    }
}

/// Makes `t` output `output_nr` of `node`.
pub fn set_history(t: &Tensor, node: Arc<Node>, output_nr: usize) {
    let mut m = t.autograd();
    m.grad_fn = Some(node);
    m.output_nr = output_nr;
}

/// Records `backward` as the node producing `outputs` from `inputs`, when
/// needed. Inputs that are `None` (Python scalars) get no edge.
pub fn record(name: &'static str, inputs: &[Option<&Tensor>], outputs: &[&Tensor], backward: impl FnOnce() -> Box<dyn Backward>) {
    if !is_grad_enabled() || !inputs.iter().flatten().any(|t| t.requires_grad()) {
        saved::forget_pending();
        return;
    }
    saved::pack_pending();
    let edges = inputs.iter().map(|t| t.and_then(gradient_edge)).collect();
    let node = Node::new(name, edges, outputs.len(), backward());
    for (i, o) in outputs.iter().enumerate() {
        if o.dtype().is_floating_point() || o.dtype().is_complex() {
            set_history(o, node.clone(), i);
        }
    }
}

/// A backward rule written as a closure over its saved state.
pub struct FnBackward<F>(pub Option<F>);

impl<F> Backward for FnBackward<F>
where
    F: FnMut(&Arc<Node>, Vec<Option<Tensor>>) -> ferrotorch_core::Result<Vec<Option<Tensor>>> + Send,
{
    fn apply(&mut self, node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> ferrotorch_core::Result<Vec<Option<Tensor>>> {
        match self.0.as_mut() {
            Some(f) => f(node, grads),
            None => Err(node::released_error()),
        }
    }
    fn release(&mut self) {
        self.0 = None;
    }
}

/// Boxes a closure as a backward rule. Everything it captures (saved tensors)
/// is dropped on release.
///
/// The closure is a real derivative rule, `g * f'(x)` (with transposes
/// where `f` is a product), which is also the rule of `f`'s holomorphic
/// extension. PyTorch's convention for complex tensors passes back
/// `g * conj(f'(z))` instead (the gradient of a real loss as `∂L/∂x + i
/// ∂L/∂y`), which is `conj(rule(conj(g)))`: so when a gradient is complex,
/// the rule runs on the conjugated gradients and its results are
/// conjugated. Rules of non-holomorphic ops (the parts of a complex number,
/// its modulus and argument) are written in PyTorch's convention and boxed
/// with [`rule_native`].
pub fn rule<F>(mut f: F) -> Box<dyn Backward>
where
    F: FnMut(&Arc<Node>, Vec<Option<Tensor>>) -> ferrotorch_core::Result<Vec<Option<Tensor>>> + Send + 'static,
{
    Box::new(FnBackward(Some(move |node: &Arc<Node>, grads: Vec<Option<Tensor>>| {
        if !grads.iter().flatten().any(|g| g.dtype().is_complex()) {
            return f(node, grads);
        }
        // Materialised (not the lazy bit): a gradient is read by several ops.
        let conj = |g: Option<Tensor>| g.map(|g| g.conj_physical()).transpose();
        let grads = grads.into_iter().map(conj).collect::<ferrotorch_core::Result<Vec<_>>>()?;
        f(node, grads)?.into_iter().map(conj).collect()
    })))
}

/// Boxes a closure as a backward rule written in PyTorch's convention for
/// complex tensors (see [`rule`]), run as it is.
pub fn rule_native<F>(f: F) -> Box<dyn Backward>
where
    F: FnMut(&Arc<Node>, Vec<Option<Tensor>>) -> ferrotorch_core::Result<Vec<Option<Tensor>>> + Send + 'static,
{
    Box::new(FnBackward(Some(f)))
}

/// Runs `f`, an op PyTorch defines no derivative for (`floor_divide`), and
/// records PyTorch's `NotImplemented` node for its output: the output joins
/// the graph (it requires grad when an input does) and a backward pass that
/// reaches it raises "derivative for aten::`op` is not implemented".
pub fn without_derivative(op: &'static str, inputs: &[Option<&Tensor>], f: impl FnOnce() -> ferrotorch_core::Result<Tensor>) -> ferrotorch_core::Result<Tensor> {
    let out = {
        let _off = GradModeGuard::new(false);
        f()?
    };
    record_not_implemented(op, inputs, &out);
    Ok(out)
}

/// The in-place form of [`without_derivative`]: `kernel` writes `target`
/// (with its own checks, in PyTorch's order), and `target`'s history becomes
/// a `NotImplemented` node over its old value and `others`.
pub fn inplace_without_derivative(
    op: &'static str,
    target: &Tensor,
    others: &[Option<&Tensor>],
    kernel: impl FnOnce() -> ferrotorch_core::Result<()>,
) -> ferrotorch_core::Result<()> {
    let recording = is_grad_enabled() && (target.requires_grad() || others.iter().flatten().any(|t| t.requires_grad()));
    if !recording {
        return kernel();
    }
    apply_inplace_kernel(
        target,
        OldValue::Alias,
        |old| {
            // Only the node matters: `kernel` writes the values.
            let out = Tensor::empty(target.shape(), target.dtype(), target.device())?;
            let mut inputs = vec![Some(old)];
            inputs.extend_from_slice(others);
            record_not_implemented(op, &inputs, &out);
            Ok(out)
        },
        kernel,
    )
}

fn record_not_implemented(op: &'static str, inputs: &[Option<&Tensor>], out: &Tensor) {
    record("NotImplemented", inputs, &[out], move || {
        rule(move |_, _| Err(ferrotorch_core::Error::runtime(format!("derivative for aten::{op} is not implemented"))))
    });
}
