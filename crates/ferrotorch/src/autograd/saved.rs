//! Saved tensors: what a backward rule keeps from the forward pass, with the
//! version it had, so in-place changes are caught instead of silently giving
//! wrong gradients.

use super::node::{released_error, Node};
use crate::Tensor;
use ferrotorch_core::{Error, Result};
use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What a pack hook turned a saved tensor into (opaque to the engine).
pub type Packed = Box<dyn Any + Send + Sync>;

/// `saved_tensors_hooks(pack, unpack)`: called for every tensor an op saves
/// for backward while the hooks are installed on this thread.
pub trait SavedTensorHooks: Send + Sync {
    /// Called when a recorded op saves `t`.
    fn pack(&self, t: &Tensor) -> Result<Packed>;
    /// Called when the backward rule needs the tensor back.
    fn unpack(&self, p: &Packed) -> Result<Tensor>;
}

/// Number of hook frames installed on any thread: a cheap "is anything on" test.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static HOOKS: RefCell<Vec<Arc<dyn SavedTensorHooks>>> = const { RefCell::new(Vec::new()) };
    /// Saved tensors created under hooks whose op has not recorded yet. They
    /// are packed only when the op really records a node, so pack hooks see
    /// exactly the tensors PyTorch would save.
    static PENDING: RefCell<Vec<Weak<Mutex<Hooked>>>> = const { RefCell::new(Vec::new()) };
}

/// Installs hooks on this thread (innermost wins).
pub fn push_hooks(h: Arc<dyn SavedTensorHooks>) {
    HOOKS.with(|s| s.borrow_mut().push(h));
    ACTIVE.fetch_add(1, Ordering::Relaxed);
}

