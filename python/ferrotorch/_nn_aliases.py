"""Top-level ``torch.*`` forms of the neural-network ops (``torch.batch_norm``, ``torch.conv2d``...).

PyTorch exposes the ATen operators behind ``torch.nn.functional`` at the top level too, with
ATen's signatures: every argument positional, reductions as integers (0 none, 1 mean, 2 sum),
interpolation and padding modes as integers, and some ops returning the auxiliary tensors their
backward uses (``native_layer_norm`` -> ``(out, mean, rstd)``). These wrappers translate to
the functional forms in :mod:`ferrotorch.nn.functional` and build those extra outputs from tensor
ops.
"""

import math
import warnings

from . import _C, _args
from ._C import Tensor

__all__ = [
    # activations
    "hardshrink", "threshold", "threshold_", "rrelu", "rrelu_", "prelu",
    # dropout
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout", "feature_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout",
    # normalisation
    "batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm", "native_layer_norm",
    "native_batch_norm", "native_group_norm", "norm_except_dim",
    "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
    "batch_norm_update_stats",
    # pooling
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d",
    # convolution
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "conv_tbc",
    # embeddings, sampling, shape
    "embedding", "embedding_bag", "embedding_renorm_", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
    "affine_grid_generator", "constant_pad_nd", "pixel_shuffle", "pixel_unshuffle", "cdist",
    # losses
    "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss",
    "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
    # recurrent
    "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn_tanh", "rnn_relu", "lstm", "gru",
]


def _F():
    # nn.functional imports the top-level package, so it is looked up on use.
    from .nn import functional
    return functional


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r):
    if isinstance(r, bool) or not isinstance(r, int) or r not in _REDUCTIONS:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _REDUCTIONS[r]


def _stride_arg(stride):
    # ATen's ``int[] stride=[]`` means "same as kernel_size".
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


# ----- activations -----------------------------------------------------------------------


def hardshrink(input, lambd=0.5):
    r"""hardshrink(input, lambd=0.5) -> Tensor

    ``input`` where ``|input| > lambd``, else 0. See :func:`torch.nn.functional.hardshrink`.
    """
    return _F().hardshrink(input, lambd)


