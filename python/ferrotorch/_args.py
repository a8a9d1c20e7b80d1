"""PyTorch's Python-argument rules for non-tensor parameters, in one place.

PyTorch's argument parser (``torch/csrc/utils/python_arg_parser.cpp``) decides
which Python objects a ``Scalar``/``float``/``int`` parameter accepts; the
Python wrappers here convert through these helpers instead of ``float()`` /
``int()`` (which would happily unwrap any one-element tensor):

* ``Number`` (``Scalar``) and ``float``: a Python or NumPy number, or a 0-d
  tensor that does not require grad (converted with ``item()``).
* ``int``: a Python or NumPy integer (not ``bool``), or a 0-d integral,
  non-bool tensor that does not require grad.  ``SymInt`` parameters (``tril``
  diagonal, ``narrow`` length...) go through ``__index__`` and so also take
  one-element integral tensors.
* ``Tensor``: only a tensor.

Anything else raises PyTorch's ``TypeError``:
``"fn(): argument 'name' (position N) must be <kind>, not <type>"``.

Whole signatures are checked by :func:`signature`, a decorator taking the ATen-style schema of
a Python-level op (``"Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1"``):
the arguments are bound and each one's kind checked as PyTorch's parser does before the body
runs, so a wrong type raises ``TypeError`` instead of failing somewhere inside.
"""

import functools
import numbers

from . import _C

__all__ = ["number", "floating", "integer", "tensor", "no_args", "signature", "method_signature", "checked_convert"]


def _fail(fn, name, pos, kind, v):
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be {kind}, not {type(v).__name__}")


def _scalar_tensor_ok(v):
    return v.dim() == 0 and not v.requires_grad


def number(v, fn, name, pos, kind="Number"):
    """A ``Scalar``/``float`` parameter as a Python number (``kind`` names it in the error)."""
    if isinstance(v, (bool, int, float, complex)):
        return v
    if isinstance(v, _C.TensorBase):
        if _scalar_tensor_ok(v):
            return v.item()
        _fail(fn, name, pos, kind, v)
    if isinstance(v, numbers.Number) or (hasattr(v, "dtype") and hasattr(v, "item") and not hasattr(v, "__len__")):
        return v.item() if hasattr(v, "item") else v
    _fail(fn, name, pos, kind, v)


def floating(v, fn, name, pos):
    """A ``float`` parameter as a Python float (``None`` passes through for optional ones)."""
    if v is None:
        return None
    return float(number(v, fn, name, pos, "float"))


def integer(v, fn, name, pos, symint=False):
    """An ``int`` parameter as a Python int; ``symint`` for PyTorch's ``SymInt`` parameters."""
    if isinstance(v, bool):
        _fail(fn, name, pos, "int", v)
    if isinstance(v, int):
        return v
    if isinstance(v, _C.TensorBase):
        if v.dtype.is_floating_point or v.dtype.is_complex:
            _fail(fn, name, pos, "int", v)
        if symint and v.numel() == 1:
            if str(v.dtype) == "torch.bool":
                # PyTorch reaches an internal assert here (scalar.isIntegral(false)).
                raise RuntimeError("scalar.isIntegral( false) INTERNAL ASSERT FAILED: a bool tensor is not an int")
            return int(v.item())
        if str(v.dtype) != "torch.bool" and _scalar_tensor_ok(v):
            return int(v.item())
        _fail(fn, name, pos, "int", v)
    if isinstance(v, numbers.Integral) or hasattr(v, "__index__"):
        try:
            return v.__index__()
        except Exception:
            pass
    _fail(fn, name, pos, "int", v)


def tensor(v, fn, name, pos):
    """A ``Tensor`` parameter: Python numbers are refused as PyTorch does."""
    if not isinstance(v, _C.TensorBase):
        _fail(fn, name, pos, "Tensor", v)
    return v


def no_args(fn, args):
    """A method that takes no arguments (``is_contiguous()``) called with some."""
    if args:
        raise TypeError(f"{fn}() takes 0 positional arguments but {len(args)} was given")


# ----- whole-signature checks (PyTorch's ``FunctionSignature::parse``) ---------------------


def _type_name(v):
    t = type(v)
    mod = t.__module__
    if mod == "numpy":
        return f"numpy.{t.__name__}"
    return t.__name__


def _is_integral_tensor(v):
    return not (v.dtype.is_floating_point or v.dtype.is_complex)


def _ok_int(v, symint=False):
    # ``int``: not bool; a 0-d integral tensor (``SymInt``: any one-element one, via __index__).
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, _C.TensorBase):
        if not _is_integral_tensor(v) or (str(v.dtype) == "torch.bool" and not symint):
            return False
        return v.numel() == 1 if symint else v.dim() == 0
    return isinstance(v, numbers.Integral) and not _is_numpy_bool(v)


def _is_numpy_bool(v):
    return type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_")


