"""The elementwise and reduction op set: PyTorch's signatures over the
``_C._math_*`` kernels, exposed as ``ferrotorch.xxx`` functions, ``Tensor``
methods, in-place ``xxx_`` methods and operators.

Activation functions with extra arguments (``leaky_relu``, ``elu``, ``gelu``,
``softplus``, ...) are plain functions here so ``nn.functional`` can import them.
"""

import builtins
import collections
import math
import types

from . import _C, _args
from . import _tensor_methods as _methods

_unary = _C._math_unary
_binary = _C._math_binary

__all__ = []


def _export(fn, name=None):
    __all__.append(name or fn.__name__)
    return fn


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


class _Omitted:
    """Default of an argument the caller left out: PyTorch's parser tells that apart from an explicit None."""
    __slots__ = ()

    def __repr__(self):
        return "<omitted>"


_OMITTED = _Omitted()


def _reduce_dim(name, dim, keepdim, none_ok=True):
    """``(dim, keepdim)`` for a reduction with a full and a ``dim`` overload.

    PyTorch's parser matches ``keepdim`` only in the ``dim`` overload, so ``keepdim``
    without ``dim`` is a TypeError; where that overload's ``dim`` is an int (``prod``,
    ``median``) an explicit None matches nothing either.
    """
    if dim is _OMITTED:
        if keepdim is not _OMITTED:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        return None, False
    if dim is None and not none_ok:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
    return dim, (False if keepdim is _OMITTED else keepdim)


# ----- out= and return types ------------------------------------------------------


def _write_out(result, out):
    """Copies ``result`` into ``out`` (PyTorch's ``out=`` contract) and returns ``out``."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        for r, o in zip(result, out):
            _write_out(r, o)
        return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
    if not _is_tensor(out):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if (result.requires_grad or out.requires_grad) and _C.is_grad_enabled():
        raise RuntimeError(
            "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
        )
    if not _C.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_pretty(result.dtype)} can't be cast to the desired output type {_pretty(out.dtype)}")
    _resize_output(out, result.shape)
    out.copy_(result)
    return out


def _resize_output(out, shape):
    """PyTorch's ``resize_output``: an ``out=`` of another shape is resized, with a
    deprecation warning when it had elements."""
    shape = tuple(shape)
    if tuple(out.shape) == shape:
        return
    if out.numel() != 0:
        import warnings
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does "
            f"not match the required output shape {list(shape)}. This behavior is deprecated, and in a future "
            "PyTorch release outputs will not be resized unless they have zero elements. You can explicitly reuse "
            "an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
            UserWarning, stacklevel=4)
    _C._resize_(out, shape)


def _resize_method(self, *sizes, memory_format=None):
    """Resizes in place to ``sizes`` (contiguous; new elements are uninitialised)."""
    if not sizes:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        s0 = sizes[0]
        if isinstance(s0, (list, tuple)):
            sizes = tuple(s0)
        elif not isinstance(s0, _C.TensorBase) or s0.numel() != 1:
            # A one-element tensor is one size (through __index__); no other object is a size list.
            raise TypeError(f"resize_(): argument 'size' (position 1) must be tuple of ints, not {type(s0).__name__}")
    sizes = tuple(_args.integer(v, "resize_", "size", 1, symint=True) for v in sizes)
    return _C._resize_(self, sizes)


def _resize_as_method(self, the_template, *, memory_format=None):
    """Resizes in place to ``the_template``'s shape."""
    _args.tensor(the_template, "resize_as_", "the_template", 1)
    return _C._resize_(self, tuple(the_template.shape))


_methods.define("resize_", _resize_method)
_methods.define("resize_as_", _resize_as_method)


def _out_dtype(dtype, out):
    """The ``dtype=`` of an op that takes one: PyTorch infers it from ``out=`` when not given."""
    return out.dtype if dtype is None and _is_tensor(out) else dtype


