//! The [`Module`] trait: a layer's forward pass, its parameters and buffers
//! under PyTorch's dotted names, and loading a state dict by those names.

use std::collections::HashSet;

use ferrotorch_core::layout::fmt_shape;
use ferrotorch_core::{Error, Result};

use crate::autograd::GradModeGuard;
use crate::Tensor;

/// One member a module registers, in registration order.
pub enum Entry<'a> {
    /// A learnable tensor (`nn.Parameter`).
    Parameter(&'a str, &'a Tensor),
    /// A tensor of state that is saved but not learnt (`register_buffer`).
    Buffer(&'a str, &'a Tensor),
    /// A submodule.
    Child(&'a str, &'a dyn Module),
}

/// The keys `load_state_dict(strict=false)` did not match, as PyTorch's
/// `_IncompatibleKeys`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleKeys {
    /// Keys the module expects that the state dict lacks.
    pub missing_keys: Vec<String>,
    /// Keys of the state dict the module does not have.
    pub unexpected_keys: Vec<String>,
}

/// A layer or a model: PyTorch's `nn.Module`.
///
/// Implementors write [`forward`](Module::forward) and list their members in
/// [`visit`](Module::visit); names, state dicts and loading follow from that.
/// Modules are `Send + Sync`: a loaded model is shared by reference between
/// request threads, and `forward` takes `&self`.
///
/// ```
/// use ferrotorch::nn::{Linear, Module};
/// let fc = Linear::new(3, 2, true).unwrap();
/// let names: Vec<String> = fc.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight", "bias"]);
/// ```
pub trait Module: Send + Sync {
    /// The module's output for `input`.
    fn forward(&self, input: &Tensor) -> Result<Tensor>;

    /// Hands `f` the module's own parameters, buffers and submodules, in
    /// the order PyTorch registers them (a module with none keeps the default).
    fn visit<'a>(&'a self, _f: &mut dyn FnMut(Entry<'a>)) {}

    /// Sets this module's own training flag (not its children's: see
    /// [`train`](Module::train)); only modules that behave differently in
    /// training (dropout, batch norm) keep one.
    fn set_training(&self, _on: bool) {}

    /// The class name PyTorch's messages use (`Linear`, `Sequential` ...).
    fn type_name(&self) -> &'static str {
        let full = std::any::type_name::<Self>();
        full.rsplit("::").next().unwrap_or(full)
    }

    /// `named_parameters()`: every parameter with its dotted name, this
    /// module's first, then each child's under the child's name.
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        walk(self, "", &mut |name, t, is_param| {
            if is_param {
                out.push((name, t.clone()))
            }
        });
        out
    }

    /// `parameters()`.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters().into_iter().map(|(_, t)| t).collect()
    }

    /// `named_buffers()`.
    fn named_buffers(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        walk(self, "", &mut |name, t, is_param| {
            if !is_param {
                out.push((name, t.clone()))
            }
        });
        out
    }

    /// `state_dict()`: parameters and buffers by dotted name, in PyTorch's
    /// order (each module's parameters, then its buffers, then its children).
    /// The tensors are the module's own (no copy), detached.
    fn state_dict(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        walk(self, "", &mut |name, t, _| out.push((name, t.detach())));
        out
    }

    /// `load_state_dict(state_dict, strict)`: copies each tensor of `state`
    /// into the parameter or buffer of the same name (converting the dtype).
    /// A shape mismatch is always an error; with `strict`, so are missing
    /// and unexpected keys, reported together as PyTorch reports them.
    /// Returns the keys that did not match.
    fn load_state_dict(&self, state: &[(String, Tensor)], strict: bool) -> Result<IncompatibleKeys> {
        let _no_grad = GradModeGuard::new(false);
        let mut expected = HashSet::new();
        let mut keys = IncompatibleKeys::default();
        let mut errors = Vec::new();
        let mut copies = Vec::new();
        let lookup: std::collections::HashMap<&str, &Tensor> = state.iter().map(|(k, t)| (k.as_str(), t)).collect();
        walk(self, "", &mut |name, t, _| {
            match lookup.get(name.as_str()) {
                Some(src) if src.shape() != t.shape() => errors.push(format!(
                    "size mismatch for {name}: copying a param with shape torch.Size({}) from checkpoint, the shape in current model is torch.Size({}).",
                    fmt_shape(src.shape()),
                    fmt_shape(t.shape())
                )),
                Some(src) => copies.push((t.clone(), (*src).clone())),
                None => keys.missing_keys.push(name.clone()),
            }
            expected.insert(name);
        });
        keys.unexpected_keys = state.iter().filter(|(k, _)| !expected.contains(k)).map(|(k, _)| k.clone()).collect();
        if strict {
            let quoted = |ks: &[String]| ks.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
            if !keys.unexpected_keys.is_empty() {
                errors.insert(0, format!("Unexpected key(s) in state_dict: {}. ", quoted(&keys.unexpected_keys)));
            }
            if !keys.missing_keys.is_empty() {
                errors.insert(0, format!("Missing key(s) in state_dict: {}. ", quoted(&keys.missing_keys)));
            }
        }
        if !errors.is_empty() {
            return Err(Error::runtime(format!("Error(s) in loading state_dict for {}:\n\t{}", self.type_name(), errors.join("\n\t"))));
        }
        for (dst, src) in copies {
            dst.copy_(&src)?;
        }
        Ok(keys)
    }

    /// `train(mode)`: sets the training flag of this module and every submodule.
    fn train(&self, on: bool) {
        fn rec<M: Module + ?Sized>(m: &M, on: bool) {
            m.set_training(on);
            m.visit(&mut |e| {
                if let Entry::Child(_, c) = e {
                    rec(c, on)
                }
            });
        }
        rec(self, on);
    }

    /// `eval()`: `train(false)`.
    fn eval(&self) {
        self.train(false)
    }

    /// `requires_grad_(on)` on every parameter: a model served with
    /// `requires_grad_(false)` records no graph whatever the grad mode.
    fn requires_grad_(&self, on: bool) -> Result<()> {
        self.parameters().iter().try_for_each(|p| p.set_requires_grad(on))
    }

    /// `zero_grad()`: drops every parameter's gradient (`set_to_none=True`).
    fn zero_grad(&self) {
        self.parameters().iter().for_each(|p| p.set_grad(None))
    }
}

/// Calls `f(dotted name, tensor, is_parameter)` for every parameter and
/// buffer of `m` and its descendants, in state-dict order.
fn walk<M: Module + ?Sized>(m: &M, prefix: &str, f: &mut dyn FnMut(String, &Tensor, bool)) {
    let mut params = Vec::new();
    let mut buffers = Vec::new();
    let mut children = Vec::new();
    m.visit(&mut |e| match e {
        Entry::Parameter(n, t) => params.push((n, t)),
        Entry::Buffer(n, t) => buffers.push((n, t)),
        Entry::Child(n, c) => children.push((n, c)),
    });
    for (n, t) in params {
        f(format!("{prefix}{n}"), t, true);
    }
    for (n, t) in buffers {
        f(format!("{prefix}{n}"), t, false);
    }
    for (n, c) in children {
        walk(c, &format!("{prefix}{n}."), f);
    }
}
