//! Autograd from Python: `grad_fn` node objects (one Python class per node
//! name, so `type(y.grad_fn).__name__ == "MulBackward0"`), the backward entry
//! points, tensor hooks, and custom `autograd.Function` nodes that call back
//! into Python.

use crate::errors::to_py;
use crate::tensor::{tensor_of, wrap, PyTensor};
use ferrotorch::autograd::node::{next_hook_id, Backward, Node};
use ferrotorch::autograd::saved::{pop_hooks, push_hooks, Packed, SavedTensorHooks};
use ferrotorch::autograd::anomaly::{self, Reporter};
use ferrotorch::autograd::{self as ag, Edge, SavedTensor};
use ferrotorch::{Error, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Opaque carrier used to construct node objects of a per-name subclass.
#[pyclass(module = "ferrotorch._C", frozen)]
pub struct NodeHandle {
    node: Arc<Node>,
}

/// A node of the autograd graph (`grad_fn`).
#[pyclass(name = "Node", module = "ferrotorch.autograd.graph", subclass, dict, weakref, frozen)]
pub struct PyNode {
    /// The engine node.
    pub node: Arc<Node>,
}

impl Drop for PyNode {
    fn drop(&mut self) {
        self.node.pyobj_slot().store(std::ptr::null_mut(), Ordering::Relaxed);
    }
}

static CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The Python object for a node, reusing the existing one (identity) and
/// creating one subclass of `Node` per node name.
pub fn wrap_node(py: Python<'_>, node: Arc<Node>) -> PyResult<Bound<'_, PyAny>> {
    let p = node.pyobj_slot().load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: set below to a live PyNode and cleared in its Drop; GIL held.
        return Ok(unsafe { Bound::from_borrowed_ptr(py, p as *mut ffi::PyObject) });
    }
    let classes = CLASSES.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let name = node.name().to_string();
    let cls = match classes.get_item(&name)? {
        Some(c) => c,
        None => {
            let base = py.get_type::<PyNode>();
            let ns = PyDict::new(py);
            ns.set_item("__module__", "ferrotorch.autograd.graph")?;
            let c = py.import("builtins")?.getattr("type")?.call1((name.as_str(), (base,), ns))?;
            classes.set_item(&name, &c)?;
            c
        }
    };
    let obj = cls.call1((NodeHandle { node: node.clone() },))?;
    node.pyobj_slot().store(obj.as_ptr() as *mut _, Ordering::Relaxed);
    Ok(obj)
}

fn py_hook_tensor(cb: Py<PyAny>) -> ag::node::TensorHook {
    Arc::new(move |g: &Tensor| {
        Python::attach(|py| {
            let r = cb.bind(py).call1((wrap(py, g.clone()).map_err(py_err)?,)).map_err(py_err)?;
            if r.is_none() {
                Ok(None)
            } else {
                tensor_of(&r).map(Some).map_err(py_err)
            }
        })
    })
}

/// Carries a Python exception through the engine as an engine error.
fn py_err(e: PyErr) -> Error {
    Python::attach(|py| {
        let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
        PENDING.with(|p| *p.borrow_mut() = Some(e));
        Error::runtime(msg)
    })
}

thread_local! {
    static PENDING: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// Turns an engine error back into the original Python exception when one
/// was raised inside a Python hook or Function.
fn engine_err(e: Error) -> PyErr {
    PENDING.with(|p| p.borrow_mut().take()).unwrap_or_else(|| to_py(e))
}

fn opt_tensor(py: Python<'_>, t: Option<Tensor>) -> PyResult<Bound<'_, PyAny>> {
    match t {
        Some(t) => wrap(py, t),
        None => Ok(py.None().into_bound(py)),
    }
}

fn grads_to_py<'py>(py: Python<'py>, gs: &[Option<Tensor>]) -> PyResult<Bound<'py, PyTuple>> {
    let items = gs.iter().map(|g| opt_tensor(py, g.clone())).collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, items)
}

fn grads_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Tensor>>> {
    let seq: Vec<Bound<'_, PyAny>> = match obj.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => match obj.cast::<PyList>() {
            Ok(l) => l.iter().collect(),
            Err(_) => vec![obj.clone()],
        },
    };
    seq.iter().map(|o| if o.is_none() { Ok(None) } else { tensor_of(o).map(Some) }).collect()
}

