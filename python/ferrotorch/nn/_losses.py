"""Functional losses, distances and small layers composed from tensor ops.

Each mirrors ``torch.nn.functional``'s function of the same name: signature,
defaults, reductions, and the error class and message PyTorch raises.
"""

import dataclasses
import math

from .. import _C, _args
from .. import _shape_ops as _s
from . import functional as _F
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = [
    "cosine_similarity", "pairwise_distance", "pdist", "cosine_embedding_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "bilinear", "channel_shuffle", "native_channel_shuffle", "ctc_loss",
    "linear_cross_entropy", "LinearCrossEntropyOptions", "gumbel_softmax",
]


def _reduction(size_average, reduce, reduction):
    return _F._reduction(size_average, reduce, reduction)


def _apply(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _sizes(t):
    return list(t.shape)


def _minimum(a, b):
    from .. import _math_ops as _m

    return _m.minimum(a, b)


def _zero_like(t):
    return _C.zeros((), dtype=t.dtype)


# -- distances ---------------------------------------------------------------------------


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    r"""cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor

    Cosine similarity between ``x1`` and ``x2`` along ``dim``, each normalised by
    ``max(||x||_2, eps)`` before the dot product (so the result stays in ``[-1, 1]``).
    """
    x1, x2 = _args.tensor(x1, "cosine_similarity", "x1", 1), _args.tensor(x2, "cosine_similarity", "x2", 2)
    dim = _args.integer(dim, "cosine_similarity", "dim", 3)
    eps = _args.floating(eps, "cosine_similarity", "eps", 4)
    dt = _C.promote_types(x1.dtype, x2.dtype)
    if not dt.is_floating_point:
        from .. import _math_ops as _m

        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_m._pretty(dt).capitalize()}")
    if not x1.is_floating_point():
        x1 = x1.to(dt)
    if not x2.is_floating_point():
        x2 = x2.to(dt)
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = _s.broadcast_tensors(x1, x2)
    n1 = x1.norm(2, dim, True).clone()
    n2 = x2.norm(2, dim, True).clone()
    # Clamped out of autograd's sight, as PyTorch does: the gradient flows as if through the raw norm.
    with _no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    r"""pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor

    The ``p``-norm of ``x1 - x2 + eps`` over the last dimension.
    """
    x1, x2 = _args.tensor(x1, "pairwise_distance", "x1", 1), _args.tensor(x2, "pairwise_distance", "x2", 2)
    p = _args.floating(p, "pairwise_distance", "p", 3)
    eps = _args.floating(eps, "pairwise_distance", "eps", 4)
    out_dim = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, max(out_dim - 1, 0) if out_dim else -1, keepdim)


def pdist(input, p=2):
    r"""pdist(input, p=2) -> Tensor

    The ``p``-norm distance between every pair of rows of a 2-D ``input``: the upper
    triangle (without diagonal) of ``cdist(input, input)``, flattened row by row.
    """
    input = _args.tensor(input, "pdist", "input", 1)
    p = _args.floating(p, "pdist", "p", 2)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n <= 1:
        # PyTorch's empty result still has the input's history (PdistBackward0)
        return input.reshape(-1)[:0].clone()
    if input.dtype not in (_C.float32, _C.float64) and input.shape[1] > 0:  # float/double kernel; no columns: zeros
        from .. import _math_ops as _m
        raise NotImplementedError(f"\"pdist\" not implemented for '{_m._pretty(input.dtype)}'")
    return _pdist_function().apply(input, float(p))


def _pair_indices(n):
    # Row-major upper triangle: boolean masking keeps the (i, j) pairs in pdist's order.
    r = _C.arange(n).unsqueeze(1).expand(n, n)
    c = _C.arange(n).unsqueeze(0).expand(n, n)
    upper = c > r
    return r[upper], c[upper]


def _pdist_values(input, p):
    ri, ci = _pair_indices(input.shape[0])
    diff = input.index_select(0, ri) - input.index_select(0, ci)
    if p == 0:
        # PyTorch's kernel counts min(ceil(|a - b|), 1) (NaN stays NaN)
        return diff.abs().ceil().clamp(max=1).sum(1)
    if diff.shape[1] == 1:
        # PyTorch's pdist kernel always takes the power and the root (sqrt(d*d) of 1e30 is inf in float32),
        # unlike a norm over one element, which is |d|: a zero column keeps the value otherwise
        diff = _s.cat([diff, _C.zeros((diff.shape[0], 1), dtype=diff.dtype)], 1)
    return diff.norm(p, 1)


