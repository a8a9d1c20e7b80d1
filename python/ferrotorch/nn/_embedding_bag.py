"""``embedding_bag``: sums, means or maxima of bags of embeddings without
materialising the per-bag lookups one bag at a time.

Bags are found with tensor ops (an ``index_add`` of bag starts, then a
``cumsum`` gives each index its bag), rows are reduced with ``index_add``
(sum/mean) or a padded dense gather and ``argmax`` (max), so autograd gives
PyTorch's gradients: the bag's gradient to every member row (divided by the
bag size for ``mean``), to the maximal row per column for ``max``, none to
``padding_idx`` rows.
"""

import warnings

from .. import _C
from .. import _math_ops as _m
from .. import _shape_ops as _s
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = ["embedding_bag"]

_INDEX_RANGE_MSG = ("Expected i < index_size to be true, but got false.  (Could this error message be improved?  "
                    "If so, please report an enhancement request to PyTorch.)")


def _renorm_(weight, input, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows looked up by ``input`` whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled down to it, in place."""
    with _no_grad():
        idx = _m.unique(input.reshape(-1).to(_C.int64))
        if idx.numel() == 0:
            return
        rows = weight.index_select(0, idx)
        norms = rows.norm(norm_type, 1)
        scale = _s.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight.index_copy_(0, idx, rows * scale.unsqueeze(1))


def _check_index_dtype(t, arg):
    if t.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(
            f"Expected tensor for argument #1 '{arg}' to have one of the following scalar types: Long, Int; but got "
            f"{t.type()} instead (while checking arguments for embedding_bag)")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    r"""Compute sums, means or maxes of `bags` of embeddings.

    Calculation is done without instantiating the intermediate embeddings.
    See :class:`torch.nn.EmbeddingBag` for more details.

    Args:
        input (LongTensor): Tensor containing bags of indices into the embedding matrix
        weight (Tensor): The embedding matrix with number of rows equal to the maximum possible index + 1,
            and number of columns equal to the embedding size
        offsets (LongTensor, optional): Only used when :attr:`input` is 1D. :attr:`offsets` determines
                             the starting index position of each bag (sequence) in :attr:`input`.
        max_norm (float, optional): If given, each embedding vector with norm larger than :attr:`max_norm`
                                    is renormalized to have norm :attr:`max_norm`.
                                    Note: this will modify :attr:`weight` in-place.
        norm_type (float, optional): The ``p`` in the ``p``-norm to compute for the :attr:`max_norm` option.
                                     Default ``2``.
        scale_grad_by_freq (bool, optional): if given, this will scale gradients by the inverse of frequency of
                                                the words in the mini-batch. Default ``False``.
                                                Note: this option is not supported when ``mode="max"``.
        mode (str, optional): ``"sum"``, ``"mean"`` or ``"max"``. Specifies the way to reduce the bag.
                                 Default: ``"mean"``
        sparse (bool, optional): if ``True``, gradient w.r.t. :attr:`weight` will be a sparse tensor.
                                 Note: this option is not supported when ``mode="max"``.
        per_sample_weights (Tensor, optional): a tensor of float / double weights, or None
            to indicate all weights should be taken to be 1. If specified, :attr:`per_sample_weights`
            must have exactly the same shape as input and is treated as having the same
            :attr:`offsets`, if those are not None.
        include_last_offset (bool, optional): if ``True``, the size of offsets is equal to the number of bags + 1.
            The last element is the size of the input, or the ending index position of the last bag (sequence).
        padding_idx (int, optional): If specified, the entries at :attr:`padding_idx` do not contribute to the
                                     gradient; therefore, the embedding vector at :attr:`padding_idx` is not updated
                                     during training, i.e. it remains as a fixed "pad". Note that the embedding
                                     vector at :attr:`padding_idx` is excluded from the reduction.
    """
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets)}")
        offsets = _C.arange(0, input.numel(), max(input.size(1), 1), dtype=input.dtype, device=input.device)
        if input.size(1) == 0:
            offsets = _C.zeros(input.size(0), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub.")
    return _embedding_bag(weight, input, offsets, scale_grad_by_freq, mode, per_sample_weights,
                          include_last_offset, padding_idx)


def _embedding_bag(weight, input, offsets, scale_grad_by_freq, mode, per_sample_weights, include_last_offset,
                   padding_idx):
    _check_index_dtype(input, "indices")
    _check_index_dtype(offsets, "offsets")
    if not weight.dtype.is_floating_point:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, "
            f"Float, Double; but got {weight.type()} instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
            f"'per_sample_weights'; but type {weight.type()} does not equal {per_sample_weights.type()} "
            "(while checking arguments for embedding_bag)")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} through {num - 1}, "
                               f"but got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
    dev = weight.device
    n_len = input.numel()
    offs = offsets.to(_C.int64)
    n_bags = offs.numel() - 1 if include_last_offset else offs.numel()
    n_bags = max(n_bags, 0)
    if offs.numel() > 0 and offs.device.type != "meta":
        first = int(offs[0].item())
        if first != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                f"However, got {first}\n[ {offsets.type()}{{}} ]")
        last = int(offs[-1].item())
        if last > n_len:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_len} but got offsets[-1] of "
                               f"{last}")
    idx = input.to(_C.int64)
    if n_len and idx.device.type != "meta":  # a meta index has no values to check
        with _no_grad():
            if bool(((idx < 0) | (idx >= num)).any()):
                raise RuntimeError(_INDEX_RANGE_MSG)
    if n_bags == 0:
        return _C.zeros(0, dim, dtype=weight.dtype, device=dev) + weight.sum() * 0
    with _no_grad():
        starts = offs[:n_bags]
        # Each position's bag: the number of bag starts at or before it, minus one.
        marks = _C.zeros(n_len + 1, dtype=_C.int64, device=dev).index_add(
            0, starts, _C.ones(n_bags, dtype=_C.int64, device=dev))
        bag = marks[:n_len].cumsum(0) - 1
        keep = bag >= 0
        if include_last_offset:
            # The last offset ends the last bag.
            keep = keep & (_C.arange(n_len, device=dev) < offs[n_bags])
        if padding_idx is not None:
            keep = keep & (idx != padding_idx)
        bag = bag.clamp(0, n_bags - 1)
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq and rows.requires_grad and n_len:
        with _no_grad():
            freq = _C.zeros(num, dtype=weight.dtype, device=dev).index_add(
                0, idx, _C.ones(n_len, dtype=weight.dtype, device=dev)).index_select(0, idx).unsqueeze(1)
        rows.register_hook(lambda g: g / freq)
    if mode == "max":
        return _bag_max(rows, bag, keep, n_bags, n_len, dim, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    # where, not a multiply by the mask: excluded rows contribute exactly nothing (not NaN * 0).
    rows = _s.where(keep.unsqueeze(1), rows, 0)
    out = _C.zeros(n_bags, dim, dtype=weight.dtype, device=dev).index_add(0, bag, rows)
    if mode == "mean":
        with _no_grad():
            counts = _C.zeros(n_bags, dtype=weight.dtype, device=dev).index_add(0, bag, keep.to(weight.dtype))
        out = out / counts.clamp(min=1).unsqueeze(1)
    return out


def _bag_max(rows, bag, keep, n_bags, n_len, dim, weight):
    dev = weight.device
    with _no_grad():
        kept = keep.to(_C.int64)
        sizes = _C.zeros(n_bags, dtype=_C.int64, device=dev).index_add(0, bag, kept)
        # (a meta tensor has no sizes to read; any width gives the output's shape)
        width = 1 if dev.type == "meta" else max(int(sizes.max().item()), 1)
        # Slot of each kept position inside its bag's row of a dense (n_bags, width) table.
        rank = kept.cumsum(0) - 1
        before = _C.zeros(n_bags, dtype=_C.int64, device=dev)
        if n_bags > 1:
            before[1:] = sizes.cumsum(0)[:-1]
        slot = bag * width + (rank - before.index_select(0, bag))
        slot = _s.where(keep, slot, n_bags * width)  # excluded positions land in a scratch slot
        table = _C.full((n_bags * width + 1,), n_len, dtype=_C.int64, device=dev)
        table = table.scatter(0, slot, _C.arange(n_len, dtype=_C.int64, device=dev))[:n_bags * width]
    # Row n_len is the filler: -inf never wins, and empty bags are zeroed below.
    fill = _C.full((1, dim), float("-inf"), dtype=weight.dtype, device=dev)
    dense = _s.cat([rows, fill], 0).index_select(0, table).reshape(n_bags, width, dim)
    # PyTorch scans each bag column keeping the first element and replacing it
    # only by a strictly greater one: the first maximum wins, and a NaN wins
    # only when it comes first (NaN compares false both ways).
    with _no_grad():
        d = dense.detach()
        nan = d.isnan()
        arg = _s.where(nan, float("-inf"), d).argmax(1, keepdim=True)
        arg = _s.where(nan[:, :1, :], 0, arg)
    out = dense.gather(1, arg).squeeze(1)
    return _s.where((sizes > 0).unsqueeze(1), out, 0)
