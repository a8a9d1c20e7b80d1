"""Modules over the sliding-block, unpooling, power-average, fractional pooling
and embedding-bag functions, plus ``RReLU`` and ``SyncBatchNorm``.

Each mirrors ``torch.nn``'s class of the same name: constructor signature and
defaults, attributes, ``extra_repr`` and constructor errors.
"""

from .. import _C
from .modules import Module, _BatchNorm
from .parameter import Parameter
from . import functional as F
from . import init
from ..autograd.grad_mode import no_grad as _no_grad

__all__ = [
    "Fold", "Unfold", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "RReLU", "EmbeddingBag", "SyncBatchNorm",
]


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class Fold(Module):
    r"""Combines an array of sliding local blocks into a large containing tensor.

    Input ``(N, C * prod(kernel_size), L)`` or unbatched ``(C * prod(kernel_size), L)``;
    output ``(N, C, *output_size)``; overlapping values are summed.

    Args:
        output_size (int or tuple): the shape of the spatial dimensions of the output
        kernel_size (int or tuple): the size of the sliding blocks
        dilation (int or tuple, optional): a parameter that controls the stride of elements within the
            neighborhood. Default: 1
        padding (int or tuple, optional): implicit zero padding to be added on both sides of input. Default: 0
        stride (int or tuple): the stride of the sliding blocks in the input spatial dimensions. Default: 1
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    r"""Extracts sliding local blocks from a batched input tensor.

    Input ``(N, C, *)``; output ``(N, C * prod(kernel_size), L)`` where ``L`` is the
    number of block positions.

    Args:
        kernel_size (int or tuple): the size of the sliding blocks
        dilation (int or tuple, optional): a parameter that controls the stride of elements within the
            neighborhood. Default: 1
        padding (int or tuple, optional): implicit zero padding to be added on both sides of input. Default: 0
        stride (int or tuple, optional): the stride of the sliding blocks in the input spatial dimensions.
            Default: 1
    """

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class _MaxUnpoolNd(Module):
    _nd = 0
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, nd)
        self.padding = _ntuple(padding, nd)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Computes a partial inverse of :class:`MaxPool1d`: the values go back to the
    positions their indices name, all other positions are zero.

    Args:
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to ``kernel_size`` by default.
        padding (int or tuple): Padding that was added to the input
    """

    _nd = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Computes a partial inverse of :class:`MaxPool2d`.

    Args:
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to ``kernel_size`` by default.
        padding (int or tuple): Padding that was added to the input
    """

    _nd = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    r"""Computes a partial inverse of :class:`MaxPool3d`.

    Args:
        kernel_size (int or tuple): Size of the max pooling window.
        stride (int or tuple): Stride of the max pooling window. It is set to ``kernel_size`` by default.
        padding (int or tuple): Padding that was added to the input
    """

    _nd = 3
    _fn = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    r"""Applies a 1D power-average pooling over an input signal composed of several input planes.

    On each window, the function computed is :math:`f(X) = \sqrt[p]{\sum_{x \in X} x^{p}}`;
    at ``p = inf`` it is max pooling, at ``p = 1`` sum pooling.

    Args:
        norm_type: the ``p`` of the power
        kernel_size: a single int, the size of the window
        stride: a single int, the stride of the window. Default value is :attr:`kernel_size`
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    r"""Applies a 2D power-average pooling over an input signal composed of several input planes.

    Args:
        norm_type: the ``p`` of the power
        kernel_size: the size of the window
        stride: the stride of the window. Default value is :attr:`kernel_size`
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    r"""Applies a 3D power-average pooling over an input signal composed of several input planes.

    Args:
        norm_type: the ``p`` of the power
        kernel_size: the size of the window
        stride: the stride of the window. Default value is :attr:`kernel_size`
        ceil_mode: when True, will use `ceil` instead of `floor` to compute the output shape
    """

    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd = self._nd
        name = f"FractionalMaxPool{nd}d"
        if nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    r"""Applies a 2D fractional max pooling over an input signal composed of several input planes.

    Fractional MaxPooling is described in detail in the paper `Fractional MaxPooling`_ by Ben Graham.
    The max-pooling operation is applied in :math:`kH \times kW` regions by a stochastic
    step size determined by the target output size.

    Args:
        kernel_size: the size of the window to take a max over (``k`` or ``(kh, kw)``)
        output_size: the target output size of the image of the form `oH x oW`
        output_ratio: the output size as a ratio of the input size, in (0, 1)
        return_indices: if ``True``, will return the indices along with the outputs.
            Useful to pass to :meth:`nn.MaxUnpool2d`. Default: ``False``

    .. _Fractional MaxPooling: https://arxiv.org/abs/1412.6071
    """

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    r"""Applies a 3D fractional max pooling over an input signal composed of several input planes.

    The max-pooling operation is applied in :math:`kT \times kH \times kW` regions by a stochastic
    step size determined by the target output size.

    Args:
        kernel_size: the size of the window to take a max over (``k`` or ``(kt, kh, kw)``)
        output_size: the target output size of the form `oT x oH x oW`
        output_ratio: the output size as a ratio of the input size, in (0, 1)
        return_indices: if ``True``, will return the indices along with the outputs.
            Useful to pass to :meth:`nn.MaxUnpool3d`. Default: ``False``
    """

    _nd = 3


class RReLU(Module):
    r"""Applies the randomized leaky rectified linear unit function, element-wise.

    In training, each negative element is scaled by a slope drawn from
    :math:`\mathcal{U}(\text{lower}, \text{upper})`; in evaluation the slope is
    :math:`(\text{lower} + \text{upper}) / 2`.

    Args:
        lower: lower bound of the uniform distribution. Default: :math:`\frac{1}{8}`
        upper: upper bound of the uniform distribution. Default: :math:`\frac{1}{3}`
        inplace: can optionally do the operation in-place. Default: ``False``
    """

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class EmbeddingBag(Module):
    r"""Compute sums or means of 'bags' of embeddings, without instantiating the intermediate embeddings.

    Args:
        num_embeddings (int): size of the dictionary of embeddings
        embedding_dim (int): the size of each embedding vector
        max_norm (float, optional): If given, each embedding vector with norm larger than :attr:`max_norm`
            is renormalized to have norm :attr:`max_norm`.
        norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option. Default ``2``.
        scale_grad_by_freq (bool, optional): if given, this will scale gradients by the inverse of frequency of
            the words in the mini-batch. Default ``False``. Not supported when ``mode="max"``.
        mode (str, optional): ``"sum"``, ``"mean"`` or ``"max"``. Specifies the way to reduce the bag.
            Default: ``"mean"``
        sparse (bool, optional): accepted for compatibility; gradients are dense. Not supported when
            ``mode="max"``.
        include_last_offset (bool, optional): if ``True``, :attr:`offsets` has one additional element, where the
            last element is equivalent to the size of `indices`.
        padding_idx (int, optional): If specified, the entries at :attr:`padding_idx` do not contribute to the
            gradient and are excluded from the reduction.

    Attributes:
        weight (Tensor): the learnable weights of the module of shape `(num_embeddings, embedding_dim)`
            initialized from :math:`\mathcal{N}(0, 1)`.
    """

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= self.num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -self.num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_C.empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with _no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        r"""Create EmbeddingBag instance from given 2-dimensional FloatTensor.

        Args:
            embeddings (Tensor): FloatTensor containing weights for the EmbeddingBag.
                First dimension is being passed to EmbeddingBag as 'num_embeddings', second as 'embedding_dim'.
            freeze (bool, optional): If ``True``, the tensor does not get updated in the learning process.
                Equivalent to ``embeddingbag.weight.requires_grad = False``. Default: ``True``
            max_norm, norm_type, scale_grad_by_freq, mode, sparse, include_last_offset, padding_idx:
                see the module's initialization documentation.
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


