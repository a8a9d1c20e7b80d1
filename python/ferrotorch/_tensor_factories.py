"""Constructors beyond the native ones: the ``Tensor.new_*`` family and
``type_as``, ``asarray``, ``frombuffer``, ``scalar_tensor``, the deprecated
``range``, and the functional ``fill``/``fill_``/``zero_``.
"""

import math

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = ["asarray", "frombuffer", "from_file", "scalar_tensor", "range", "fill", "fill_", "zero_"]


def _size_args(size, name):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        return tuple(size[0])
    return tuple(size)


def _like(self, dtype, device):
    return (self.dtype if dtype is None else dtype), (self.device if device is None else device)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new uninitialised tensor of ``size``, by default of this tensor's dtype and device."""
    dt, dev = _like(self, dtype, device)
    return _C.empty(*_size_args(size, "new_empty"), dtype=dt, device=dev, requires_grad=requires_grad)


def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor of zeros of ``size``, by default of this tensor's dtype and device."""
    dt, dev = _like(self, dtype, device)
    return _C.zeros(*_size_args(size, "new_zeros"), dtype=dt, device=dev, requires_grad=requires_grad)


def _new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor of ones of ``size``, by default of this tensor's dtype and device."""
    dt, dev = _like(self, dtype, device)
    return _C.ones(*_size_args(size, "new_ones"), dtype=dt, device=dev, requires_grad=requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor of ``size`` filled with ``fill_value``, by default of this tensor's dtype and device."""
    dt, dev = _like(self, dtype, device)
    return _C.full(tuple(size), fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor holding a copy of ``data``, by default of this tensor's dtype and device."""
    dt, dev = _like(self, dtype, device)
    if isinstance(data, _C.TensorBase):
        out = data.detach().to(dtype=dt, device=dev).clone()
    else:
        out = _C.tensor(data, dtype=dt, device=dev)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _new(self, *args, device=None):
    """The legacy constructor: ``x.new(*sizes)`` (uninitialised), ``x.new(data)``,
    ``x.new(tensor)`` (an alias) or ``x.new()`` (empty), of this tensor's dtype."""
    dev = self.device if device is None else device
    if not args:
        return _C.empty(0, dtype=self.dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], _C.TensorBase):
        if args[0].dtype != self.dtype:
            raise TypeError(f"expected {self.dtype} (got {args[0].dtype})")
        return args[0]
    if all(isinstance(a, int) for a in args):
        return _C.empty(*args, dtype=self.dtype, device=dev)
    if len(args) == 1 and type(args[0]).__name__ in ("Size", "Size_"):
        return _C.empty(*args[0], dtype=self.dtype, device=dev)
    if len(args) == 1:
        return _C.tensor(args[0], dtype=self.dtype, device=dev)
    raise TypeError(f"new() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}")


def _type_as(self, other):
    """This tensor cast to ``other``'s dtype (itself when they already match)."""
    _args.tensor(other, "type_as", "other", 1)
    return self.to(other.dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Converts ``obj`` to a tensor, sharing memory when it can.

    A tensor (or a NumPy array, through ``from_numpy``) is returned without a copy
    when dtype and device already match and ``copy`` is not True; ``copy=False``
    raises where a copy would be needed. Other objects go through :func:`tensor`.
    """
    if isinstance(obj, _C.TensorBase):
        out = obj
        need = (dtype is not None and dtype != obj.dtype) or (device is not None and str(_C.device(device)) != str(obj.device))
        if need and copy is False:
            raise ValueError("can't alias tensor from a different dtype or device without copy")
        out = obj.to(dtype=dtype or obj.dtype, device=device or obj.device)
        if copy and out is obj or (copy and out.data_ptr() == obj.data_ptr()):
            out = out.clone()
    elif type(obj).__module__ == "numpy" and hasattr(obj, "__array_interface__"):
        out = _C.from_numpy(obj)
        if dtype is not None or device is not None:
            if copy is False and ((dtype is not None and dtype != out.dtype) or device is not None and str(_C.device(device)) != "cpu"):
                raise ValueError("can't alias NumPy arrays from a different dtype or device without copy")
            out = out.to(dtype=dtype or out.dtype, device=device or out.device)
        if copy:
            out = out.clone()
    else:
        if copy is False and not isinstance(obj, (int, float, bool)):
            raise ValueError("can't alias arbitrary sequence into a tensor without copy")
        out = _C.tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out = out.requires_grad_(True) if out.is_leaf else out
    return out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor sharing memory with an object that implements the buffer protocol.

    ``count`` elements (all, when negative) of ``dtype`` are read starting
    ``offset`` bytes in. Writes to the tensor show in the buffer and vice versa.
    """
    import numpy as np

    mv = memoryview(buffer)
    nbytes = mv.nbytes
    item = _C.empty(0, dtype=dtype).element_size()
    if offset < 0 or offset > nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({nbytes} bytes) minus 1")
    if count == 0 or (count < 0 and nbytes - offset == 0):
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if count < 0:
        if (nbytes - offset) % item:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({item})")
        count = (nbytes - offset) // item
    elif offset + count * item > nbytes:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({nbytes} bytes)")
    out = _from_array(np.frombuffer(buffer, dtype=_numpy_dtype(dtype), count=count, offset=offset), dtype)
    return out.requires_grad_(True) if requires_grad else out


def _numpy_dtype(dtype):
    import numpy as np

    name = str(dtype).split(".")[-1]
    # NumPy has no bfloat16: its bits travel as int16 and are reinterpreted
    return {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.int16,
            "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
            "bool": np.bool_}[name]


def _from_array(arr, dtype):
    out = _C.from_numpy(arr)
    return out.view(_C.bfloat16) if dtype == _C.bfloat16 else out


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """A 1-d CPU tensor of ``size`` elements of ``dtype`` read from a binary file.

    With ``shared=True`` the file is memory-mapped (created or extended as needed)
    and writes to the tensor go to the file; otherwise the data is copied in.
    """
    import os

    import numpy as np

    dtype = dtype or _C.get_default_dtype()
    item = _C.empty(0, dtype=dtype).element_size()
    need = size * item
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < need:
            with open(filename, "ab") as f:
                f.truncate(need)
        if size == 0:
            return _C.empty(0, dtype=dtype)
        return _from_array(np.memmap(filename, dtype=_numpy_dtype(dtype), mode="r+", shape=(size,)), dtype)
    if not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory (2)")
    have = os.path.getsize(filename)
    if have < need:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size <{need}>")
    if size == 0:
        return _C.empty(0, dtype=dtype)
    return _from_array(np.fromfile(filename, dtype=_numpy_dtype(dtype), count=size), dtype)


@_args.signature(
    'Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False',
)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` is given."""
    return _C.full((), s, dtype=dtype or _C.get_default_dtype(), device=device, requires_grad=requires_grad)


@_args.signature(
    'Scalar start, Scalar end, Scalar step=1, *, Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool requires_grad=False',
)
def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated in PyTorch: ``[start, end]`` in steps of ``step``, both ends included
    (the default float dtype unless ``dtype`` is given). Use :func:`arange`."""
    import warnings

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning, stacklevel=2,
    )
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = dtype or _C.get_default_dtype()
    res = _C.arange(n, dtype=_C.float64, device=device) * step + start
    res = res.to(dt)
    if requires_grad:
        res.requires_grad_(True)
    if out is not None:
        from ._math_ops import _write_out
        return _write_out(res, out)
    return res


@_args.signature('Tensor input, Scalar value', 'Tensor input, Tensor value')
def fill(input, value):
    """A tensor of ``input``'s shape, dtype and device filled with ``value``."""
    if isinstance(value, _C.TensorBase):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions."
            )
        return value.to(input.dtype).expand(input.shape).clone()
    # where() gives input a zero gradient, as PyTorch's FillBackward does
    keep = _C.ones((), dtype=_C.bool, device=input.device)
    return _C._where(keep, _C.full_like(input, value), input)


@_args.signature('Tensor input, Scalar value', 'Tensor input, Tensor value')
def fill_(input, value):
    """Fills ``input`` with ``value`` in place."""
    return input.fill_(value)


@_args.signature('Tensor input')
def zero_(input):
    """Fills ``input`` with zeros in place."""
    return input.zero_()


_methods.define("new_empty", _new_empty)
_methods.define("new_zeros", _new_zeros)
_methods.define("new_ones", _new_ones)
_methods.define("new_full", _new_full)
_methods.define("new_tensor", _new_tensor)
_methods.define("new", _new)
_methods.define("type_as", _type_as)
for _n in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new", "type_as"):
    _methods.lookup(_n).__name__ = _n
del _n
