//! In-place ops under autograd, PyTorch's way.
//!
//! Every in-place op is its out-of-place rule plus a history rebase:
//! [`apply_inplace`] computes the op out of place on the target's old value
//! (which carries the target's history), writes the result into the target,
//! and hands the recorded node to [`rebase_history`]:
//!
//! * a plain tensor simply takes the node as its `grad_fn`;
//! * a view (made while grad mode was on) rebases its *base* instead: the
//!   base's new `grad_fn` is a `CopySlices` node whose backward routes the
//!   gradient of the view's region through the op's rule and passes the rest
//!   to the base's old history; the view itself becomes `AsStridedBackward0`
//!   over the new base. Other views of the same base regenerate their history
//!   the same way when they are next looked at (see [`refresh_view`]).

use super::node::{released_error, Backward, Node};
use super::{gradient_edge, is_grad_enabled, set_history, Edge, GradModeGuard};
use crate::Tensor;
use ferrotorch_core::{Error, Layout, Result};
use std::sync::Arc;

/// How the op reads the target's old value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OldValue {
    /// The rule saves the old value: compute on a private copy of it, laid
    /// out as PyTorch's `clone()` of the original `self` (preserve_format).
    Copy,
    /// As `Copy`, but the copy keeps the target's own strides: PyTorch's rule
    /// reads the written tensor itself (`result`, as elu_/celu_/selu_ do), and
    /// which lambda of its backward kernel an element meets follows its layout.
    CopyStrided,
    /// Only the history matters (`copy_`, `fill_`): an alias is enough.
    Alias,
}

/// Refuses in-place changes that autograd cannot represent, with PyTorch's messages.
pub fn check_inplace(t: &Tensor) -> Result<()> {
    if !is_grad_enabled() {
        return Ok(());
    }
    if t.is_leaf() && t.requires_grad() {
        return Err(Error::runtime("a leaf Variable that requires grad is being used in an in-place operation."));
    }
    if let Some(base) = t.base() {
        if base.is_leaf() && base.requires_grad() {
            return Err(Error::runtime("a view of a leaf Variable that requires grad is being used in an in-place operation."));
        }
        if t.autograd().view_version.is_none() && base.requires_grad() {
            return Err(Error::runtime(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
            ));
        }
    }
    Ok(())
}

