"""Operator interception for dispatch modes and the profiler.

PyTorch routes every operator through its C++ dispatcher, where
``TorchDispatchMode`` and the profiler hook in.  ferrotorch calls its Rust
kernels directly, so the equivalent hook is built here in Python: a table maps
the Python entry points (``Tensor`` methods and dunders, functions in
``ferrotorch`` / ``ferrotorch.nn.functional``) to ATen operator names.  While at
least one dispatch mode or profiler is active, those entry points are replaced
by thin wrappers; when the last one exits the original objects are put back, so
ordinary code pays nothing per operator.

Two kinds of entries:

* *leaf* ops stand for ATen kernels below autograd (``aten.add.Tensor``,
  ``aten.addmm.default``...).  Dispatch modes see them and the profiler records
  them; while their implementation runs, nested entry points are not
  intercepted (they are implementation details, as the kernels inside an ATen
  op are).
* *composite* ops (``F.linear``, ``F.dropout``...) are what PyTorch calls
  CompositeImplicitAutograd: dispatch modes see only what they decompose into,
  the profiler records them as an enclosing event (``aten::linear`` around
  ``aten::t`` and ``aten::addmm``).
"""

import threading
import time

from . import _C

# One line per group of entry points sharing an operator:
#   entry points | overload(s) | rule choosing among the overloads | profiler name
# ``T.x`` is ``Tensor.x``, ``torch.x`` a function of ``ferrotorch``, ``F.x`` one of
# ``ferrotorch.nn.functional``; a function is patched wherever the same object
# is bound (re-exports, module-class attributes).  The profiler name defaults
# to the first overload's operator.  An overload's implementation for direct
# calls (``ferrotorch.ops.aten.add.Tensor(a, b)``) is the first entry point of
# the first line naming it, so entry points sharing an overload take the same
# positional arguments.  Rules: ``ts``/``ts2`` pick the first overload when
# argument 1/2 is a tensor, else the second; ``dim`` the first when no dim is
# given; the others are in ``_RULES``.  A ``T.x`` entry also covers the
# function ``ferrotorch.x`` when there is one and the table names no ``torch.x``.
# The parameterless unary ops of the op registry are added from it
# (``_registry_lines``): a line here only for the ones with more entry points.
_LEAF_TABLE = """
T.add T.__add__ T.__radd__                     | add.Tensor                          |      |
T.add_ T.__iadd__                              | add_.Tensor                         |      |
T.sub T.__sub__ T.subtract                     | sub.Tensor                          |      |
T.sub_ T.__isub__ T.subtract_                  | sub_.Tensor                         |      |
T.__rsub__                                     | rsub.Scalar                         |      |
T.mul T.__mul__ T.__rmul__ T.multiply          | mul.Tensor                          |      |
T.mul_ T.__imul__ T.multiply_                  | mul_.Tensor                         |      |
T.div T.__truediv__ T.divide T.true_divide     | div.Tensor                          |      |
T.div_ T.__itruediv__ T.divide_ T.true_divide_ | div_.Tensor                         |      |
T.floor_divide T.__floordiv__                  | floor_divide.default                |      |
T.remainder T.__mod__                          | remainder.Tensor remainder.Scalar   | ts   |
T.fmod                                         | fmod.Tensor fmod.Scalar             | ts   |
T.pow T.__pow__                                | pow.Tensor_Tensor pow.Tensor_Scalar | ts   |
T.pow_ T.__ipow__                              | pow_.Tensor pow_.Scalar             | ts   |
T.__rpow__                                     | pow.Scalar                          | swap |
T.neg T.__neg__ T.negative                     | neg.default                         |      |
T.abs T.__abs__ T.absolute                     | abs.default                         |      |
T.eq T.__eq__                                  | eq.Tensor eq.Scalar                 | ts   |
T.ne T.__ne__ T.not_equal                      | ne.Tensor ne.Scalar                 | ts   |
T.lt T.__lt__ T.less                           | lt.Tensor lt.Scalar                 | ts   |
T.le T.__le__ T.less_equal                     | le.Tensor le.Scalar                 | ts   |
T.gt T.__gt__ T.greater                        | gt.Tensor gt.Scalar                 | ts   |
T.ge T.__ge__ T.greater_equal                  | ge.Tensor ge.Scalar                 | ts   |
T.bitwise_and T.__and__ T.__rand__             | bitwise_and.Tensor bitwise_and.Scalar | ts |
T.bitwise_or T.__or__ T.__ror__                | bitwise_or.Tensor bitwise_or.Scalar | ts   |
T.bitwise_xor T.__xor__ T.__rxor__             | bitwise_xor.Tensor bitwise_xor.Scalar | ts |
T.bitwise_not T.__invert__                     | bitwise_not.default                 |      |
T.logical_not                                  | logical_not.default                 |      |
T.logical_and                                  | logical_and.default                 |      |
T.logical_or                                   | logical_or.default                  |      |
T.maximum                                      | maximum.default                     |      |
T.minimum                                      | minimum.default                     |      |
T.round | round.default | |
T.clamp T.clip           | clamp.default     | |
T.clamp_ T.clip_         | clamp_.default    | |
T.clamp_min              | clamp_min.default | |
T.clamp_max              | clamp_max.default | |
F.gelu                   | gelu.default       | |
F.silu                   | silu.default       | |
F.leaky_relu             | leaky_relu.default | |
F.elu                    | elu.default        | |
F.hardtanh               | hardtanh.default   | |
F.relu6                  | hardtanh.default   | relu6 | relu6
F.softplus               | softplus.default   | |
F.mish                   | mish.default       | |
F.hardsigmoid            | hardsigmoid.default | |
F.hardswish              | hardswish.default  | |
T.softmax torch.softmax          | softmax.int _softmax.default         | softmax     | softmax
T.log_softmax torch.log_softmax  | log_softmax.int _log_softmax.default | softmax     | log_softmax
T.sum      | sum.default sum.dim_IntList   | dim  |
T.mean     | mean.default mean.dim         | dim  |
T.prod     | prod.default prod.dim_int     | dim  |
T.max      | max.default max.dim maximum.default | max |
T.min      | min.default min.dim minimum.default | max |
T.amax     | amax.default                  |      |
T.amin     | amin.default                  |      |
T.argmax   | argmax.default                |      |
T.argmin   | argmin.default                |      |
T.all      | all.default all.dim           | dim  |
T.any      | any.default any.dim           | dim  |
T.std      | std.correction                |      |
T.var      | var.correction                |      |
T.logsumexp | logsumexp.default            |      |
T.cumsum   | cumsum.default                |      |
T.mm       | mm.default                    |      |
T.bmm      | bmm.default                   |      |
T.mv       | mv.default                    |      |
T.dot      | dot.default                   |      |
T.matmul T.__matmul__ | matmul.default mm.default mv.default dot.default bmm.default | matmul | matmul
T.addmm    | addmm.default                 |      |
T.addmm_   | addmm_.default                |      |
T.baddbmm  | baddbmm.default               |      |
T.outer    | outer.default                 |      |
T.t        | t.default                     |      |
T.transpose T.swapaxes T.swapdims | transpose.int |  |
T.permute  | permute.default               |      |
T.view     | view.default                  |      |
T.reshape  | reshape.default view.default  | reshape | reshape
T.flatten  | flatten.using_ints view.default | flatten | flatten
T.unsqueeze | unsqueeze.default            |      |
T.squeeze  | squeeze.default squeeze.dim   | dim  |
T.expand   | expand.default                |      |
T.repeat   | repeat.default                |      |
T.contiguous | clone.default               | contiguous | contiguous
T.clone    | clone.default                 |      |
T.detach   | detach.default                |      |
T.split    | split.Tensor split_with_sizes.default | split |
T.chunk    | chunk.default                 |      |
T.unbind   | unbind.int                    |      |
T.narrow   | narrow.default                |      |
T.select   | select.int                    |      |
T.gather   | gather.default                |      |
T.index_select | index_select.default      |      |
T.masked_fill  | masked_fill.Tensor masked_fill.Scalar | ts2 |
T.masked_fill_ | masked_fill_.Tensor masked_fill_.Scalar | ts2 |
torch.where | where.self                     |      |
T.where    | where.self                    | where_method |
T.fill_    | fill_.Tensor fill_.Scalar     | ts   |
T.zero_    | zero_.default                 |      |
T.copy_    | copy_.default                 |      |
T.item     | _local_scalar_dense.default   |      | item
torch.cat torch.concat torch.concatenate | cat.default | |
torch.stack | stack.default                |      |
torch.zeros_like | zeros_like.default      |      |
torch.ones_like  | ones_like.default       |      |
torch.empty_like | empty_like.default      |      |
torch.full_like  | full_like.default       |      |
torch.rand_like  | rand_like.default       |      |
torch.randn_like | randn_like.default      |      |
F.conv1d   | conv1d.default                |      |
F.conv2d   | conv2d.default                |      |
F.conv3d   | conv3d.default                |      |
F.max_pool2d | max_pool2d.default          |      |
F.avg_pool2d | avg_pool2d.default          |      |
F.layer_norm | layer_norm.default          |      |
"""

