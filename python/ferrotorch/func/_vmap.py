"""``vmap`` as a loop: the function runs once per batch slice and the outputs are stacked.

PyTorch batches each operator with a batching rule. ferrotorch has no batched-tensor type, so
vmap takes the fallback PyTorch itself uses for operators without a rule: slice, call, stack.
Every op inside runs in Rust; the loop is over batch entries, not elements. Results and
gradients equal PyTorch's, and the transform nests with itself and with the autodiff ones.
"""

import contextlib
import functools

from .. import _C
from .._functional import equal
from .._shape_ops import stack
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness_arg(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _rng_state():
    from ..random import get_rng_state
    return get_rng_state()


@contextlib.contextmanager
def random_state_guard(randomness):
    """Raises PyTorch's error when the body draws from the default generator under 'error'."""
    if randomness != "error":
        yield
        return
    before = _rng_state()
    yield
    if not equal(before, _rng_state()):
        raise RuntimeError(_RANDOM_ERROR)


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _process_batched_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(
        in_dims, args_spec,
        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
        f"`inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             "but in_dim must be either an integer dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, _C.TensorBase):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input "
                             f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, "
                             "please use None as the respective in_dim")
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some "
                             f"input, but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim "
                             f"to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, args_spec


def _check_out_dims(out_dims, func):
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                             "a python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _flat_out_dims(output, out_dims, func):
    flat_out, spec = tree_flatten(output)
    msg = (f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
           f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has structure "
           f"{spec}.")
    if isinstance(output, _C.TensorBase):
        if isinstance(out_dims, int) or out_dims is None:
            return flat_out, [out_dims], spec
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return flat_out, list(out_dims), spec
        raise ValueError(msg)
    return flat_out, broadcast_prefix(out_dims, spec, msg), spec


def _combine(name, per_slice, out_dim):
    """One output across the batch: the slices stacked at ``out_dim``, or the shared value for None."""
    first = per_slice[0]
    if out_dim is None:
        same = all(o is first for o in per_slice) or (
            isinstance(first, _C.TensorBase)
            and all(isinstance(o, _C.TensorBase) and o.shape == first.shape and equal(o, first) for o in per_slice))
        if isinstance(first, _C.TensorBase) and not same:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return first
    for o in per_slice:
        if not isinstance(o, _C.TensorBase):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. "
                             "Did you mean to set out_dims= to None for output?")
    return stack(list(per_slice), dim=out_dim)


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(out_dims, func)
    batch_size, flat_in_dims, flat_args, args_spec = _process_batched_inputs(in_dims, args, func)
    name = _get_name(func)
    empty = batch_size == 0
    if empty:
        # No slice to run: the output shapes come from one call on a zero example, then an
        # empty batch dimension is inserted.
        batch_size = 1
        flat_args = [a if d is None else _C.zeros(tuple(a.shape[:d]) + (1,) + tuple(a.shape[d + 1:]),
                                                  dtype=a.dtype)
                     for a, d in zip(flat_args, flat_in_dims)]
    same_state = _rng_state() if randomness == "same" else None
    outputs = []
    # The generator only moves forward, so one check around the whole loop sees any draw.
    with random_state_guard(randomness):
        for b in range(batch_size):
            sliced = [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_in_dims)]
            if same_state is not None:
                from ..random import set_rng_state
                set_rng_state(same_state)
            outputs.append(func(*tree_unflatten(sliced, args_spec), **kwargs))
    flat0, flat_dims, out_spec = _flat_out_dims(outputs[0], out_dims, func)
    per_output = [[] for _ in flat0]
    for out in outputs:
        flat, spec = tree_flatten(out)
        if spec != out_spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different structures for different "
                             f"batch entries: {out_spec} and {spec}")
        for lst, o in zip(per_output, flat):
            lst.append(o)
    combined = [_combine(name, lst, d) for lst, d in zip(per_output, flat_dims)]
    if empty:
        combined = [c if d is None else c.narrow(d, 0, 0) for c, d in zip(combined, flat_dims)]
    return tree_unflatten(combined, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """
    vmap is the vectorizing map; ``vmap(func)`` returns a new function that
    maps ``func`` over some dimension of the inputs. Semantically, vmap
    pushes the map into PyTorch operations called by ``func``, effectively
    vectorizing those operations.

    Args:
        func (function): A Python function that takes one or more arguments.
            Must return one or more Tensors.
        in_dims (int or nested structure): Specifies which dimension of the
            inputs should be mapped over. ``in_dims`` should have a
            structure like the inputs. If the ``in_dim`` for a particular
            input is None, then that indicates there is no map dimension.
            Default: 0.
        out_dims (int or Tuple[int]): Specifies where the mapped dimension
            should appear in the outputs. If ``out_dims`` is a Tuple, then
            it should have one element per output. Default: 0.
        randomness (str): Specifies whether the randomness in this
            vmap should be the same or different across batches. If 'different',
            the randomness for each batch will be different. If 'same', the
            randomness will be the same across batches. If 'error', any calls to
            random functions will error. Default: 'error'.
        chunk_size (None or int): If None (default), apply a single vmap over inputs.
            If not None, then compute the vmap :attr:`chunk_size` samples at a time.
            Note that :attr:`chunk_size=1` is equivalent to computing the vmap with a for-loop.

    Returns:
        Returns a new "batched" function. It takes the same inputs as
        ``func``, except each input has an extra dimension at the index
        specified by ``in_dims``. It takes returns the same outputs as
        ``func``, except each output has an extra dimension at the index
        specified by ``out_dims``.

    .. note::
        ferrotorch implements vmap by its loop fallback: ``func`` runs once per
        batch entry on ``input.select(in_dim, i)`` and the results are stacked
        at ``out_dims`` (so every ``chunk_size`` behaves like ``chunk_size=1``).
        Values and gradients equal PyTorch's; the cost is one call of ``func``
        per batch entry. ``randomness='error'`` raises when ``func`` draws from
        the default generator, ``'same'`` replays the generator state for each
        entry, and ``'different'`` lets the entries draw in turn. An output with
        ``out_dims=None`` must be the same for every entry.

    Examples:
        >>> torch.dot                            # [D], [D] -> []
        >>> batched_dot = torch.func.vmap(torch.dot)  # [N, D], [N, D] -> [N]
        >>> x, y = torch.randn(2, 5), torch.randn(2, 5)
        >>> batched_dot(x, y)
    """
    check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapped
