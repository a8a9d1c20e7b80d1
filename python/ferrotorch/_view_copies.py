"""The ``*_copy`` forms of the view ops (a view op whose result owns fresh,
contiguous memory) and the ``*_scatter`` ops (their functional inverses: a copy
of ``input`` with ``src`` embedded where the view would look).

The scatters write through a view of a clone, so autograd records the write
(``CopySlices``) and ``src`` and ``input`` both receive gradients.
"""

from . import _args
from . import _tensor_methods as _methods
from ._math_ops import _write_out

__all__ = [
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
    "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
    "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
    "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter", "slice_inverse",
]


def _own(view):
    # contiguous() copies a strided view but aliases a contiguous one, which then needs a clone
    return view.clone() if view.is_contiguous() else view.contiguous()


def _copy_of(name, op, doc_name, *schemas):
    def fn(input, *args, out=None, **kwargs):
        res = op(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):
            if out is not None:
                raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
            return tuple(_own(r) for r in res)
        return _write_out(_own(res), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Performs the same operation as :func:`ferrotorch.{doc_name}`, but all output tensors\n"
        "are freshly created instead of aliasing the input."
    )
    return _args.signature(*schemas)(fn)


def _slice(input, dim=0, start=None, end=None, step=1):
    idx = [slice(None)] * input.dim()
    idx[dim] = slice(start, end, step)
    return input[tuple(idx)]


def _split_with_sizes(x, split_sizes, dim=0):
    from ._stacking import split_with_sizes
    return split_with_sizes(x, split_sizes, dim)


_OUT = "*, Tensor? out=None"
alias_copy = _copy_of("alias_copy", lambda x: x, "alias", f"Tensor input, {_OUT}")
as_strided_copy = _copy_of(
    "as_strided_copy", lambda x, size, stride, storage_offset=None: x.as_strided(size, stride, storage_offset),
    "as_strided", f"Tensor input, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, {_OUT}")
detach_copy = _copy_of("detach_copy", lambda x: x.detach(), "detach", f"Tensor input, {_OUT}")
diagonal_copy = _copy_of(
    "diagonal_copy", lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2), "diagonal",
    f"Tensor input, int offset=0, int dim1=0, int dim2=1, {_OUT}")
expand_copy = _copy_of("expand_copy", lambda x, size, *, implicit=False: x.expand(*size), "Tensor.expand",
                       "Tensor input, SymInt[] size, *, bool implicit=False, Tensor? out=None")
permute_copy = _copy_of("permute_copy", lambda x, dims: x.permute(*dims), "permute", f"Tensor input, int[] dims, {_OUT}")
select_copy = _copy_of("select_copy", lambda x, dim, index: x.select(dim, index), "select",
                       f"Tensor input, int dim, SymInt index, {_OUT}")
slice_copy = _copy_of("slice_copy", _slice, "slice",
                      f"Tensor input, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, {_OUT}")
split_copy = _copy_of("split_copy", lambda x, split_size, dim=0: x.split(split_size, dim), "split",
                      "Tensor input, SymInt split_size, int dim=0, *, Any out=None")
split_with_sizes_copy = _copy_of("split_with_sizes_copy", _split_with_sizes, "split_with_sizes",
                                 "Tensor input, SymInt[] split_sizes, int dim=0, *, Any out=None")
squeeze_copy = _copy_of("squeeze_copy", lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim), "squeeze",
                        f"Tensor input, {_OUT}", f"Tensor input, int dim, {_OUT}", f"Tensor input, int[] dim, {_OUT}")
t_copy = _copy_of("t_copy", lambda x: x.t(), "t", f"Tensor input, {_OUT}")
transpose_copy = _copy_of("transpose_copy", lambda x, dim0, dim1: x.transpose(dim0, dim1), "transpose",
                          f"Tensor input, int dim0, int dim1, {_OUT}")
unbind_copy = _copy_of("unbind_copy", lambda x, dim=0: x.unbind(dim), "unbind", "Tensor input, int dim=0, *, Any out=None")
unfold_copy = _copy_of("unfold_copy", lambda x, dimension, size, step: x.unfold(dimension, size, step), "unfold",
                       f"Tensor input, int dimension, int size, int step, {_OUT}")
unsqueeze_copy = _copy_of("unsqueeze_copy", lambda x, dim: x.unsqueeze(dim), "unsqueeze", f"Tensor input, int dim, {_OUT}")
view_copy = _copy_of("view_copy", lambda x, size: x.view(size), "view", f"Tensor input, SymInt[] size, {_OUT}",
                     f"Tensor input, ScalarType size, {_OUT}")


# ----- scatters --------------------------------------------------------------------

def _check_src(view, src):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(view.shape)}"
        )


def _embed(input, src, take):
    out = input.clone()
    view = take(out)
    _check_src(view, src)
    view.copy_(src)
    return out


@_args.signature('Tensor input, Tensor src, int dim, SymInt index')
def select_scatter(input, src, dim, index):
    """Embeds the values of ``src`` into ``input`` at the given index.

    ``src`` has the shape of ``input.select(dim, index)``; the result is a new tensor.
    """
    return _embed(input, src, lambda t: t.select(dim, index))


@_args.signature('Tensor input, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1')
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """Embeds the values of ``src`` into ``input`` at the given slice along ``dim``."""
    return _embed(input, src, lambda t: _slice(t, dim, start, end, step))


@_args.signature('Tensor input, Tensor src, int offset=0, int dim1=0, int dim2=1')
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """Embeds ``src`` into the diagonal of ``input`` (as :meth:`Tensor.diagonal` selects it)."""
    return _embed(input, src, lambda t: t.diagonal(offset, dim1, dim2))


@_args.signature('Tensor input, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None')
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """Embeds ``src`` into ``input`` where ``input.as_strided(size, stride, storage_offset)`` looks.

    ``input`` is first made contiguous, as PyTorch's functional form does.
    """
    out = input.contiguous().clone()
    view = out.as_strided(size, stride, storage_offset)
    _check_src(view, src)
    view.copy_(src)
    return out


def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter, slice_inverse):
        _methods.define(fn.__name__, _args.method_signature(fn) if hasattr(fn, "__schemas__") else method(fn))


@_args.signature("Tensor input, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1")
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    r"""slice_inverse(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    The inverse of slicing, used by functionalization: given ``input``, a
    slice ``src[dim, start:end:step]``-style view, returns a view of
    ``input``'s memory with ``src``'s sizes, strides and storage offset (the
    tensor the slice was taken from). As in PyTorch the slice arguments only
    describe the relation: the view is taken from ``src``'s geometry.
    """
    return input.as_strided(src.shape, src.stride(), src.storage_offset())


_declare_methods()
