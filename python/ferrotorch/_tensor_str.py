r"""Pure-Python tensor formatting that reproduces PyTorch's ``repr(tensor)``.

This module is a dependency-free port of ``torch/_tensor_str.py`` (PyTorch
2.13).  It does not import :mod:`torch`; it works on any *duck-typed* tensor
object ``t`` that provides:

* ``t.dim()``, ``t.shape`` (tuple-like of ints) and ``t.numel()``
* ``t.dtype`` -- an object whose ``str()`` is like ``'torch.float32'`` and that
  has a boolean ``is_floating_point`` attribute (an optional ``is_complex``
  attribute is honoured when present)
* ``t.device`` -- an object whose ``str()`` is like ``'cpu'`` or ``'cuda:0'``
  and that has a ``type`` attribute (a plain string is accepted as well)
* ``t.requires_grad``, ``t.is_leaf`` and ``t.grad_fn`` (``None`` or an object
  with a ``name()`` method returning e.g. ``'AddBackward0'``)
* ``t.tolist()``, integer indexing ``t[i]`` and slicing ``t[:k]`` / ``t[-k:]``
  along dimension 0, and ``t.detach()``

Summarized tensors (more than ``threshold`` elements) are never converted to
Python lists as a whole: only the edge items are sliced out first, exactly as
PyTorch's ``get_summarized_data`` does, so printing huge tensors is cheap.

The public entry points are :func:`tensor_repr` (what ``Tensor.__repr__``
returns), :func:`set_printoptions`, :func:`get_printoptions` and the
:func:`printoptions` context manager.
"""

import contextlib
import dataclasses
import math
from typing import Any, Callable, Dict, List, Optional

__all__ = [
    "tensor_repr",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
]

inf = math.inf

#: Optional hook returning the current default floating point dtype.  When it
#: is ``None`` the default is assumed to be ``torch.float32``.  The returned
#: object is compared through ``str()`` (e.g. ``'torch.float64'``).
_default_dtype_getter: Optional[Callable[[], Any]] = None


@dataclasses.dataclass
class __PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = __PrinterOptions()


