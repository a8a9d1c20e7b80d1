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
"""

import numbers

from ._C import Tensor

__all__ = ["number", "floating", "integer", "tensor", "no_args"]


def _fail(fn, name, pos, kind, v):
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be {kind}, not {type(v).__name__}")


def _scalar_tensor_ok(v):
    return v.dim() == 0 and not v.requires_grad


def number(v, fn, name, pos, kind="Number"):
    """A ``Scalar``/``float`` parameter as a Python number (``kind`` names it in the error)."""
    if isinstance(v, (bool, int, float, complex)):
        return v
    if isinstance(v, Tensor):
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
    if isinstance(v, Tensor):
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
    if not isinstance(v, Tensor):
        _fail(fn, name, pos, "Tensor", v)
    return v


def no_args(fn, args):
    """A method that takes no arguments (``is_contiguous()``) called with some."""
    if args:
        raise TypeError(f"{fn}() takes 0 positional arguments but {len(args)} was given")
