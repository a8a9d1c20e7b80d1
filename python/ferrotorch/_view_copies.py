"""The ``*_copy`` forms of the view ops (a view op whose result owns fresh,
contiguous memory) and the ``*_scatter`` ops (their functional inverses: a copy
of ``input`` with ``src`` embedded where the view would look).

The scatters write through a view of a clone, so autograd records the write
(``CopySlices``) and ``src`` and ``input`` both receive gradients.
"""

from ._C import Tensor
from ._math_ops import _write_out

__all__ = [
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
    "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
    "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
    "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter",
]


def _own(view):
    # contiguous() copies a strided view but aliases a contiguous one, which then needs a clone
    return view.clone() if view.is_contiguous() else view.contiguous()


def _copy_of(op, doc_name):
    def fn(input, *args, out=None, **kwargs):
        res = op(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):
            if out is not None:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'out'")
            return tuple(_own(r) for r in res)
        return _write_out(_own(res), out)

    fn.__doc__ = (
        f"Performs the same operation as :func:`ferrotorch.{doc_name}`, but all output tensors\n"
        "are freshly created instead of aliasing the input."
    )
    return fn


def _slice(input, dim=0, start=None, end=None, step=1):
    idx = [slice(None)] * input.dim()
    idx[dim] = slice(start, end, step)
    return input[tuple(idx)]


alias_copy = _copy_of(lambda x: x, "alias")
as_strided_copy = _copy_of(lambda x, size, stride, storage_offset=None: x.as_strided(size, stride, storage_offset), "as_strided")
detach_copy = _copy_of(lambda x: x.detach(), "detach")
diagonal_copy = _copy_of(lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2), "diagonal")
expand_copy = _copy_of(lambda x, size, *, implicit=False: x.expand(*size), "Tensor.expand")
permute_copy = _copy_of(lambda x, dims: x.permute(*dims), "permute")
select_copy = _copy_of(lambda x, dim, index: x.select(dim, index), "select")
slice_copy = _copy_of(_slice, "slice")
split_copy = _copy_of(lambda x, split_size, dim=0: x.split(split_size, dim), "split")
squeeze_copy = _copy_of(lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim), "squeeze")
t_copy = _copy_of(lambda x: x.t(), "t")
transpose_copy = _copy_of(lambda x, dim0, dim1: x.transpose(dim0, dim1), "transpose")
unbind_copy = _copy_of(lambda x, dim=0: x.unbind(dim), "unbind")
unfold_copy = _copy_of(lambda x, dimension, size, step: x.unfold(dimension, size, step), "unfold")
unsqueeze_copy = _copy_of(lambda x, dim: x.unsqueeze(dim), "unsqueeze")
view_copy = _copy_of(lambda x, size: x.view(size), "view")


def _split_with_sizes(x, split_sizes, dim=0):
    from ._stacking import split_with_sizes
    return split_with_sizes(x, split_sizes, dim)


split_with_sizes_copy = _copy_of(_split_with_sizes, "split_with_sizes")

for _name, _fn in list(globals().items()):
    if _name.endswith("_copy") and callable(_fn) and _fn.__name__ == "fn":
        _fn.__name__ = _fn.__qualname__ = _name
del _name, _fn


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


def select_scatter(input, src, dim, index):
    """Embeds the values of ``src`` into ``input`` at the given index.

    ``src`` has the shape of ``input.select(dim, index)``; the result is a new tensor.
    """
    return _embed(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """Embeds the values of ``src`` into ``input`` at the given slice along ``dim``."""
    return _embed(input, src, lambda t: _slice(t, dim, start, end, step))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """Embeds ``src`` into the diagonal of ``input`` (as :meth:`Tensor.diagonal` selects it)."""
    return _embed(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """Embeds ``src`` into ``input`` where ``input.as_strided(size, stride, storage_offset)`` looks.

    ``input`` is first made contiguous, as PyTorch's functional form does.
    """
    out = input.contiguous().clone()
    view = out.as_strided(size, stride, storage_offset)
    _check_src(view, src)
    view.copy_(src)
    return out


def _attach():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    for fn in (select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter):
        setattr(Tensor, fn.__name__, method(fn))


_attach()