def threshold(input, threshold, value):
    r"""threshold(input, threshold, value) -> Tensor

    ``input`` where ``input > threshold``, else ``value``.
    """
    return _F().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    r"""threshold_(input, threshold, value) -> Tensor

    In-place :func:`threshold`.
    """
    return _F().threshold_(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    r"""rrelu(input, lower=1./8, upper=1./3, training=False, generator=None) -> Tensor

    Randomised leaky ReLU: negative inputs are scaled by a slope drawn from ``U(lower, upper)``
    in training, by ``(lower + upper) / 2`` otherwise.
    """
    if generator is None or not training:
        return _F().rrelu(input, lower, upper, training)
    return _rrelu_gen(input, lower, upper, generator, False)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    r"""rrelu_(input, lower=1./8, upper=1./3, training=False, generator=None) -> Tensor

    In-place :func:`rrelu`.
    """
    if generator is None or not training:
        return _F().rrelu_(input, lower, upper, training)
    return _rrelu_gen(input, lower, upper, generator, True)


def _rrelu_gen(input, lower, upper, generator, inplace):
    from .autograd.grad_mode import no_grad
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    with no_grad():
        slope = _C.rand(*input.shape, dtype=input.dtype, device=input.device, generator=generator)
        slope = slope * (upper - lower) + lower
        noise = _C.ones_like(input).where(input > 0, slope)
    return input.mul_(noise) if inplace else input * noise


def prelu(input, weight):
    r"""prelu(input, weight) -> Tensor

    ``max(0, x) + weight * min(0, x)`` with ``weight`` per channel (dim 1) or shared.
    """
    return _F().prelu(input, weight)


# ----- dropout ---------------------------------------------------------------------------


def _check_p(p):
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_feature(input):
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


def dropout(input, p, train):
    r"""dropout(input, p, train) -> Tensor

    Zeroes elements with probability ``p`` and scales the rest by ``1 / (1 - p)`` when
    ``train``; returns ``input`` itself otherwise.
    """
    _check_p(p)
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    r"""dropout_(input, p, train) -> Tensor

    In-place :func:`dropout`.
    """
    _check_p(p)
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    r"""alpha_dropout(input, p, train) -> Tensor

    Dropout that keeps a SELU network's mean and variance (see ``nn.AlphaDropout``).
    """
    _check_p(p)
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    r"""alpha_dropout_(input, p, train) -> Tensor

    In-place :func:`alpha_dropout`.
    """
    _check_p(p)
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    r"""feature_dropout(input, p, train) -> Tensor

    Zeroes whole channels (``input[n, c]``) with probability ``p`` and scales the rest by
    ``1 / (1 - p)``.
    """
    _check_p(p)
    if not train or p == 0:
        return input
    _check_feature(input)
    return _F()._feature_dropout(input, p, True, False)


def feature_dropout_(input, p, train):
    r"""feature_dropout_(input, p, train) -> Tensor

    In-place :func:`feature_dropout`.
    """
    _check_p(p)
    if not train or p == 0:
        return input
    _check_feature(input)
    return _F()._feature_dropout(input, p, True, True)


def feature_alpha_dropout(input, p, train):
    r"""feature_alpha_dropout(input, p, train) -> Tensor

    :func:`alpha_dropout` on whole channels.
    """
    _check_p(p)
    if not train or p == 0:
        return input
    _check_feature(input)
    return _F().feature_alpha_dropout(input, p, True)


def feature_alpha_dropout_(input, p, train):
    r"""feature_alpha_dropout_(input, p, train) -> Tensor

    In-place :func:`feature_alpha_dropout`.
    """
    _check_p(p)
    if not train or p == 0:
        return input
    _check_feature(input)
    return _F().feature_alpha_dropout(input, p, True, inplace=True)


def native_dropout(input, p, train):
    r"""native_dropout(input, p, train) -> (Tensor, Tensor)

    :func:`dropout` that also returns its boolean keep-mask.
    """
    _check_p(p)
    if train is None or train:
        if p == 1:
            return input * 0.0, _C.zeros_like(input, dtype=_C.bool)
        mask = _C.rand_like(input) >= p
        return input * mask * (1.0 / (1.0 - p)), mask
    return input.clone(), _C.ones_like(input, dtype=_C.bool)


# ----- normalisation ---------------------------------------------------------------------


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    r"""batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled) -> Tensor

    Batch normalisation over dim 1 (ATen argument order; ``cudnn_enabled`` picks no backend here).
    """
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    r"""instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled) -> Tensor

    Instance normalisation (per sample and channel), ATen argument order.
    """
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    r"""group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True) -> Tensor

    Group normalisation; see :func:`torch.nn.functional.group_norm`.
    """
    return _F().group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    r"""layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True) -> Tensor

    Layer normalisation over the trailing ``normalized_shape`` dims.
    """
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    r"""rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor

    Root-mean-square normalisation over the trailing ``normalized_shape`` dims.
    """
    return _F().rms_norm(input, normalized_shape, weight, eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    r"""native_layer_norm(input, normalized_shape, weight, bias, eps) -> (Tensor, Tensor, Tensor)

    :func:`layer_norm` returning ``(output, mean, rstd)``; ``mean`` and ``rstd`` (``1/sqrt(var + eps)``,
    biased variance) keep the normalised dims as size 1.
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    axis = input.dim() - len(normalized_shape)
    dims = tuple(range(axis, input.dim()))
    from .autograd.grad_mode import no_grad
    with no_grad():
        # The statistics are accumulated in the op's compute type (float for half inputs).
        x = input.float() if input.dtype in (_C.float16, _C.bfloat16) else input
        if input.numel() == 0:
            stat_shape = tuple(input.shape[:axis]) + (1,) * len(dims)
            mean = _C.zeros(stat_shape, dtype=x.dtype)
            rstd = _C.zeros(stat_shape, dtype=x.dtype)
        else:
            var, mean = _var_mean(x, dims)
            rstd = (var + eps).rsqrt()
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def _var_mean(x, dims):
    from . import var_mean
    return var_mean(x, dim=dims, unbiased=False, keepdim=True)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    r"""native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) -> (Tensor, Tensor, Tensor)

    :func:`batch_norm` returning ``(output, save_mean, save_invstd)``: in training the batch
    mean and ``1/sqrt(var + eps)`` per channel; in evaluation two empty tensors.
    """
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        e = _C.empty(0, dtype=input.dtype, device=input.device)
        return out, e, _C.empty(0, dtype=input.dtype, device=input.device)
    from .autograd.grad_mode import no_grad
    dims = (0,) + tuple(range(2, input.dim()))
    with no_grad():
        var, mean = _var_mean(input, dims)
        invstd = (var + eps).rsqrt()
    return out, mean.reshape(-1), invstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    r"""native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (Tensor, Tensor, Tensor)

    :func:`group_norm` returning ``(output, mean, rstd)``, the statistics of shape ``(N, group)``.
    """
    out = _F().group_norm(input, group, weight, bias, eps)
    from .autograd.grad_mode import no_grad
    with no_grad():
        x = input.reshape(N, group, -1)
        if x.shape[-1] == 0:
            mean = _C.zeros(N, group, dtype=input.dtype)
            rstd = _C.zeros(N, group, dtype=input.dtype)
        else:
            var, mean = _var_mean(x, (2,))
            mean, rstd = mean.reshape(N, group), (var + eps).rsqrt().reshape(N, group)
    return out, mean, rstd


def _channel_dims(input):
    return (0,) + tuple(range(2, input.dim()))


def _stat_input(input):
    # Statistics accumulate in float for half inputs (the kernels' accumulate type).
    return input.float() if input.dtype in (_C.float16, _C.bfloat16) else input


def _channel_shape(input):
    return (1, -1) + (1,) * (input.dim() - 2)


def batch_norm_stats(input, eps):
    r"""batch_norm_stats(input, eps) -> (Tensor, Tensor)

    Per-channel mean and ``1/sqrt(var + eps)`` (biased variance) over every dim but 1: one
    process's share of synchronised batch norm.
    """
    from .autograd.grad_mode import no_grad
    with no_grad():
        var, mean = _var_mean(_stat_input(input), _channel_dims(input))
        return mean.reshape(-1), (var + eps).rsqrt().reshape(-1)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    r"""batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> Tensor

    Normalises ``input`` with given per-channel ``mean`` and ``invstd``, then applies
    ``weight`` and ``bias``.
    """
    shape = _channel_shape(input)
    out = (input - mean.reshape(shape).to(input.dtype)) * invstd.reshape(shape).to(input.dtype)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    r"""batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts) -> (Tensor, Tensor)

    Merges per-process statistics (rows of ``mean``/``invstd``, ``counts`` elements each) into
    the global mean and ``invstd``, and updates the running statistics (unbiased variance) in place.
    """
    from .autograd.grad_mode import no_grad
    with no_grad():
        acc = mean.dtype
        cnt = counts.to(acc).reshape(-1, 1)
        n = cnt.sum()
        gmean = (cnt * mean).sum(0) / n
        var = invstd.reciprocal().pow(2) - eps
        m2 = (cnt * (var + (mean - gmean).pow(2))).sum(0)
        gvar = m2 / n
        ginvstd = (gvar + eps).rsqrt()
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + gmean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = m2 / (n - 1)
            running_var.copy_(running_var * (1 - momentum) + unbiased.to(running_var.dtype) * momentum)
    return gmean, ginvstd


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    r"""batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count) -> (Tensor, Tensor)

    :func:`batch_norm_gather_stats_with_counts` with ``count`` elements in every process.
    """
    counts = _C.full((mean.shape[0],), count, dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps,
                                               counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    r"""batch_norm_update_stats(input, running_mean, running_var, momentum) -> (Tensor, Tensor)

    The per-channel mean and biased variance of ``input``; updates the running statistics
    (unbiased variance) in place.
    """
    from .autograd.grad_mode import no_grad
    with no_grad():
        x = _stat_input(input)
        var, mean = _var_mean(x, _channel_dims(input))
        mean, var = mean.reshape(-1), var.reshape(-1)
        n = input.numel() // max(input.shape[1], 1)
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else var * float("nan")
            running_var.copy_(running_var * (1 - momentum) + unbiased.to(running_var.dtype) * momentum)
    return mean, var


def norm_except_dim(v, pow=2, dim=0):
    r"""norm_except_dim(v, pow=2, dim=0) -> Tensor

    The ``pow``-norm over every dim but ``dim`` (kept, the others size 1); ``dim=-1`` gives the
    norm of the whole tensor. This is the ``g`` of weight normalisation.
    """
    if dim == -1:
        return v.norm(pow)
    dims = [d for d in range(v.dim()) if d != dim]
    if not dims:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=dims, keepdim=True)


# ----- pooling ---------------------------------------------------------------------------


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool1d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    1-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    return _F().max_pool1d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool1d_with_indices(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> (Tensor, Tensor)

    :func:`max_pool1d` that also returns the argmax positions.
    """
    return _F().max_pool1d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode,
                           return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool2d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    2-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    return _F().max_pool2d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool3d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    3-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    return _F().max_pool3d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    r"""avg_pool1d(input, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True) -> Tensor

    1-d average pooling; an empty ``stride`` means ``kernel_size``.
    """
    return _F().avg_pool1d(input, kernel_size, _stride_arg(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    r"""adaptive_avg_pool1d(input, output_size) -> Tensor

    1-d average pooling to ``output_size`` positions.
    """
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    r"""adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)

    1-d max pooling to ``output_size`` positions; returns the values and their indices.
    """
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


# ----- convolution -----------------------------------------------------------------------


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    See :func:`torch.nn.functional.conv1d`.
    """
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    See :func:`torch.nn.functional.conv2d`.
    """
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    r"""conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    See :func:`torch.nn.functional.conv3d`.
    """
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor

    See :func:`torch.nn.functional.conv_transpose1d`.
    """
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor

    See :func:`torch.nn.functional.conv_transpose2d`.
    """
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    r"""conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor

    See :func:`torch.nn.functional.conv_transpose3d`.
    """
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    r"""convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) -> Tensor

    The general convolution: 1-, 2- or 3-d by ``weight.dim() - 2``, transposed or not.
    """
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"Expected {weight.dim() - 1}D (unbatched) or {weight.dim()}D (batched) input to "
                           f"convolution, but got input of size: {list(input.shape)}")
    F = _F()
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):
    r"""conv_tbc(input, weight, bias, pad=0) -> Tensor

    1-d convolution on ``(time, batch, channel)`` input; see :func:`torch.nn.functional.conv_tbc`.
    """
    return _F().conv_tbc(input, weight, bias, pad)