# Composite entry points: function | profiler name.  Dispatch modes see the ops
# they are built from; the profiler records an enclosing event.
_COMPOSITE_TABLE = """
F.linear           | linear
F.bilinear         | bilinear
F.dropout          | dropout
F.mse_loss         | mse_loss
F.l1_loss          | l1_loss
F.cross_entropy    | cross_entropy_loss
F.nll_loss         | nll_loss_nd
F.binary_cross_entropy | binary_cross_entropy
F.binary_cross_entropy_with_logits | binary_cross_entropy_with_logits
F.embedding        | embedding
F.batch_norm       | batch_norm
F.group_norm       | group_norm
F.pad              | pad
F.scaled_dot_product_attention | scaled_dot_product_attention
torch.einsum       | einsum
"""


class _State(threading.local):
    """Per-thread dispatch state (PyTorch keeps the mode stack thread-local too)."""

    def __init__(self):
        self.modes = []   # active dispatch modes, innermost last
        self.busy = False  # a leaf op's implementation is running
        self.open = []    # open profiler events, innermost last
        # (op, args, kwargs, impl, profiler name) of the call a mode is handling
        self.pending = None


_state = _State()
# The recorder of the active profiler, or None.  Profiling is process-wide,
# like PyTorch's (events from other threads are recorded too).
_recorder = None