def _inplace_copy(self, result):
    """Writes an out-of-place ``result`` into ``self`` with PyTorch's in-place shape and cast rules."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}")
    if not _C.can_cast(result.dtype, self.dtype):
        raise RuntimeError(
            f"result type {_pretty(result.dtype)} can't be cast to the desired output type {_pretty(self.dtype)}")
    self.copy_(result)
    return self


def _pretty(dt):
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return names.get(str(dt).replace("torch.", ""), str(dt))


def _rt(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: "torch.return_types.%s(\n%s)" % (
        name, ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self)))
    return cls


return_types = types.SimpleNamespace(
    **{n: _rt(n) for n in ("max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin", "aminmax")}
)
return_types.linalg_svd = _rt("linalg_svd", ("U", "S", "Vh"))
return_types.svd = _rt("svd", ("U", "S", "V"))


# ----- unary ----------------------------------------------------------------------

# PyTorch's aliases of registered ops: alias -> (op, whether ``torch.alias_`` exists).
_ALIASES = {
    "negative": ("neg", True), "absolute": ("abs", False), "arcsin": ("asin", True), "arccos": ("acos", True),
    "arctan": ("atan", True), "arcsinh": ("asinh", True), "arccosh": ("acosh", True), "arctanh": ("atanh", True),
    "fix": ("trunc", True),
}


def _make_unary(kernel, pub):
    def fn(input, *, out=None):
        return _write_out(_unary(kernel, input), out)

    def method(self):
        return _unary(kernel, self)

    def method_(self):
        return _unary(kernel, self, inplace=True)

    fn.__name__ = method.__name__ = pub
    method_.__name__ = pub + "_"
    fn.__doc__ = method.__doc__ = f"Elementwise ``{kernel}``."
    method_.__doc__ = f"In-place ``{kernel}``."
    return fn, method, method_


def _declare_method(name, method):
    """Declares a Tensor method unless the native class (or an earlier module) has it (hot paths stay native)."""
    if not _methods.defined(name):
        _methods.define(name, method)


def _bind(make, kernel, pub, function, method, inplace_method, inplace_function=False):
    """Binds ``kernel`` as ``pub`` on the entry points the op registry lists for it;
    ``make`` builds the (function, method, in-place method) trio."""
    f, m, m_ = make(kernel, pub)
    if function:
        globals()[pub] = _export(f, pub)
    if method:
        _declare_method(pub, m)
    if inplace_method:
        _declare_method(pub + "_", m_)
    if inplace_function:
        globals()[pub + "_"] = _export(m_, pub + "_")


# The parameterless unary ops of the engine's op registry (``UnaryOp::REGISTRY``
# in ferrotorch-core), each with the entry points PyTorch has for it; ops whose
# surface is bound by hand (``round``, the ``nn.functional`` activations) list none.
_UNARY_SURFACE = {}
for _name, *_surface in _C._unary_registry():
    _UNARY_SURFACE[_name] = _surface
    _bind(_make_unary, _name, _name, *_surface)
for _name, (_k, _inplace_fn) in _ALIASES.items():
    _bind(_make_unary, _k, _name, *_UNARY_SURFACE[_k][:3], _inplace_fn)


def round(input, *, decimals=0, out=None):
    """Rounds half to even, optionally to ``decimals`` places."""
    return _write_out(_unary("round", input, float(decimals)), out)


def _round_method(self, *, decimals=0):
    return _unary("round", self, float(decimals))


def _round_(self, *, decimals=0):
    return _unary("round", self, float(decimals), inplace=True)


_export(round)
_methods.define("round", _round_method)
_methods.define("round_", _round_)


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with inputs clamped to ``[eps, 1 - eps]`` when given."""
    eps = _args.floating(eps, "logit", "eps", 2)
    return _write_out(_unary("logit", input, -1.0 if eps is None else eps), out)


_export(logit)
_methods.define("logit", lambda self, eps=None: logit(self, _args.floating(eps, "logit", "eps", 1)))


def _logit_(self, eps=None, _pos=1):
    eps = _args.floating(eps, "logit_", "eps", _pos)
    return _unary("logit", self, -1.0 if eps is None else eps, inplace=True)


_methods.define("logit_", _logit_)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces NaN, +inf and -inf (by default with 0 and the dtype's extremes)."""
    nan, posinf, neginf = _nan_to_num_args("nan_to_num", nan, posinf, neginf, 2)
    return _write_out(_unary("nan_to_num", input, nan, posinf, neginf), out)


def _nan_to_num_args(fn, nan, posinf, neginf, pos):
    return (_args.floating(nan, fn, "nan", pos), _args.floating(posinf, fn, "posinf", pos + 1),
            _args.floating(neginf, fn, "neginf", pos + 2))


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None, _pos=1):
    nan, posinf, neginf = _nan_to_num_args("nan_to_num_", nan, posinf, neginf, _pos)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        # PyTorch copies integers onto themselves, which is no write at all
        # (so no overlap check on expanded views).
        return self
    return _unary("nan_to_num", self, nan, posinf, neginf, inplace=True)


_export(nan_to_num)
_methods.define("nan_to_num", lambda self, nan=0.0, posinf=None, neginf=None: _unary(
    "nan_to_num", self, *_nan_to_num_args("nan_to_num", nan, posinf, neginf, 1)))
