"""Yes/no questions about tensors (``is_nonzero``, ``is_same_size``,
``is_signed``, ``is_inference``, ``is_conj``, ``is_neg``, ``is_set_to``,
``isreal``, ...) and the conjugate/negative-bit resolvers. ``conj()`` of a
complex tensor sets the lazy conjugate bit (a view); ferrotorch keeps no
negative bit, so ``is_neg`` is always False and ``resolve_neg`` an identity.
"""

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = [
    "is_nonzero", "is_same_size", "is_signed", "is_inference", "is_conj", "is_neg", "is_complex",
    "resolve_conj", "resolve_neg", "isreal",
]


@_args.signature('Tensor input')
def is_nonzero(input):
    """True if the single-element tensor ``input`` is not zero (after type conversions)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


@_args.signature('Tensor input, Tensor other')
def is_same_size(input, other):
    """True if ``input`` and ``other`` have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


@_args.signature('Tensor input')
def is_signed(input):
    """True if ``input``'s dtype is a signed type (everything but ``uint8`` and ``bool``)."""
    return input.dtype not in (_C.uint8, _C.bool)


@_args.signature('Tensor input')
def is_inference(input):
    """True if ``input`` is an inference tensor. ``inference_mode`` in ferrotorch acts
    as ``no_grad`` and makes no inference tensors, so this is always False."""
    return False


@_args.signature('Tensor input')
def is_conj(input):
    """Returns True if the ``input`` is a conjugated tensor, i.e. its conjugate bit is set
    to `True` (``input.conj()`` of a complex tensor is such a view)."""
    return _C._is_conj(input)


@_args.signature('Tensor input')
def is_neg(input):
    """True if ``input``'s negative bit is set; never for real dtypes."""
    return False


@_args.signature('Tensor input')
def is_complex(input):
    """True if ``input``'s dtype is a complex type."""
    return input.is_complex()


@_args.signature('Tensor input')
def resolve_conj(input):
    """Returns a new tensor with materialized conjugation if ``input``'s conjugate bit is set
    to `True`, else returns ``input``. The output tensor will always have its conjugate bit
    set to `False`."""
    return _C._resolve_conj(input)


@_args.signature('Tensor input')
def resolve_neg(input):
    """Materialises a lazily negated tensor; a real tensor is returned as is."""
    return input


@_args.signature('Tensor input')
def isreal(input):
    """Elementwise: has the element a zero imaginary part (always, for real dtypes)?"""
    if input.is_complex():
        return _C._imag(input) == 0
    return _C.ones(input.shape, dtype=_C.bool, device=input.device)


def _is_set_to(self, tensor):
    """True if both tensors look at the same storage with the same offset, sizes and strides."""
    return (
        self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and tuple(self.stride()) == tuple(tensor.stride())
        and self.dtype == tensor.dtype
    )


def _is_view(self):
    """True if this tensor is a view of another (its ``_base`` is set)."""
    return self._base is not None


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (is_nonzero, is_same_size, is_signed, is_inference, is_conj, is_neg, resolve_conj, resolve_neg, isreal):
        if not _methods.defined(fn.__name__):
            _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))
    _methods.define("is_set_to", _is_set_to)
    _methods.define("_is_view", _is_view)


_declare_methods()
