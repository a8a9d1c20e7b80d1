"""``torch.memory_format`` and the ``memory_format=`` argument of the tensor methods and factories.

A memory format names a stride order: ``contiguous_format`` is row-major, ``channels_last``
(4-d) / ``channels_last_3d`` (5-d) keep the channel dimension innermost, and
``preserve_format`` keeps the input's own layout. The Rust core stores any strides; the
layouts here are built from its permute and copy kernels, so no element is touched in Python.
The core's ``clone``/``to``/``*_like`` already follow PyTorch's ``preserve_format`` rule
(same strides for a dense, non-overlapping input, else the layout its strides suggest);
the wrappers below only step in when another format is asked for.
"""

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = [
    "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
    "empty", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "empty_strided", "empty_permuted", "randint_like",
]


class memory_format:
    """The memory layout a tensor is or will be allocated in (``torch.memory_format``)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"'torch.memory_format' object attribute '{name}' is read-only")

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        # A singleton: pickles as a reference to the module-level name.
        return self._name

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


memory_format.__module__ = "ferrotorch"

contiguous_format = memory_format._make("contiguous_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")

# Rank a channels-last format needs, and the permutation that brings the channel dimension last.
_CHANNELS_LAST = {
    channels_last: (4, (0, 2, 3, 1), (0, 3, 1, 2)),
    channels_last_3d: (5, (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)),
}


def _check_type(mf, fn):
    if mf is not None and not isinstance(mf, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not {type(mf).__name__}")


def _check_rank(shape, mf):
    rank = _CHANNELS_LAST[mf][0]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {mf._name} format")


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _channels_last_strides(shape):
    # PyTorch's formula (no clamping of zero sizes, unlike the contiguous strides).
    n = len(shape)
    st = [0] * n
    st[1] = 1
    acc = shape[1]
    for d in range(n - 1, 1, -1):
        st[d] = acc
        acc *= shape[d]
    st[0] = acc
    return tuple(st)


def _format_strides(shape, mf):
    if mf is contiguous_format:
        return _contiguous_strides(shape)
    _check_rank(shape, mf)
    return _channels_last_strides(shape)


def _strides_like_channels_last_2d(shape, strides):
    """Whether PyTorch's ``suggest_memory_format()`` reads a 4-d layout as
    ``channels_last`` (c10's ``is_channels_last_strides_2d``: the strides of
    dims C, W, H, N non-decreasing, with its tie rules for size-1 dims)."""
    if len(shape) != 4 or strides[1] == 0:
        return False
    low = 0
    for d in (1, 3, 2, 0):
        if shape[d] == 0 or strides[d] < low:
            return False
        # An N111 layout, or one sliced to it, stays contiguous_format.
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def _is_channels_last_contiguous(shape, strides, order):
    expected = 1
    for d in order:
        size = shape[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


_orig_contiguous = _methods.lookup("contiguous")
_orig_is_contiguous = _methods.lookup("is_contiguous")
_orig_clone = _methods.lookup("clone")
_orig_to = _methods.lookup("to")


def _is_contiguous_as(t, mf):
    if mf is channels_last:
        return t.dim() == 4 and _is_channels_last_contiguous(t.shape, t.stride(), (1, 3, 2, 0))
    if mf is channels_last_3d:
        return t.dim() == 5 and _is_channels_last_contiguous(t.shape, t.stride(), (1, 4, 3, 2, 0))
    return _orig_is_contiguous(t)


def _strides_like_channels_last(shape, strides, order):
    # PyTorch's guess of a layout from strides (``is_channels_last_strides_2d/3d``): ambiguous
    # cases (a trivial channel stride, N111-like tensors) count as row-major.
    if strides[1] == 0:
        return False
    lo = 0
    for d in order:
        if shape[d] == 0 or strides[d] < lo:
            return False
        if d == 0 and lo == strides[1]:
            return False
        lo = strides[d]
        if shape[d] > 1:
            lo *= shape[d]
    return True


def _suggest_memory_format(t):
    """The layout ``t``'s strides look like (PyTorch's ``suggest_memory_format``)."""
    n = t.dim()
    if n == 4 and _strides_like_channels_last(t.shape, t.stride(), (1, 3, 2, 0)):
        return channels_last
    if n == 5 and _strides_like_channels_last(t.shape, t.stride(), (1, 4, 3, 2, 0)):
        return channels_last_3d
    return contiguous_format


def _contiguous_copy(t):
    # A new row-major tensor with PyTorch's exact strides (the core keeps whatever strides a
    # contiguous tensor has on its size-1 dimensions; PyTorch allocates canonical ones).
    r = _orig_clone(t) if _orig_is_contiguous(t) else _orig_contiguous(t)
    want = _contiguous_strides(t.shape)
    if r.stride() != want:
        # Only size-1 (or empty) dimensions differ, so every element keeps its address.
        r = r.as_strided(tuple(t.shape), want)
    return r


def _format_copy(t, mf):
    """A differentiable copy of ``t`` laid out in ``mf`` (not ``preserve_format``) with PyTorch's strides."""
    if mf is contiguous_format:
        return _contiguous_copy(t)
    _check_rank(t.shape, mf)
    if t.numel() == 0:
        return _contiguous_copy(t).as_strided(tuple(t.shape), _channels_last_strides(t.shape))
    _, perm, inv = _CHANNELS_LAST[mf]
    return _contiguous_copy(t.permute(perm)).permute(inv)


def contiguous(self, memory_format=contiguous_format):
    """A tensor with the same values laid out in ``memory_format``; ``self`` when it already is."""
    if memory_format is contiguous_format or memory_format is None:
        return _orig_contiguous(self)
    _check_type(memory_format, "contiguous")
    if memory_format is preserve_format:
        if _orig_is_contiguous(self):
            return self
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    _check_rank(self.shape, memory_format)
    if _is_contiguous_as(self, memory_format):
        return self
    return _format_copy(self, memory_format)


def is_contiguous(self, memory_format=contiguous_format):
    """True if the tensor is laid out densely in ``memory_format`` (size-1 dimensions ignored)."""
    if memory_format is contiguous_format or memory_format is None:
        return _orig_is_contiguous(self)
    _check_type(memory_format, "is_contiguous")
    return _is_contiguous_as(self, memory_format)


def clone(self, *, memory_format=preserve_format):
    """A copy with its own storage, laid out in ``memory_format`` (default: the input's layout)."""
    if memory_format is preserve_format or memory_format is None:
        return _orig_clone(self)
    _check_type(memory_format, "clone")
    return _format_copy(self, memory_format)


def to(self, *args, memory_format=preserve_format, **kwargs):
    """Casts and/or moves the tensor (``to(dtype)``, ``to(device, dtype)``, ``to(other)``, keywords).

    Returns ``self`` when nothing changes; ``memory_format`` picks the layout of a new tensor
    (and forces one when ``self`` is not laid out that way).
    """
    r = _orig_to(self, *args, **kwargs) if kwargs else _orig_to(self, *args)
    if memory_format is preserve_format or memory_format is None:
        return r
    _check_type(memory_format, "to")
    if r is self:
        # PyTorch aliases when the strides already suggest the format, dense or not.
        return self if _suggest_memory_format(self) is memory_format else _format_copy(self, memory_format)
    if r.stride() == _format_strides(r.shape, memory_format):
        return r
    return _format_copy(r, memory_format)


_methods.define("contiguous", contiguous)
_methods.define("is_contiguous", is_contiguous)
_methods.define("clone", clone)
_methods.define("to", to)


