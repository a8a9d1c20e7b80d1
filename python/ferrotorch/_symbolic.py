"""The ``sym_*`` utilities and the ``SymInt``/``SymFloat``/``SymBool`` types.

PyTorch's tracers (``torch.compile``, ``torch.export``) pass symbolic sizes
through model code as ``SymInt``/``SymFloat``/``SymBool``, and the ``sym_*``
functions let that code compute with sizes without branching on them. In
eager code (all ferrotorch runs) the arguments are plain Python numbers and
the functions compute PyTorch's eager results: ``sym_max(1, 2.0)`` is
``2.0`` (a float operand promotes, unlike ``max``), ``sym_ite`` insists on a
bool condition, ``sym_constrain_range`` checks the value.

The three types exist so ``isinstance`` checks in portable code see them. A
``Sym*`` wraps a *node* (PyTorch's ``SymNode`` protocol); it delegates its
conversions and the ``sym_*`` hooks to that node, so objects built by other
tracing code interoperate. Eager values are never wrapped.
"""

import builtins
import math
import numbers

from . import _args
from . import _C

__all__ = [
    "SymInt", "SymFloat", "SymBool", "sym_max", "sym_min", "sym_not", "sym_float", "sym_int", "sym_sqrt",
    "sym_sum", "sym_ite", "sym_fresh_size", "sym_constrain_range", "sym_constrain_range_for_size",
]

_INT64_MAX = 2 ** 63 - 1