/// Runs an in-place op on `target` with autograd recording: `compute` gets
/// the old value (carrying `target`'s history) and returns the out-of-place
/// result, whose recorded node (if any) must take the old value as input 0.
/// The result is written into `target` (it must have `target`'s shape and a
/// dtype castable to it; `compute` checks that) and the history is rebased.
///
/// The write-back goes through `copy_raw_`, which refuses a target whose
/// elements share memory (an expanded view), as PyTorch's kernels do; ops
/// PyTorch runs on such targets use [`apply_inplace_kernel`].
pub fn apply_inplace(target: &Tensor, old: OldValue, compute: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<()> {
    run_inplace(target, old, compute, |r| target.copy_raw_(r))
}

/// [`apply_inplace`] for the ops PyTorch runs on targets with internal
/// overlap (`fill_`, `zero_`, `masked_fill_`, `index_fill_`, `index_put_`):
/// `kernel` writes `target` in place exactly as without autograd, so the
/// positions the op does not name keep their (shared) value. Copying the
/// out-of-place result instead would write every alias of a memory location
/// and let the last one win. `compute` only provides the recorded history.
pub fn apply_inplace_kernel(
    target: &Tensor,
    old: OldValue,
    compute: impl FnOnce(&Tensor) -> Result<Tensor>,
    kernel: impl FnOnce() -> Result<()>,
) -> Result<()> {
    run_inplace(target, old, compute, |_| {
        let _off = GradModeGuard::new(false);
        kernel()
    })
}

fn run_inplace(
    target: &Tensor,
    old: OldValue,
    compute: impl FnOnce(&Tensor) -> Result<Tensor>,
    write: impl FnOnce(&Tensor) -> Result<()>,
) -> Result<()> {
    check_inplace(target)?;
    let snap = match old {
        OldValue::Copy => {
            let _off = GradModeGuard::new(false);
            target.clone_same_layout(false)?
        }
        OldValue::CopyStrided => {
            let _off = GradModeGuard::new(false);
            target.clone_same_layout(true)?
        }
        OldValue::Alias => target.detach(),
    };
    if let Some(f) = target.grad_fn() {
        set_history(&snap, f, target.output_nr());
    }
    let r = compute(&snap)?;
    drop(snap);
    write(&r)?;
    if let Some(f) = r.grad_fn() {
        rebase_history(target, f, 0)?;
    }
    Ok(())
}

/// Makes `node` (whose input `self_idx` is `t`'s old value and whose single
/// output is `t`'s new value) the history of `t`, going through the base
/// with `CopySlices` when `t` is a view.
pub fn rebase_history(t: &Tensor, node: Arc<Node>, self_idx: usize) -> Result<()> {
    let base = match t.base() {
        Some(b) if t.autograd().view_version.is_some() => b.clone(),
        _ => {
            set_history(t, node, 0);
            return Ok(());
        }
    };
    if node.num_outputs() != 1 {
        return Err(Error::runtime("Functions which modify views in-place must return a single Variable"));
    }
    let rel = relative_layout(&base, t);
    let mut edges: Vec<Option<Edge>> = vec![gradient_edge(&base)];
    edges.extend(node.next_edges().iter().enumerate().filter(|(i, _)| *i != self_idx).map(|(_, e)| e.clone()));
    let flip = t.is_conj() != base.is_conj();
    let copy_slices = Node::new("CopySlices", edges, 1, Box::new(CopySlices { rel, f: Some(node), self_idx, flip }));
    set_history(&base, copy_slices, 0);
    let view_node = as_strided_node(&base, t);
    let mut m = t.autograd();
    m.grad_fn = view_node;
    m.output_nr = 0;
    m.view_version = Some(t.version());
    m.view_base_untracked = false;
    Ok(())
}

/// Regenerates a view's history after an in-place op changed its base or a
/// sibling view (PyTorch does this lazily too, when `grad_fn` is read). A
/// differentiable view that was made without recording a node (a raw alias
/// of a base that requires grad) gets its `AsStridedBackward0` here as well,
/// since PyTorch's views of such a base always require grad.
pub fn refresh_view(t: &Tensor) {
    let Some(base) = t.base() else { return };
    let cur = t.version();
    let (recorded, has_fn, untracked) = {
        let m = t.autograd();
        match m.view_version {
            None => return,
            Some(v) => (v, m.grad_fn.is_some(), m.view_base_untracked),
        }
    };
    if recorded == cur && (has_fn || untracked || !base.requires_grad()) {
        return;
    }
    let node = if base.requires_grad() { as_strided_node(base, t) } else { None };
    let mut m = t.autograd();
    m.view_version = Some(cur);
    m.view_base_untracked = node.is_none();
    if let Some(n) = node {
        m.grad_fn = Some(n);
        m.output_nr = 0;
    }
}

/// `view`'s geometry relative to a contiguous tensor shaped like `base`, or
/// `None` when the base is not contiguous (no simple mapping exists).
fn relative_layout(base: &Tensor, view: &Tensor) -> Option<Layout> {
    if !base.is_contiguous() || view.storage_offset() < base.storage_offset() {
        return None;
    }
    Some(Layout { shape: view.shape().into(), strides: view.strides().into(), offset: view.storage_offset() - base.storage_offset() })
}

/// An `AsStridedBackward0` node taking `view`'s gradient back to `base`.
fn as_strided_node(base: &Tensor, view: &Tensor) -> Option<Arc<Node>> {
    let edge = gradient_edge(base)?;
    let rel = relative_layout(base, view);
    let shape = base.shape().to_vec();
    // A view whose conjugate bit differs from its base's reads the base's
    // values conjugated, so its gradient goes back conjugated.
    let flip = view.is_conj() != base.is_conj();
    let rule = super::rule(move |_, g| {
        let Some(g) = g.into_iter().next().flatten() else { return Ok(vec![None]) };
        let rel = rel.as_ref().ok_or_else(non_contiguous_base)?;
        let r = crate::ops::view_grad::view_scatter_add(&g, &shape, rel)?;
        Ok(vec![Some(if flip { r.conj_physical()? } else { r })])
    });
    Some(Node::new("AsStridedBackward0", vec![Some(edge)], 1, rule))
}

fn non_contiguous_base() -> Error {
    Error::not_implemented(
        "ferrotorch cannot yet rebase the history of an in-place op on a view of a non-contiguous base tensor; make the base contiguous first",
    )
}

/// The base's history after an in-place op on one of its views.
struct CopySlices {
    /// The view's geometry within a contiguous tensor shaped like the base.
    rel: Option<Layout>,
    /// The node of the in-place op (its input `self_idx` was the view).
    f: Option<Arc<Node>>,
    self_idx: usize,
    /// The view's conjugate bit differs from the base's: its region of the
    /// gradient is read and written back conjugated.
    flip: bool,
}

impl Backward for CopySlices {
    fn apply(&mut self, node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let f = self.f.as_ref().ok_or_else(released_error)?;
        let rel = self.rel.as_ref().ok_or_else(non_contiguous_base)?;
        // PyTorch writes the view's gradient back with `copy_` (`zero_` when
        // the op gave none), which refuses a view whose elements share memory:
        // its backward through an in-place op on an expanded view fails. It
        // only writes back when the base's gradient is wanted, so a base
        // outside the graph (the value written requiring grad) passes.
        let base_wanted = node.next_edges().first().is_some_and(|e| e.is_some());
        if base_wanted {
            rel.check_no_internal_overlap()?;
        }
        let Some(g) = grads.into_iter().next().flatten() else {
            return Ok(vec![None; node.next_edges().len()]);
        };
        // Written with autograd-aware ops so that create_graph works.
        let result = g.clone_data()?;
        let sizes: Vec<i64> = rel.shape.iter().map(|&s| s as i64).collect();
        let strides: Vec<i64> = rel.strides.iter().map(|&s| s as i64).collect();
        let slice = result.as_strided(&sizes, &strides, Some((result.storage_offset() + rel.offset) as i64))?;
        // Through a conjugate view of the region, the reads and the write-back conjugate.
        let slice = if self.flip { slice.conj()? } else { slice };
        let res = f.apply_rule(vec![Some(slice.clone_data()?)])?;
        let mut res = res.into_iter();
        let mut out = vec![None; 1];
        for i in 0.. {
            let Some(r) = res.next() else { break };
            if i == self.self_idx {
                if !base_wanted {
                    continue;
                }
                match r {
                    Some(r) => slice.copy_(&r)?,
                    None => slice.fill_(ferrotorch_core::Scalar::Float(0.0))?,
                }
            } else {
                out.push(r);
            }
        }
        out[0] = if base_wanted { Some(result) } else { None };
        out.resize(node.next_edges().len(), None);
        Ok(out)
    }

    fn release(&mut self) {
        if let Some(f) = self.f.take() {
            f.release();
        }
    }
}