#[pymethods]
impl PyNode {
    #[new]
    fn new(handle: &Bound<'_, NodeHandle>) -> Self {
        PyNode { node: handle.get().node.clone() }
    }
    /// The node's name, e.g. `"MulBackward0"`.
    fn name(&self) -> String {
        // PyTorch's hand-written C++ nodes report their namespaced C++ name;
        // the Python class keeps the short one.
        match self.node.name() {
            n @ ("AccumulateGrad" | "CopySlices") => format!("torch::autograd::{n}"),
            n => n.to_string(),
        }
    }
    /// `((node or None, input_nr), ...)` for each input of the forward op.
    #[getter]
    fn next_functions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items = self
            .node
            .next_edges()
            .iter()
            .map(|e| -> PyResult<Bound<'py, PyAny>> {
                match e {
                    Some(Edge { node, input_nr }) => Ok(PyTuple::new(py, [wrap_node(py, node.clone())?, input_nr.into_pyobject(py)?.into_any()])?.into_any()),
                    None => Ok(PyTuple::new(py, [py.None().into_bound(py), 0usize.into_pyobject(py)?.into_any()])?.into_any()),
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, items)
    }
    /// The leaf tensor of an `AccumulateGrad` node.
    #[getter]
    fn variable<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.node.variable() {
            Some(t) => wrap(py, t.clone()),
            None => Err(pyo3::exceptions::PyAttributeError::new_err(format!("'{}' object has no attribute 'variable'", self.node.name()))),
        }
    }
    #[getter]
    fn _sequence_nr(&self) -> u64 {
        self.node.seq()
    }
    /// Registers `hook(grad_inputs, grad_outputs)` run after the node; returns a handle.
    fn register_hook<'py>(&self, py: Python<'py>, hook: Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let id = next_hook_id();
        let h: ag::node::PostHook = Arc::new(move |ins: &[Option<Tensor>], outs: &[Option<Tensor>]| {
            Python::attach(|py| {
                let a = grads_to_py(py, ins).map_err(py_err)?;
                let b = grads_to_py(py, outs).map_err(py_err)?;
                let r = hook.bind(py).call1((a, b)).map_err(py_err)?;
                if r.is_none() { Ok(None) } else { grads_from_py(&r).map(Some).map_err(py_err) }
            })
        });
        self.node.state().post_hooks.push((id, h));
        handle(py, self.node.clone(), id)
    }
    /// Registers `hook(grad_outputs)` run before the node; returns a handle.
    fn register_prehook<'py>(&self, py: Python<'py>, hook: Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let id = next_hook_id();
        let h: ag::node::PreHook = Arc::new(move |gs: &[Option<Tensor>]| {
            Python::attach(|py| {
                let a = grads_to_py(py, gs).map_err(py_err)?;
                let r = hook.bind(py).call1((a,)).map_err(py_err)?;
                if r.is_none() { Ok(None) } else { grads_from_py(&r).map(Some).map_err(py_err) }
            })
        });
        self.node.state().pre_hooks.push((id, h));
        handle(py, self.node.clone(), id)
    }
    /// Per-node dictionary for user data (lives as long as the node).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut s = self.node.state();
        let extra = node_extra(&mut s);
        if let Some(d) = &extra.dict {
            return Ok(d.bind(py).clone().into_any());
        }
        let d = PyDict::new(py);
        extra.dict = Some(d.clone().unbind());
        Ok(d.into_any())
    }
    /// The `ctx` of a custom Function node (PyTorch's grad_fn *is* the ctx), else None.
    #[getter]
    fn _ctx<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        let mut s = self.node.state();
        node_extra(&mut s).ctx.as_ref().map(|c| c.bind(py).clone())
    }
    fn __repr__(&self) -> String {
        format!("<{} object at {:p}>", self.node.name(), Arc::as_ptr(&self.node))
    }
}

/// What the bindings keep with a node: `metadata` and a custom Function's `ctx`.
#[derive(Default)]
struct NodeExtra {
    dict: Option<Py<PyDict>>,
    ctx: Option<Py<PyAny>>,
}