_lock = threading.RLock()
_users = 0          # active modes + profilers; wrappers are installed while > 0
_installed = []     # (owner, name, original) to put back
_entries = None     # parsed tables, built on first use
_overloads = {}     # "add.Tensor" -> OpOverload


# ---------------------------------------------------------------- recording


class _RawEvent:
    __slots__ = ("name", "start", "end", "parent", "children", "shapes", "thread", "user")

    def __init__(self, name, parent, shapes, user):
        self.name = name
        self.parent = parent
        self.children = []
        self.shapes = shapes
        self.thread = threading.get_ident()
        self.user = user
        self.end = None
        self.start = time.perf_counter_ns()


class _Recorder:
    """Collects timed, nested events for one profiler run."""

    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
        self.events = []

    def open(self, name, args, user=False):
        st = _state
        parent = st.open[-1] if st.open else None
        shapes = [list(a.shape) if isinstance(a, _C.TensorBase) else [] for a in args] if self.record_shapes else []
        ev = _RawEvent(name, parent, shapes, user)
        if parent is not None:
            parent.children.append(ev)
        self.events.append(ev)
        st.open.append(ev)
        return ev

    def close(self, ev):
        ev.end = time.perf_counter_ns()
        st = _state
        # Exceptions may unwind several levels at once; drop what is above ``ev``.
        while st.open:
            if st.open.pop() is ev:
                break