# We could use **kwargs, but this will give better docs
def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    r"""Set options for printing. Items shamelessly taken from NumPy

    Args:
        precision: Number of digits of precision for floating point output
            (default = 4).
        threshold: Total number of array elements which trigger summarization
            rather than full `repr` (default = 1000).
        edgeitems: Number of array items in summary at beginning and end of
            each dimension (default = 3).
        linewidth: The number of characters per line for the purpose of
            inserting line breaks (default = 80). Thresholded matrices will
            ignore this parameter.
        profile: Sane defaults for pretty printing. Can override with any of
            the above options. (any one of `default`, `short`, `full`)
        sci_mode: Enable (True) or disable (False) scientific notation. If
            None (default) is specified, the value is defined by
            `ferrotorch._tensor_str._Formatter`. This value is automatically
            chosen by the framework.

    Example::

        >>> # Limit the precision of elements
        >>> ferrotorch.set_printoptions(precision=2)
        >>> ferrotorch.tensor([1.12345])
        tensor([1.12])
        >>> # Limit the number of elements shown
        >>> ferrotorch.set_printoptions(threshold=5)
        >>> ferrotorch.arange(10)
        tensor([0, 1, 2, ..., 7, 8, 9])
        >>> # Restore defaults
        >>> ferrotorch.set_printoptions(profile='default')
        >>> ferrotorch.tensor([1.12345])
        tensor([1.1235])
        >>> ferrotorch.arange(10)
        tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])

    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> Dict[str, Any]:
    r"""Gets the current options for printing, as a dictionary that
    can be passed as ``**kwargs`` to set_printoptions().
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    r"""Context manager that temporarily changes the print options.  Accepted
    arguments are same as :func:`set_printoptions`."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


# ---------------------------------------------------------------------------
# dtype / device helpers (duck-typed)
# ---------------------------------------------------------------------------


def _default_dtype_str() -> str:
    getter = _default_dtype_getter
    if getter is None:
        return "torch.float32"
    return str(getter())


def _is_complex_dtype(dtype) -> bool:
    flag = getattr(dtype, "is_complex", None)
    if isinstance(flag, bool):
        return flag
    return "complex" in str(dtype)


def _is_floating_dtype(dtype) -> bool:
    return bool(getattr(dtype, "is_floating_point", False))


def _device_type(device) -> str:
    dtype = getattr(device, "type", None)
    if isinstance(dtype, str):
        return dtype
    return str(device).split(":", 1)[0]


# ---------------------------------------------------------------------------
# Data extraction
# ---------------------------------------------------------------------------


class _Ellipsis:
    """Sentinel marking the elided middle of a summarized dimension."""

    __slots__ = ()

    def __repr__(self):
        return "..."


_ELLIPSIS = _Ellipsis()


def _leaf_converter(dtype) -> Callable[[Any], Any]:
    if _is_complex_dtype(dtype):
        return complex
    if _is_floating_dtype(dtype):
        return float
    if str(dtype) == "torch.bool":
        return bool
    return int


def _convert(data, dim: int, conv: Callable[[Any], Any]):
    """Normalise the leaves of a nested list (from ``tolist()``) with ``conv``."""
    if dim == 0:
        return conv(data)
    if dim == 1:
        return [x if x is _ELLIPSIS else conv(x) for x in data]
    return [x if x is _ELLIPSIS else _convert(x, dim - 1, conv) for x in data]


def _summarized_data(t, shape, edgeitems: int):
    """Nested-list equivalent of PyTorch's ``get_summarized_data``.

    Every dimension longer than ``2 * edgeitems`` keeps only its first and last
    ``edgeitems`` entries, with an :data:`_ELLIPSIS` sentinel in between.  Only
    these edge slices are ever converted with ``tolist()``.
    """
    dim = len(shape)
    if dim == 0 or all(s <= 2 * edgeitems for s in shape):
        return t.tolist()
    n = shape[0]
    if dim == 1:
        return t[:edgeitems].tolist() + [_ELLIPSIS] + t[-edgeitems:].tolist()
    sub_shape = shape[1:]
    if n > 2 * edgeitems:
        head = [_summarized_data(t[i], sub_shape, edgeitems) for i in range(edgeitems)]
        tail = [
            _summarized_data(t[i], sub_shape, edgeitems)
            for i in range(n - edgeitems, n)
        ]
        return head + [_ELLIPSIS] + tail
    return [_summarized_data(t[i], sub_shape, edgeitems) for i in range(n)]


def _flatten(data, dim: int, out: List[Any]) -> List[Any]:
    if dim == 0:
        out.append(data)
    elif dim == 1:
        out.extend(x for x in data if x is not _ELLIPSIS)
    else:
        for x in data:
            if x is not _ELLIPSIS:
                _flatten(x, dim - 1, out)
    return out


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------


class _Formatter:
    r"""Chooses a common width and notation for a collection of values.

    Mirrors ``torch._tensor_str._Formatter``, but is constructed from the
    (possibly summarized) flat list of Python scalars instead of a tensor.

    Args:
        values: flat list of Python scalars (``float`` for floating dtypes,
            ``int``/``bool`` otherwise).
        floating_dtype (bool): whether the values come from a floating point
            tensor.
    """

    def __init__(self, values, floating_dtype):
        self.floating_dtype = floating_dtype
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        if not self.floating_dtype:
            for value in values:
                value_str = f"{value}"
                self.max_width = max(self.max_width, len(value_str))
            return

        nonzero_finite_vals = [v for v in values if math.isfinite(v) and v != 0]
        if len(nonzero_finite_vals) == 0:
            # no valid number, do nothing
            return

        nonzero_finite_abs = [abs(v) for v in nonzero_finite_vals]
        nonzero_finite_min = min(nonzero_finite_abs)
        nonzero_finite_max = max(nonzero_finite_abs)

        for value in nonzero_finite_vals:
            if value != math.ceil(value):
                self.int_mode = False
                break

        self.sci_mode = (
            nonzero_finite_max / nonzero_finite_min > 1000.0
            or nonzero_finite_max > 1.0e8
            or nonzero_finite_min < 1.0e-4
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )

        if self.int_mode:
            # in int_mode for floats, all numbers are integers, and we append a
            # decimal to nonfinites to indicate that the tensor is of floating
            # type. add 1 to the len to account for this.
            if self.sci_mode:
                for value in nonzero_finite_vals:
                    value_str = f"{{:.{PRINT_OPTS.precision}e}}".format(value)
                    self.max_width = max(self.max_width, len(value_str))
            else:
                for value in nonzero_finite_vals:
                    value_str = f"{value:.0f}"
                    self.max_width = max(self.max_width, len(value_str) + 1)
        else:
            # Check if scientific representation should be used.
            if self.sci_mode:
                for value in nonzero_finite_vals:
                    value_str = f"{{:.{PRINT_OPTS.precision}e}}".format(value)
                    self.max_width = max(self.max_width, len(value_str))
            else:
                for value in nonzero_finite_vals:
                    value_str = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
                    self.max_width = max(self.max_width, len(value_str))

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _val_str(val, formatter1, formatter2=None):
    if formatter2 is not None:
        real_str = formatter1.format(val.real)
        imag_str = (formatter2.format(val.imag) + "j").lstrip()
        # handles negative numbers, +0.0, -0.0
        if imag_str[0] == "+" or imag_str[0] == "-":
            return real_str + imag_str
        else:
            return real_str + "+" + imag_str
    return formatter1.format(val)


def _vector_str(data, indent, summarize, formatter1, formatter2=None):
    # length includes spaces and comma between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        # width for imag_formatter + an extra j for complex
        element_length += formatter2.width() + 1

    elements_per_line = max(
        1, math.floor((PRINT_OPTS.linewidth - indent) / (element_length))
    )

    if summarize and not PRINT_OPTS.edgeitems:
        strs = ["..."]
    else:
        strs = [
            " ..." if val is _ELLIPSIS else _val_str(val, formatter1, formatter2)
            for val in data
        ]

    data_lines = [
        strs[i : i + elements_per_line] for i in range(0, len(strs), elements_per_line)
    ]
    lines = [", ".join(line) for line in data_lines]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(data, dim, indent, summarize, formatter1, formatter2=None):
    if dim == 0:
        return _val_str(data, formatter1, formatter2)

    if dim == 1:
        return _vector_str(data, indent, summarize, formatter1, formatter2)

    if summarize and not PRINT_OPTS.edgeitems:
        slices = ["..."]
    else:
        slices = [
            "..."
            if row is _ELLIPSIS
            else _tensor_str_with_formatter(
                row, dim - 1, indent + 1, summarize, formatter1, formatter2
            )
            for row in data
        ]

    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _tensor_str(self, indent, shape=None):
    r"""Format the contents (without ``tensor(`` and suffixes) of ``self``."""
    if shape is None:
        shape = tuple(int(s) for s in self.shape)
    dim = len(shape)
    numel = int(self.numel())
    if numel == 0:
        return "[]"

    summarize = numel > PRINT_OPTS.threshold
    edgeitems = PRINT_OPTS.edgeitems

    if summarize and not edgeitems and dim > 0:
        # Nothing but an ellipsis is shown; the formatter is irrelevant.
        return "[...]"

    if summarize:
        raw = _summarized_data(self, shape, edgeitems)
    else:
        raw = self.tolist()

    dtype = self.dtype
    data = _convert(raw, dim, _leaf_converter(dtype))
    flat = _flatten(data, dim, [])

    if _is_complex_dtype(dtype):
        real_formatter = _Formatter([v.real for v in flat], True)
        imag_formatter = _Formatter([v.imag for v in flat], True)
        return _tensor_str_with_formatter(
            data, dim, indent, summarize, real_formatter, imag_formatter
        )
    formatter = _Formatter(flat, _is_floating_dtype(dtype))
    return _tensor_str_with_formatter(data, dim, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline):
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def _grad_fn_name(inp) -> Optional[str]:
    try:
        grad_fn = inp.grad_fn
    except RuntimeError:
        return "Invalid"
    if grad_fn is None:
        return None
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    if isinstance(name, str):
        return name.rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def tensor_repr(inp) -> str:
    r"""Return the PyTorch-style ``repr`` of a tensor.

    This is what ``Tensor.__repr__`` (and ``Tensor.__str__``) return, e.g.
    ``tensor([1., 2.], dtype=torch.float64, requires_grad=True)``.  The
    formatting honours the options set with :func:`set_printoptions`.

    Args:
        inp: a tensor-like object (see the module docstring for the duck-typed
            interface it must provide).

    Example::

        >>> tensor_repr(ferrotorch.tensor([[1.0, 2.5], [3.0, 4.0]]))
        'tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]])'
    """
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []

    self = inp.detach() if hasattr(inp, "detach") else inp
    shape = tuple(int(s) for s in self.shape)
    dtype_str = str(self.dtype)
    default_dtype = _default_dtype_str()

    # Note [Print tensor device]: only print the device when it is not the
    # default (CPU) device.
    device = self.device
    device_type = _device_type(device)
    if device_type != "cpu":
        suffixes.append("device='" + str(device) + "'")

    default_complex_dtype = (
        "torch.complex128" if default_dtype == "torch.float64" else "torch.complex64"
    )
    has_default_dtype = dtype_str in (
        default_dtype,
        default_complex_dtype,
        "torch.int64",
        "torch.bool",
    )

    if device_type == "meta":
        suffixes.append("size=" + str(shape))
        if dtype_str != default_dtype:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = "..."
    elif int(self.numel()) == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if len(shape) != 1:
            suffixes.append("size=" + str(shape))
        # In an empty tensor, there are no elements to infer if the dtype
        # should be int64, so it must be shown explicitly.
        if dtype_str != default_dtype:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + dtype_str)
        tensor_str = _tensor_str(self, indent, shape)

    grad_fn_name = _grad_fn_name(inp)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif getattr(inp, "requires_grad", False):
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=False)


#: Alias matching ``torch._tensor_str._str``.
_str = tensor_repr