def _cast_method(name, target):
    orig = _methods.lookup(name)

    def method(self, memory_format=preserve_format):
        if memory_format is preserve_format or memory_format is None:
            return orig(self)
        _check_type(memory_format, name)
        return to(self, target, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``self.{name}()`` is ``self.to(...)`` of that dtype; ``memory_format`` as in :meth:`to`."
    return method


for _name, _target in (("float", _C.float32), ("double", _C.float64), ("half", _C.float16),
                       ("bfloat16", _C.bfloat16), ("long", _C.int64), ("int", _C.int32), ("short", _C.int16),
                       ("char", _C.int8), ("byte", _C.uint8), ("bool", _C.bool), ("cpu", "cpu")):
    _methods.define(_name, _cast_method(_name, _target))


def _complex_cast_method(name, target):
    def method(self, memory_format=preserve_format):
        return to(self, target, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``self.{name}()`` is ``self.to({target})``; ``memory_format`` as in :meth:`to`."
    return method


_methods.define("cfloat", _complex_cast_method("cfloat", _C.complex64))
_methods.define("cdouble", _complex_cast_method("cdouble", _C.complex128))

_orig_cuda = _methods.lookup("cuda")


def _cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
    """A copy on a CUDA device (``self`` when already there)."""
    r = _orig_cuda(self, device, non_blocking)
    if memory_format is preserve_format or memory_format is None:
        return r
    _check_type(memory_format, "cuda")
    return to(r, memory_format=memory_format)


_methods.define("cuda", _cuda)


# ----- factories ------------------------------------------------------------------


_FACTORY_KW = ("*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? requires_grad=False, "
               "bool? pin_memory=False")


@_args.signature("SymInt[] size, SymInt[] stride, " + _FACTORY_KW)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given ``size`` and ``stride``.

    The storage holds exactly the elements the strides reach.
    """
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    n = 0 if any(s == 0 for s in size) else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    base = _C.empty(n, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    r = base.as_strided(size, stride).detach()
    return r.requires_grad_() if requires_grad else r


@_args.signature("SymInt[] size, int[] physical_layout, " + _FACTORY_KW)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of shape ``size`` whose dims are laid out in memory in the order
    ``physical_layout`` (outermost first): ``(0, 2, 3, 1)`` gives channels-last for 4-d sizes.
    """
    size = tuple(int(s) for s in size)
    physical_layout = tuple(int(d) for d in physical_layout)
    if len(size) != len(physical_layout):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(physical_layout)}")
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    phys = _C.empty(*[size[d] for d in physical_layout], dtype=dtype, layout=layout, device=device,
                    pin_memory=pin_memory)
    inverse = [0] * len(size)
    for i, d in enumerate(physical_layout):
        inverse[d] = i
    r = phys.permute(inverse).detach()
    return r.requires_grad_() if requires_grad else r


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                       pin_memory=False):
    """An uninitialised tensor with ``size`` and ``stride``, of ``self``'s dtype and device by default."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, layout=layout,
                         device=self.device if device is None else device, requires_grad=requires_grad,
                         pin_memory=pin_memory)


_methods.define("new_empty_strided", _new_empty_strided)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """An uninitialised tensor of shape ``size`` laid out in ``memory_format`` (default row-major)."""
    if memory_format is None or memory_format is contiguous_format or out is not None:
        return _C.empty(*size, out=out, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                        pin_memory=pin_memory)
    _check_type(memory_format, "empty")
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    shape = tuple(int(s) for s in shape)
    return empty_strided(shape, _format_strides(shape, memory_format), dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def _like(orig):
    def factory(input, *args, memory_format=preserve_format, **kwargs):
        if memory_format is preserve_format or memory_format is None or not isinstance(input, _C.TensorBase):
            return orig(input, *args, **kwargs)
        _check_type(memory_format, orig.__name__)
        shape = tuple(input.shape)
        # The core's factories copy a dense input's strides, so an empty template in the wanted
        # layout gives the result that layout.
        template = empty_strided(shape, _format_strides(shape, memory_format), dtype=input.dtype)
        kwargs.setdefault("dtype", input.dtype)
        kwargs.setdefault("device", input.device)
        return orig(template, *args, **kwargs)

    factory.__name__ = factory.__qualname__ = orig.__name__
    factory.__doc__ = (orig.__doc__ or "") + "\n\n``memory_format`` (default ``torch.preserve_format``) picks the layout."
    return factory


empty_like = _like(_C.empty_like)
zeros_like = _like(_C.zeros_like)
ones_like = _like(_C.ones_like)
full_like = _like(_C.full_like)
rand_like = _like(_C.rand_like)
randn_like = _like(_C.randn_like)


_RANDINT_KW = ("*, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
               "bool? requires_grad=False, MemoryFormat? memory_format=None")


@_args.signature("Tensor input, Tensor high, " + _RANDINT_KW, "Tensor input, SymInt high, " + _RANDINT_KW,
                 "Tensor input, SymInt low, SymInt high, " + _RANDINT_KW)
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=preserve_format):
    r"""randint_like(input, low=0, high, \*, generator=None, dtype=None, layout=torch.strided, device=None, requires_grad=False, memory_format=torch.preserve_format) -> Tensor

    Random integers in ``[low, high)`` with the shape of ``input`` (and its dtype, device and
    layout unless given).
    """
    if high is None:
        low, high = 0, low
    if isinstance(high, _C.TensorBase):
        # The ``Tensor high`` overload: any one-element CPU tensor, its value truncated.
        if high.dim() != 0 or high.device.type != "cpu":
            raise RuntimeError("high must be a scalar tensor and on CPU")
        high = int(high.item())
    low, high = int(low), int(high)
    out = empty_like(input, dtype=dtype, layout=layout, device=device, memory_format=memory_format)
    if out.dtype == _C.bool and low < high:
        # random_'s range check for bool, which random_ itself (unbounded form) skips.
        from ._random_ops import _int_bound_error
        if not 0 <= low <= 1:
            raise _int_bound_error("from", out.dtype)
        if not 0 <= high - 1 <= 1:
            raise _int_bound_error("to - 1", out.dtype)
    out.random_(low, high, generator=generator)
    return out.requires_grad_() if requires_grad else out
