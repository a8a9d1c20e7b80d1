"""``ferrotorch.Tensor``: the native ``_C.TensorBase`` plus the methods that the
package's modules declare in :mod:`._tensor_methods`.

``ferrotorch/__init__.py`` imports this module after every module that declares
Tensor methods, and before any module that subclasses ``Tensor``.
"""

from . import _tensor_methods

Tensor = _tensor_methods.build(
    "Tensor",
    """A multi-dimensional matrix of elements of a single data type, on a device.

    Construct one with :func:`ferrotorch.tensor` (or a factory such as
    :func:`ferrotorch.zeros`); ``Tensor(data)`` and ``Tensor(*sizes)`` are the legacy
    float32 constructors. Every tensor the library returns is of this class or of a
    subclass such as :class:`ferrotorch.nn.Parameter`.
    """,
)