def _ok_int_item(v):
    # An element of an ``int[]``: anything with an integral ``__index__`` (one-element tensors too).
    if isinstance(v, bool):
        return False
    if isinstance(v, _C.TensorBase):
        return v.numel() == 1 and _is_integral_tensor(v)
    return isinstance(v, numbers.Integral) and not _is_numpy_bool(v)


def _ok_int_list(v, size):
    if isinstance(v, (list, tuple)):
        return all(_ok_int_item(x) for x in v)
    if size:
        # A fixed-size list also takes one int, which PyTorch repeats.
        if isinstance(v, bool):
            return False
        if isinstance(v, _C.TensorBase):
            return v.numel() == 1 and _is_integral_tensor(v)
        return isinstance(v, numbers.Integral) and not _is_numpy_bool(v)
    return False


def _ok_float(v):
    if isinstance(v, (bool, int, float)):
        return True
    if isinstance(v, _C.TensorBase):
        return v.dim() == 0 and not v.requires_grad and not v.dtype.is_complex
    return isinstance(v, numbers.Real)


def _ok_scalar(v):
    if isinstance(v, (bool, int, float, complex)):
        return True
    if isinstance(v, _C.TensorBase):
        return _scalar_tensor_ok(v)
    return isinstance(v, numbers.Number)


def _ok_tensor_list(v):
    return isinstance(v, (list, tuple)) and all(isinstance(x, _C.TensorBase) for x in v)


def _ok_named(*type_names):
    return lambda v: type(v).__name__ in type_names


def _ok_device(v):
    return isinstance(v, (str, int)) and not isinstance(v, bool) or type(v).__name__ == "device"


# kind -> (predicate, the kind's name in PyTorch's messages)
_KINDS = {
    "Tensor": (lambda v: isinstance(v, _C.TensorBase), "Tensor"),
    "int": (_ok_int, "int"),
    "SymInt": (lambda v: _ok_int(v, symint=True), "int"),
    "float": (_ok_float, "float"),
    "Scalar": (_ok_scalar, "Number"),
    "bool": (lambda v: isinstance(v, bool), "bool"),
    "str": (lambda v: isinstance(v, str), "str"),
    "Tensor[]": (_ok_tensor_list, "tuple of Tensors"),
    "ScalarType": (_ok_named("dtype"), "torch.dtype"),
    "Layout": (_ok_named("layout"), "torch.layout"),
    "Device": (_ok_device, "torch.device"),
    "MemoryFormat": (_ok_named("memory_format"), "torch.memory_format"),
    "Generator": (_ok_named("Generator"), "torch.Generator"),
    "Any": (lambda v: True, "object"),
}


class _Param:
    __slots__ = ("kind", "name", "optional", "size", "required", "kwonly", "text", "_pred")

    def __init__(self, text, kwonly):
        self.text = text.strip()
        decl, _, default = self.text.partition("=")
        kind, name = decl.split()
        self.name = name
        self.required = not _
        self.kwonly = kwonly
        self.optional = kind.endswith("?")
        kind = kind.rstrip("?")
        self.size = None
        if kind.endswith("]") and kind != "Tensor[]":
            base, _, n = kind[:-1].partition("[")
            self.size = int(n) if n else 0
            kind = base + "[]"
        self.kind = kind
        self.optional = self.optional or kind == "Any"
        size = self.size
        self._pred = (lambda v: _ok_int_list(v, size)) if size is not None else _KINDS[kind][0]

    def accepts(self, v):
        if v is None:
            return self.optional
        return self._pred(v)

    def kind_name(self):
        return "tuple of ints" if self.size is not None else _KINDS[self.kind][1]

    def describe(self):
        decl, eq, default = self.text.partition("=")
        return f"{decl.strip()} = {default.strip()}" if eq else decl.strip()


class _Signature:
    def __init__(self, text):
        self.text = text
        self.params = []
        kwonly = False
        for part in _split(text):
            if part.strip() == "*":
                kwonly = True
                continue
            self.params.append(_Param(part, kwonly))
        self.positional = [p for p in self.params if not p.kwonly]
        self.by_name = {p.name: p for p in self.params}

    def describe(self):
        parts, star = [], False
        for p in self.params:
            if p.kwonly and not star:
                parts.append("*")
                star = True
            parts.append(p.describe())
        return "(" + ", ".join(parts) + ")"

    def bind(self, fn, args, kwargs, offset):
        """None when the call fits, else the ``TypeError`` message PyTorch gives for this signature."""
        params = self.positional[offset:]
        if len(args) > len(params):
            lo = sum(1 for p in params if p.required)
            span = str(len(params)) if lo == len(params) else f"from {lo} to {len(params)}"
            return f"{fn}() takes {span} positional arguments but {len(args)} were given"
        for i, (p, v) in enumerate(zip(params, args)):
            if not p.accepts(v):
                return _bad(fn, p, v, i + 1)
        given = {p.name for p in params[:len(args)]}
        for p in self.params[offset:]:
            if p.name in given:
                if p.name in kwargs:
                    return f"{fn}() got multiple values for argument '{p.name}'"
                continue
            if p.name in kwargs:
                v = kwargs[p.name]
                if not p.accepts(v):
                    return _bad(fn, p, v, None)
            elif p.required:
                return f'{fn}() missing 1 required positional arguments: "{p.name}"'
        for k in kwargs:
            if k not in self.by_name or self.params.index(self.by_name[k]) < offset:
                return f"{fn}() got an unexpected keyword argument '{k}'"
        return None


