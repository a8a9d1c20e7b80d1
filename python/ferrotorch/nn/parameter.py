"""``nn.Parameter``: a tensor that a Module registers as learnable."""

from .. import _C
from .._tensor_class import Tensor


class Parameter(Tensor):
    """A tensor that requires grad by default and is registered by ``Module``."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        t = _C.TensorBase.__new__(cls, data.detach())
        t._register()
        t.requires_grad_(requires_grad)
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))


class _BufferMeta(type):
    # A Buffer is a plain tensor marked ``_is_buffer``, so isinstance must look at the mark.
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, _C.TensorBase) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    r"""A tensor that a :class:`Module` registers as a buffer when assigned as an attribute
    (``persistent=False`` keeps it out of ``state_dict``); it keeps ``requires_grad`` but no history."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t._is_buffer = True
        t.persistent = persistent
        return t


class UninitializedTensorMixin:
    """Shared behaviour of lazy parameters and buffers: no shape until ``materialize``."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        r"""Gives the tensor ``shape`` (uninitialised values) and turns it into ``cls_to_become``."""
        if isinstance(shape, int):
            shape = (shape,)
        wants_grad = Tensor.requires_grad.__get__(self)
        # resize_ refuses tensors that require grad; the flag is restored after.
        Tensor.requires_grad_(self, False)
        Tensor.resize_(self, tuple(shape))
        Tensor.requires_grad_(self, wants_grad)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self.__class__(Tensor.requires_grad.__get__(self), dtype=self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an uninitialised (lazy) parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    r"""A parameter of unknown shape, materialised by a lazy module's first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _C.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    r"""A buffer of unknown shape, materialised by a lazy module's first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _C.TensorBase.__new__(cls, _C.empty(0, device=device, dtype=dtype))
        t.requires_grad_(requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