def _run(pname, impl, args, kwargs):
    """Runs a leaf op's implementation with interception off, timing it if profiling."""
    st = _state
    rec = _recorder
    st.busy = True
    try:
        if rec is None:
            return impl(*args, **kwargs)
        ev = rec.open(pname, args)
        try:
            return impl(*args, **kwargs)
        finally:
            rec.close(ev)
    finally:
        st.busy = False


def _dispatch(op, pname, impl, args, kwargs):
    """Hands a leaf op to the innermost active mode, or runs it when none is left."""
    st = _state
    if st.busy:
        return impl(*args, **kwargs)
    modes = st.modes
    if modes:
        # The mode is off while its handler runs, so ops it calls (``func``
        # included) go to the enclosing modes, as in PyTorch.
        mode = modes.pop()
        saved = st.pending
        st.pending = (op, args, kwargs, impl, pname)
        try:
            types = tuple({type(a) for a in args if isinstance(a, _C.TensorBase)}) or (_tensor_class(),)
            return mode.__torch_dispatch__(op, types, args, kwargs)
        finally:
            st.pending = saved
            modes.append(mode)
    return _run(pname, impl, args, kwargs)


# ---------------------------------------------------------------- operators


class OpOverload:
    """One overload of an ATen operator, e.g. ``ops.aten.add.Tensor``.

    Calling it runs the operator, going through the active dispatch modes
    first (innermost first).  ``str(op)`` is ``'aten.add.Tensor'``.
    """

    __slots__ = ("_name", "_opname", "_overloadname", "_impl", "_pname", "overloadpacket", "__weakref__")

    def __init__(self, opname, overloadname):
        self._opname = opname
        self._overloadname = overloadname
        self._name = f"aten.{opname}.{overloadname}"
        self._pname = f"aten::{opname}"
        self._impl = None
        self.overloadpacket = None

    def __call__(self, *args, **kwargs):
        pending = _state.pending
        if pending is not None and pending[0] is self and _same_call(pending, args, kwargs):
            # A mode passing on the call it was handled: run the entry point the
            # user called, so results match a run without the mode exactly.
            return _dispatch(self, pending[4], pending[3], args, kwargs)
        return _dispatch(self, self._pname, self._impl, args, kwargs)

    def name(self):
        """The qualified name, ``'aten::add.Tensor'``."""
        return f"aten::{self._opname}" + ("" if self._overloadname == "default" else f".{self._overloadname}")

    @property
    def __name__(self):
        return f"{self._opname}.{self._overloadname}"

    @property
    def namespace(self):
        return "aten"

    def __str__(self):
        return self._name

    def __repr__(self):
        return f"<OpOverload(op='aten.{self._opname}', overload='{self._overloadname}')>"


def _same_call(pending, args, kwargs):
    p_args, p_kwargs = pending[1], pending[2]
    if len(args) != len(p_args) or kwargs.keys() != p_kwargs.keys():
        return False
    return all(a is b for a, b in zip(args, p_args)) and all(kwargs[k] is p_kwargs[k] for k in kwargs)


def _overload(full):
    op = _overloads.get(full)
    if op is None:
        name, _, ov = full.partition(".")
        op = _overloads[full] = OpOverload(name, ov)
    return op


def _is_dim_call(args, kwargs):
    return (len(args) > 1 and args[1] is not None) or kwargs.get("dim") is not None \
        or kwargs.get("axis") is not None


def _rule_ts(i):
    def rule(ops, args, kwargs):
        return ops[0] if len(args) > i and isinstance(args[i], _C.TensorBase) else ops[1]
    return rule


def _rule_dim(ops, args, kwargs):
    return ops[1] if _is_dim_call(args, kwargs) else ops[0]


