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
from . import _tensor_methods as _methods

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


def _shape_errors_first(fn, input, *args, **kwargs):
    # PyTorch checks shapes and arguments before it dispatches on the dtype: an input of a dtype
    # the kernel lacks gets those errors first, so the float op runs on a zero-memory stand-in.
    if not input.dtype.is_floating_point:
        fn(_C.zeros((), dtype=_C.float32).expand(tuple(input.shape)), *args, **kwargs)


_WORDS = {2: "two", 3: "three"}


def _pool_lists(op, n, **lists):
    # The length checks the ops make of their int[] arguments (a single int always passes).
    for name, v in lists.items():
        if not isinstance(v, (list, tuple)):
            continue
        k = len(v)
        if name == "stride" and k == 0:
            continue
        if n == 1:
            if op != "max_pool1d":
                ok = k == 1
                msg = f"{op.replace('_with_indices', '')}() argument '{name}' should contain one int (got {k})"
            else:
                ok = k == 1
                what = {"kernel_size": "an int, list of ints or", "stride": "None, an int, list of ints, or",
                        "padding": "an int, list of ints, or", "dilation": "an int, list of ints or"}[name]
                msg = f"max_pool1d() {name} must be {what} tuple of ints of size 1 but got size {k}"
        else:
            ok = k in (1, n)
            lead = {"kernel_size": "either be", "stride": "either be omitted,", "padding": "either be",
                    "dilation": "be either"}[name]
            msg = f"{op}: {name} must {lead} a single int, or a tuple of {_WORDS[n]} ints"
        if not ok:
            raise RuntimeError(msg)


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
    lower, upper = _check_rrelu(lower, upper)
    if generator is None or not training:
        return _F().rrelu(input, lower, upper, training)
    return _rrelu_gen(input, lower, upper, generator, False)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    r"""rrelu_(input, lower=1./8, upper=1./3, training=False, generator=None) -> Tensor

    In-place :func:`rrelu`. Unlike :func:`rrelu` it accepts infinite bounds
    outside training (the slope is their mean), as PyTorch's in-place kernel does.
    """
    lower, upper = _check_rrelu(lower, upper, finite=False)
    if training and input.is_floating_point() and not (math.isfinite(lower) and math.isfinite(upper)):
        # the uniform draw of the slopes refuses an infinite range
        raise RuntimeError(
            "Expected to - from <= std::numeric_limits<T>::max() to be true, but got false.  "
            "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    if generator is None or not training:
        return _F().rrelu_(input, lower, upper, training)
    return _rrelu_gen(input, lower, upper, generator, True)


def _check_rrelu(lower, upper, finite=True):
    # Scalars: a 0-d tensor bound is its value as a Python number (no arithmetic in its dtype).
    lo, hi = float(_args.number(lower, "rrelu", "lower", 2)), float(_args.number(upper, "rrelu", "upper", 3))
    for name, v in (("lower", lo), ("upper", hi)):
        if finite and not math.isfinite(v):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {v}")
    if not lo <= hi:  # a NaN bound fails too
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return lo, hi


def _rrelu_gen(input, lower, upper, generator, inplace):
    from .autograd.grad_mode import no_grad
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _F()._rrelu_training_checks(input, lower, upper)
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
    # ATen's batch_norm: no batch-size check (F.batch_norm's is Python-only).
    return _C._batch_norm(input, weight, bias, running_mean, running_var, bool(training), float(momentum), float(eps))

def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    r"""instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled) -> Tensor

    Instance normalisation (per sample and channel), ATen argument order: batch_norm over the
    ``(1, N*C, ...)`` view with the parameters and running statistics repeated per sample; the
    running statistics then take the mean of their per-sample updates.
    """
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got {1 if input.dim() else 0})")
    b, c = input.shape[0], input.shape[1]
    shape = [1, b * c] + list(input.shape[2:])

    def rep(t):
        return None if t is None else t.repeat(b)

    rm, rv = rep(running_mean), rep(running_var)
    out = _C._native_batch_norm(input.contiguous().view(shape), rep(weight), rep(bias), rm, rv,
                                bool(use_input_stats), float(momentum), float(eps))[0]
    from .autograd.grad_mode import no_grad
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    r"""group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True) -> Tensor

    Group normalisation; see :func:`torch.nn.functional.group_norm`.
    """
    # The native op makes ATen's checks (no batch-size check: F.group_norm's is Python-only).
    return _C._native_group_norm(input, num_groups, weight, bias, float(eps))[0]

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
    return _C._native_batch_norm(input, weight, bias, running_mean, running_var, bool(training),
                                 float(momentum), float(eps))