class SyncBatchNorm(_BatchNorm):
    r"""Applies Batch Normalization over a N-Dimensional input, with statistics
    synchronised across a process group in distributed training.

    Without an initialised process group (ferrotorch has no ``torch.distributed``
    backend), it normalises with the local batch's statistics exactly as
    :class:`BatchNorm1d`/``2d``/``3d`` do, as PyTorch's falls back to
    ``F.batch_norm`` when no synchronisation is needed.

    Args:
        num_features: :math:`C` from an expected input of size :math:`(N, C, +)`
        eps: a value added to the denominator for numerical stability. Default: ``1e-5``
        momentum: the value used for the running_mean and running_var computation. Can be set to ``None``
            for cumulative moving average (i.e. simple average). Default: 0.1
        affine: a boolean value that when set to ``True``, this module has learnable affine parameters.
            Default: ``True``
        track_running_stats: a boolean value that when set to ``True``, this module tracks the running mean
            and variance. Default: ``True``
        process_group: synchronization of stats happen within each process group individually.
            Default behavior is synchronization across the whole world
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        if not track_running_stats:
            # PyTorch's norm layers keep the three buffer names, set to None.
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                if not hasattr(self, name):
                    self.register_buffer(name, None)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / self.num_batches_tracked.item()
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None
        # No process group can be initialised here, so no statistics are
        # exchanged: PyTorch's module takes this same local path then.
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                            self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        r"""Converts all ``BatchNorm*D`` layers in the model to :class:`SyncBatchNorm` layers.

        Args:
            module (nn.Module): module containing one or more ``BatchNorm*D`` layers
            process_group (optional): process group to scope synchronization, default is the whole world

        Returns:
            The original :attr:`module` with the converted :class:`SyncBatchNorm` layers. If the original
            :attr:`module` is a ``BatchNorm*D`` layer, a new :class:`SyncBatchNorm` layer object will be
            returned instead.
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with _no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