# ----- embeddings, sampling, shape --------------------------------------------------------


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    r"""embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False) -> Tensor

    Rows of ``weight`` at ``indices`` (ATen argument order: the weight first). ``padding_idx``
    (``-1``: none) is a row whose gradient stays zero.
    """
    pad = None if padding_idx is None or padding_idx < 0 else padding_idx
    return _F().embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    r"""embedding_renorm_(input, indices, max_norm, norm_type) -> Tensor

    Rescales, in place, the rows of ``input`` named in ``indices`` whose ``norm_type``-norm exceeds
    ``max_norm`` to norm ``max_norm`` (with PyTorch's ``1e-7`` guard).
    """
    from .autograd.grad_mode import no_grad
    with no_grad():
        rows = indices.reshape(-1).unique()
        sel = input.index_select(0, rows)
        norms = sel.norm(norm_type, dim=1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, _C.ones_like(norms))
        input.index_copy_(0, rows, sel * scale.to(input.dtype))
    return input


_EB_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    r"""embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None) -> (Tensor, Tensor, Tensor, Tensor)

    Sums (``mode=0``), averages (1) or maxes (2) bags of embedding rows; returns
    ``(output, offset2bag, bag_size, max_indices)`` as PyTorch's CPU kernel does: ``offset2bag``
    (the bag of each index) is empty on the float32 sum fast path, ``bag_size`` counts the
    non-padding indices of each bag (zeros for sums), ``max_indices`` holds the row chosen per bag
    and feature for ``max`` (``bag_size`` for ``mean``, zeros for ``sum``).
    """
    if mode not in _EB_MODES:
        raise RuntimeError("mode has to be one of sum, mean or max")
    pad = padding_idx
    if pad is not None and pad < 0:
        pad = pad + weight.shape[0]
    F = _F()
    if indices.dim() == 2:
        # ATen's form takes the offsets as given: the 2-d batching is nn.functional's.
        indices = indices.reshape(-1)
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, _EB_MODES[mode], sparse,
                          per_sample_weights, include_last_offset, pad)
    idt = indices.dtype
    from .autograd.grad_mode import no_grad
    with no_grad():
        flat = indices
        offs = offsets.to(idt)
        if include_last_offset:
            offs = offs[:-1]
        nb = offs.shape[0]
        n = flat.shape[0]
        # Bag of each index: the number of bag starts at or before it, less one.
        pos = _C.arange(n, dtype=idt)
        bag_of = (pos.unsqueeze(1) >= offs.unsqueeze(0)).to(idt).sum(1) - 1 if nb else pos
        keep = (flat != pad) if pad is not None else _C.ones(n, dtype=_C.bool)
        fast = mode == 0 and padding_idx is None and weight.dtype == _C.float32
        offset2bag = _C.empty(0, dtype=idt) if fast else bag_of.clone()
        n_aux = offsets.shape[0] if mode == 0 else nb
        if mode == 0:
            bag_size = _C.zeros(n_aux, dtype=idt)
            max_indices = _C.zeros(n_aux, dtype=idt)
        else:
            bag_size = _C.zeros(nb, dtype=idt)
            if n and nb:
                bag_size = bag_size.index_add(0, bag_of[keep], _C.ones(int(keep.sum()), dtype=idt))
            if mode == 1:
                max_indices = bag_size.clone()
            else:
                max_indices = _embedding_bag_argmax(weight, flat, bag_of, keep, nb, idt)
    return out, offset2bag, bag_size, max_indices


