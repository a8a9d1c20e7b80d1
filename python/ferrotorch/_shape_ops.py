"""Shape, indexing and einsum ops: the PyTorch-shaped signatures (aliases,
keyword forms, defaults) over the native ``_C._*`` kernels, declared both as
``ferrotorch.<name>`` functions and as ``Tensor`` methods.
"""

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "flip", "fliplr", "flipud",
    "roll", "rot90", "repeat_interleave", "tile", "tril", "triu", "meshgrid",
    "broadcast_shapes", "broadcast_tensors", "movedim", "moveaxis", "narrow_copy", "take",
    "take_along_dim", "gather", "scatter", "scatter_add", "scatter_reduce", "index_select",
    "index_add", "index_copy", "index_fill", "index_put", "masked_fill", "masked_select",
    "masked_scatter", "nonzero", "argwhere", "where", "einsum", "tensordot", "outer", "ger",
    "vdot", "addmv", "addmv_", "addbmm", "baddbmm", "trace",
]


def _ints(x, name="dims"):
    """An int or a sequence of ints as a list."""
    if isinstance(x, int) or isinstance(x, _C.TensorBase):
        return [int(x)]
    try:
        return [int(v) for v in x]
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of ints, not {type(x).__name__}") from None


def _varargs(args, name):
    """`f(1, 2)` or `f((1, 2))` / `f([1, 2])` as a list of ints."""
    if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], _C.TensorBase):
        return _ints(args[0], name)
    return _ints(args, name)


def _seq(tensors, op):
    if isinstance(tensors, _C.TensorBase):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return list(tensors)


def _out(result, out):
    # one out= contract for every op (see _math_ops._write_out)
    from ._math_ops import _write_out
    return _write_out(result, out)


# ----- joining ------------------------------------------------------------------

def cat(tensors, dim=0, *, out=None, axis=None):
    """Concatenates tensors along an existing dim (promoting dtypes)."""
    if axis is not None:
        dim = axis
    return _out(_C._cat(_seq(tensors, "cat"), dim), out)


def concat(tensors, dim=0, *, out=None, axis=None):
    """Alias of :func:`cat`."""
    return cat(tensors, dim, out=out, axis=axis)


def concatenate(tensors, axis=0, out=None, *, dim=None):
    """Alias of :func:`cat` with NumPy's ``axis``."""
    return cat(tensors, axis if dim is None else dim, out=out)


def stack(tensors, dim=0, *, out=None):
    """Joins equally shaped tensors along a new dim."""
    return _out(_C._stack(_seq(tensors, "stack"), dim), out)


def hstack(tensors, *, out=None):
    """Stacks column-wise (dim 0 for 1-d inputs, else dim 1)."""
    return _out(_C._hstack(_seq(tensors, "hstack")), out)


def vstack(tensors, *, out=None):
    """Stacks row-wise after making inputs at least 2-d."""
    return _out(_C._vstack(_seq(tensors, "vstack")), out)


# ----- rearranging --------------------------------------------------------------

def flip(input, dims):
    """Reverses the order of elements along ``dims`` (a copy)."""
    return _C._flip(input, _ints(dims))


