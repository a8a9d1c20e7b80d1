"""In-place geometry changes: ``t_``, ``transpose_``/``swapdims_``/``swapaxes_``,
``squeeze_``, ``unsqueeze_``, ``as_strided_`` and ``set_``.

Each computes the view out of place (so the checks and error messages are the
view op's own) and then re-points this tensor at that geometry with the native
``_C._set_``; the data never moves.
"""

from . import _tensor_methods as _methods
from . import _C
from ._math_ops import _pretty

__all__ = ["as_strided_"]

_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _check_autograd(self):
    # the graph cannot be rewired from here: PyTorch's message for leaves, and the
    # same refusal for non-leaves whose history would need a view node
    if self.requires_grad and _C.is_grad_enabled():
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError(
            "in-place view ops (t_, transpose_, squeeze_, unsqueeze_, as_strided_, set_) on a tensor that "
            "requires grad are not supported by ferrotorch; use the out-of-place view"
        )


def _become(self, view):
    _check_autograd(self)
    return _C._set_(self, self, tuple(view.shape), tuple(view.stride()), view.storage_offset())


def _t_(self):
    """In-place version of :meth:`Tensor.t`."""
    return _become(self, self.t())


def _transpose_(self, dim0, dim1):
    """In-place version of :meth:`Tensor.transpose`."""
    return _become(self, self.transpose(dim0, dim1))


def _squeeze_(self, dim=None):
    """In-place version of :meth:`Tensor.squeeze`."""
    return _become(self, self.squeeze() if dim is None else self.squeeze(dim))


def _unsqueeze_(self, dim):
    """In-place version of :meth:`Tensor.unsqueeze`."""
    return _become(self, self.unsqueeze(dim))


def _as_strided_(self, size, stride, storage_offset=None):
    """In-place version of :meth:`Tensor.as_strided`."""
    _check_autograd(self)
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return _C._set_(self, self, tuple(size), tuple(stride), offset)


def as_strided_(input, size, stride, storage_offset=None):
    """In-place version of :func:`ferrotorch.as_strided`."""
    return _as_strided_(input, size, stride, storage_offset)


def _set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Sets the underlying storage, size and strides: ``self`` then shares ``source``'s
    storage (with its geometry, or the given ``storage_offset``/``size``/``stride``).
    Without ``source`` the tensor becomes empty on fresh storage.
    """
    if source is not None and not isinstance(source, _C.TensorBase):
        raise TypeError(f"set_() received an invalid combination of arguments - got ({type(source).__name__})")
    _check_autograd(self)
    if source is None:
        return _C._set_(self, _C.empty(0, dtype=self.dtype, device=self.device), (0,), (1,), 0)
    if source.dtype != self.dtype:
        raise RuntimeError(
            f"Could not set tensor of type {_CPP_NAMES.get(str(source.dtype).split('.')[-1], _pretty(source.dtype))} "
            f"to a tensor of type {_CPP_NAMES.get(str(self.dtype).split('.')[-1], _pretty(self.dtype))}"
        )
    if storage_offset is None and size is None:
        return _C._set_(self, source, tuple(source.shape), tuple(source.stride()), source.storage_offset())
    if size is None:
        raise TypeError("set_() missing required argument 'size'")
    size = tuple(size)
    if stride is None:
        # contiguous strides for the given size
        stride, acc = [], 1
        for s in reversed(size):
            stride.append(acc)
            acc *= max(s, 1)
        stride = tuple(reversed(stride))
    return _C._set_(self, source, size, tuple(stride), 0 if storage_offset is None else storage_offset)


_methods.define("t_", _t_)
_methods.define("transpose_", _transpose_)
_methods.define("swapdims_", _transpose_)
_methods.define("swapaxes_", _transpose_)
_methods.define("squeeze_", _squeeze_)
_methods.define("unsqueeze_", _unsqueeze_)
_methods.define("as_strided_", _as_strided_)
_methods.define("set_", _set_)