fn node_extra<'a>(s: &'a mut ag::node::NodeState) -> &'a mut NodeExtra {
    if !s.metadata.as_ref().is_some_and(|m| m.is::<NodeExtra>()) {
        s.metadata = Some(Box::new(NodeExtra::default()));
    }
    s.metadata.as_mut().and_then(|m| m.downcast_mut::<NodeExtra>()).expect("just set")
}

/// A removable hook handle (`handle.remove()`).
#[pyclass(module = "ferrotorch._C", frozen)]
pub struct RemovableHandle {
    node: Option<Arc<Node>>,
    tensor: Option<Tensor>,
    id: u64,
}

#[pymethods]
impl RemovableHandle {
    /// Unregisters the hook.
    fn remove(&self) {
        if let Some(n) = &self.node {
            let mut s = n.state();
            s.pre_hooks.retain(|(i, _)| *i != self.id);
            s.post_hooks.retain(|(i, _)| *i != self.id);
            s.tensor_pre_hooks.retain(|(_, i, _)| *i != self.id);
        }
        if let Some(t) = &self.tensor {
            let mut m = t.autograd();
            m.hooks.retain(|(i, _)| *i != self.id);
            m.post_accumulate_hooks.retain(|(i, _)| *i != self.id);
        }
    }
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }
}

fn handle(py: Python<'_>, node: Arc<Node>, id: u64) -> PyResult<Bound<'_, PyAny>> {
    Ok(Bound::new(py, RemovableHandle { node: Some(node), tensor: None, id })?.into_any())
}

/// `tensor.register_hook(hook)`.
#[pyfunction]
pub fn _tensor_register_hook<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, hook: Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let t = tensor_of(t)?;
    if !t.requires_grad() {
        return Err(PyRuntimeError::new_err("cannot register a hook on a tensor that doesn't require gradient"));
    }
    let id = next_hook_id();
    let h = py_hook_tensor(hook);
    match t.grad_fn() {
        Some(node) => {
            node.state().tensor_pre_hooks.push((t.output_nr(), id, h));
            handle(py, node, id)
        }
        None => {
            // A leaf: AccumulateGrad runs the tensor's own hooks.
            t.autograd().hooks.push((id, h));
            Ok(Bound::new(py, RemovableHandle { node: None, tensor: Some(t), id })?.into_any())
        }
    }
}

/// `tensor.register_post_accumulate_grad_hook(hook)`.
#[pyfunction]
pub fn _tensor_register_post_accumulate_hook<'py>(py: Python<'py>, t: &Bound<'py, PyAny>, hook: Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let tt = tensor_of(t)?;
    if !tt.is_leaf() {
        return Err(PyRuntimeError::new_err("post accumulate grad hooks cannot be registered on non-leaf tensors"));
    }
    let id = next_hook_id();
    let h: ag::node::PostAccumulateHook = Arc::new(move |v: &Tensor| {
        Python::attach(|py| {
            hook.bind(py).call1((wrap(py, v.clone()).map_err(py_err)?,)).map_err(py_err)?;
            Ok(())
        })
    });
    tt.autograd().post_accumulate_hooks.push((id, h));
    Ok(Bound::new(py, RemovableHandle { node: None, tensor: Some(tt), id })?.into_any())
}

/// `tensor.retain_grad()`.
#[pyfunction]
pub fn _tensor_retain_grad(t: &Bound<'_, PyAny>) -> PyResult<()> {
    let t = tensor_of(t)?;
    if !t.requires_grad() {
        return Err(PyRuntimeError::new_err("can't retain_grad on Tensor that has requires_grad=False"));
    }
    if let Some(node) = t.grad_fn() {
        let mut m = t.autograd();
        if m.retains_grad {
            return Ok(());
        }
        m.retains_grad = true;
        drop(m);
        node.state().retain_grad.push((t.output_nr(), t.downgrade()));
    }
    Ok(())
}

fn tensors(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    if obj.cast::<PyTensor>().is_ok() {
        return Ok(vec![tensor_of(obj)?]);
    }
    obj.try_iter()?.map(|o| tensor_of(&o?)).collect()
}

