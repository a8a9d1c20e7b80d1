"""Lazy modules: parameters of unknown shape until the first forward infers them from the
input (``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*``,
``LazyInstanceNorm*``), after which the module becomes its ordinary class."""

from .. import _C
from .modules import (
    Linear, Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, BatchNorm1d, BatchNorm2d,
    BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
)
from .parameter import UninitializedParameter, UninitializedBuffer, is_lazy

__all__ = [
    "LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]


def _no_grad(fn):
    prev = _C.is_grad_enabled()
    _C._set_grad_enabled(False)
    try:
        return fn()
    finally:
        _C._set_grad_enabled(prev)


class LazyModuleMixin:
    r"""Mixin for modules whose parameter shapes come from the first input: a forward
    pre-hook calls ``initialize_parameters(*args)``, then the module turns into
    ``cls_to_become``; ``load_state_dict`` materialises parameters from the checkpoint."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if (is_lazy(p) or keep_vars) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if (is_lazy(b) or keep_vars) else b.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, p in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and p is not None and is_lazy(p) and not is_lazy(state_dict[key]):
                shape = tuple(state_dict[key].shape)
                _no_grad(lambda p=p, shape=shape: p.materialize(shape))

    def initialize_parameters(self, *args, **kwargs):
        """Materialises the parameters from the first forward's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any own parameter or buffer is still lazy."""
        return any(is_lazy(v) for v in list(self._parameters.values()) + list(self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. "
                           "Run a dummy forward pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    r""":class:`Linear` whose ``in_features`` is taken from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            def go():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
            _no_grad(go)


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups) + tuple(self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups) + tuple(self.kernel_size)

            def go():
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()
            _no_grad(go)

    def _get_in_channels(self, input):
        nd = self._nd + 1
        if input.dim() not in (nd, nd + 1):
            raise RuntimeError(f"Expected {nd}D (unbatched) or {nd + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == nd + 1 else input.shape[0]


def _lazy_conv(name, base, doc):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super(cls, self).__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                  device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    cls = type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "__doc__": doc, "cls_to_become": base,
                                                 "__module__": __name__})
    return cls


def _lazy_conv_transpose(name, base, doc):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super(cls, self).__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                                  padding_mode, device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    cls = type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "__doc__": doc, "cls_to_become": base,
                                                 "__module__": __name__})
    return cls


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, ":class:`Conv1d` with ``in_channels`` inferred from the first input.")
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, ":class:`Conv2d` with ``in_channels`` inferred from the first input.")
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, ":class:`Conv3d` with ``in_channels`` inferred from the first input.")
LazyConvTranspose1d = _lazy_conv_transpose(
    "LazyConvTranspose1d", ConvTranspose1d, ":class:`ConvTranspose1d` with ``in_channels`` inferred from the first input.")
LazyConvTranspose2d = _lazy_conv_transpose(
    "LazyConvTranspose2d", ConvTranspose2d, ":class:`ConvTranspose2d` with ``in_channels`` inferred from the first input.")
LazyConvTranspose3d = _lazy_conv_transpose(
    "LazyConvTranspose3d", ConvTranspose3d, ":class:`ConvTranspose3d` with ``in_channels`` inferred from the first input.")


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64))

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            def go():
                if self.track_running_stats:
                    self.running_mean.zero_()
                    self.running_var.fill_(1)
                    self.num_batches_tracked.zero_()
                if self.affine:
                    self.weight.fill_(1)
                    self.bias.zero_()
            _no_grad(go)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]

            def go():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
            _no_grad(go)
            self.reset_parameters()


def _lazy_norm(name, base, doc):
    return type(name, (_LazyNormBase, base), {"__doc__": doc, "cls_to_become": base, "__module__": __name__})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, ":class:`BatchNorm1d` with ``num_features`` inferred from the first input.")
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, ":class:`BatchNorm2d` with ``num_features`` inferred from the first input.")
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, ":class:`BatchNorm3d` with ``num_features`` inferred from the first input.")
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, ":class:`InstanceNorm1d` with ``num_features`` inferred from the first input.")
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, ":class:`InstanceNorm2d` with ``num_features`` inferred from the first input.")
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, ":class:`InstanceNorm3d` with ``num_features`` inferred from the first input.")