def _embedding_bag_argmax(weight, flat, bag_of, keep, nb, idt):
    # Per bag and feature, the row that won the max (first one on ties); empty bags give 0.
    d = weight.shape[1]
    result = _C.zeros(nb, d, dtype=idt)
    if flat.shape[0] == 0 or nb == 0:
        return result
    rows = flat[keep]
    bags = bag_of[keep]
    if rows.shape[0] == 0:
        return result
    vals = weight.index_select(0, rows)
    best = _C.full((nb, d), float("-inf"), dtype=weight.dtype).scatter_reduce(
        0, bags.to(_C.int64).unsqueeze(1).expand(-1, d), vals, "amax", include_self=True)
    hit = vals == best.index_select(0, bags)
    # The first hit per (bag, feature): the smallest position among hits.
    n = rows.shape[0]
    pos = _C.arange(n, dtype=_C.int64).unsqueeze(1).expand(-1, d)
    big = _C.full((n, d), n, dtype=_C.int64)
    first = _C.full((nb, d), n, dtype=_C.int64).scatter_reduce(
        0, bags.to(_C.int64).unsqueeze(1).expand(-1, d), pos.where(hit, big), "amin", include_self=True)
    valid = first < n
    picked = rows.to(_C.int64).index_select(0, first.clamp(max=n - 1).reshape(-1)).reshape(nb, d)
    return picked.where(valid, _C.zeros_like(picked)).to(idt)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    r"""grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    :func:`torch.nn.functional.grid_sample` with integer modes: interpolation 0 bilinear,
    1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection.
    """
    if interpolation_mode not in _INTERP:
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0, 1 or 2, but got: "
                           f"{interpolation_mode}")
    if padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0, 1 or 2, but got: {padding_mode}")
    return _F().grid_sample(input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode], align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    r"""grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    :func:`grid_sampler` for 4-d input.
    """
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    r"""grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners) -> Tensor

    :func:`grid_sampler` for 5-d input.
    """
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    r"""affine_grid_generator(theta, size, align_corners) -> Tensor

    The sampling grid of the affine maps ``theta``; see :func:`torch.nn.functional.affine_grid`.
    """
    return _F().affine_grid(theta, list(size), align_corners)