def _split(text):
    # Commas inside brackets (``int[2] padding=[0, 0]``) do not separate parameters.
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _bad(fn, p, v, pos):
    where = f" (position {pos})" if pos is not None else ""
    if p.size is not None and isinstance(v, (list, tuple)):
        for j, x in enumerate(v):
            if not _ok_int_item(x):
                return (f"{fn}(): argument '{p.name}'{where} must be tuple of ints, but found element of type "
                        f"{_type_name(x)} at pos {j}")
    if p.kind == "Tensor[]" and isinstance(v, (list, tuple)):
        for j, x in enumerate(v):
            if not isinstance(x, _C.TensorBase):
                return f"expected Tensor as element {j} in argument {pos - 1 if pos else 0}, but got {_type_name(x)}"
    return f"{fn}(): argument '{p.name}'{where} must be {p.kind_name()}, not {_type_name(v)}"


def _bool_index(v):
    return isinstance(v, _C.TensorBase) and str(v.dtype) == "torch.bool"


def _convert(sig, args, kwargs, offset):
    # Checks PyTorch makes when it converts a matched argument: a bool tensor passes as an index
    # but fails its conversion to an integer.
    vals = list(zip(sig.positional[offset:], args)) + [(sig.by_name[k], v) for k, v in kwargs.items()]
    for p, v in vals:
        if (p.kind == "SymInt" and p.size is None and _bool_index(v)) or (
                p.size is not None and isinstance(v, (list, tuple)) and any(_bool_index(x) for x in v)):
            raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check(fn, sigs, args, kwargs, offset):
    errors = []
    for s in sigs:
        e = s.bind(fn, args, kwargs, offset)
        if e is None:
            _convert(s, args, kwargs, offset)
            return
        errors.append(e)
    if len(sigs) == 1:
        raise TypeError(errors[0])
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    lines = "\n".join(" * " + s.describe() for s in sigs)
    raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    f"{lines}\n")


def signature(*schemas, name=None):
    """Checks calls of the decorated function against PyTorch schemas before its body runs.

    Each schema is an ATen-style parameter list (``"Tensor input, int[2] kernel_size, *, bool
    flag=False"``); with several (overloads) a call must fit one of them. Kinds: ``Tensor``,
    ``int``, ``SymInt``, ``int[N]``/``SymInt[N]`` (a list; with ``N`` also one int), ``float``,
    ``Scalar``, ``bool``, ``str``, ``Tensor[]``, ``ScalarType``, ``Layout``, ``Device``,
    ``MemoryFormat``, ``Generator``, ``Any``; a trailing ``?`` also admits ``None``, and
    ``=default`` makes a parameter optional. The function's parameter names must be the
    schema's. A call that fits none raises PyTorch's ``TypeError``.
    """
    sigs = [_Signature(s) for s in schemas]

    def deco(func):
        fn = name or func.__name__

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _check(fn, sigs, args, kwargs, 0)
            return func(*args, **kwargs)

        wrapper.__schemas__ = sigs
        return wrapper

    return deco


def method_signature(func, name=None):
    """The ``Tensor`` method form of a function decorated with :func:`signature`: the first
    parameter is ``self`` and positions in messages count from the next one, as PyTorch's do."""
    sigs = func.__schemas__
    body = func.__wrapped__
    fn = name or func.__name__

    def method(self, *args, **kwargs):
        _check(fn, sigs, args, kwargs, 1)
        return body(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fn
    method.__doc__ = f"See :func:`torch.{fn}`."
    return method


# c10's names and largest finite values of the floating dtypes a Scalar converts to.
_FLOAT_LIMITS = {"torch.float16": ("c10::Half", 65504.0), "torch.bfloat16": ("c10::BFloat16", 3.3895313892515355e38),
                 "torch.float32": ("float", 3.4028234663852886e38)}


def checked_convert(v, dtype):
    """PyTorch's ``Scalar::to<T>()`` for a floating ``T``: a finite value beyond the
    dtype's range raises ``RuntimeError`` (infinities and NaN convert)."""
    lim = _FLOAT_LIMITS.get(str(dtype))
    if (lim is not None and isinstance(v, (int, float)) and not isinstance(v, bool) and v == v
            and abs(v) != float("inf") and abs(v) > lim[1]):
        raise RuntimeError(f"value cannot be converted to type {lim[0]} without overflow")
    return v
