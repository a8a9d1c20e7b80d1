"""The legacy typed tensor classes (``torch.FloatTensor``, ``torch.LongTensor``,
...): constructors for CPU tensors of one dtype, ``isinstance`` checks by
dtype and device, and targets of ``Tensor.type``. Also ``typename`` and the
deprecated ``set_default_tensor_type``.
"""

import warnings

from . import _tensor_methods as _methods
from . import _C

_LEGACY = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "BoolTensor": "bool",
}

__all__ = list(_LEGACY) + ["typename", "set_default_tensor_type"]


class tensortype(type):
    """Metaclass of the legacy tensor types: calling one builds a CPU tensor of its
    dtype, and ``isinstance`` asks whether a tensor has that dtype on the CPU."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, _C.TensorBase) and instance.dtype == cls.dtype and instance.device.type == "cpu"

    def __call__(cls, *args, device=None):
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: {_C.device(device).type} was passed"
            )
        if not args:
            return _C.empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], _C.TensorBase):
            src = args[0]
            if src.dtype != cls.dtype:
                raise TypeError(f"expected {_name_of(cls.dtype)} (got {_name_of(src.dtype)})")
            return src
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return _C.empty(*args, dtype=cls.dtype)
        if len(args) == 1 and type(args[0]).__name__ == "Size":
            return _C.empty(*args[0], dtype=cls.dtype)
        if len(args) == 1:
            return _C.tensor(args[0], dtype=cls.dtype)
        bad = next(i for i, a in enumerate(args) if not isinstance(a, int))
        raise TypeError(
            f"new(): argument 'size' failed to unpack the object at pos {bad + 1} with error "
            f"\"type must be tuple of ints,but got {type(args[bad]).__name__}\""
        )

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _name_of(dtype):
    return str(dtype).replace("ferrotorch.", "torch.")


def _make(name, dtype_name):
    cls = tensortype(name, (), {
        "dtype": getattr(_C, dtype_name), "is_cuda": False, "is_sparse": False, "layout": None,
        "__doc__": f"Legacy constructor of CPU ``{dtype_name}`` tensors: ``{name}(*sizes)`` "
                   f"(uninitialised) or ``{name}(data)``.",
    })
    cls.__module__ = "torch"
    return cls


for _n, _d in _LEGACY.items():
    globals()[_n] = _make(_n, _d)
del _n, _d

_BY_NAME = {f"torch.{n}": globals()[n] for n in _LEGACY}


def typename(obj):
    """The type of ``obj`` as a string: ``'torch.FloatTensor'`` style for tensors,
    ``module.qualname`` for other objects (just the name for builtins)."""
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def set_default_tensor_type(t):
    """Deprecated: sets the default floating-point dtype from a legacy tensor type
    (or its name). Use :func:`set_default_dtype` instead."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use torch.set_default_dtype() "
        "and torch.set_default_device() as alternatives.", UserWarning, stacklevel=2,
    )
    if isinstance(t, str):
        if t not in _BY_NAME:
            raise TypeError(f"invalid type: '{t}'")
        t = _BY_NAME[t]
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(t.dtype)


_native_type = _methods.lookup("type")


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """With no argument, the type name (``'torch.FloatTensor'``); otherwise this tensor
    cast to ``dtype`` (a dtype, a legacy tensor type or its name), itself when unchanged."""
    if isinstance(dtype, tensortype):
        dtype = dtype.dtype
    return _native_type(self, dtype, non_blocking) if dtype is not None else _native_type(self)


_methods.define("type", _type)