/// Removes the innermost hooks of this thread.
pub fn pop_hooks() {
    let popped = HOOKS.with(|s| s.borrow_mut().pop());
    if popped.is_some() {
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

fn current_hooks() -> Option<Arc<dyn SavedTensorHooks>> {
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return None;
    }
    HOOKS.with(|s| s.borrow().last().cloned())
}

/// Packs the saved tensors of the op being recorded (called by `record`).
pub(crate) fn pack_pending() {
    if ACTIVE.load(Ordering::Relaxed) == 0 && PENDING.with(|p| p.borrow().is_empty()) {
        return;
    }
    let pending: Vec<_> = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    for w in pending {
        let Some(cell) = w.upgrade() else { continue };
        let (raw, hooks) = {
            let mut h = cell.lock().unwrap_or_else(|p| p.into_inner());
            (h.raw.take(), h.hooks.clone())
        };
        let Some(raw) = raw else { continue };
        // Outside the lock: the hook runs user code.
        let r = hooks.pack(&raw);
        let mut h = cell.lock().unwrap_or_else(|p| p.into_inner());
        match r {
            Ok(p) => h.packed = Some(p),
            Err(e) => h.error = Some(e.to_string()),
        }
    }
}

/// Drops bookkeeping of saved tensors whose op did not record.
pub(crate) fn forget_pending() {
    if PENDING.with(|p| p.borrow().is_empty()) {
        return;
    }
    PENDING.with(|p| p.borrow_mut().retain(|w| w.strong_count() > 0));
}

/// State of a tensor saved while hooks were installed.
struct Hooked {
    /// The tensor until it is packed.
    raw: Option<Tensor>,
    packed: Option<Packed>,
    hooks: Arc<dyn SavedTensorHooks>,
    /// A pack hook failed: reported when the tensor is needed.
    error: Option<String>,
}

enum Slot {
    Plain(Option<Tensor>),
    Hooked(Option<Arc<Mutex<Hooked>>>),
}

/// A tensor saved for backward.
pub struct SavedTensor {
    slot: Slot,
    version: u64,
    /// Saved outputs of the node itself are stored without their `grad_fn`
    /// (which would be a reference cycle) and re-attached on unpack.
    is_output: bool,
    output_nr: usize,
    requires_grad: bool,
}

impl SavedTensor {
    fn new(t: Tensor, version: u64, is_output: bool, output_nr: usize, requires_grad: bool) -> SavedTensor {
        let slot = match current_hooks() {
            None => Slot::Plain(Some(t)),
            Some(hooks) => {
                let cell = Arc::new(Mutex::new(Hooked { raw: Some(t), packed: None, hooks, error: None }));
                PENDING.with(|p| p.borrow_mut().push(Arc::downgrade(&cell)));
                Slot::Hooked(Some(cell))
            }
        };
        SavedTensor { slot, version, is_output, output_nr, requires_grad }
    }

    /// Saves an input of the op (kept with its history).
    pub fn input(t: &Tensor) -> SavedTensor {
        SavedTensor::new(t.clone(), t.version(), false, 0, false)
    }

    /// Saves an output of the op (kept as data only).
    pub fn output(t: &Tensor, output_nr: usize) -> SavedTensor {
        SavedTensor::new(t.detach(), t.version(), true, output_nr, true)
    }

    /// Saves `t`, which is output `output_nr` of the node being recorded when
    /// `is_output` (custom Functions decide this after their forward ran).
    pub fn new_for(t: &Tensor, is_output: bool, output_nr: usize) -> SavedTensor {
        if is_output {
            SavedTensor::output(t, output_nr)
        } else {
            SavedTensor::input(t)
        }
    }

    /// The saved tensor, checking that no in-place op changed it since.
    pub fn unpack(&self, node: &Arc<Node>) -> Result<Tensor> {
        let t = match &self.slot {
            Slot::Plain(data) => {
                let t = data.as_ref().ok_or_else(released_error)?;
                self.check_version(t, node)?;
                t.clone()
            }
            Slot::Hooked(cell) => {
                let cell = cell.as_ref().ok_or_else(released_error)?;
                let h = cell.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = &h.error {
                    return Err(Error::runtime(e.clone()));
                }
                match (&h.packed, &h.raw) {
                    // The unpack hook sees the packed value only; PyTorch does not
                    // version-check what it returns.
                    (Some(p), _) => h.hooks.unpack(p)?,
                    (None, Some(raw)) => {
                        self.check_version(raw, node)?;
                        raw.clone()
                    }
                    (None, None) => return Err(released_error()),
                }
            }
        };
        if self.is_output && self.requires_grad && super::grad_mode::is_grad_enabled() {
            // Re-attach the history so double backward flows through this node.
            let r = t.detach();
            super::set_history(&r, node.clone(), self.output_nr);
            return Ok(r);
        }
        Ok(t)
    }

    fn check_version(&self, t: &Tensor, node: &Arc<Node>) -> Result<()> {
        if t.version() == self.version {
            return Ok(());
        }
        // PyTorch names the op that produced the tensor (the saving node for a
        // saved output, the tensor's current grad_fn for an input), without
        // the "Backward<N>" suffix; leaves get no "which is output" part.
        let producer = if self.is_output { Some(node.name().to_string()) } else { t.grad_fn().map(|f| f.name().to_string()) };
        let output_nr = if self.is_output { self.output_nr } else { t.output_nr() };
        let which = match producer {
            Some(n) => format!(", which is output {output_nr} of {},", strip_backward(&n)),
            None => String::new(),
        };
        let hint = if super::anomaly::is_enabled() {
            "Hint: the backtrace further above shows the operation that failed to compute its gradient. The variable in question was changed in there or anywhere later. Good luck!"
        } else {
            "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
        };
        Err(Error::runtime(format!(
            "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {}]{which} is at version {}; expected version {} instead. {hint}",
            legacy_name(t),
            ferrotorch_core::layout::fmt_shape(t.shape()),
            t.version(),
            self.version
        )))
    }

    /// Frees the saved data.
    pub fn release(&mut self) {
        match &mut self.slot {
            Slot::Plain(d) => *d = None,
            Slot::Hooked(c) => *c = None,
        }
    }
}

/// `"MulBackward0"` -> `"Mul"`, as PyTorch's version-mismatch message shows it.
fn strip_backward(name: &str) -> &str {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    trimmed.strip_suffix("Backward").unwrap_or(name)
}

fn legacy_name(t: &Tensor) -> &'static str {
    use ferrotorch_core::DType::*;
    match t.dtype() {
        Bool => "torch.BoolTensor",
        UInt8 => "torch.ByteTensor",
        Int8 => "torch.CharTensor",
        Int16 => "torch.ShortTensor",
        Int32 => "torch.IntTensor",
        Int64 => "torch.LongTensor",
        Float16 => "torch.HalfTensor",
        BFloat16 => "torch.BFloat16Tensor",
        Float32 => "torch.FloatTensor",
        Float64 => "torch.DoubleTensor",
        Complex64 => "torch.ComplexFloatTensor",
        Complex128 => "torch.ComplexDoubleTensor",
    }
}
