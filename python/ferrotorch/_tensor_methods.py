"""The table of ``ferrotorch.Tensor``'s Python-implemented methods.

``ferrotorch.Tensor`` is the one Python subclass of the native
``_C.TensorBase``, as PyTorch's ``torch.Tensor`` is of ``torch._C.TensorBase``.
The native class holds the metadata, views and hot operators; methods that are
clearer in Python are declared here, by the module that implements them, while
the package is imported. ``_tensor.py`` then builds the class once from this
table (:func:`namespace`), so no class is modified after it exists.

A later declaration of a name replaces an earlier one; ``ferrotorch/__init__.py``
imports the declaring modules in a fixed order, and a module that wraps an
existing method reads it with :func:`lookup` before declaring its own.
"""

from . import _C

_table = {}
_cls = None


def define(name, value):
    """Declares ``value`` (a function, property or other descriptor) as ``Tensor.<name>``;
    returns ``value`` so that one value can be declared under several names."""
    if _cls is not None:
        raise RuntimeError(f"ferrotorch.Tensor is already built; cannot declare Tensor.{name}")
    _table[name] = value
    return value


def lookup(name):
    """The ``Tensor.<name>`` declared so far (the latest declaration, else the native
    ``TensorBase`` attribute), for a module that wraps it while the package is imported;
    once the class is built, use ``ferrotorch.Tensor`` itself."""
    if _cls is not None:
        raise RuntimeError(f"ferrotorch.Tensor is already built; read Tensor.{name} from it")
    if name in _table:
        return _table[name]
    return getattr(_C.TensorBase, name)


def defined(name):
    """Whether ``Tensor.<name>`` exists natively or has been declared."""
    return name in _table or name in _C.TensorBase.__dict__


def build(name, doc):
    """Creates the ``Tensor`` class from the declarations and registers it with the
    native layer, which from then on gives every tensor this class."""
    global _cls
    if _cls is not None:
        raise RuntimeError("ferrotorch.Tensor is already built")
    body = dict(_table)
    body.update({"__module__": "ferrotorch", "__qualname__": name, "__doc__": doc})
    cls = type(name, (_C.TensorBase,), body)
    _C._set_tensor_class(cls)
    _cls = cls
    _table.clear()
    return cls