fn opt_tensors(obj: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<Option<Tensor>>> {
    match obj {
        None => Ok(vec![None; n]),
        Some(o) if o.is_none() => Ok(vec![None; n]),
        Some(o) if o.cast::<PyTensor>().is_ok() => Ok(vec![Some(tensor_of(o)?)]),
        Some(o) => o.try_iter()?.map(|x| { let x = x?; if x.is_none() { Ok(None) } else { tensor_of(&x).map(Some) } }).collect(),
    }
}

/// The engine entry behind `Tensor.backward` and `torch.autograd.backward`.
#[pyfunction]
#[pyo3(signature = (tensors_, grad_tensors=None, retain_graph=None, create_graph=false, inputs=None))]
pub fn _run_backward(py: Python<'_>, tensors_: &Bound<'_, PyAny>, grad_tensors: Option<&Bound<'_, PyAny>>, retain_graph: Option<bool>, create_graph: bool, inputs: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let outs = tensors(tensors_)?;
    let gs = opt_tensors(grad_tensors, outs.len())?;
    if gs.len() != outs.len() {
        return Err(PyRuntimeError::new_err(format!("got {} tensors and {} gradients", outs.len(), gs.len())));
    }
    let ins = match inputs {
        Some(i) if !i.is_none() => Some(tensors(i)?),
        _ => None,
    };
    let _ = py;
    ag::backward(&outs, gs, retain_graph, create_graph, ins.as_deref()).map_err(engine_err)
}

/// The engine entry behind `torch.autograd.grad`.
#[pyfunction]
#[pyo3(signature = (outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=false, allow_unused=false))]
pub fn _run_grad<'py>(py: Python<'py>, outputs: &Bound<'py, PyAny>, inputs: &Bound<'py, PyAny>, grad_outputs: Option<&Bound<'py, PyAny>>, retain_graph: Option<bool>, create_graph: bool, allow_unused: bool) -> PyResult<Bound<'py, PyTuple>> {
    let outs = tensors(outputs)?;
    let ins = tensors(inputs)?;
    let gs = opt_tensors(grad_outputs, outs.len())?;
    let r = ag::grad(&outs, &ins, gs, retain_graph, create_graph, allow_unused).map_err(engine_err)?;
    grads_to_py(py, &r)
}

/// The tensors a custom Function saved with `save_for_backward`, shared by
/// its node (which frees them on release) and its `ctx` (which unpacks them).
type SavedList = Arc<std::sync::Mutex<Option<Vec<Option<SavedTensor>>>>>;

/// Backward of a custom `autograd.Function`: calls the Python `backward`.
struct PyFunctionBackward {
    /// `callable(*grads) -> grads`, released after backward unless retained.
    call: Option<Py<PyAny>>,
    saved: SavedList,
}

impl Backward for PyFunctionBackward {
    fn apply(&mut self, _node: &Arc<Node>, grads: Vec<Option<Tensor>>) -> ferrotorch::Result<Vec<Option<Tensor>>> {
        let Some(call) = &self.call else { return Err(ag::node::released_error()) };
        Python::attach(|py| {
            let args = grads_to_py(py, &grads).map_err(py_err)?;
            let r = call.bind(py).call1(args).map_err(py_err)?;
            grads_from_py(&r).map_err(py_err)
        })
    }
    fn release(&mut self) {
        *self.saved.lock().unwrap_or_else(|p| p.into_inner()) = None;
        // Dropping a Python reference needs the interpreter.
        if let Some(c) = self.call.take() {
            Python::attach(|_py| drop(c));
        }
    }
}

/// `ctx`'s view of its saved tensors. Holds the node weakly: the node owns
/// the Python `backward` closure, which owns `ctx`, so a strong reference
/// here would be a cycle Python's collector cannot see.
#[pyclass(module = "ferrotorch._C", frozen)]
pub struct SavedTensorsHandle {
    node: std::sync::Weak<Node>,
    saved: SavedList,
}

#[pymethods]
impl SavedTensorsHandle {
    /// The saved tensors, version-checked (PyTorch's errors when modified or freed).
    fn unpack<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let node = self.node.upgrade().ok_or_else(|| to_py(ag::node::released_error()))?;
        let ts = {
            let g = self.saved.lock().unwrap_or_else(|p| p.into_inner());
            let list = g.as_ref().ok_or_else(|| to_py(ag::node::released_error()))?;
            list.iter().map(|s| s.as_ref().map(|s| s.unpack(&node)).transpose()).collect::<ferrotorch::Result<Vec<_>>>()
        };
        grads_to_py(py, &ts.map_err(engine_err)?)
    }
}