def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    r"""native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (Tensor, Tensor, Tensor)

    :func:`group_norm` returning ``(output, mean, rstd)``, the statistics of shape ``(N, group)``.
    """
    return _C._native_group_norm(input, group, weight, bias, float(eps))

def _channel_dims(input):
    return (0,) + tuple(range(2, input.dim()))


def _stat_input(input):
    # Statistics accumulate in float for half inputs (the kernels' accumulate type).
    return input.float() if input.dtype in (_C.float16, _C.bfloat16) else input


def _channel_shape(input):
    return (1, -1) + (1,) * (input.dim() - 2)


def _cuda_only(op, input):
    # PyTorch registers the synchronised-batch-norm kernels for CUDA only.
    if input.device.type != "cuda":
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the '{input.device.type.upper()}' backend. This could "
            f"be because the operator doesn't exist for this backend, or was omitted during the selective/custom "
            f"build process (if using custom build). 'aten::{op}' is only available for these backends: [CUDA].")


def batch_norm_stats(input, eps):
    r"""batch_norm_stats(input, eps) -> (Tensor, Tensor)

    Per-channel mean and ``1/sqrt(var + eps)`` (biased variance) over every dim but 1: one
    process's share of synchronised batch norm. CUDA only, as in PyTorch.
    """
    _cuda_only("batch_norm_stats", input)
    from .autograd.grad_mode import no_grad
    with no_grad():
        var, mean = _var_mean(_stat_input(input), _channel_dims(input))
        return mean.reshape(-1), (var + eps).rsqrt().reshape(-1)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    r"""batch_norm_elemt(input, weight, bias, mean, invstd, eps) -> Tensor

    Normalises ``input`` with given per-channel ``mean`` and ``invstd``, then applies
    ``weight`` and ``bias``. CUDA only, as in PyTorch.
    """
    _cuda_only("batch_norm_elemt", input)
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
    CUDA only, as in PyTorch.
    """
    _cuda_only("batch_norm_gather_stats_with_counts", input)
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

    :func:`batch_norm_gather_stats_with_counts` with ``count`` elements in every process. CUDA only.
    """
    _cuda_only("batch_norm_gather_stats", input)
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
    if dim != -1:
        # ATen sizes the output (or transposes ``dim`` to the front) before it takes the norm,
        # so a bad dim is reported before a bad dtype.
        if v.dim() == 0 and dim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        lo, hi = -max(v.dim(), 1), max(v.dim(), 1) - 1
        if not lo <= dim <= hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    if not (v.dtype.is_floating_point or v.dtype.is_complex):
        from ._random_ops import _scalar_name
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_name(v.dtype)} instead.")
    return _norm_except_dim(v, pow, dim)