def _rule_max(ops, args, kwargs):
    if len(args) > 1 and isinstance(args[1], _C.TensorBase) or isinstance(kwargs.get("other"), _C.TensorBase):
        return ops[2]
    return ops[1] if _is_dim_call(args, kwargs) else ops[0]


def _rule_matmul(ops, args, kwargs):
    if len(args) == 2 and isinstance(args[1], _C.TensorBase) and isinstance(args[0], _C.TensorBase):
        k = (args[0].dim(), args[1].dim())
        pick = {(2, 2): 1, (2, 1): 2, (1, 1): 3, (3, 3): 4}.get(k)
        if pick is not None:
            return ops[pick]
    return ops[0]


def _rule_split(ops, args, kwargs):
    size = args[1] if len(args) > 1 else kwargs.get("split_size", kwargs.get("split_size_or_sections"))
    return ops[0] if isinstance(size, int) else ops[1]


def _rule_contiguous(ops, args, kwargs):
    # PyTorch's contiguous() of a contiguous tensor dispatches nothing.
    return None if args[0].is_contiguous() else ops[0]


def _rule_reshape(ops, args, kwargs):
    # reshape is composite in PyTorch: a view when the strides allow one.
    return ops[1] if args[0].is_contiguous() else ops[0]


def _rule_flatten(ops, args, kwargs):
    x = args[0]
    if not x.is_contiguous() or kwargs:
        return ops[0]
    shape = list(x.shape)
    n = len(shape)
    if n == 0:
        return ops[1], (x, [1]), {}
    start = args[1] if len(args) > 1 else 0
    end = args[2] if len(args) > 2 else -1
    start, end = start % n, end % n
    flat = 1
    for s in shape[start:end + 1]:
        flat *= s
    return ops[1], (x, shape[:start] + [flat] + shape[end + 1:]), {}


def _rule_softmax(ops, args, kwargs):
    # Without a dtype, PyTorch's softmax.int lands in _softmax(x, dim, half_to_float).
    if (len(args) == 2 or len(args) == 3 and args[2] is None) and not kwargs:
        return ops[1], (args[0], args[1], False), {}
    if len(args) == 1 and list(kwargs) == ["dim"]:
        return ops[1], (args[0], kwargs["dim"], False), {}
    return ops[0]


def _rule_where_method(ops, args, kwargs):
    # ``x.where(cond, y)`` is aten.where.self(cond, x, y).
    if len(args) == 3 and not kwargs:
        return ops[0], (args[1], args[0], args[2]), {}
    return None


def _rule_relu6(ops, args, kwargs):
    # PyTorch's relu6 is hardtanh(x, 0, 6).
    if len(args) == 1 and not kwargs.get("inplace"):
        return ops[0], (args[0], 0.0, 6.0), {}
    return ops[0]


def _rule_swap(ops, args, kwargs):
    # ``2 ** t`` is aten.pow.Scalar(2, t): the scalar comes first.
    return ops[0], (args[1], args[0]), kwargs


_RULES = {
    "": lambda ops, args, kwargs: ops[0],
    "ts": _rule_ts(1), "ts2": _rule_ts(2), "dim": _rule_dim, "max": _rule_max,
    "matmul": _rule_matmul, "split": _rule_split, "contiguous": _rule_contiguous,
    "reshape": _rule_reshape, "flatten": _rule_flatten, "softmax": _rule_softmax,
    "swap": _rule_swap, "where_method": _rule_where_method,
    "relu6": _rule_relu6,
}


def _swap_impl(orig):
    return lambda base, exponent: orig(exponent, base)


def _half_to_float_impl(orig):
    def impl(self, dim, half_to_float=False):
        return orig(self, dim)
    return impl


# Overloads whose schema differs from the entry point that implements them.
_IMPL_ADAPTERS = {
    "pow.Scalar": _swap_impl,
    "_softmax.default": _half_to_float_impl,
    "_log_softmax.default": _half_to_float_impl,
}


def _tensor_class():
    from ._tensor_class import Tensor
    return Tensor