/// Records a custom Function node: `name` (`<Class>Backward`), the tensor
/// inputs (None for non-tensor arguments), the differentiable outputs, the
/// Python callable running `backward`, the tensors given to
/// `save_for_backward`, and for each output the index of the input it
/// modified in place (`mark_dirty`) or None. Returns `(node, saved_handle)`,
/// or None when nothing requires grad.
#[pyfunction]
#[pyo3(signature = (name, inputs, outputs, call, to_save=None, dirty=None, differentiable=None, ctx=None))]
pub fn _record_function<'py>(
    py: Python<'py>,
    name: String,
    inputs: &Bound<'py, PyAny>,
    outputs: &Bound<'py, PyAny>,
    call: Py<PyAny>,
    to_save: Option<&Bound<'py, PyAny>>,
    dirty: Option<Vec<Option<usize>>>,
    differentiable: Option<Vec<bool>>,
    ctx: Option<Py<PyAny>>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let ins: Vec<Option<Tensor>> = inputs.try_iter()?.map(|o| { let o = o?; if o.is_none() { Ok(None) } else { tensor_of(&o).map(Some) } }).collect::<PyResult<_>>()?;
    let outs: Vec<Tensor> = outputs.try_iter()?.map(|o| tensor_of(&o?)).collect::<PyResult<_>>()?;
    if !ag::is_grad_enabled() || !ins.iter().flatten().any(|t| t.requires_grad()) {
        return Ok(None);
    }
    let dirty = dirty.unwrap_or_else(|| vec![None; outs.len()]);
    for (o, d) in outs.iter().zip(&dirty) {
        if d.is_some() && o.is_leaf() && o.requires_grad() {
            return Err(PyRuntimeError::new_err("a leaf Variable that requires grad has been used in an in-place operation."));
        }
        if d.is_some() {
            ag::check_inplace(o).map_err(to_py)?;
        }
    }
    let saved: Vec<Option<SavedTensor>> = match to_save {
        None => Vec::new(),
        Some(ts) => ts
            .try_iter()?
            .map(|o| -> PyResult<Option<SavedTensor>> {
                let o = o?;
                if o.is_none() {
                    return Ok(None);
                }
                let t = tensor_of(&o)?;
                // An output saved as is would own its own node: save it as an
                // output (data only, history re-attached on unpack).
                let out_nr = outs.iter().position(|x| x.same(&t));
                Ok(Some(SavedTensor::new_for(&t, out_nr.is_some(), out_nr.unwrap_or(0))))
            })
            .collect::<PyResult<_>>()?,
    };
    let saved: SavedList = Arc::new(std::sync::Mutex::new(Some(saved)));
    let edges = ins.iter().map(|t| t.as_ref().and_then(ag::gradient_edge)).collect();
    let node = Node::new(name, edges, outs.len(), Box::new(PyFunctionBackward { call: Some(call), saved: saved.clone() }));
    for (i, (o, d)) in outs.iter().zip(&dirty).enumerate() {
        // Integer and non-differentiable outputs carry no history.
        if !o.dtype().is_differentiable() || differentiable.as_ref().is_some_and(|m| !m.get(i).copied().unwrap_or(true)) {
            continue;
        }
        match d {
            // Modified in place: its old history is an input edge; rebase like a built-in in-place op.
            Some(idx) if o.base().is_some() => ag::rebase_history(o, node.clone(), *idx).map_err(to_py)?,
            _ => ag::set_history(o, node.clone(), i),
        }
    }
    if let Some(c) = ctx {
        node_extra(&mut node.state()).ctx = Some(c);
    }
    let handle = Bound::new(py, SavedTensorsHandle { node: Arc::downgrade(&node), saved })?;
    let obj = wrap_node(py, node)?;
    Ok(Some(PyTuple::new(py, [obj.into_any(), handle.into_any()])?))
}