class _SymBase:
    """A symbolic value over a ``node`` implementing PyTorch's ``SymNode`` methods
    (``guard_int``/``guard_float``/``guard_bool``, ``str``, ``sym_max``, ...)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return self.node._graph_repr() if hasattr(self.node, "_graph_repr") else self.node.str()

    def __str__(self):
        return self.node.str()

    def _unary(self, method, *args):
        return type(self)(getattr(self.node, method)(*args))


def _wrap(node):
    """A node's value as the Sym type of its kind (as PyTorch's ``wrap_node``)."""
    if node.is_bool():
        return SymBool(node)
    if node.is_float():
        return SymFloat(node)
    return SymInt(node)


def _node_of(self, other):
    # The other operand as a node of ``self``'s graph: plain numbers are wrapped by the node.
    return other.node if isinstance(other, _SymBase) else self.node.wrap_int(other) \
        if isinstance(other, int) and not isinstance(other, bool) else self.node.wrap_float(other) \
        if isinstance(other, float) else self.node.wrap_bool(other)


class SymInt(_SymBase):
    """An integer whose value a tracer tracks symbolically (PyTorch's ``torch.SymInt``).

    ``int(s)`` (and indexing with it) specialises the value through the node's
    ``guard_int``. Eager code never holds one: ``isinstance(3, torch.SymInt)`` is False.
    """

    __slots__ = ()

    def __int__(self):
        return self.node.guard_int("", 0)

    def __index__(self):
        return self.node.guard_int("", 0)

    def __float__(self):
        return float(self.node.guard_int("", 0))

    def __bool__(self):
        return bool(self.node.guard_int("", 0))

    def __sym_max__(self, other):
        return _wrap(self.node.sym_max(_node_of(self, other)))

    def __sym_min__(self, other):
        return _wrap(self.node.sym_min(_node_of(self, other)))

    def __sym_float__(self):
        return SymFloat(self.node.sym_float())


class SymFloat(_SymBase):
    """A float whose value a tracer tracks symbolically (PyTorch's ``torch.SymFloat``)."""

    __slots__ = ()

    def __float__(self):
        return self.node.guard_float("", 0)

    def __bool__(self):
        return bool(self.node.guard_float("", 0))

    def __trunc__(self):
        return SymInt(self.node.sym_int())

    def __sym_max__(self, other):
        return _wrap(self.node.sym_max(_node_of(self, other)))

    def __sym_min__(self, other):
        return _wrap(self.node.sym_min(_node_of(self, other)))


class SymBool(_SymBase):
    """A bool whose value a tracer tracks symbolically (PyTorch's ``torch.SymBool``)."""

    __slots__ = ()

    def __bool__(self):
        return self.node.guard_bool("", 0)

    def __sym_not__(self):
        return SymBool(self.node.sym_not())

    def __sym_ite__(self, then_val, else_val):
        return _wrap(self.node.sym_ite(_node_of(self, then_val), _node_of(self, else_val)))


def _is_number(v):
    # ``sym_max``/``sym_min`` accept Python and NumPy ints and floats (bool is an int).
    return isinstance(v, (int, float)) or type(v).__module__ == "numpy" and isinstance(v, numbers.Real)


def _number_types():
    try:
        import numpy as np
        return (np.integer, np.floating, int, float)
    except ImportError:
        return (int, float)


def _check_number(v):
    if not _is_number(v):
        raise AssertionError(f"expected {_number_types()}, got {type(v)}")


def _is_float(v):
    return isinstance(v, float) or type(v).__module__ == "numpy" and isinstance(v, numbers.Real) \
        and not isinstance(v, numbers.Integral)


def _minmax(a, b, pick, hook):
    if isinstance(a, (SymInt, SymFloat)):
        return getattr(a, hook)(b)
    if isinstance(b, (SymInt, SymFloat)):
        # max/min with promotion is commutative, so the symbolic operand leads.
        return getattr(b, hook)(a)
    _check_number(a)
    _check_number(b)
    r = pick(a, b)
    return builtins.float(r) if _is_float(a) or _is_float(b) else r


def sym_max(a, b):
    """SymInt-aware utility for max which avoids branching on a < b.
    Unlike builtins.max(), this only works for int/float, and it always
    promotes to float if any argument is float (unlike builtins.max, which
    will faithfully preserve the type of the input argument).
    """
    return _minmax(a, b, builtins.max, "__sym_max__")


def sym_min(a, b):
    """SymInt-aware utility for min(): the smaller of two ints/floats, a float
    if either is a float (see :func:`sym_max`)."""
    return _minmax(a, b, builtins.min, "__sym_min__")


def sym_not(a):
    r"""SymInt-aware utility for logical negation.

    Args:
        a (SymBool or bool): Object to negate
    """
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_float(a):
    r"""SymInt-aware utility for float casting.

    Args:
        a (SymInt, SymFloat, or object): Object to cast
    """
    if isinstance(a, SymFloat):
        return a
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a):
    r"""SymInt-aware utility for int casting.

    Args:
        a (SymInt, SymFloat, or object): Object to cast
    """
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


def sym_sqrt(a):
    r"""SymInt-aware square root: ``math.sqrt(a)`` for plain numbers (a float;
    a negative number raises ``ValueError``), the node's ``sym_sqrt`` for a ``Sym*``."""
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_sum(*args):
    """
    N-ary add which is faster to compute for long lists than iterated binary
    addition.  Only does something special for integers.

    Accepts both ``sym_sum([a, b, c])`` and ``sym_sum(a, b, c)``.
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    node = next((a.node for a in args if isinstance(a, SymInt)), None)
    if node is None or not all(isinstance(a, (SymInt, int)) for a in args):
        return builtins.sum(args)
    return _wrap(node.sym_sum(tuple(_node_of(SymInt(node), a) for a in args)))


def sym_ite(b, t, f):
    """SymInt-aware utility for ternary operator (``t if b else f``.)"""
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    if isinstance(b, SymBool):
        return b.__sym_ite__(t, f)
    return t if b else f


def sym_fresh_size(expr):
    """A size a tracer must treat as a new unbacked symbol; in eager code, the
    value of ``expr`` (a number, or a one-element tensor) as a Python number."""
    if isinstance(expr, _C.TensorBase):
        return expr.detach().clone().item()
    from . import tensor
    return tensor(expr).item()


def _constrain(fn, size, lo, hi):
    # ``size`` is a Scalar converted to int64 as PyTorch's kernel does; the bounds are ``int?``.
    if isinstance(size, _SymBase):
        v = size.node.guard_int("", 0)
    else:
        v = builtins.int(_args.number(size, fn, "size", 1))
    for name, bound in (("min", lo), ("max", hi)):
        if isinstance(bound, bool) or not isinstance(bound, numbers.Integral):
            raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(bound).__name__}")
    if not lo <= v <= hi:
        raise RuntimeError(f"Invalid value range for {v} between [{lo}, {hi}].")


def sym_constrain_range(size, *, min=None, max=None):
    """Asserts that ``size`` lies in ``[min, max]`` (each bound optional). Tracers
    record it as a constraint on the symbol; eager code checks the value and
    raises ``RuntimeError`` outside the range."""
    _constrain("sym_constrain_range", size, -_INT64_MAX - 1 if min is None else min,
               _INT64_MAX if max is None else max)


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """As :func:`sym_constrain_range` for a value used as a size: ``min``
    defaults to 0 (a size is never negative) and ``max`` to the int64 maximum."""
    _constrain("sym_constrain_range_for_size", size, 0 if min is None else min, _INT64_MAX if max is None else max)