def _norm_except_dim(v, pow, dim):
    # As ATen: a 2-d view with ``dim`` as rows (the first) or columns (the last), else ``dim``
    # transposed to the front; views of empty tensors fail as PyTorch's do.
    if dim == -1:
        return v.norm(pow)
    if dim == 0 or dim == v.dim() - 1:
        first = dim == 0
        n = v.shape[dim]
        if v.numel() == 0 and n == 0 and v.dim() > 1:
            shape = [0, -1] if first else [-1, 0]
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                               f"dimension size -1 can be any value and is ambiguous")
        out = [1] * v.dim()
        out[dim] = n
        flat = v.contiguous().reshape((n, -1) if first else (-1, n))
        return flat.norm(pow, dim=1 if first else 0).reshape(out)
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# ----- pooling ---------------------------------------------------------------------------


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool1d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    1-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    _pool_lists("max_pool1d", 1, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    return _max_pool1d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode, False)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool1d_with_indices(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> (Tensor, Tensor)

    :func:`max_pool1d` that also returns the argmax positions.
    """
    _pool_lists("max_pool1d_with_indices", 1, kernel_size=kernel_size, stride=stride, padding=padding,
                dilation=dilation)
    return _max_pool1d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode, True)


def _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, indices):
    F = _F()
    _shape_errors_first(F.max_pool1d, input, kernel_size, stride, padding, dilation, ceil_mode)
    if input.dim() == 3 and input.shape[0] == 0:
        # PyTorch's dtype dispatch comes before its empty-batch answer: max_pool1d's own
        # kernel takes floating dtypes only, the with-indices form (max_pool2d's) all but bool.
        if not indices and not input.dtype.is_floating_point or indices and input.dtype == _C.bool:
            from ._random_ops import _not_impl
            raise _not_impl("max_pool2d" if indices else "max_pool1d_impl", input.dtype)
        # An empty batch: the output length of one sample, no elements.
        proxy = _C.zeros((), dtype=_C.float32).expand((1,) + tuple(input.shape[1:]))
        shape = (0,) + tuple(F.max_pool1d(proxy, kernel_size, stride, padding, dilation, ceil_mode).shape[1:])
        out = _empty_result(input, shape)
        return (out, _C.zeros(shape, dtype=_C.int64, device=input.device)) if indices else out
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=indices)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool2d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    2-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    _pool_lists("max_pool2d", 2, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    _shape_errors_first(_F().max_pool2d, input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)
    return _F().max_pool2d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    r"""max_pool3d(input, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> Tensor

    3-d max pooling; an empty ``stride`` means ``kernel_size``.
    """
    _pool_lists("max_pool3d", 3, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    _shape_errors_first(_F().max_pool3d, input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)
    return _F().max_pool3d(input, kernel_size, _stride_arg(stride), padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    r"""avg_pool1d(input, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True) -> Tensor

    1-d average pooling; an empty ``stride`` means ``kernel_size``.
    """
    _pool_lists("avg_pool1d", 1, kernel_size=kernel_size, stride=stride, padding=padding)
    args = (kernel_size, _stride_arg(stride), padding, ceil_mode, count_include_pad)
    if input.dim() in (2, 3):
        shape = list(input.shape[:-1]) + [1, input.shape[-1]]
        if 0 in shape[-3:]:
            raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{shape}")
    _shape_errors_first(_F().avg_pool1d, input, *args)
    return _F().avg_pool1d(input, *args)


def adaptive_avg_pool1d(input, output_size):
    r"""adaptive_avg_pool1d(input, output_size) -> Tensor

    1-d average pooling to ``output_size`` positions.
    """
    size = _check_adaptive_1d(input, output_size, "adaptive_avg_pool1d")
    if size < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{1, {size}}}")
    if size == 1:
        # ATen takes a mean for a 1x1 output (which has no kernel-dtype check of its own).
        return input.mean(-1, keepdim=True)
    if input.shape[-1] == 0:
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                           f"but input has sizes {list(input.shape[:-1]) + [1, 0]} with dimension {input.dim()} "
                           f"being empty")
    if size == 0 or input.numel() == 0:
        return _empty_result(input, tuple(input.shape[:-1]) + (size,), "adaptive_avg_pool2d_backward")
    _shape_errors_first(_F().adaptive_avg_pool1d, input, size)
    return _F().adaptive_avg_pool1d(input, size)


def adaptive_max_pool1d(input, output_size):
    r"""adaptive_max_pool1d(input, output_size) -> (Tensor, Tensor)

    1-d max pooling to ``output_size`` positions; returns the values and their indices.
    """
    size = _check_adaptive_1d(input, output_size, "adaptive_max_pool1d")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being empty")
    if size < 0:
        shape = list(input.shape[:-1]) + [1, size]
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {shape}")
    if size == 0 or input.numel() == 0:
        if not input.dtype.is_floating_point:
            from ._random_ops import _not_impl
            raise _not_impl("adaptive_max_pool2d", input.dtype)
        shape = tuple(input.shape[:-1]) + (size,)
        return (_empty_result(input, shape, "adaptive_max_pool2d_backward"),
                _C.zeros(shape, dtype=_C.int64, device=input.device))
    _shape_errors_first(_F().adaptive_max_pool1d, input, size)
    return _F().adaptive_max_pool1d(input, size, return_indices=True)


def _empty_result(input, shape, backward_op=None):
    # An output without elements, still in input's graph; ``backward_op``: PyTorch's backward
    # refuses a gradient with an empty non-batch dim.
    out = input.reshape(-1).narrow(0, 0, 0).reshape(shape)
    sizes = list(shape[:-1]) + [1, shape[-1]]  # the 2-d op's view of a 1-d pooling
    if backward_op and out.requires_grad and 0 in sizes[1:]:
        dim = sizes.index(0, 1)
        out.register_hook(_fail_backward(f"{backward_op}(): Expected grad_output to have non-zero size for "
                                         f"non-batch dimensions, but grad_output has sizes {sizes} with dimension "
                                         f"{dim} being empty"))
    return out


def _fail_backward(msg):
    def hook(grad):
        raise RuntimeError(msg)
    return hook


def _check_adaptive_1d(input, output_size, op):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {op})")
    sizes = [output_size] if not isinstance(output_size, (list, tuple)) else list(output_size)
    if len(sizes) != 1:
        raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(sizes)})")
    return int(sizes[0])


# ----- convolution -----------------------------------------------------------------------


def _conv_checks(n, input, weight, bias, stride, op, probe):
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, but got input of "
                           f"size: {list(input.shape)}")
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = weight.dim() - 2
    if k != n:
        st = [int(stride)] * n if not isinstance(stride, (list, tuple)) else [int(x) for x in stride]
        raise RuntimeError(f"expected stride to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got stride={st}")
    ks = list(weight.shape[2:])
    if 0 in ks:
        # (The functional forms' native shape code does not take a zero-size kernel yet.)
        if n == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got kT: {ks[0]} kH: {ks[1]} kW: {ks[2]}")
        ks = [1] * (2 - n) + ks
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {ks[0]} "
                           f"kernel_width: {ks[1]}")
    # The CPU kernels PyTorch picks lack these input dtypes; it finds out after the shape checks
    # (which ``probe`` makes on float stand-ins) and before it compares the dtypes.
    transposed = op.startswith("conv_transpose")
    lacking = (_C.bool, _C.int8, _C.uint8, _C.int16, _C.int32) if transposed else (_C.bool,)
    batch_chan = tuple(input.shape[:2]) if input.dim() == n + 2 else (1, input.shape[0])
    if input.dtype in lacking and 0 not in batch_chan:
        # (No batch or no channels: PyTorch's Empty backend takes any dtype, see F._conv_empty.)
        from ._random_ops import _not_impl
        z = _C.zeros((), dtype=_C.float32)
        probe(z.expand(tuple(input.shape)), z.expand(tuple(weight.shape)),
              None if bias is None else z.expand(tuple(bias.shape)))
        d = "3d" if n == 3 else "2d"
        raise _not_impl(f"slow_conv_transpose{d}_out_cpu" if transposed else f"slow_conv{d}_cpu", input.dtype)


def _conv_alias(name, n, transposed):
    """The top-level ``torch.<name>``: PyTorch's argument and shape checks, then ``F.<name>``."""
    if transposed:
        def fn(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
            _conv_checks(n, input, weight, bias, stride, name,
                         lambda i, w, b: getattr(_F(), name)(i, w, b, stride, padding, output_padding, groups, dilation))
            return getattr(_F(), name)(input, weight, bias, stride, padding, output_padding, groups, dilation)
        sig = "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1"
    else:
        def fn(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
            _conv_checks(n, input, weight, bias, stride, name,
                         lambda i, w, b: getattr(_F(), name)(i, w, b, stride, padding, dilation, groups))
            return getattr(_F(), name)(input, weight, bias, stride, padding, dilation, groups)
        sig = "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1"
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{name}({sig}) -> Tensor

    See :func:`torch.nn.functional.{name}`.
    """
    return fn


conv1d = _conv_alias("conv1d", 1, False)
conv2d = _conv_alias("conv2d", 2, False)
conv3d = _conv_alias("conv3d", 3, False)
conv_transpose1d = _conv_alias("conv_transpose1d", 1, True)
conv_transpose2d = _conv_alias("conv_transpose2d", 2, True)
conv_transpose3d = _conv_alias("conv_transpose3d", 3, True)


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
    if weight.dim() == 0 and weight.requires_grad and _C.is_grad_enabled():
        # PyTorch's autograd wrapper records weight.size(0) before the op checks anything.
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead (while checking arguments for embedding)")
    # ATen only compares indices with padding_idx in the backward: one outside the rows is no row.
    pad = int(padding_idx)
    pad = pad if 0 <= pad < weight.shape[0] else None
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
             "donot_use_mm_for_euclid_dist": False}
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            from ._random_ops import _scalar_name
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_scalar_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    p = float(p.item()) if isinstance(p, _C.TensorBase) else p
    use_mm = modes[compute_mode]
    P, R, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    batch = _broadcast_batch(x1, x2)
    if P == 0 or R == 0 or math.prod(batch) == 0 or M == 0:
        # PyTorch answers an empty result (or zeros: no columns) in x1's dtype before any
        # dtype check, through its CdistBackward0 node (zero gradients)
        return _cdist_function().apply(x1, x2, float(p), batch)
    if use_mm is None:
        use_mm = P > 25 or R > 25
    if p == 2 and use_mm:
        if x1.dtype != x2.dtype:
            from ._random_ops import _CPP_NAMES, _dname
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP_NAMES[_dname(x1.dtype)]} != "
                               f"{_CPP_NAMES[_dname(x2.dtype)]}")
        # ||a-b||^2 = |a|^2 - 2 a.b + |b|^2 as one batched product (PyTorch's _euclidean_dist, composite
        # there too, in any floating dtype), clamped at zero against rounding before the square root.
        a2 = (x1 * x1).sum(-1, keepdim=True)
        b2 = (x2 * x2).sum(-1, keepdim=True)
        x1a = _cat([x1 * -2, a2, _C.ones_like(a2)], -1)
        x2a = _cat([x2, _C.ones_like(b2), b2], -1)
        return x1a.matmul(x2a.transpose(-1, -2)).clamp_min(0).sqrt()
    if x1.dtype in (_C.float16, _C.bfloat16):
        from ._random_ops import _not_impl
        raise _not_impl("cdist", x1.dtype)
    if x1.dtype != x2.dtype:
        from ._random_ops import _scalar_name
        raise RuntimeError(f"expected scalar type {_scalar_name(x1.dtype)} but found {_scalar_name(x2.dtype)}")
    return _cdist_function().apply(x1, x2, float(p), batch)


def _broadcast_batch(x1, x2):
    # ATen's infer_size on the batch dims, with its message
    a, b = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (u, v) in enumerate(zip(a, b)):
        if u != v and u != 1 and v != 1:
            raise RuntimeError(f"The size of tensor a ({u}) must match the size of tensor b ({v}) at "
                               f"non-singleton dimension {i}")
        out.append(v if u == 1 else u)
    return tuple(out)


def _cdist_values(x1, x2, p):
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if math.isinf(p):
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    return diff.pow(p).sum(-1).pow(1.0 / p)


_CDIST = None


def _cdist_function():
    """CdistBackward0: PyTorch's _cdist_forward, whose backward is its _cdist_backward kernel
    (the per-pair formula of pdist's, summed over the other set's rows) for each input."""
    global _CDIST
    if _CDIST is None:
        from .autograd import Function
        from .nn._losses import _dist_grad

        class CdistBackward0(Function):
            @staticmethod
            def forward(ctx, x1, x2, p, batch):
                P, R, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
                shape = tuple(batch) + (P, R)
                ctx.p, ctx.batch = p, tuple(batch)
                ctx.like = ((tuple(x1.shape), x1.dtype), (tuple(x2.shape), x2.dtype))
                if P == 0 or R == 0 or math.prod(batch) == 0:
                    ctx.empty = True
                    return _C.empty(shape, dtype=x1.dtype)
                if M == 0:
                    ctx.empty = True
                    return _C.zeros(shape, dtype=x1.dtype)
                ctx.empty = False
                x1e = x1.expand(*(tuple(batch) + (P, M)))
                x2e = x2.expand(*(tuple(batch) + (R, M)))
                dist = _cdist_values(x1e, x2e, p)
                ctx.save_for_backward(x1, x2, dist)
                return dist

            @staticmethod
            def backward(ctx, g):
                if ctx.empty:
                    return tuple(_C.zeros(sh, dtype=dt) for sh, dt in ctx.like) + (None, None)
                x1, x2, dist = ctx.saved_tensors
                P, R, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
                x1e = x1.expand(*(ctx.batch + (P, M)))
                x2e = x2.expand(*(ctx.batch + (R, M)))
                c = _dist_grad(x1e.unsqueeze(-2) - x2e.unsqueeze(-3), g.contiguous(), dist, ctx.p)
                g1 = g2 = None
                if ctx.needs_input_grad[0]:
                    g1 = c.sum(-2).sum_to_size(x1.shape)
                if ctx.needs_input_grad[1]:
                    # x2's kernel call sees diff = x2 - x1 = -diff: each term is exactly -c
                    g2 = (-c).sum(-3).sum_to_size(x2.shape)
                return g1, g2, None, None

        CdistBackward0._backward_name = "CdistBackward0"  # PyTorch's node name
        _CDIST = CdistBackward0
    return _CDIST


def _cat(ts, dim):
    from . import cat
    return cat(ts, dim)


# ----- losses ----------------------------------------------------------------------------


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    r"""binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1) -> Tensor

    See :func:`torch.nn.functional.binary_cross_entropy_with_logits`; ``reduction`` is 0 none,
    1 mean, 2 sum. Unlike the functional form, ``input`` broadcasts to ``target``'s shape.

    .. note:: As in PyTorch, the losses at the top level take ``reduction=0`` (none) when it is
       not given, whatever their documented default.
    """
    if not input.dtype.is_floating_point:
        from ._random_ops import _not_impl
        raise _not_impl("log_sigmoid_cpu", input.dtype)
    if tuple(input.shape) != tuple(target.shape):
        from . import broadcast_shapes
        shape = tuple(broadcast_shapes(input.shape, target.shape))
        if shape != tuple(target.shape):
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        orig = list(input.shape)
        input = input.expand(shape)
        if input.requires_grad:
            # PyTorch's backward writes the input's gradient in place into the input's shape.
            input.register_hook(_fail_backward(f"output with shape {orig} doesn't match the broadcast shape "
                                               f"{list(shape)}"))
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    r"""cosine_embedding_loss(input1, input2, target, margin=0., reduction=1) -> Tensor

    See :func:`torch.nn.functional.cosine_embedding_loss`.
    """
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    r"""ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False) -> Tensor

    See :func:`torch.nn.functional.ctc_loss`.
    """
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    r"""hinge_embedding_loss(input, target, margin=1., reduction=1) -> Tensor

    See :func:`torch.nn.functional.hinge_embedding_loss`.
    """
    red = _reduction(reduction)
    if input.dtype.is_floating_point:
        return _F().hinge_embedding_loss(input, target, margin, reduction=red)
    # ATen computes ``margin - input`` as full_like(input, margin) - input: integers stay integers.
    zeros = _C.zeros_like(input)
    margin_clamp = (_C.full_like(input, margin) - input).clamp_min(0)
    out = margin_clamp.where(target != 1, zeros) + input.where(target != -1, zeros)
    return out if red == "none" else out.mean() if red == "mean" else out.sum()


def kl_div(input, target, reduction=0, *, log_target=False):
    r"""kl_div(input, target, reduction=1, *, log_target=False) -> Tensor

    Pointwise KL divergence ``target * (log(target) - input)``; ``reduction=1`` averages over all
    elements (PyTorch's ATen op; ``F.kl_div``'s ``'batchmean'`` has no integer code).
    """
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or not (
            target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    with warnings.catch_warnings():
        # The functional form warns that 'mean' is not the true KL divergence; ATen's does not.
        warnings.simplefilter("ignore")
        return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    r"""margin_ranking_loss(input1, input2, target, margin=0., reduction=1) -> Tensor

    See :func:`torch.nn.functional.margin_ranking_loss`.
    """
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r"""poisson_nll_loss(input, target, log_input, full, eps, reduction) -> Tensor

    See :func:`torch.nn.functional.poisson_nll_loss`.
    """
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
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
    packed = len(args) >= 2 and isinstance(args[1], _C.TensorBase) and (
        mode == "LSTM" or (len(args) >= 3 and isinstance(args[2], _C.TensorBase)))
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


# ----- argument schemas ------------------------------------------------------------------
# PyTorch's Python signatures of these ops (``self`` is ``input`` at the top level): calls are
# checked against them before the bodies run, so a wrong argument kind raises the TypeError
# PyTorch's argument parser does. Several strings are overloads.

_CONV = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, {pad} padding=0, " \
        "SymInt[{n}] dilation=1, SymInt groups=1"
_CONV_T = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, SymInt[{n}] padding=0, " \
          "SymInt[{n}] output_padding=0, SymInt groups=1, SymInt[{n}] dilation=1"
_MAX_POOL = "Tensor input, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, int[{n}] dilation=1, " \
            "bool ceil_mode=False"
_CELL = "Tensor input, {hx} hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None"
_RNN = ("Tensor input, {hx} hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "
        "bool bidirectional, bool batch_first",
        "Tensor data, Tensor batch_sizes, {hx} hx, Tensor[] params, bool has_biases, int num_layers, "
        "float dropout, bool train, bool bidirectional")
_DROPOUT = "Tensor input, float p, bool train"
_BN = ("Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool {training}, "
       "float momentum, float eps")
_GATHER = ("Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, float momentum, "
           "float eps, {count}")
_GRID = "Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners"

_SCHEMAS = {
    "hardshrink": "Tensor input, Scalar lambd=0.5",
    "threshold": "Tensor input, Scalar threshold, Scalar value",
    "threshold_": "Tensor input, Scalar threshold, Scalar value",
    "rrelu": "Tensor input, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
             "Generator? generator=None",
    "rrelu_": "Tensor input, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
              "Generator? generator=None",
    "prelu": "Tensor input, Tensor weight",
    "dropout": _DROPOUT, "dropout_": _DROPOUT, "alpha_dropout": _DROPOUT, "alpha_dropout_": _DROPOUT,
    "feature_dropout": _DROPOUT, "feature_dropout_": _DROPOUT, "feature_alpha_dropout": _DROPOUT,
    "feature_alpha_dropout_": _DROPOUT,
    "native_dropout": "Tensor input, float p, bool? train",
    "batch_norm": _BN.format(training="training") + ", bool cudnn_enabled",
    "instance_norm": _BN.format(training="use_input_stats") + ", bool cudnn_enabled",
    "native_batch_norm": _BN.format(training="training"),
    "group_norm": "Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
                  "bool cudnn_enabled=True",
    "layer_norm": "Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                  "float eps=1e-05, bool cudnn_enable=True",
    "rms_norm": "Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None",
    "native_layer_norm": "Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps",
    "native_group_norm": "Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
                         "float eps",
    "norm_except_dim": "Tensor v, int pow=2, int dim=0",
    "batch_norm_stats": "Tensor input, float eps",
    "batch_norm_elemt": "Tensor input, Tensor? weight, Tensor? bias, Tensor mean, Tensor invstd, float eps",
    "batch_norm_gather_stats": _GATHER.format(count="int count"),
    "batch_norm_gather_stats_with_counts": _GATHER.format(count="Tensor counts"),
    "batch_norm_update_stats": "Tensor input, Tensor? running_mean, Tensor? running_var, float momentum",
    "max_pool1d": _MAX_POOL.format(n=1), "max_pool2d": _MAX_POOL.format(n=2), "max_pool3d": _MAX_POOL.format(n=3),
    "max_pool1d_with_indices": _MAX_POOL.format(n=1),
    "avg_pool1d": "Tensor input, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, "
                  "bool count_include_pad=True",
    "adaptive_avg_pool1d": "Tensor input, int[1] output_size",
    "adaptive_max_pool1d": "Tensor input, int[1] output_size",
    "conv1d": (_CONV.format(n=1, pad="SymInt[1]"), _CONV.format(n=1, pad="str")),
    "conv2d": (_CONV.format(n=2, pad="SymInt[2]"), _CONV.format(n=2, pad="str")),
    "conv3d": (_CONV.format(n=3, pad="SymInt[3]"), _CONV.format(n=3, pad="str")),
    "conv_transpose1d": _CONV_T.format(n=1), "conv_transpose2d": _CONV_T.format(n=2),
    "conv_transpose3d": _CONV_T.format(n=3),
    "convolution": "Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
                   "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups",
    "conv_tbc": "Tensor input, Tensor weight, Tensor bias, int pad=0",
    "embedding": "Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
                 "bool sparse=False",
    "embedding_bag": ("Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
                      "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False",
                      "Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, "
                      "bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx"),
    "embedding_renorm_": "Tensor input, Tensor indices, float max_norm, float norm_type",
    "grid_sampler": _GRID, "grid_sampler_2d": _GRID, "grid_sampler_3d": _GRID,
    "affine_grid_generator": "Tensor theta, SymInt[] size, bool align_corners",
    "constant_pad_nd": "Tensor input, SymInt[] pad, Scalar value=0",
    "pixel_shuffle": "Tensor input, int upscale_factor",
    "pixel_unshuffle": "Tensor input, int downscale_factor",
    # torch.cdist is Python: any compute_mode but its three names is a ValueError of the body.
    "cdist": "Tensor x1, Tensor x2, float p=2.0, Any compute_mode='use_mm_for_euclid_dist_if_necessary'",
    "binary_cross_entropy_with_logits": "Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, "
                                        "int reduction=0",
    "cosine_embedding_loss": "Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=0",
    "ctc_loss": ("Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
                 "int reduction=0, bool zero_infinity=False",
                 "Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, "
                 "int reduction=0, bool zero_infinity=False"),
    "hinge_embedding_loss": "Tensor input, Tensor target, float margin=1.0, int reduction=0",
    "kl_div": "Tensor input, Tensor target, int reduction=0, *, bool log_target=False",
    "margin_ranking_loss": "Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=0",
    "poisson_nll_loss": "Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction",
    "triplet_margin_loss": "Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2.0, "
                           "float eps=1e-06, bool swap=False, int reduction=0",
    "rnn_tanh_cell": _CELL.format(hx="Tensor"), "rnn_relu_cell": _CELL.format(hx="Tensor"),
    "lstm_cell": _CELL.format(hx="Tensor[]"), "gru_cell": _CELL.format(hx="Tensor"),
    "rnn_tanh": tuple(s.format(hx="Tensor") for s in _RNN), "rnn_relu": tuple(s.format(hx="Tensor") for s in _RNN),
    "lstm": tuple(s.format(hx="Tensor[]") for s in _RNN), "gru": tuple(s.format(hx="Tensor") for s in _RNN),
}

for _name, _schema in _SCHEMAS.items():
    globals()[_name] = _args.signature(*((_schema,) if isinstance(_schema, str) else _schema))(globals()[_name])
del _name, _schema

_methods.define("hardshrink", _args.method_signature(hardshrink))
_methods.define("prelu", _args.method_signature(prelu))
