"""Complex tensors: views of their parts (``view_as_real``, ``view_as_complex``,
``real``, ``imag`` and their ``_copy`` forms), building them from parts
(``complex``, ``polar``) and conjugation (``conj``, ``conj_physical``,
``resolve_conj``, ``is_conj``).

``conj()`` is lazy, as in PyTorch: for a complex tensor it returns a view
sharing storage and version counter with the conjugate bit flipped
(``is_conj()``); every op reading it sees the conjugated values, writes into it
store their conjugates in the base, and ``resolve_conj()``/``conj_physical()``
materialise it. ferrotorch keeps no negative bit, so ``x.conj().imag`` is a new
tensor of the negated parts where PyTorch gives a negative-bit view.
"""

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _write_out

__all__ = [
    "view_as_real", "view_as_complex", "view_as_real_copy", "view_as_complex_copy", "real", "imag",
    "conj", "conj_physical", "conj_physical_", "complex", "polar",
]


@_args.signature('Tensor input')
def view_as_real(input):
    """A view of the complex tensor ``input`` as real numbers: its shape gains a last
    dimension of size 2 holding the real and imaginary parts."""
    return _C._view_as_real(input)


@_args.signature('Tensor input')
def view_as_complex(input):
    """A view of the float32/float64 tensor ``input``, whose last dimension has size 2 and
    stride 1, as complex numbers (``complex64``/``complex128``)."""
    return _C._view_as_complex(input)


@_args.signature('Tensor input, *, Tensor out=None')
def view_as_real_copy(input, *, out=None):
    """Performs the same operation as :func:`ferrotorch.view_as_real`, but all output tensors
    are freshly created instead of aliasing the input."""
    return _write_out(_C._view_as_real(input.resolve_conj()).clone(), out)


@_args.signature('Tensor input, *, Tensor out=None')
def view_as_complex_copy(input, *, out=None):
    """Performs the same operation as :func:`ferrotorch.view_as_complex`, but all output tensors
    are freshly created instead of aliasing the input."""
    return _write_out(_C._view_as_complex(input).clone(), out)


@_args.signature('Tensor input')
def real(input):
    """The real parts of ``input``: a view for a complex tensor, ``input`` itself for a real one."""
    return _C._real(input)


@_args.signature('Tensor input')
def imag(input):
    """A view of the imaginary parts of the complex tensor ``input``."""
    return _C._imag(input)


@_args.signature('Tensor input')
def conj(input):
    """Returns a view of ``input`` with a flipped conjugate bit. If ``input`` has a
    non-complex dtype, this function just returns ``input``.

    .. note:: The conjugation is lazy: the view shares storage with ``input``, and
        :func:`ferrotorch.resolve_conj` (or :func:`ferrotorch.conj_physical`)
        materialises it."""
    return _C._conj(input, False)


@_args.signature('Tensor input, *, Tensor out=None')
def conj_physical(input, *, out=None):
    """The elementwise complex conjugate of ``input`` (``input`` itself for a real tensor)."""
    return _write_out(_C._conj(input, True), out)


@_args.signature('Tensor input')
def conj_physical_(input):
    """In-place :func:`conj_physical`: the elements of ``input`` are replaced by their
    conjugates (written through a conjugate view to its base)."""
    if input.is_complex():
        input.copy_(_C._conj(input, True))
    return input


@_args.signature('Tensor real, Tensor imag, *, Tensor out=None')
def complex(real, imag, *, out=None):  # noqa: A001 - PyTorch's name
    """A complex tensor with real part ``real`` and imaginary part ``imag`` (float32 parts
    make ``complex64``, float64 parts ``complex128``); the parts broadcast together."""
    return _write_out(_C._complex(real, imag), out)


@_args.signature('Tensor abs, Tensor angle, *, Tensor out=None')
def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's parameter name
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``, from absolute values
    and angles (float32 or float64, of one dtype)."""
    return _write_out(_C._polar(abs, angle), out)


def _set_part(which):
    def setter(self, value):
        if which == "real":
            _C._real(self).copy_(value)
        elif self.is_conj():
            # The stored imaginary parts are the negated visible ones.
            _C._imag(_C._conj(self, False)).copy_(-value)
        else:
            _C._imag(self).copy_(value)

    return setter


def _declare_methods():
    _methods.define("real", property(
        lambda self: _C._real(self), _set_part("real"),
        doc="The real parts: a view of a complex tensor, the tensor itself for a real one.",
    ))
    _methods.define("imag", property(
        lambda self: _C._imag(self), _set_part("imag"),
        doc="A view of the imaginary parts of a complex tensor.",
    ))

    def conj_m(self):
        """A view with a flipped conjugate bit (the tensor itself for real dtypes);
        see :func:`ferrotorch.conj`."""
        return _C._conj(self, False)

    def conj_physical_m(self):
        """The elementwise complex conjugate (the tensor itself for real dtypes)."""
        return _C._conj(self, True)

    def conj_physical__m(self):
        """In-place :meth:`conj_physical`."""
        return conj_physical_(self)

    _methods.define("conj", conj_m)
    _methods.define("conj_physical", conj_physical_m)
    _methods.define("conj_physical_", conj_physical__m)


_declare_methods()