def constant_pad_nd(input, pad, value=0):
    r"""constant_pad_nd(input, pad, value=0) -> Tensor

    Pads (or, with negative amounts, crops) the trailing dims with ``value``; ``pad`` lists
    ``(left, right)`` pairs from the last dim backwards.
    """
    return _F().pad(input, list(pad), "constant", value)


def pixel_shuffle(input, upscale_factor):
    r"""pixel_shuffle(input, upscale_factor) -> Tensor

    ``(*, C r^2, H, W) -> (*, C, H r, W r)``.
    """
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    r"""pixel_unshuffle(input, downscale_factor) -> Tensor

    ``(*, C, H r, W r) -> (*, C r^2, H, W)``.
    """
    return _F().pixel_unshuffle(input, downscale_factor)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    r"""Computes batched the p-norm distance between each pair of the two collections of row vectors.

    Args:
        x1 (Tensor): input tensor of shape :math:`B \times P \times M`.
        x2 (Tensor): input tensor of shape :math:`B \times R \times M`.
        p: p value for the p-norm distance to calculate between each vector pair
            :math:`\in [0, \infty]`.
        compute_mode:
            'use_mm_for_euclid_dist_if_necessary' - will use matrix multiplication approach to calculate
            euclidean distance (p = 2) if P > 25 or R > 25
            'use_mm_for_euclid_dist' - will always use matrix multiplication approach to calculate
            euclidean distance (p = 2)
            'donot_use_mm_for_euclid_dist' - will never use matrix multiplication approach to calculate
            euclidean distance (p = 2)
            Default: use_mm_for_euclid_dist_if_necessary.

    If x1 has shape :math:`B \times P \times M` and x2 has shape :math:`B \times R \times M` then the
    output will have shape :math:`B \times P \times R`.
    """
    modes = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": True,
             "donot_use_mm_for_euclid_dist": False, None: None}
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    use_mm = modes[compute_mode]
    P, R = x1.shape[-2], x2.shape[-2]
    if use_mm is None:
        use_mm = P > 25 or R > 25
    if p == 2 and use_mm:
        # ||a-b||^2 = |a|^2 - 2 a.b + |b|^2 as one batched product (PyTorch's _euclidean_dist),
        # clamped at zero against rounding before the square root.
        a2 = (x1 * x1).sum(-1, keepdim=True)
        b2 = (x2 * x2).sum(-1, keepdim=True)
        x1a = _cat([x1 * -2, a2, _C.ones_like(a2)], -1)
        x2a = _cat([x2, _C.ones_like(b2), b2], -1)
        return x1a.matmul(x2a.transpose(-1, -2)).clamp_min(0).sqrt()
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        # A count, with the zero gradient PyTorch gives it (the clamp keeps the graph).
        return (diff != 0).to(x1.dtype).sum(-1) + diff.clamp(max=0).sum(-1)
    if math.isinf(p):
        return diff.amax(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return diff.sum(-1)
    return diff.pow(p).sum(-1).pow(1.0 / p)


def _cat(ts, dim):
    from . import cat
    return cat(ts, dim)


# ----- losses ----------------------------------------------------------------------------


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    r"""binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1) -> Tensor

    See :func:`torch.nn.functional.binary_cross_entropy_with_logits`; ``reduction`` is 0 none,
    1 mean, 2 sum.
    """
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    r"""cosine_embedding_loss(input1, input2, target, margin=0., reduction=1) -> Tensor

    See :func:`torch.nn.functional.cosine_embedding_loss`.
    """
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    r"""ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False) -> Tensor

    See :func:`torch.nn.functional.ctc_loss`.
    """
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    r"""hinge_embedding_loss(input, target, margin=1., reduction=1) -> Tensor

    See :func:`torch.nn.functional.hinge_embedding_loss`.
    """
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=1, *, log_target=False):
    r"""kl_div(input, target, reduction=1, *, log_target=False) -> Tensor

    Pointwise KL divergence ``target * (log(target) - input)``; ``reduction=1`` averages over all
    elements (PyTorch's ATen op; ``F.kl_div``'s ``'batchmean'`` has no integer code).
    """
    with warnings.catch_warnings():
        # The functional form warns that 'mean' is not the true KL divergence; ATen's does not.
        warnings.simplefilter("ignore")
        return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    r"""margin_ranking_loss(input1, input2, target, margin=0., reduction=1) -> Tensor

    See :func:`torch.nn.functional.margin_ranking_loss`.
    """
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r"""poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor

    See :func:`torch.nn.functional.poisson_nll_loss`.
    """
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1):
    r"""triplet_margin_loss(anchor, positive, negative, margin=1., p=2., eps=1e-06, swap=False, reduction=1) -> Tensor

    See :func:`torch.nn.functional.triplet_margin_loss`.
    """
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