def _class_attr(cls, attr):
    """``cls.<attr>`` as stored in the class (or base class) that defines it, None if
    only ``object`` does."""
    for klass in cls.__mro__[:-1]:
        if attr in klass.__dict__:
            return klass.__dict__[attr]
    return None


def _namespaces():
    import ferrotorch
    from .nn import functional as F
    return {"T": _tensor_class(), "torch": ferrotorch, "F": F}


_sites_cache = [None, None]


def _binding_sites():
    """Maps id(function) -> every (owner, name) binding it, for the modules and
    module-defined classes of ferrotorch that code looks functions up in."""
    import sys
    names = [m for m in sys.modules if m == "ferrotorch" or m.startswith("ferrotorch.")]
    # The scan is a few milliseconds; redo it only when ferrotorch modules were added.
    if _sites_cache[0] == len(names):
        return _sites_cache[1]
    sites = {}
    for modname, mod in [(m, sys.modules[m]) for m in names]:
        if mod is None or not (modname == "ferrotorch" or modname.startswith("ferrotorch.")):
            continue
        for owner in [mod] + [v for v in vars(mod).values()
                              if isinstance(v, type) and v.__module__ == modname and v is not _tensor_class()]:
            for name, value in list(vars(owner).items()):
                if callable(value) and not isinstance(value, type):
                    sites.setdefault(id(value), []).append((owner, name))
    _sites_cache[:] = [len(names), sites]
    return sites


def _parse(text):
    for line in text.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield [part.strip() for part in line.split("|")]


# Registered ops that PyTorch decomposes before its dispatcher's modes see them
# (``isfinite`` is ``abs``, ``ne``, ``eq`` and ``mul`` there): not leaves.
_DECOMPOSED_IN_PYTORCH = {"isfinite"}


def _registry_lines(lines):
    """Leaf lines ``T.op | op.default`` (and ``T.op_ | op_.default``) for the
    registered unary ops that ``lines`` does not already name."""
    named = {e for line in lines for e in line[0].split()}
    out = []
    for name, _function, method, inplace_method, _inplace_function in _C._unary_registry():
        if name in _DECOMPOSED_IN_PYTORCH:
            continue
        for has, n in ((method, name), (inplace_method, name + "_")):
            if has and f"T.{n}" not in named:
                out.append([f"T.{n}", f"{n}.default", "", ""])
    return out


def _build():
    """Parses the tables: resolves entry points and gives each overload its implementation."""
    global _entries
    spaces = _namespaces()
    entries = []  # (owner-or-None, name, original, kind, data)
    lines = list(_parse(_LEAF_TABLE))
    lines += _registry_lines(lines)
    explicit = {e for line in lines for e in line[0].split() if e.startswith("torch.")}
    torch_mod = spaces["torch"]
    for entry_names, overloads, rule, pname in lines:
        ops = [_overload(o) for o in overloads.split()]
        names = entry_names.split()
        names += [f"torch.{n[2:]}" for n in names if n.startswith("T.") and not n.startswith("T.__")
                  and f"torch.{n[2:]}" not in explicit and callable(getattr(torch_mod, n[2:], None))]
        pname = f"aten::{pname or ops[0]._opname}"
        rule_fn = _RULES[rule]
        for entry in names:
            space, _, attr = entry.partition(".")
            owner = spaces[space]
            orig = _class_attr(owner, attr) if owner is spaces["T"] else getattr(owner, attr, None)
            if orig is None:
                continue  # not implemented by this build: nothing to intercept
            for op in ops:
                if op._impl is None:
                    adapter = _IMPL_ADAPTERS.get(op.__name__)
                    op._impl = adapter(orig) if adapter else orig
            entries.append((owner, attr, orig, "leaf", (ops, rule_fn, pname)))
    for entry, pname in _parse(_COMPOSITE_TABLE):
        space, _, attr = entry.partition(".")
        orig = getattr(spaces[space], attr, None)
        if orig is not None:
            entries.append((spaces[space], attr, orig, "composite", f"aten::{pname}"))
    for op in _overloads.values():
        if op._impl is None:
            op._impl = _missing(op)
    _entries = entries