_methods.define("nan_to_num_", _nan_to_num_)


def square(input, *, out=None):
    """``input ** 2`` (integers stay integers; bool becomes int64)."""
    return _write_out(_binary("pow", input, 2), out)


_export(square)
_methods.define("square", lambda self: square(self))
_methods.define("square_", lambda self: _binary("pow", self, 2, inplace=True))
_methods.define("__invert__", lambda self: _unary("bitwise_not", self))


# ----- activations ------------------------------------------------------------------


def _act(name, input, *params, inplace=False):
    return _unary(name, input, *params, inplace=inplace)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``."""
    return _act("relu6", input, inplace=inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamps to ``[min_val, max_val]``."""
    # PyTorch compares first (in Python, so a 2-element tensor fails there)
    # and parses the arguments after.
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    min_val = _args.number(min_val, "hardtanh", "min_val", 2)
    max_val = _args.number(max_val, "hardtanh", "max_val", 3)
    return _act("hardtanh", input, float(min_val), float(max_val), inplace=inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x if x > 0 else negative_slope * x``."""
    slope = float(_args.number(negative_slope, "leaky_relu", "negative_slope", 2))
    out = _act("leaky_relu", input, slope, inplace=inplace)
    if inplace and slope < 0 and out.requires_grad:
        # PyTorch's in-place backward recovers the input from the output, which a negative
        # slope makes ambiguous: it refuses when the gradient arrives.
        out.register_hook(_negative_slope_backward)
    return out


def _negative_slope_backward(grad):
    raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                       "supported. This is caused by calling in-place forward function with a negative slope, "
                       "please call out-of-place version instead. File an issue at "
                       "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
                       "calculation with negative slope")


def elu(input, alpha=1.0, inplace=False):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""
    return _act("elu", input, float(_args.number(alpha, "elu", "alpha", 2)), inplace=inplace)


def selu(input, inplace=False):
    """Scaled ELU with the self-normalising constants."""
    return _act("selu", input, inplace=inplace)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    alpha = _args.number(alpha, "celu_" if inplace else "celu", "alpha", 2)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act("celu", input, float(alpha), inplace=inplace)


def gelu(input, approximate="none"):
    """Gaussian error linear unit, exact or with the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _act("gelu", input, 1.0 if approximate == "tanh" else 0.0)


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    return _act("silu", input, inplace=inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    return _act("mish", input, inplace=inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""
    return _act("softplus", input, float(_args.number(beta, "softplus", "beta", 2)),
                float(_args.number(threshold, "softplus", "threshold", 3)))


def softsign(input):
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    return _act("hardsigmoid", input, inplace=inplace)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    return _act("hardswish", input, inplace=inplace)


def logsigmoid(input):
    """``log(sigmoid(x))``, stable."""
    return _act("logsigmoid", input)


ACTIVATIONS = {
    f.__name__: f
    for f in (relu6, hardtanh, leaky_relu, elu, selu, celu, gelu, silu, mish, softplus, softsign, hardsigmoid,
              hardswish, logsigmoid)
}

for _f in (selu, celu):
    _export(_f)
selu_ = _export(lambda input: selu(input, inplace=True), "selu_")
celu_ = _export(lambda input, alpha=1.0: celu(input, alpha, inplace=True), "celu_")
_methods.define("relu_", lambda self: _unary("relu", self, inplace=True))
relu_ = _export(lambda input: _unary("relu", input, inplace=True), "relu_")


# ----- binary -----------------------------------------------------------------------


# The binary ops of the engine's op registry (``BinaryOp::REGISTRY`` in
# ferrotorch-core): name -> (function, method, in-place method, tensor-only ``other``,
# in-place function).
_BINARY_SURFACE = {e[0]: tuple(e[1:]) for e in _C._binary_registry()}
# PyTorch's aliases of registered binary ops.
_BINARY_ALIASES = {"arctan2": "atan2", "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
                   "greater_equal": "ge"}
# Ops whose PyTorch signature takes no Python number as ``other``.
_TENSOR_ONLY = {n for n, surface in _BINARY_SURFACE.items() if surface[3]} | {
    a for a, n in _BINARY_ALIASES.items() if _BINARY_SURFACE[n][3]}


def _check_other(pub, other):
    if pub in _TENSOR_ONLY and not _is_tensor(other):
        raise TypeError(f"{pub}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _check_inplace_broadcast(self, other):
    """PyTorch checks an in-place op's shape before its dtypes: ``other`` must broadcast to ``self``."""
    if _is_tensor(other) and tuple(other.shape) != tuple(self.shape):
        shape = _broadcast_shape(tuple(self.shape), tuple(other.shape))
        if shape is not None and shape != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")


def _broadcast_shape(a, b):
    """The broadcast of two shapes, or None when they do not broadcast (the kernel reports that)."""
    n = builtins.max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(x if y == 1 else y)
    return tuple(out)


def _into(kernel, input, other, out):
    """Whether ``kernel(input, other)`` went straight into ``out`` (no temporary);
    otherwise nothing was written and the caller computes and copies."""
    return out is not None and _C._math_binary_out(kernel, input, other, out)


def _make_binary(kernel, pub, inplace=True):
    def fn(input, other, *, out=None):
        _check_other(pub, other)
        if kernel != "floor_divide" and _into(kernel, input, other, out):
            return out
        return _write_out(_binary(kernel, input, other), out)

    def method(self, other):
        _check_other(pub, other)
        return _binary(kernel, self, other)

    def method_(self, other):
        _check_other(pub, other)
        _check_inplace_broadcast(self, other)
        return _binary(kernel, self, other, inplace=True)

    fn.__name__ = method.__name__ = pub
    method_.__name__ = pub + "_"
    fn.__doc__ = method.__doc__ = f"Elementwise ``{pub}`` with broadcasting and type promotion."
    return fn, method, method_


for _name, (_fn, _meth, _meth_, _, _fn_) in _BINARY_SURFACE.items():
    _bind(_make_binary, _name, _name, _fn, _meth, _meth_, _fn_)
for _name, _k in _BINARY_ALIASES.items():
    _bind(_make_binary, _k, _name, *_BINARY_SURFACE[_k][:3])
# floor_divide is div(rounding_mode='floor') without a derivative (its own kernel name).
_bind(_make_binary, "floor_divide", "floor_divide", True, True, True)


def _tensor_only_method(pub, native):
    def method(self, other):
        _check_other(pub, other)
        return native(self, other)

    method.__name__ = pub
    method.__doc__ = native.__doc__
    return method


for _name in ("maximum", "minimum"):  # the native methods also take numbers; PyTorch's do not
    _methods.define(_name, _tensor_only_method(_name, _methods.lookup(_name)))


def _reflect(kernel):
    return lambda self, other: _binary(kernel, other, self) if _is_number(other) else NotImplemented


def _forward(kernel):
    return lambda self, other: _binary(kernel, self, other) if _is_tensor(other) or _is_number(other) else NotImplemented


def _iforward(kernel):
    def op(self, other):
        _binary(kernel, self, other, inplace=True)
        return self
    return op


def _is_number(x):
    return isinstance(x, (bool, int, float)) or (hasattr(x, "dtype") and hasattr(x, "item") and not _is_tensor(x)
                                                  and getattr(x, "ndim", 1) == 0)


for _dunder, _k in (("floordiv", "floor_divide"), ("mod", "remainder"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                    ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    _methods.define(f"__{_dunder}__", _forward(_k))
    _methods.define(f"__r{_dunder}__", _reflect(_k))
    _methods.define(f"__i{_dunder}__", _iforward(_k))

_native_div = _methods.lookup("div")
_native_div_ = _methods.lookup("div_")


def div(input, other, *, rounding_mode=None, out=None):
    """True division, or rounded with ``rounding_mode='trunc'|'floor'``."""
    return _write_out(_div(input, other, rounding_mode), out)


def _div(input, other, rounding_mode, inplace=False):
    if rounding_mode is None:
        if inplace:
            return _native_div_(input, other)
        if _is_tensor(input):
            return _native_div(input, other)
        return _binary("div", input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if inplace:
        _check_inplace_broadcast(input, other)
    return _binary("div_" + rounding_mode, input, other, inplace=inplace)


_methods.define("div", lambda self, other, *, rounding_mode=None: _div(self, other, rounding_mode))
_methods.define("div_", lambda self, other, *, rounding_mode=None: _div(self, other, rounding_mode, inplace=True))
_methods.define("divide", _methods.lookup("div"))
_methods.define("divide_", _methods.lookup("div_"))
_methods.define("true_divide", lambda self, other: _native_div(self, other))
_methods.define("true_divide_", lambda self, other: _native_div_(self, other))
divide = div
_export(div)
_export(div, "divide")


def true_divide(dividend, divisor, *, out=None):
    """True division (integers give floats)."""
    return _write_out(_div(dividend, divisor, None), out)


_export(true_divide)


def _unit(alpha):
    # only the int 1 is a no-op: 1.0 or True still meet PyTorch's alpha checks
    return type(alpha) is int and alpha == 1


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``."""
    if _unit(alpha) and _into("add", input, other, out):
        return out
    if _is_tensor(input):
        r = input.add(other) if _unit(alpha) else input.add(other, alpha=alpha)
    else:
        r = _binary("add", input, other) if _unit(alpha) else _C._math_add_scaled(input, other, alpha, False)
    return _write_out(r, out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if _unit(alpha) and _into("sub", input, other, out):
        return out
    if _is_tensor(input):
        r = input.sub(other) if _unit(alpha) else input.sub(other, alpha=alpha)
    else:
        r = _binary("sub", input, other) if _unit(alpha) else _C._math_add_scaled(input, other, alpha, True)
    return _write_out(r, out)


def rsub(input, other, *, alpha=1, out=None):
    """``other - alpha * input``."""
    return _write_out(_C._math_add_scaled(other, input, alpha, True), out)


def mul(input, other, *, out=None):
    """Elementwise product."""
    if _into("mul", input, other, out):
        return out
    return _write_out(input * other if _is_tensor(input) else other * input, out)


subtract = sub
multiply = mul
for _f, _n in ((add, "add"), (sub, "sub"), (rsub, "rsub"), (mul, "mul"), (sub, "subtract"), (mul, "multiply")):
    _export(_f, _n)
_methods.define("subtract", lambda self, other, *, alpha=1: self.sub(other, alpha=alpha))
_methods.define("multiply", lambda self, other: self.mul(other))

# comparisons in place keep the receiver's dtype: x.eq_(y) writes 0/1.
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _methods.define(_name + "_", lambda self, other, _k=_name: _binary(_k, self, other, inplace=True))


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


# ----- clamp, lerp, addcmul/addcdiv, isclose ------------------------------------------


def clamp(input, min=None, max=None, *, out=None):
    """Clamps to ``[min, max]`` (scalars or tensors; either may be None)."""
    return _write_out(_clamp(input, min, max), out)


def _clamp(input, min, max, inplace=False):
    if input.dtype == _C.bool and not inplace:
        # bool input: the bounds decide the result dtype (clamp(bool, min=-1) is int64)
        target = input.dtype
        for b in (min, max):
            if b is not None:
                target = _C.promote_types(target, _C.result_type(input, b))
        if target != _C.bool:
            input = input.to(target)
    return _C._math_clamp(input, min, max, inplace=inplace)


def _clamp_(self, min, max):
    if self.dtype == _C.bool:
        for b in (min, max):
            if b is not None and _C.result_type(self, b) != _C.bool:
                raise RuntimeError(f"result type {_pretty(_C.result_type(self, b))} can't be cast to the desired "
                                   "output type Bool")
    return _clamp(self, min, max, inplace=True)


def clamp_min(input, min, *, out=None):
    """``clamp(input, min=min)``."""
    return clamp(input, min, None, out=out)


def clamp_max(input, max, *, out=None):
    """``clamp(input, max=max)``."""
    return clamp(input, None, max, out=out)


clip = clamp
for _f, _n in ((clamp, "clamp"), (clamp, "clip"), (clamp_min, "clamp_min"), (clamp_max, "clamp_max")):
    _export(_f, _n)
_methods.define("clamp", _methods.define("clip", lambda self, min=None, max=None: _clamp(self, min, max)))
_methods.define("clamp_", _methods.define("clip_", lambda self, min=None, max=None: _clamp_(self, min, max)))
# the methods promote a bool receiver by the bound like torch.clamp_min/max do
_methods.define("clamp_min", lambda self, min: _clamp(self, min, None))
_methods.define("clamp_max", lambda self, max: _clamp(self, None, max))
_methods.define("clamp_min_", lambda self, min: _C._math_clamp(self, min, None, inplace=True))
_methods.define("clamp_max_", lambda self, max: _C._math_clamp(self, None, max, inplace=True))


def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``."""
    return _write_out(_C._math_lerp(input, end, weight), out)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    return _write_out(_C._math_addc(input, tensor1, tensor2, value, False), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``."""
    return _write_out(_C._math_addc(input, tensor1, tensor2, value, True), out)


for _f in (lerp, addcmul, addcdiv):
    _export(_f)
_methods.define("lerp", lambda self, end, weight: _C._math_lerp(self, end, weight))
_methods.define("lerp_", lambda self, end, weight: _C._math_lerp(self, end, weight, inplace=True))
_methods.define("addcmul", lambda self, tensor1, tensor2, *, value=1: addcmul(self, tensor1, tensor2, value=value))


def _addcmul_(self, tensor1, tensor2, *, value=1):
    _check_inplace_broadcast(self, tensor1)
    _check_inplace_broadcast(self, tensor2)
    return _C._math_addc(self, tensor1, tensor2, value, False, inplace=True)


_methods.define("addcmul_", _addcmul_)
_methods.define("addcdiv", lambda self, tensor1, tensor2, *, value=1: _C._math_addc(self, tensor1, tensor2, value, True))
_methods.define("addcdiv_", lambda self, tensor1, tensor2, *, value=1: _C._math_addc(self, tensor1, tensor2, value, True, inplace=True))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False, _fn="isclose", _pos=2):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close)."""
    _args.tensor(other, _fn, "other", _pos)
    if _is_tensor(other) and input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    eq = input == other
    if input.dtype == _C.bool or not (input.is_floating_point()):
        if input.dtype == _C.bool:
            return eq
        diff = (input.double() - (other.double() if _is_tensor(other) else other)).abs()
        tol = atol + rtol * ((other.double() if _is_tensor(other) else float(other)).__abs__())
        return eq.logical_or(diff <= tol)
    with _no_grad():
        diff = (input - other).abs()
        oth = other.abs() if _is_tensor(other) else builtins.abs(other)
        close = diff <= (oth * rtol + atol) if _is_tensor(oth) else diff <= (atol + rtol * oth)
        r = eq.logical_or(close.logical_and(diff.isfinite()))
        if equal_nan:
            r = r.logical_or(input.isnan().logical_and(other.isnan() if _is_tensor(other) else math.isnan(other)))
        return r


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is close (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan, _fn="allclose").all())


for _f in (isclose, allclose):
    _export(_f)
_methods.define("isclose", lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: isclose(
    self, other, rtol, atol, equal_nan, _pos=1))
_methods.define("allclose", lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: bool(
    isclose(self, other, rtol, atol, equal_nan, _fn="allclose", _pos=1).all()))


# ----- reductions -------------------------------------------------------------------


def prod(input, dim=_OMITTED, keepdim=_OMITTED, *, dtype=None, out=None):
    """Product over one dim or everything."""
    dim, keepdim = _reduce_dim("prod", dim, keepdim, none_ok=False)
    return _write_out(_C._math_prod(input, dim, keepdim, _out_dtype(dtype, out)), out)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over dims (NaN propagates); the gradient is split among ties."""
    return _write_out(_C._math_amax(input, None if dim == () else dim, keepdim, True), out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over dims."""
    return _write_out(_C._math_amax(input, None if dim == () else dim, keepdim, False), out)


def _max_min(input, dim, keepdim, out, is_max, name):
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        return _write_out(_C._math_max(input, None, False, is_max), out)
    if _is_tensor(dim):
        r = _binary("maximum" if is_max else "minimum", input, dim)
        return _write_out(r, out)
    v, i = _C._math_max(input, int(dim), keepdim, is_max)
    return _write_out(getattr(return_types, name)(v, i), out)


def max(input, dim=None, keepdim=False, *, out=None):
    """``max(input)``, ``max(input, dim, keepdim)`` -> (values, indices), or ``max(input, other)``."""
    return _max_min(input, dim, keepdim, out, True, "max")


def min(input, dim=None, keepdim=False, *, out=None):
    """``min(input)``, ``min(input, dim, keepdim)`` -> (values, indices), or ``min(input, other)``."""
    return _max_min(input, dim, keepdim, out, False, "min")


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the maximum (over the flattened tensor when ``dim`` is None)."""
    return _write_out(_C._math_argmax(input, dim, keepdim, True), out)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the minimum."""
    return _write_out(_C._math_argmax(input, dim, keepdim, False), out)


def _correction(dim, unbiased, correction, name):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: can't specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, float(correction)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance with Bessel's ``correction`` (``unbiased=False`` means 0)."""
    dim, c = _correction(dim, unbiased, correction, "var")
    return _write_out(_C._math_var(input, dim, c, keepdim, False), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation (see ``var``)."""
    dim, c = _correction(dim, unbiased, correction, "std")
    return _write_out(_C._math_var(input, dim, c, keepdim, True), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` in one pass."""
    dim, c = _correction(dim, unbiased, correction, "var_mean")
    return _C._math_var(input, dim, c, keepdim, False, True)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` in one pass."""
    dim, c = _correction(dim, unbiased, correction, "std_mean")
    return _C._math_var(input, dim, c, keepdim, True, True)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """``linalg.vector_norm``: ``sum(|x|^ord)^(1/ord)``, with ``inf``, ``-inf`` and 0 norms."""
    return _write_out(_C._math_vector_norm(x, float(ord), dim, keepdim, dtype), out)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector norms over ``dim`` (``'fro'`` is the 2-norm over the given dims)."""
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        from .linalg import matrix_norm
        if dim is None:
            dim = tuple(range(input.dim()))
        elif isinstance(dim, int):
            dim = (dim,)
        return matrix_norm(input, p, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, p, dim, keepdim, dtype=dtype, out=out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, stable."""
    return _write_out(_C._math_logsumexp(input, dim, keepdim), out)


def all(input, dim=None, keepdim=False, *, out=None):
    """True where every element over ``dim`` is non-zero."""
    return _write_out(_C._math_all(input, dim, keepdim, True), out)


def any(input, dim=None, keepdim=False, *, out=None):
    """True where some element over ``dim`` is non-zero."""
    return _write_out(_C._math_all(input, dim, keepdim, False), out)


def count_nonzero(input, dim=None):
    """Number of non-zero elements over ``dim``."""
    return _C._math_count_nonzero(input, dim)


def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim`` (integers accumulate in int64)."""
    return _write_out(_C._math_cumulative(input, dim, _out_dtype(dtype, out), False), out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``."""
    return _write_out(_C._math_cumulative(input, dim, _out_dtype(dtype, out), True), out)


def cummax(input, dim, *, out=None):
    """Running maximum and its index."""
    return _write_out(return_types.cummax(*_C._math_cum_extreme(input, dim, True)), out)


def cummin(input, dim, *, out=None):
    """Running minimum and its index."""
    return _write_out(return_types.cummin(*_C._math_cum_extreme(input, dim, False)), out)


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """Sorted values and their indices (always stable; NaN sorts last)."""
    return _write_out(return_types.sort(*_C._math_sort(input, dim, descending)), out)


def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim``."""
    return _C._math_sort(input, dim, descending)[1]


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    if input.dtype == _C.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    return _write_out(return_types.topk(*_C._math_topk(input, k, dim, largest)), out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element along ``dim`` and its index."""
    # PyTorch answers a 0-d input before dispatching on the dtype.
    if input.dtype == _C.bool and input.dim() > 0:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    return _write_out(return_types.kthvalue(*_C._math_kthvalue(input, k, dim, keepdim)), out)


def median(input, dim=_OMITTED, keepdim=_OMITTED, *, out=None):
    """The lower median (of everything, or along ``dim`` with its index)."""
    dim, keepdim = _reduce_dim("median", dim, keepdim, none_ok=False)
    if isinstance(dim, int) and not isinstance(dim, bool):
        # PyTorch wraps the dim before its kernel looks at the dtype.
        _check_dim(dim, input.dim())
    if input.dtype == _C.bool:
        # PyTorch's whole-tensor median returns before its kernel for an empty
        # input (NaN cast to bool: True); along a dim, an empty reduced dim is
        # reported (IndexError, below) before the dtype.
        if dim is None:
            if input.numel() > 0:
                raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        elif not (input.dim() > 0 and input.shape[dim] == 0):
            raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    if dim is None:
        return _write_out(_C._math_median(input), out)
    return _write_out(return_types.median(*_C._math_median(input, dim, keepdim)), out)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (smallest on ties) and an index of it."""
    return _write_out(return_types.mode(*_C._math_mode(input, dim, keepdim)), out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct values (sorted), optionally with inverse indices and counts."""
    if dim is not None:
        v, inv, cnt = _unique_dim(input, dim)
    else:
        v, inv, cnt = _C._math_unique(input)
    if return_inverse and return_counts:
        return v, inv, cnt
    if return_inverse:
        return v, inv
    if return_counts:
        return v, cnt
    return v


def svd(input, some=True, compute_uv=True, *, out=None):
    """``(U, S, V)`` with ``input = U diag(S) V^T`` (see ``linalg.svd``)."""
    from ._svd import torch_svd
    return torch_svd(input, some, compute_uv, out=out)


def _unique_dim(input, dim):
    """Unique slices along ``dim`` (always sorted lexicographically), inverse and counts.

    The slices are flattened to rows and sorted by repeated stable argsorts
    from the last column to the first; consecutive rows that differ start a
    new group (NaN differs from everything, ``-0.0 == 0.0``).
    """
    nd = input.dim()
    if nd == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    _check_dim(dim, nd)
    dim %= nd
    shape = tuple(input.shape)
    if builtins.any(s == 0 for d, s in enumerate(shape) if d != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    n = shape[dim]
    dev = input.device
    with _no_grad():
        x = input.detach()
        if n == 0:
            e = _C.zeros((0,), dtype=_C.int64, device=dev)
            return x.clone(), e, e.clone()
        rest = shape[:dim] + shape[dim + 1:]
        rows = x.movedim(dim, 0).reshape(n, -1)
        k = rows.shape[1]
        perm = _C.arange(n, device=dev)
        for c in range(k - 1, -1, -1):
            key = rows[:, c].index_select(0, perm)
            perm = perm.index_select(0, argsort(key, stable=True))
        srt = rows.index_select(0, perm)
        start = _C.ones((n,), dtype=_C.bool, device=dev)
        if n > 1:
            start[1:] = (srt[1:] != srt[:-1]).any(1)
        group = start.cumsum(0) - 1
        inverse = _C.zeros((n,), dtype=_C.int64, device=dev).index_copy(0, perm, group)
        first = start.nonzero().reshape(-1)
        u = first.shape[0]
        counts = _C.zeros((u,), dtype=_C.int64, device=dev).index_add(0, group, _C.ones((n,), dtype=_C.int64,
                                                                                         device=dev))
        values = srt.index_select(0, first).reshape((u,) + rest).movedim(0, dim)
        return values.contiguous(), inverse, counts


def softmax(input, dim=None, dtype=None, _stacklevel=3, *, out=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, stable."""
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _write_out(_C._math_softmax(input, dim, dtype, False), out)


def log_softmax(input, dim=None, dtype=None, _stacklevel=3, *, out=None):
    """``x - logsumexp(x)`` along ``dim``."""
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _write_out(_C._math_softmax(input, dim, dtype, True), out)


for _f in (prod, amax, amin, max, min, argmax, argmin, var, std, var_mean, std_mean, norm, logsumexp, all, any,
           count_nonzero, cumsum, cumprod, cummax, cummin, sort, argsort, topk, kthvalue, median, mode, unique,
           svd, softmax, log_softmax):
    _export(_f)
    _declare_method(_f.__name__, _f)

_methods.define("max", lambda self, dim=None, keepdim=False: max(self, dim, keepdim))
_methods.define("min", lambda self, dim=None, keepdim=False: min(self, dim, keepdim))
_methods.define("cumsum_", lambda self, dim, *, dtype=None: _cum_(self, dim, dtype, False))
_methods.define("cumprod_", lambda self, dim, *, dtype=None: _cum_(self, dim, dtype, True))
_methods.define("softmax", lambda self, dim, dtype=None: softmax(self, dim, dtype))
_methods.define("log_softmax", lambda self, dim, dtype=None: log_softmax(self, dim, dtype))
_methods.define("norm", lambda self, p="fro", dim=None, keepdim=False, dtype=None: norm(self, p, dim, keepdim, dtype=dtype))


def _check_dim(dim, ndim):
    """PyTorch's ``maybe_wrap_dim`` range check (a 0-d tensor has dims -1 and 0)."""
    nd = builtins.max(ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")


def _cum_(self, dim, dtype, is_prod):
    dim = _args.integer(dim, "cumprod_" if is_prod else "cumsum_", "dim", 1)
    # PyTorch wraps the dim first, and its kernel (with the dtype check) never runs on an empty tensor.
    _check_dim(dim, self.dim())
    if not self.numel():
        return self
    if self.dtype == _C.bool and dtype is None:
        if self.dim() == 0:
            # Nor on a 0-d one: PyTorch fills it with itself.
            return self
        raise NotImplementedError(f"\"{'cumprod' if is_prod else 'cumsum'}_out_cpu\" not implemented for 'Bool'")
    return _C._math_cumulative(self, dim, dtype, is_prod, inplace=True)


# ----- torch-level in-place functions (``torch.clamp_(x, ...)`` == ``x.clamp_(...)``) --------------

round_ = _export(lambda input, *, decimals=0: input.round_(decimals=decimals), "round_")
logit_ = _export(lambda input, eps=None: _logit_(input, eps, _pos=2), "logit_")
square_ = _export(lambda input: input.square_(), "square_")
nan_to_num_ = _export(lambda input, nan=0.0, posinf=None, neginf=None: _nan_to_num_(input, nan, posinf, neginf, _pos=2),
                      "nan_to_num_")
clamp_ = _export(lambda input, min=None, max=None: input.clamp_(min, max), "clamp_")
clip_ = _export(lambda input, min=None, max=None: input.clamp_(min, max), "clip_")