def _dist_sign(d):
    # PyTorch's Dist::sign, min(max(0, ceil(d)), 1) + min(max(-1, floor(d)), 0): NaN stays NaN
    # (torch.sign(nan) is 0), so a NaN coordinate poisons its gradient as in PyTorch.
    return d.ceil().clamp(0, 1) + d.floor().clamp(-1, 0)


def _dist_grad(diff, g, dist, p):
    """The gradient of ||diff||_p for each pair (PyTorch's Dist::*_calc::backward): ``diff`` is
    (..., m) with ``g`` and ``dist`` (...) per pair, evaluated in the kernel's order of operations
    (``grad * diff / dist`` rounds the product first) and masked where PyTorch masks (a zero
    distance gives 0, not 0/0)."""
    g, dist = g.unsqueeze(-1), dist.unsqueeze(-1)
    zero = _C.zeros((), dtype=diff.dtype)
    if p == 0:
        return _C.zeros_like(diff)  # PyTorch's kernel leaves its zero-filled result (NaN included)
    if p == 1:
        return g * _dist_sign(diff)
    if math.isinf(p):
        return g * _dist_sign(diff) * (1 - (diff.abs() - dist).abs().ceil().clamp(max=1))
    if p < 2:
        r = _s.where(dist == 0, zero, _dist_sign(diff) * diff.abs().pow(p - 1) * g / dist.pow(p - 1))
        return _s.where(diff == 0, zero, r) if p < 1 else r
    if p == 2:
        return _s.where(dist == 0, zero, g * diff / dist)
    return _s.where(dist == 0, zero, diff * diff.abs().pow(p - 2) * g / dist.pow(p - 1))


_PDIST = None


def _pdist_function():
    global _PDIST
    if _PDIST is None:
        from ..autograd import Function

        class PdistBackward0(Function):
            @staticmethod
            def forward(ctx, x, p):
                x = x.contiguous()
                dist = _pdist_values(x, p)
                ctx.p = p
                ctx.save_for_backward(x, dist)
                return dist

            @staticmethod
            def backward(ctx, g):
                x, dist = ctx.saved_tensors
                n, m = x.shape
                ri, ci = _pair_indices(n)
                c = _dist_grad(x.index_select(0, ri) - x.index_select(0, ci), g.contiguous(), dist, ctx.p)
                # Pair (i, j) adds to row i and subtracts from row j; one index_add over the pairs in
                # order accumulates every row in the order PyTorch's kernel does.
                idx = _s.stack([ri, ci], 1).reshape(-1)
                src = _s.stack([c, -c], 1).reshape(2 * ri.shape[0], m)
                return _C.zeros((n, m), dtype=x.dtype).index_add(0, idx, src), None

        PdistBackward0._backward_name = "PdistBackward0"  # PyTorch's node name
        _PDIST = PdistBackward0
    return _PDIST


# -- embedding and ranking losses ---------------------------------------------------------


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r"""cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean") -> Tensor

    ``1 - cos(x1, x2)`` where ``target == 1`` and ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``. See :class:`~torch.nn.CosineEmbeddingLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1:
        if input1.dim() != 2 or input2.dim() != 2:
            raise RuntimeError(
                f"1D target tensor expects 2D input tensors, but found inputs with sizes {_sizes(input1)} and {_sizes(input2)}.")
    elif input1.dim() != 1 or input2.dim() != 1:
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes {_sizes(input1)} and {_sizes(input2)}.")
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    prod = (input1 * input2).sum(td)
    m1 = (input1 * input1).sum(td) + eps
    m2 = (input2 * input2).sum(td) + eps
    cos = prod / (m1 * m2).sqrt()
    zero = _zero_like(cos)
    out = _s.where(target == 1, 1 - cos, zero) + _s.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _apply(out, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r"""margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean") -> Tensor

    ``max(0, -target * (input1 - input2) + margin)``. See :class:`~torch.nn.MarginRankingLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _apply((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    r"""hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean") -> Tensor

    ``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (both terms for other target values). See :class:`~torch.nn.HingeEmbeddingLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    zero = _zero_like(input)
    out = _s.where(target != 1, (margin - input).clamp_min(0), zero) + _s.where(target != -1, input, zero)
    return _apply(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    r"""triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean") -> Tensor

    ``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm pairwise distance.
    See :class:`~torch.nn.TripletMarginLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd and pd == nd):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _apply((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    r"""triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean") -> Tensor

    :func:`triplet_margin_loss` with a user-supplied ``distance_function``
    (default :func:`pairwise_distance`). See :class:`~torch.nn.TripletMarginWithDistanceLoss`.
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd and pd == nd):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _minimum(d_neg, dist(positive, negative))
    return _apply((margin + d_pos - d_neg).clamp_min(0), reduction)