def fliplr(input):
    """Flips left/right (dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _C._flip(input, [1])


def flipud(input):
    """Flips up/down (dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _C._flip(input, [0])


def roll(input, shifts, dims=None):
    """Rolls elements along ``dims`` (the flattened tensor when None)."""
    return _C._roll(input, _ints(shifts, "shifts"), [] if dims is None else _ints(dims))


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``."""
    return _C._rot90(input, int(k), _ints(dims))


def _repeat(self, *sizes):
    """Tiles the tensor ``sizes[i]`` times along each dim."""
    return _C._repeat(self, _varargs(sizes, "repeats"))


def tile(input, dims):
    """``repeat`` with ``dims`` padded by leading ones."""
    return _C._tile(input, _ints(dims))


def _tile_method(self, *dims):
    return _C._tile(self, _varargs(dims, "dims"))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element (or slice along ``dim``) ``repeats`` times. With
    only a tensor of counts, returns the indices repeated by count."""
    if repeats is None:
        return _C._repeat_interleave_index(input, output_size)
    if not isinstance(repeats, _C.TensorBase):
        repeats = _C.tensor(int(repeats))
    return _C._repeat_interleave(input, repeats, dim, output_size)


def tril(input, diagonal=0, *, out=None):
    """Lower triangle (the rest zeroed)."""
    return _out(_C._tril(input, _args.integer(diagonal, "tril", "diagonal", 2, symint=True)), out)


def triu(input, diagonal=0, *, out=None):
    """Upper triangle (the rest zeroed)."""
    return _out(_C._triu(input, _args.integer(diagonal, "triu", "diagonal", 2, symint=True)), out)


def _tril_(self, diagonal=0):
    k = _args.integer(diagonal, "tril_", "diagonal", 1, symint=True)
    if _zero_band_shared(self, k, True):
        return self
    return self.copy_(_C._tril(self, k))


def _triu_(self, diagonal=0):
    k = _args.integer(diagonal, "triu_", "diagonal", 1, symint=True)
    if _zero_band_shared(self, k, False):
        return self
    return self.copy_(_C._triu(self, k))


def _zero_band_shared(self, k, lower):
    """In-place tril_/triu_ on a tensor whose elements share memory (an expanded
    view). PyTorch's kernel only stores zeros there, so the result is well
    defined: a memory location is zeroed when any element stored there lies
    outside the kept band. Zero those elements row by row with ``fill_``, which
    accepts shared memory. Returns False (nothing done) for ordinary tensors."""
    if self.dim() < 2 or not any(st == 0 and n > 1 for n, st in zip(self.shape, self.stride())):
        return False
    if not _trilu_batch_contiguous(self):
        # PyTorch computes such a tensor out of place and copies the result
        # back, which refuses a target whose elements share memory.
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if self.requires_grad and _C.is_grad_enabled():
        # Record one in-place node over the whole view, as PyTorch's kernel
        # does (its backward then refuses the overlapping view, as PyTorch's).
        _trilu_shared_function().apply(self, k, lower)
    else:
        _zero_outside_band(self, k, lower)
    return True


def _zero_outside_band(self, k, lower):
    rows, cols = self.shape[-2], self.shape[-1]
    for i in range(rows):
        lo, hi = (max(i + k + 1, 0), cols) if lower else (0, min(max(i + k, 0), cols))
        if lo < hi:
            self[..., i, lo:hi].fill_(0)


_TRILU_SHARED = []


def _trilu_shared_function():
    """The autograd Function for tril_/triu_ on a tensor whose elements share
    memory (made once, on first use: autograd imports this module)."""
    if not _TRILU_SHARED:
        from .autograd import Function

        class TriluShared(Function):
            @staticmethod
            def forward(ctx, x, k, lower):
                ctx.k, ctx.lower = k, lower
                _zero_outside_band(x, k, lower)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return (grad.tril(ctx.k) if ctx.lower else grad.triu(ctx.k)), None, None

        _TRILU_SHARED.append(TriluShared)
    return _TRILU_SHARED[0]


def _trilu_batch_contiguous(t):
    """PyTorch's ``checkTrilTriuBatchContiguous`` for in-place tril_/triu_: whether
    its kernel can write ``t`` directly. Up to 3 dims always; beyond, the batch
    dims must be packed matrices (a leading dim of stride 0 or size 1 excepted)."""
    if t.is_contiguous() or t.dim() <= 3:
        return True
    expected = t.shape[-1] * t.shape[-2]
    for i in range(t.dim() - 3, -1, -1):
        if i == 0 and (t.stride(0) == 0 or t.shape[0] == 1):
            continue
        if t.stride(i) != expected:
            return False
        expected *= t.shape[i]
    return True


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-d tensors (``indexing='ij'`` or ``'xy'``)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    return _C._meshgrid(list(tensors), indexing == "xy")


def broadcast_shapes(*shapes):
    """The shape all ``shapes`` broadcast to, as a ``Size``."""
    from ._size import Size

    norm = []
    for s in shapes:
        # Only Python ints and sequences of them: a tensor is not a shape here.
        if isinstance(s, int):
            norm.append([int(s)])
        elif isinstance(s, (tuple, list)) and all(isinstance(v, int) for v in s):
            norm.append([int(v) for v in s])
        else:
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    return Size(_C._broadcast_shapes(norm))


def broadcast_tensors(*tensors):
    """Views of ``tensors`` expanded to their common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return _C._broadcast_tensors(list(tensors))


def movedim(input, source, destination):
    """Moves dims ``source`` to positions ``destination`` (a view)."""
    return _C._movedim(input, _ints(source, "source"), _ints(destination, "destination"))


moveaxis = movedim


def narrow_copy(input, dim, start, length):
    """A contiguous copy of ``narrow(dim, start, length)``."""
    return _C._narrow_copy(input, int(dim), int(start), int(length))


# ----- gathering and scattering -------------------------------------------------

def take(input, index, *, out=None):
    """Elements of the flattened ``input`` at ``index``."""
    return _out(_C._take(input, index), out)


def take_along_dim(input, indices, dim=None, *, out=None):
    """``gather`` after broadcasting ``input`` and ``indices``."""
    return _out(_C._take_along_dim(input, indices, dim), out)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """``out[i][j] = input[index[i][j]][j]`` (for ``dim=0``), and so on."""
    return _out(_C._gather(input, int(dim), index), out)


def _scatter_src(src, value, kwargs):
    if "value" in kwargs:
        value = kwargs.pop("value")
    if kwargs:
        raise TypeError(f"scatter() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    return src if src is not None else value


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None, **kwargs):
    """Writes ``src`` (or ``value``) at the positions ``index`` names along ``dim``."""
    return _out(_C._scatter(input, int(dim), index, _scatter_src(src, value, kwargs), reduce, False), out)


def _scatter_(self, dim, index, src=None, value=None, *, reduce=None, **kwargs):
    return _C._scatter(self, int(dim), index, _scatter_src(src, value, kwargs), reduce, True)


def scatter_add(input, dim, index, src, *, out=None):
    """Adds ``src`` into ``input`` at the positions ``index`` names along ``dim``."""
    return _out(_C._scatter_add(input, int(dim), index, src, False), out)


def _scatter_add_(self, dim, index, src):
    return _C._scatter_add(self, int(dim), index, src, True)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduces ``src`` into ``input`` (sum, prod, mean, amax, amin)."""
    return _out(_C._scatter_reduce(input, int(dim), index, src, reduce, include_self, False), out)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return _C._scatter_reduce(self, int(dim), index, src, reduce, include_self, True)


def index_select(input, dim, index, *, out=None):
    """Slices of ``input`` along ``dim`` at ``index``."""
    return _out(_C._index_select(input, int(dim), index), out)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    return _out(_C._index_add(input, int(dim), index, source, alpha, False), out)


def _index_add_(self, dim, index, source, *, alpha=1):
    return _C._index_add(self, int(dim), index, source, alpha, True)


def index_copy(input, dim, index, source, *, out=None):
    """``input`` with slices along ``dim`` at ``index`` replaced by ``source``."""
    return _out(_C._index_copy(input, int(dim), index, source, False), out)


def _index_copy_(self, dim, index, source):
    return _C._index_copy(self, int(dim), index, source, True)


def index_fill(input, dim, index, value):
    """``input`` with slices along ``dim`` at ``index`` set to ``value``."""
    return _C._index_fill(input, int(dim), index, value, False)


def _index_fill_(self, dim, index, value):
    return _C._index_fill(self, int(dim), index, value, True)


def index_put(input, indices, values, accumulate=False):
    """``input[indices] = values`` out of place (``+=`` when ``accumulate``)."""
    return _C._index_put(input, tuple(indices), values, accumulate, False)


def _index_put_(self, indices, values, accumulate=False):
    return _C._index_put(self, tuple(indices), values, accumulate, True)


def masked_fill(input, mask, value):
    """``value`` where ``mask`` is true, else ``input``."""
    return _C._masked_fill(input, mask, value, False)


def _masked_fill_(self, mask, value):
    return _C._masked_fill(self, mask, value, True)


def masked_select(input, mask, *, out=None):
    """The elements where the (broadcast) ``mask`` is true, as a 1-d tensor."""
    return _out(_C._masked_select(input, mask), out)


def masked_scatter(input, mask, source):
    """Where ``mask`` is true, the next elements of ``source``."""
    return _C._masked_scatter(input, mask, source, False)


def _masked_scatter_(self, mask, source):
    return _C._masked_scatter(self, mask, source, True)


def nonzero(input, *, out=None, as_tuple=False):
    """Coordinates of the non-zero elements: ``[n, ndim]``, or one 1-d
    tensor per dim with ``as_tuple=True``."""
    if as_tuple:
        # PyTorch's nonzero_numpy: a 0-d input counts as one element of a 1-d one.
        nz = _C._nonzero(input.reshape(1) if input.dim() == 0 else input)
        return tuple(nz.select(1, d) for d in range(nz.shape[1]))
    nz = _C._nonzero(input)
    return _out(nz, out)


def argwhere(input):
    """Same as ``nonzero(input)``."""
    return _C._nonzero(input)


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` else ``other`` (with type promotion);
    with only a condition, ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() missing required argument 'input' or 'other'")
    return _out(_C._where(condition, input, other), out)


def _where_method(self, condition, y):
    return _C._where(condition, self, y)


# ----- products -----------------------------------------------------------------

def einsum(equation, *operands):
    """Einstein summation over ``operands`` (contracted with ``bmm``)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation,) + tuple(operands))
    return _C._einsum(equation, list(operands))


def _sublist_equation(args):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as ``("ab,bc->ac", [a, b])``."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def sub(lst):
        out = []
        for v in lst:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, int) and 0 <= v < 52:
                out.append(letters[v])
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52), got {v}")
        return "".join(out)

    operands, terms = [], []
    i = 0
    while i + 1 < len(args) and isinstance(args[i], _C.TensorBase):
        operands.append(args[i])
        terms.append(sub(args[i + 1]))
        i += 2
    equation = ",".join(terms)
    if i < len(args):
        equation += "->" + sub(args[i])
    return equation, operands


def tensordot(a, b, dims=2, out=None):
    """Contracts the last ``dims`` dims of ``a`` with the first of ``b`` (or the
    explicit lists ``dims=(dims_a, dims_b)``)."""
    if isinstance(dims, _C.TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = dims
        da = _ints(da)
        db = _ints(db)
    return _out(_C._tensordot(a, b, da, db), out)


def outer(input, vec2, *, out=None):
    """Outer product of two 1-d tensors."""
    return _out(_C._outer(input, vec2), out)


ger = outer


def vdot(input, other, *, out=None):
    """Dot product of two 1-d tensors."""
    return _out(_C._vdot(input, other), out)


def _check_addprod_dtypes(kind, input, a, b):
    """The dtype checks of PyTorch's ``addmm``/``addbmm``/``baddbmm``/``addmv``, with their
    messages: the kernels never promote, every operand must share one dtype."""
    if not all(isinstance(t, _C.TensorBase) for t in (input, a, b)):
        return
    from ._math_ops import _pretty
    if kind == "addmv":
        if not input.dtype == a.dtype == b.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_pretty(input.dtype)}, "
                               f"{_pretty(a.dtype)}, and {_pretty(b.dtype)}")
    elif kind in ("baddbmm", "addmm"):
        return  # checked in PyTorch's order with the shapes (ops/linalg.rs add_product)
    else:
        if input.dtype != b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_pretty(input.dtype)} and "
                               f"{_pretty(b.dtype)}")


def _addprod(kind, input, a, b, beta, alpha):
    """``beta * input + alpha * product(a, b)`` for the ``add*`` product family."""
    _check_addprod_dtypes(kind, input, a, b)
    return _C._addprod(kind, input, a, b, beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    return _out(_addprod("addmv", input, mat, vec, beta, alpha), out)


def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In-place ``addmv``."""
    from ._math_ops import _inplace_copy
    return _inplace_copy(self, _addprod("addmv", self, mat, vec, beta, alpha))


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``baddbmm``."""
    from ._math_ops import _inplace_copy
    return _inplace_copy(self, _addprod("baddbmm", self, batch1, batch2, beta, alpha))


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``addbmm``."""
    from ._math_ops import _inplace_copy
    return _inplace_copy(self, _addprod("addbmm", self, batch1, batch2, beta, alpha))


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """``torch.addmv_``: in-place ``addmv`` on ``input``."""
    return _addmv_(input, mat, vec, beta=beta, alpha=alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _out(_addprod("addbmm", input, batch1, batch2, beta, alpha), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return _out(_addprod("baddbmm", input, batch1, batch2, beta, alpha), out)


def trace(input):
    """Sum of the main diagonal of a 2-d tensor."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype == _C.bool:  # PyTorch's trace kernel has no bool instance (sum would promote)
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return input.diagonal().sum()


# ----- Tensor methods -----------------------------------------------------------

def _declare_methods():
    def method(fn):
        def m(self, *args, **kwargs):
            return fn(self, *args, **kwargs)

        m.__name__ = fn.__name__
        m.__doc__ = fn.__doc__
        return m

    def flip_m(self, *dims):
        return _C._flip(self, _varargs(dims, "dims"))

    def movedim_m(self, source, destination):
        return movedim(self, source, destination)

    plain = {
        "roll": roll, "rot90": rot90, "repeat_interleave": repeat_interleave, "tril": tril,
        "triu": triu, "narrow_copy": narrow_copy, "take": take, "take_along_dim": take_along_dim,
        "gather": gather, "scatter": scatter, "scatter_add": scatter_add,
        "scatter_reduce": scatter_reduce, "index_select": index_select, "index_add": index_add,
        "index_copy": index_copy, "index_fill": index_fill, "index_put": index_put,
        "masked_fill": masked_fill, "masked_select": masked_select,
        "masked_scatter": masked_scatter, "nonzero": nonzero, "argwhere": argwhere,
        "outer": outer, "ger": ger, "vdot": vdot, "addmv": addmv, "addbmm": addbmm,
        "baddbmm": baddbmm, "trace": trace, "fliplr": fliplr, "flipud": flipud,
    }
    for name, fn in plain.items():
        _methods.define(name, method(fn))
    # The method's diagonal is argument 1 in PyTorch's messages (the function's is 2).
    _methods.define("tril", lambda self, diagonal=0: _C._tril(self, _args.integer(diagonal, "tril", "diagonal", 1, symint=True)))
    _methods.define("triu", lambda self, diagonal=0: _C._triu(self, _args.integer(diagonal, "triu", "diagonal", 1, symint=True)))
    _methods.define("flip", flip_m)
    _methods.define("movedim", movedim_m)
    _methods.define("moveaxis", movedim_m)
    _methods.define("repeat", _repeat)
    _methods.define("tile", _tile_method)
    _methods.define("tril_", _tril_)
    _methods.define("triu_", _triu_)
    _methods.define("scatter_", _scatter_)
    _methods.define("scatter_add_", _scatter_add_)
    _methods.define("scatter_reduce_", _scatter_reduce_)
    _methods.define("index_add_", _index_add_)
    _methods.define("index_copy_", _index_copy_)
    _methods.define("index_fill_", _index_fill_)
    _methods.define("index_put_", _index_put_)
    _methods.define("masked_fill_", _masked_fill_)
    _methods.define("masked_scatter_", _masked_scatter_)
    _methods.define("where", _where_method)
    _methods.define("addmv_", _addmv_)
    _methods.define("baddbmm_", _baddbmm_)
    _methods.define("addbmm_", _addbmm_)


_declare_methods()