def _missing(op):
    def impl(*args, **kwargs):
        raise NotImplementedError(f"{op} has no ferrotorch implementation")
    return impl


def _ensure_built():
    if _entries is None:
        with _lock:
            if _entries is None:
                _build()


def _leaf_wrapper(orig, ops, rule, pname):
    st = _state

    def wrapper(*args, **kwargs):
        if st.busy or not (st.modes or _recorder is not None):
            return orig(*args, **kwargs)
        try:
            picked = rule(ops, args, kwargs)
        except Exception:
            # Arguments the rule cannot read: let the entry point raise its own error.
            return orig(*args, **kwargs)
        if picked is None:
            return orig(*args, **kwargs)
        if picked.__class__ is tuple:
            # The arguments were rewritten to the overload's schema, so its own
            # implementation runs them.
            op, args, kwargs = picked
            return _dispatch(op, pname, op._impl, args, kwargs)
        return _dispatch(picked, pname, orig, args, kwargs)

    return wrapper


def _composite_wrapper(orig, pname):
    st = _state

    def wrapper(*args, **kwargs):
        rec = _recorder
        if rec is None or st.busy:
            return orig(*args, **kwargs)
        ev = rec.open(pname, args)
        try:
            return orig(*args, **kwargs)
        finally:
            rec.close(ev)

    return wrapper


def _install():
    sites = _binding_sites()
    tensor = _tensor_class()
    for owner, attr, orig, kind, data in _entries:
        if kind == "leaf":
            wrapper = _leaf_wrapper(orig, *data)
        else:
            wrapper = _composite_wrapper(orig, data)
        for name in ("__name__", "__qualname__", "__doc__"):
            try:
                setattr(wrapper, name, getattr(orig, name))
            except (AttributeError, TypeError):
                pass
        wrapper.__wrapped__ = orig
        targets = [(owner, attr)] if owner is tensor else sites.get(id(orig), [(owner, attr)])
        for target, name in targets:
            # Each binding site is patched once even when two table entries share it.
            # A Tensor method of the native base is shadowed in ``Tensor`` itself, and
            # the shadow is removed again on uninstall.
            own = name in target.__dict__
            current = target.__dict__.get(name) if own else (_class_attr(target, name) if target is tensor else None)
            if current is orig:
                _installed.append((target, name, orig if own else None))
                setattr(target, name, wrapper)


def _uninstall():
    while _installed:
        owner, name, orig = _installed.pop()
        if orig is None:
            delattr(owner, name)
        else:
            setattr(owner, name, orig)


def acquire():
    """Marks a mode or profiler active; the first one installs the wrappers."""
    global _users
    _ensure_built()
    with _lock:
        if _users == 0:
            _install()
        _users += 1


def release():
    """Undoes :func:`acquire`; the last one restores the original entry points."""
    global _users
    with _lock:
        _users -= 1
        if _users == 0:
            _uninstall()


def push_mode(mode):
    acquire()
    _state.modes.append(mode)


def pop_mode(mode):
    modes = _state.modes
    try:
        if modes and modes[-1] is mode:
            modes.pop()
        else:
            modes.remove(mode)
    finally:
        release()


def start_recording(record_shapes):
    global _recorder
    if _recorder is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    rec = _Recorder(record_shapes)
    acquire()
    _recorder = rec
    return rec


def stop_recording(rec):
    global _recorder
    if _recorder is rec:
        _recorder = None
        release()


def active_recorder():
    return _recorder


def overload(full_name):
    """The :class:`OpOverload` named ``'add.Tensor'``, or None if it is not mirrored."""
    _ensure_built()
    return _overloads.get(full_name)


def overloads_of(opname):
    """Overload names known for ``opname``."""
    _ensure_built()
    return [o._overloadname for o in _overloads.values() if o._opname == opname]
