"""``Tensor`` methods kept for PyTorch compatibility: Hermitian transposes of
real tensors (``H``, ``mH``, ``adjoint``), ``sum_to_size``, the per-element
callbacks ``apply_``/``map_``/``map2_``, the deprecated non-inplace ``resize``,
and the answers PyTorch gives on a CPU-only build (``pin_memory``,
``is_pinned``, ``is_distributed``, ``volatile``, ...).
"""

import warnings

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = ["adjoint"]


@_args.signature('Tensor input')
def adjoint(input):
    """A view of ``input`` with its last two dimensions transposed (and conjugated,
    which is the identity for real dtypes)."""
    if input.dim() < 2:
        raise RuntimeError(
            f"tensor.adjoint() is only supported on matrices or batches of matrices. Got {input.dim()}-D tensor."
        )
    return input.transpose(-2, -1).conj()


def _H(self):
    if self.dim() != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{hint}")
    return self.transpose(0, 1).conj()


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return self.transpose(-2, -1).conj()


def _sum_to_size(self, *size):
    """Sums this tensor down to ``size``, which must broadcast to this tensor's shape."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(_args.integer(s, "sum_to_size", "size", 1, symint=True) for s in size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(
            f"size {{[{', '.join(map(str, size))}]}} is not expandable to size {{[{', '.join(map(str, shape))}]}}."
        )
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size) if lead else out


def _multiply_(self, other):
    """In-place version of :meth:`Tensor.multiply`."""
    return self.mul_(other)


def _subtract_(self, other, *, alpha=1):
    """In-place version of :meth:`Tensor.subtract`."""
    return self.sub_(other, alpha=alpha)


def _check_cpu(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _apply_(self, callable):
    """Applies ``callable(value)`` to every element in place (CPU only; a Python call
    per element, as in PyTorch, so it is meant for small tensors)."""
    _check_cpu(self, "apply_")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    return self.copy_(_C.tensor(vals, dtype=self.dtype).reshape(self.shape))


def _map_(self, tensor, callable):
    """``self[i] = callable(self[i], tensor[i])`` for every element in place; ``tensor``
    broadcasts to this tensor's shape (CPU only, a Python call per element)."""
    _check_cpu(self, "map_")
    other = tensor.expand(self.shape).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    return self.copy_(_C.tensor(vals, dtype=self.dtype).reshape(self.shape))


def _map2_(self, x, y, callable):
    """``self[i] = callable(self[i], x[i], y[i])`` in place; ``x`` and ``y`` broadcast to
    this tensor's shape (CPU only, a Python call per element)."""
    _check_cpu(self, "map2_")
    xs, ys = x.expand(self.shape).reshape(-1).tolist(), y.expand(self.shape).reshape(-1).tolist()
    vals = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)]
    return self.copy_(_C.tensor(vals, dtype=self.dtype).reshape(self.shape))


def _resize(self, *sizes):
    """Deprecated non-inplace resize: a reshaped copy with the same number of elements."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    # PyTorch builds a torch.Size from the arguments, so a tensor converts through bool/index
    sizes = tuple(s if isinstance(s, int) else int(s.item() if s.numel() == 1 else bool(s)) for s in sizes)
    _check_resize(self, sizes)
    return self.contiguous().view(*sizes)


def _check_resize(self, sizes):
    n = 1
    for s in sizes:
        n *= s
    if n != self.numel() or any(s < 0 for s in sizes):
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given tensor has a "
            f"size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). autograd's resize can only change "
            "the shape of a given tensor, while preserving the number of elements. "
        )


def _resize_as(self, tensor):
    """Deprecated non-inplace resize to ``tensor``'s shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    _check_resize(self, tuple(tensor.shape))
    return self.contiguous().view(*tensor.shape)


def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (``(0, 1, ...)`` when contiguous)."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def _pin_memory(self, device=None):
    """Pinned memory needs an accelerator; on a CPU-only build PyTorch refuses, as here."""
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _is_pinned(self, device=None):
    """Whether this tensor lives in pinned memory: never without an accelerator."""
    if device is not None:
        if isinstance(device, _C.TensorBase):
            raise TypeError("is_pinned(): argument 'device' (position 1) must be torch.device, not Tensor")
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return False


def _is_distributed(self):
    """Always False (no distributed tensors)."""
    return False


def _dense_dim(self):
    """Number of dense dimensions: all of them for a strided tensor."""
    return self.dim()


def _to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is already dense: itself (cast to ``dtype`` when given)."""
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be torch.dtype, not {type(dtype).__name__}")
    return self if dtype is None else self.to(dtype)


def _const_data_ptr(self):
    """Address of the first element, like :meth:`data_ptr`."""
    return self.data_ptr()


def _module_load(self, other, assign=False):
    """How ``load_state_dict`` turns ``other`` into this parameter's new value: ``other``
    itself (detached) with ``assign=True``, else a copy into this tensor."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


_methods.define("H", property(_H, doc="The conjugate transpose of a 2-d tensor (the transpose, for real dtypes)."))
_methods.define("mH", property(_mH, doc="The conjugate transpose of the last two dims (``mT`` for real dtypes)."))
_methods.define("adjoint", lambda self: adjoint(self))
_methods.lookup("adjoint").__doc__ = adjoint.__doc__
_methods.define("sum_to_size", _sum_to_size)
_methods.define("multiply_", _multiply_)
_methods.define("subtract_", _subtract_)
_methods.define("apply_", _apply_)
_methods.define("map_", _map_)
_methods.define("map2_", _map2_)
_methods.define("resize", _resize)
_methods.define("resize_as", _resize_as)
_methods.define("dim_order", _dim_order)
_methods.define("pin_memory", _pin_memory)
_methods.define("is_pinned", _is_pinned)
_methods.define("is_distributed", _is_distributed)
_methods.define("dense_dim", _dense_dim)
_methods.define("to_dense", _to_dense)
_methods.define("const_data_ptr", _const_data_ptr)
_methods.define("module_load", _module_load)
_methods.define("volatile", property(_volatile))
_methods.define("is_nested", property(lambda self: False, doc="Always False (no nested tensors)."))
_methods.define("is_quantized", property(lambda self: False, doc="Always False (no quantized tensors)."))
