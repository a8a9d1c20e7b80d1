"""The Python half of ``ferrotorch.Tensor``: printing, iteration and the
typed-storage view. Hot methods live in Rust (``_C.TensorBase``); what is here is
clearer in Python and never on a per-element path.
"""

from . import _C, _tensor_str
from . import _tensor_methods as _methods
from . import _tensor_copy  # noqa: F401  (deepcopy and pickle support)


class TypedStorage:
    """A typed view of a tensor's storage (``tensor.storage()``), indexable by element."""

    __slots__ = ("_untyped", "dtype", "_flat")

    def __init__(self, tensor):
        self._untyped = tensor.untyped_storage()
        self.dtype = tensor.dtype
        n = self._untyped.nbytes() // tensor.element_size()
        self._flat = tensor.as_strided((n,), (1,), 0)

    def data_ptr(self):
        """Address of the first element."""
        return self._untyped.data_ptr()

    def size(self):
        """Number of elements."""
        return self._flat.numel()

    __len__ = size

    def nbytes(self):
        """Size in bytes."""
        return self._untyped.nbytes()

    def element_size(self):
        """Bytes per element."""
        return self._flat.element_size()

    def untyped(self):
        """The untyped storage."""
        return self._untyped

    @property
    def device(self):
        return self._untyped.device

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._flat[i].tolist()
        return self._flat[i].item()

    def __setitem__(self, i, v):
        self._flat[i] = v

    def tolist(self):
        """Every element as a Python list."""
        return self._flat.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[ferrotorch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"


def _storage(self):
    """The tensor's storage as a :class:`TypedStorage`."""
    return TypedStorage(self)


def _repr(self, *, tensor_contents=None):
    return _tensor_str.tensor_repr(self)


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _format(self, format_spec):
    if self.dim() == 0:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


def _reversed(self):
    if self.dim() == 0:
        return self
    return self.flip(0)


def _contains(self, element):
    return bool((self == element).sum().item() > 0)


def _array_wrap(self, array):
    return _C.from_numpy(array)


_methods.define("storage", _storage)
_methods.define("__repr__", _repr)
_methods.define("__str__", _repr)
_methods.define("__iter__", _iter)
_methods.define("__format__", _format)
_methods.define("__reversed__", _reversed)
_methods.define("__contains__", _contains)
_methods.define("__array_priority__", 1000)
_methods.define("is_tensor_like", True)


def _default_dtype():
    return _C.get_default_dtype()


_tensor_str._default_dtype_getter = _default_dtype


def _get_device(self):
    """Device index for CUDA tensors, -1 for CPU tensors."""
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


_methods.define("get_device", _get_device)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor w.r.t. graph leaves (see ``torch.autograd.backward``)."""
    _C._run_backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


def _register_hook(self, hook):
    """Registers ``hook(grad)`` run when the gradient of this tensor is computed."""
    return _C._tensor_register_hook(self, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """Registers ``hook(tensor)`` run after ``.grad`` of this leaf was updated."""
    return _C._tensor_register_post_accumulate_hook(self, hook)


def _retain_grad(self):
    """Makes this non-leaf tensor keep its ``.grad`` after backward."""
    _C._tensor_retain_grad(self)


def _detach_(self):
    """Detaches this tensor from the graph in place."""
    _C._detach_(self)
    return self



_methods.define("backward", _backward)
_methods.define("register_hook", _register_hook)
_methods.define("register_post_accumulate_grad_hook", _register_post_accumulate_grad_hook)
_methods.define("retain_grad", _retain_grad)
_methods.define("detach_", _detach_)