# ----- recurrent -------------------------------------------------------------------------


def _linear(x, w, b):
    return _F().linear(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One Elman step: ``tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)``.
    """
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One Elman step with ReLU: ``relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)``.
    """
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> (Tensor, Tensor)

    One LSTM step; ``hx`` is ``(h, c)``, the gates are stacked ``i, f, g, o``.
    """
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    from .nn._rnn import _lstm_step
    return _lstm_step(_linear(input, w_ih, b_ih), h, c, w_hh, b_hh, None)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> Tensor

    One GRU step; the gates are stacked ``r, z, n``.
    """
    from .nn._rnn import _gru_step
    return _gru_step(_linear(input, w_ih, b_ih), hx, None, w_hh, b_hh, None)[0]


def _rnn(mode, data, batch_sizes, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional):
    """Runs the stacked layers over packed ``data``; returns (packed output, h_n, c_n)."""
    from .nn._rnn import _run_direction
    from . import stack
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    proj = len(params) == num_layers * dirs * (per + 1)
    if not proj and len(params) != num_layers * dirs * per:
        raise RuntimeError(f"{mode.lower()}: expected {num_layers * dirs * per} parameter tensors, got {len(params)}")
    stride = per + (1 if proj else 0)
    hs, cs = [], []
    layer_input = data
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = (layer * dirs + d) * stride
            w_ih, w_hh = params[k], params[k + 1]
            b_ih, b_hh = (params[k + 2], params[k + 3]) if has_biases else (None, None)
            w_hr = params[k + per] if proj else None
            idx = layer * dirs + d
            out, h, c = _run_direction(mode, layer_input, batch_sizes, h0[idx], None if c0 is None else c0[idx],
                                       w_ih, w_hh, b_ih, b_hh, w_hr, d == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        layer_input = outs[0] if dirs == 1 else _cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            layer_input = _F().dropout(layer_input, p=dropout, training=True)
    return layer_input, stack(hs, 0), (stack(cs, 0) if c0 is not None else None)


def _rnn_entry(mode, args, kwargs, name):
    # Two ATen overloads: (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    # batch_first) and (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    # bidirectional); the packed one has a tensor where the other has the hidden state.
    args = list(args)
    packed = len(args) >= 2 and isinstance(args[1], Tensor) and (
        mode == "LSTM" or (len(args) >= 3 and isinstance(args[2], Tensor)))
    if packed:
        names = ["data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional"]
    else:
        names = ["input", "hx", "params", "has_biases", "num_layers", "dropout", "train", "bidirectional",
                 "batch_first"]
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} were given")
    vals = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in vals:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        vals[k] = v
    missing = [n for n in names if n not in vals]
    if missing:
        raise TypeError(f"{name}() missing required argument '{missing[0]}'")
    hx = vals["hx"]
    if mode == "LSTM":
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    if packed:
        data = vals["data"]
        batch_sizes = [int(b) for b in vals["batch_sizes"].tolist()]
    else:
        x = vals["input"]
        if vals["batch_first"]:
            x = x.transpose(0, 1)
        T, B = x.shape[0], x.shape[1]
        data, batch_sizes = x.reshape(T * B, x.shape[2]), [B] * T
    out, h_n, c_n = _rnn(mode, data, batch_sizes, h0, c0, list(vals["params"]), vals["has_biases"],
                         vals["num_layers"], vals["dropout"], vals["train"], vals["bidirectional"])
    if not packed:
        out = out.reshape(T, B, out.shape[-1])
        if vals["batch_first"]:
            out = out.transpose(0, 1)
    return (out, h_n, c_n) if mode == "LSTM" else (out, h_n)


