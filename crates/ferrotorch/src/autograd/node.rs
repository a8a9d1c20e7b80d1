//! Graph nodes: one per recorded op, pointing at the nodes of its inputs.

use crate::Tensor;
use ferrotorch_core::{Error, Result};
use std::borrow::Cow;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// An edge to the node that receives the gradient of one input:
/// `(node, input_nr)` as in PyTorch's `next_functions`.
#[derive(Clone)]
pub struct Edge {
    /// The node that will receive the gradient.
    pub node: Arc<Node>,
    /// Which of that node's inputs (i.e. which output of its forward op).
    pub input_nr: usize,
}

/// What a node does at backward time: maps gradients of its forward outputs
/// to gradients of its forward inputs (one per `next_edges` entry).
pub trait Backward: Send {
    /// Computes input gradients. `node` is the node being run (needed to
    /// unpack saved outputs). A `None` gradient means "zero".
    fn apply(&mut self, node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>>;
    /// Drops saved tensors (called after backward without `retain_graph`).
    fn release(&mut self) {}
}

/// A hook on the gradient flowing into a tensor: may replace it.
pub type TensorHook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;
/// A hook run after a leaf's `.grad` was updated.
pub type PostAccumulateHook = Arc<dyn Fn(&Tensor) -> Result<()> + Send + Sync>;
/// A node pre-hook: sees (and may replace) the gradients of the node's outputs.
pub type PreHook = Arc<dyn Fn(&[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;
/// A node post-hook: sees input and output gradients, may replace the input ones.
pub type PostHook = Arc<dyn Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;

static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);

/// Mutable part of a node.
pub struct NodeState {
    /// The rule; `None` once released.
    pub backward: Option<Box<dyn Backward>>,
    /// Was it released (saved tensors freed)?
    pub released: bool,
    /// Hooks on the output gradients, keyed by handle id.
    pub pre_hooks: Vec<(u64, PreHook)>,
    /// Hooks after the rule ran, keyed by handle id.
    pub post_hooks: Vec<(u64, PostHook)>,
    /// Per-output tensor hooks registered through non-leaf tensors (output_nr, id, hook).
    pub tensor_pre_hooks: Vec<(usize, u64, TensorHook)>,
    /// `retain_grad()` targets: (output_nr, the tensor held weakly).
    pub retain_grad: Vec<(usize, std::sync::Weak<crate::tensor::TensorImpl>)>,
    /// User data attached by the bindings (`grad_fn.metadata`), kept with the
    /// node because the Python wrapper object may come and go.
    pub metadata: Option<Box<dyn std::any::Any + Send + Sync>>,
}

/// One recorded operation in the autograd graph.
pub struct Node {
    name: Cow<'static, str>,
    seq: u64,
    next_edges: Vec<Option<Edge>>,
    num_outputs: usize,
    state: Mutex<NodeState>,
    /// For `AccumulateGrad`: the leaf it accumulates into.
    variable: Option<Tensor>,
    /// Borrowed pointer to the Python wrapper, managed by the bindings (see `Tensor`).
    pyobj: AtomicPtr<c_void>,
    /// Where the forward op ran, recorded only in anomaly mode.
    trace: Option<String>,
}

static HOOK_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh handle id for hook registration.
pub fn next_hook_id() -> u64 {
    HOOK_ID.fetch_add(1, Ordering::Relaxed)
}

impl Node {
    /// A node for an op with `num_outputs` outputs.
    pub fn new(name: impl Into<Cow<'static, str>>, next_edges: Vec<Option<Edge>>, num_outputs: usize, backward: Box<dyn Backward>) -> Arc<Node> {
        Arc::new(Node {
            name: name.into(),
            seq: NEXT_SEQ.fetch_add(1, Ordering::Relaxed),
            next_edges,
            num_outputs,
            state: Mutex::new(NodeState {
                backward: Some(backward),
                released: false,
                pre_hooks: Vec::new(),
                post_hooks: Vec::new(),
                tensor_pre_hooks: Vec::new(),
                retain_grad: Vec::new(),
                metadata: None,
            }),
            variable: None,
            pyobj: AtomicPtr::new(std::ptr::null_mut()),
            trace: super::anomaly::forward_trace(),
        })
    }

    /// The `AccumulateGrad` node of a leaf.
    pub fn accumulate_grad(variable: Tensor) -> Arc<Node> {
        Arc::new(Node {
            name: Cow::Borrowed("AccumulateGrad"),
            // Runs as soon as it is ready, like PyTorch (max sequence number).
            seq: u64::MAX,
            next_edges: Vec::new(),
            num_outputs: 1,
            state: Mutex::new(NodeState {
                backward: Some(Box::new(super::accumulate::AccumulateGrad)),
                released: false,
                pre_hooks: Vec::new(),
                post_hooks: Vec::new(),
                tensor_pre_hooks: Vec::new(),
                retain_grad: Vec::new(),
                metadata: None,
            }),
            variable: Some(variable),
            pyobj: AtomicPtr::new(std::ptr::null_mut()),
            trace: None,
        })
    }

    /// `name()`, e.g. `"MulBackward0"`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Creation order; later nodes run first.
    pub fn seq(&self) -> u64 {
        self.seq
    }
    /// `next_functions` as edges.
    pub fn next_edges(&self) -> &[Option<Edge>] {
        &self.next_edges
    }
    /// Number of forward outputs (gradients this node receives).
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }
    /// The leaf of an `AccumulateGrad` node.
    pub fn variable(&self) -> Option<&Tensor> {
        self.variable.as_ref()
    }
    /// Locks the mutable state.
    pub fn state(&self) -> MutexGuard<'_, NodeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The Python wrapper slot.
    pub fn pyobj_slot(&self) -> &AtomicPtr<c_void> {
        &self.pyobj
    }
    /// Identity for maps.
    pub fn id(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
    /// The forward traceback recorded in anomaly mode.
    pub fn trace(&self) -> Option<&str> {
        self.trace.as_deref()
    }

    /// Runs this node's rule on `grads` outside the engine (used by nodes that
    /// wrap another node, like `CopySlices`). The rule is taken out while it
    /// runs so that a re-entrant call reports "released" instead of deadlocking.
    pub fn apply_rule(self: &Arc<Self>, grads: Vec<Option<Tensor>>) -> Result<Vec<Option<Tensor>>> {
        let mut rule = {
            let mut s = self.state();
            if s.released {
                return Err(released_error());
            }
            s.backward.take().ok_or_else(released_error)?
        };
        let r = rule.apply(self, grads);
        self.state().backward = Some(rule);
        r
    }

    /// Frees the saved state of the rule (as after backward without `retain_graph`).
    pub fn release(&self) {
        let rule = {
            let mut s = self.state();
            s.released = true;
            s.backward.take()
        };
        // Dropped outside the lock: the rule may own tensors whose drop reaches other nodes.
        if let Some(mut r) = rule {
            r.release();
            self.state().backward = Some(r);
        }
    }
}

/// The error PyTorch raises when a freed graph is run again.
pub fn released_error() -> Error {
    Error::runtime(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
    )
}