# -- likelihood losses ------------------------------------------------------------------------


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    r"""poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean") -> Tensor

    Negative log likelihood of a Poisson-distributed ``target``: ``exp(input) - target * input``
    (``log_input``) or ``input - target * log(input + eps)``, plus Stirling's term when ``full``.
    See :class:`~torch.nn.PoissonNLLLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    r"""gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor

    ``0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (plus
    ``0.5 log(2 pi)`` when ``full``). ``var`` may have one dimension fewer than ``input`` or a
    single mismatched size-1 dim (homoscedastic), or be a float. See :class:`~torch.nn.GaussianNLLLoss`.
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _C.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    # Clamped without autograd seeing it, as PyTorch does.
    with _no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply(loss, reduction)


# -- multi-class margin losses --------------------------------------------------------------------


def _margin_input_check(input):
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {_sizes(input)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    r"""multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor

    Multi-class hinge loss: ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C`` per sample,
    scaled by ``weight[y]``. See :class:`~torch.nn.MultiMarginLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _margin_input_check(input)
    nframe = 1 if input.dim() <= 1 else input.shape[0]
    dim = 1 if input.dim() == 0 else input.shape[-1]
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{nframe}], but got {_sizes(target)}. Input has shape {_sizes(input)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {_sizes(weight)}")
    t = target.reshape(nframe, 1).long()
    if nframe and bool(((t < 0) | (t >= dim)).any()):
        raise RuntimeError("target out of range")
    x = input.reshape(nframe, dim)
    z = (margin - x.gather(1, t) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).unsqueeze(1)
    cols = _C.arange(dim).unsqueeze(0)
    z = _s.where(cols == t, _zero_like(z), z)
    loss = z.sum(1) / dim
    if reduction == "none":
        return loss.reshape(target.shape) if input.dim() <= 1 else loss
    return _apply(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r"""multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor

    Multi-label hinge loss: ``target`` holds class indices, ended by the first ``-1``;
    each sample sums ``max(0, 1 - (x[y_j] - x[k]))`` over target classes ``y_j`` and
    non-target classes ``k``, divided by ``C``. See :class:`~torch.nn.MultiLabelMarginLoss`.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _margin_input_check(input)
    nframe = 1 if input.dim() <= 1 else input.shape[0]
    dim = 1 if input.dim() == 0 else input.shape[-1]
    if input.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == dim
    else:
        ok = target.dim() == 2 and target.shape[0] == nframe and target.shape[1] == dim
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_sizes(target)} for input of size: {_sizes(input)}")
    t = target.reshape(nframe, dim).long()
    if t.numel() and bool(((t < -1) | (t >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # A target row is read up to its first -1.
    valid = (t >= 0).long().cumprod(1) > 0
    idx = _s.where(valid, t, _C.zeros((), dtype=t.dtype))
    cls = _C.arange(dim).reshape(1, 1, dim)
    is_target = ((idx.unsqueeze(2) == cls) & valid.unsqueeze(2)).any(1)  # (N, C)
    x = input.reshape(nframe, dim)
    xy = x.gather(1, idx)  # (N, C): the score of the j-th listed target
    z = (1 - xy.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (N, j, k)
    keep = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = _s.where(keep, z, _zero_like(z)).sum((1, 2)) / dim
    if reduction == "none":
        return loss.reshape(()) if input.dim() <= 1 else loss
    return _apply(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    r"""multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor

    One-versus-all logistic loss averaged over the classes (last dim).
    See :class:`~torch.nn.MultiLabelSoftMarginLoss`.
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * _F.logsigmoid(input) + (1 - target) * _F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# -- small layers ---------------------------------------------------------------------------------


def bilinear(input1, input2, weight, bias=None):
    r"""bilinear(input1, input2, weight, bias=None) -> Tensor

    ``y = x1^T A x2 + b`` with ``weight`` of shape ``(out, in1, in2)``.
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and {input2.shape[i]}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.dim()}")
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out):
        got = bias.shape[0] if bias.dim() else bias.dim()
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {got} but expected {out}")
    batch = tuple(input1.shape[:-1])
    a = input1.reshape(-1, in1)
    b = input2.reshape(-1, in2)
    # (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract in2 against x2.
    t = a.matmul(weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(-1, out, in2)
    y = t.matmul(b.unsqueeze(2)).squeeze(2)
    if bias is not None:
        y = y + bias
    return y.reshape(batch + (out,))


def channel_shuffle(input, groups):
    r"""channel_shuffle(input, groups) -> Tensor

    Splits the channels (dim 1) into ``groups`` and interleaves them:
    ``(N, g * c, *) -> (N, c * g, *)``.
    """
    input = _args.tensor(input, "channel_shuffle", "input", 1)
    groups = _args.integer(groups, "channel_shuffle", "groups", 2, symint=True)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {_sizes(input)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n = input.shape[0]
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape(tuple(input.shape))


native_channel_shuffle = channel_shuffle


# -- connectionist temporal classification ------------------------------------------------------------


def _lse(terms):
    """log(sum(exp(terms))) elementwise, -inf where every term is -inf, and with gradients
    that stay finite (zero) there: CTC's unreachable states are all -inf."""
    m = terms[0]
    for t in terms[1:]:
        m = _maximum(m, t)
    m = m.detach()
    finite = m.isfinite()
    m0 = _s.where(finite, m, _zero_like(m))
    total = (terms[0] - m0).exp()
    for t in terms[1:]:
        total = total + (t - m0).exp()
    empty = total == 0
    one = _C.ones((), dtype=total.dtype)
    out = m0 + _s.where(empty, one, total).log()
    return _s.where(empty, _C.full((), float("-inf"), dtype=total.dtype), out)


def _maximum(a, b):
    from .. import _math_ops as _m

    return _m.maximum(a, b)


def _lengths(v, name):
    if isinstance(v, _C.TensorBase):
        return [int(x) for x in v.reshape(-1).tolist()], True
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v], False
    raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not {type(v).__name__}")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    r"""ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False) -> Tensor

    Connectionist Temporal Classification loss of log-probabilities ``(T, N, C)`` (or
    ``(T, C)`` unbatched) against padded ``(N, S)`` or concatenated targets, by the forward
    (alpha) recursion in log space. ``'mean'`` divides each loss by its target length, then
    averages over the batch. See :class:`~torch.nn.CTCLoss`.
    """
    reduction = _reduction(None, None, reduction)
    in_lens, in_t = _lengths(input_lengths, "input_lengths")
    tg_lens, tg_t = _lengths(target_lengths, "target_lengths")
    if in_t != tg_t:
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be Tensors or both tuples of ints")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.dim() != 3:
        raise RuntimeError(f"ctc_loss(): expected log_probs to be 2-D or 3-D, got {lp.dim()}-D")
    T, N, C = lp.shape
    if blank < 0 or blank >= C:
        raise RuntimeError("blank must be in label range")
    if len(in_lens) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_lens) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in in_lens:
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {v} "
                               "(while checking arguments for ctc_loss_allocate_outputs)")
    if lp.device.type == "meta":
        # shapes only (a meta tensor has no targets to align); connected to
        # log_probs so that backward reaches it as on the CPU
        per_sample = lp.sum((0, 2))
        if reduction != "none":
            return per_sample.sum()
        return per_sample.squeeze(0) if unbatched else per_sample
    tg = targets.long()
    if unbatched and tg.dim() == 1:
        tg = tg.unsqueeze(0)
    rows = []
    if tg.dim() == 2:
        for L in tg_lens:
            if L > tg.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {L} at dimension 1, but got size "
                                   f"{tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                                   "ctc_loss_allocate_outputs)")
        flat = tg.tolist()
        rows = [flat[n][:tg_lens[n]] for n in range(N)]
    else:
        flat = tg.reshape(-1).tolist()
        if sum(tg_lens) > len(flat):
            raise RuntimeError(f"Expected tensor to have size at least {sum(tg_lens)} at dimension 0, but got size "
                               f"{len(flat)} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        pos = 0
        for L in tg_lens:
            rows.append(flat[pos:pos + L])
            pos += L
    S = 2 * max(tg_lens + [0]) + 1
    ext = [[blank] * S for _ in range(N)]
    for n, r in enumerate(rows):
        for i, c in enumerate(r):
            ext[n][2 * i + 1] = c
    skip = [[s >= 2 and ext[n][s] != blank and ext[n][s] != ext[n][s - 2] for s in range(S)] for n in range(N)]
    ext_t = _C.tensor(ext, dtype=_C.int64)
    skip_t = _C.tensor(skip, dtype=_C.bool)
    lp_ext = lp.gather(2, ext_t.unsqueeze(0).expand(T, N, S))  # (T, N, S)
    ninf = _C.full((), float("-inf"), dtype=lp.dtype)
    s_idx = _C.arange(S).unsqueeze(0)
    pad1 = _C.full((N, 1), float("-inf"), dtype=lp.dtype)
    pad2 = _C.full((N, 2), float("-inf"), dtype=lp.dtype)
    alpha = _s.where(s_idx < 2, lp_ext[0], ninf)
    alphas = [alpha]
    for t in range(1, T):
        a1 = _s.cat([pad1, alpha[:, :-1]], 1)
        a2 = _s.where(skip_t, _s.cat([pad2, alpha[:, :-2]], 1), ninf) if S > 2 else None
        alpha = _lse([alpha, a1] + ([a2] if a2 is not None else [])) + lp_ext[t]
        alphas.append(alpha)
    A = _s.stack(alphas, 0)  # (T, N, S)
    t_last = _C.tensor([max(v - 1, 0) for v in in_lens], dtype=_C.int64)
    n_idx = _C.arange(N)
    last = A[t_last, n_idx, _C.tensor([2 * L for L in tg_lens], dtype=_C.int64)]
    prev = A[t_last, n_idx, _C.tensor([max(2 * L - 1, 0) for L in tg_lens], dtype=_C.int64)]
    has_prev = _C.tensor([L > 0 for L in tg_lens], dtype=_C.bool)
    nll = -_lse([last, _s.where(has_prev, prev, ninf)])
    nll = _s.where(_C.tensor([v > 0 for v in in_lens], dtype=_C.bool), nll,
                   _s.where(_C.tensor([L == 0 for L in tg_lens], dtype=_C.bool), _zero_like(nll), -ninf))
    # PyTorch's backward returns exp(log_probs) - posterior (the gradient of the softmax
    # logits); this term is exactly zero forward and adds exp(log_probs) over each
    # sample's valid frames backward.
    e = lp.exp()
    valid = (_C.arange(T).unsqueeze(1) < _C.tensor(in_lens, dtype=_C.int64).unsqueeze(0)).unsqueeze(2)
    nll = nll + _s.where(valid, e - e.detach(), _zero_like(e)).sum((0, 2))
    if zero_infinity:
        nll = _s.where(nll.isinf(), _zero_like(nll), nll)
    if reduction == "none":
        return nll.reshape(()) if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    lens = _C.tensor([max(L, 1) for L in tg_lens], dtype=nll.dtype)
    return (nll / lens).mean()


# -- fused linear + cross entropy -----------------------------------------------------------------------


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    r"""Configuration of PyTorch's chunked :func:`linear_cross_entropy` path.

    Accepted and validated as PyTorch does; here every configuration runs the reference
    computation (full logits, then :func:`cross_entropy`), which gives the same values.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: object = None
    chunking_method: object = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, torch.float64}, "
                f"got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically.")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    r"""linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean", ignore_index=None, label_smoothing=0.0, options=None) -> Tensor

    :func:`cross_entropy` of ``linear(input, linear_weight, linear_bias)``; ``linear_weight``
    of shape ``(C, *K, in_features)`` gives a K-dimensional loss.
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
            f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = _F.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return _F.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                            label_smoothing=label_smoothing)


# -- sampling ----------------------------------------------------------------------------------------


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    r"""gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1) -> Tensor

    A sample from the Gumbel-Softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g ~ Gumbel(0, 1)``; with ``hard=True`` the one-hot of its argmax, whose gradient is the
    soft sample's (straight-through).
    """
    import warnings

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_C.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _C.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