def rnn_tanh(*args, **kwargs):
    r"""rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) -> (Tensor, Tensor)

    A stacked Elman RNN over a whole sequence (also ``rnn_tanh(data, batch_sizes, hx, params, ...)``
    for packed data). ``params`` lists ``w_ih, w_hh[, b_ih, b_hh]`` per layer and direction.
    """
    return _rnn_entry("RNN_TANH", args, kwargs, "rnn_tanh")


def rnn_relu(*args, **kwargs):
    r"""rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) -> (Tensor, Tensor)

    :func:`rnn_tanh` with ReLU.
    """
    return _rnn_entry("RNN_RELU", args, kwargs, "rnn_relu")


def lstm(*args, **kwargs):
    r"""lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) -> (Tensor, Tensor, Tensor)

    A stacked LSTM over a whole sequence; ``hx`` is ``(h_0, c_0)``, ``params`` lists
    ``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` per layer and direction. Returns ``(output, h_n, c_n)``.
    """
    return _rnn_entry("LSTM", args, kwargs, "lstm")


def gru(*args, **kwargs):
    r"""gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) -> (Tensor, Tensor)

    A stacked GRU over a whole sequence.
    """
    return _rnn_entry("GRU", args, kwargs, "gru")


def _hardshrink_method(self, lambd=0.5):
    """See :func:`ferrotorch.hardshrink`."""
    return hardshrink(self, lambd)


def _prelu_method(self, weight):
    """See :func:`ferrotorch.prelu`."""
    return prelu(self, weight)


Tensor.hardshrink = _hardshrink_method
Tensor.prelu = _prelu_method