/// Saved-tensor hooks implemented by Python callables.
struct PySavedHooks {
    pack: Py<PyAny>,
    unpack: Py<PyAny>,
}

/// A pack hook's error message (the Python exception itself cannot travel
/// through a forward op that does not return errors).
fn hook_err(py: Python<'_>, e: PyErr) -> Error {
    Error::runtime(e.value(py).str().map(|s| s.to_string()).unwrap_or_default())
}

impl SavedTensorHooks for PySavedHooks {
    fn pack(&self, t: &Tensor) -> ferrotorch::Result<Packed> {
        Python::attach(|py| {
            let arg = wrap(py, t.clone()).map_err(|e| hook_err(py, e))?;
            let r = self.pack.bind(py).call1((arg,)).map_err(|e| hook_err(py, e))?;
            Ok(Box::new(r.unbind()) as Packed)
        })
    }
    fn unpack(&self, p: &Packed) -> ferrotorch::Result<Tensor> {
        let obj = p.downcast_ref::<Py<PyAny>>().ok_or_else(|| Error::runtime("saved tensor was packed by other hooks"))?;
        Python::attach(|py| {
            let r = self.unpack.bind(py).call1((obj.clone_ref(py),)).map_err(py_err)?;
            tensor_of(&r).map_err(|_| {
                py_err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}",
                    r.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                )))
            })
        })
    }
}

/// Installs `saved_tensors_hooks(pack, unpack)` on this thread.
#[pyfunction]
pub fn _push_saved_tensors_hooks(pack: Py<PyAny>, unpack: Py<PyAny>) {
    push_hooks(Arc::new(PySavedHooks { pack, unpack }));
}

/// Removes the innermost saved-tensor hooks of this thread.
#[pyfunction]
pub fn _pop_saved_tensors_hooks() {
    pop_hooks();
}

/// Anomaly mode's view of Python: the forward stack and `warnings.warn`.
struct PyReporter;

impl Reporter for PyReporter {
    fn forward_trace(&self) -> String {
        Python::attach(|py| -> PyResult<String> {
            let frames = py.import("traceback")?.call_method0("format_stack")?;
            let parts: Vec<String> = frames.try_iter()?.map(|f| f.and_then(|f| f.extract::<String>())).collect::<PyResult<_>>()?;
            Ok(parts.concat())
        })
        .unwrap_or_default()
    }
    fn warn(&self, msg: &str) {
        Python::attach(|py| {
            let cat = py.get_type::<pyo3::exceptions::PyUserWarning>();
            let msg = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
            if let Err(e) = PyErr::warn(py, cat.as_any(), &msg, 1) {
                // Warnings turned into errors: report instead of losing it.
                e.print(py);
            }
        });
    }
}

/// `torch.autograd.set_detect_anomaly(mode, check_nan)`.
#[pyfunction]
#[pyo3(signature = (mode, check_nan=true))]
pub fn _set_anomaly_enabled(mode: bool, check_nan: bool) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| anomaly::set_reporter(Arc::new(PyReporter)));
    anomaly::set_enabled(mode, check_nan);
}

/// `torch.is_anomaly_enabled()`.
#[pyfunction]
pub fn is_anomaly_enabled() -> bool {
    anomaly::is_enabled()
}

/// `torch.is_anomaly_check_nan_enabled()`.
#[pyfunction]
pub fn is_anomaly_check_nan_enabled() -> bool {
    anomaly::check_nan()
}

/// Registers this module's functions and classes on `_C`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SavedTensorsHandle>()?;
    m.add_function(wrap_pyfunction!(_push_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_pop_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_set_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_check_nan_enabled, m)?)?;
    Ok(())
}

/// `detach_()`: drops the history of this very tensor.
#[pyfunction]
pub fn _detach_(t: &Bound<'_, PyAny>) -> PyResult<()> {
    let tt = tensor_of(t)?;
    // PyTorch refuses every view, not only those taking part in autograd.
    if tt.base().is_some() {
        return Err(PyRuntimeError::new_err(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
        ));
    }
    let mut m = tt.autograd();
    m.grad_fn = None;
    m.output_nr = 0;
    m.requires_grad = false;
    Ok(())
}

