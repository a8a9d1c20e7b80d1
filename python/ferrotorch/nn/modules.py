"""``nn.Module`` and the built-in layers and losses."""

import math
from collections import OrderedDict

from .. import _C
from .parameter import Parameter
from . import functional as F
from . import init


class _RemovableHandle:
    """Returned by ``register_*_hook``; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, store):
        self._store = store
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._store.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    """Base class of every layer: registers parameters, buffers and submodules."""

    def __init__(self, *args, **kwargs):
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()

    # -- registration ---------------------------------------------------------------

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            params[name] = value
        elif params is not None and name in params:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' (torch.nn.Parameter or None expected)")
            params[name] = value
        elif isinstance(value, Module):
            if self.__dict__.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            self._modules[name] = value
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Adds a parameter (or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer: state saved in ``state_dict`` that is not a parameter."""
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Adds a child module."""
        self._modules[name] = module

    register_module = add_module

    # -- traversal --------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yields ``(name, module)`` for this module and every descendant."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name, remove_duplicate)

    def modules(self):
        """Yields every module in the tree."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """Yields ``(name, child)`` pairs."""
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self):
        """Yields direct submodules."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, v in get(mod):
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield (mod_prefix + "." + name if mod_prefix else name), v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yields ``(name, parameter)`` pairs, each parameter once."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse)

    def parameters(self, recurse=True):
        """Yields every parameter."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Yields ``(name, buffer)`` pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse=True):
        """Yields every buffer."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- state ---------------------------------------------------------------------------

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name (detached unless ``keep_vars``)."""
        dest = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                dest[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                dest[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(dest, prefix + name + ".", keep_vars)
        return dest

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies values from ``state_dict`` into parameters and buffers."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            msg = [f'Error(s) in loading state_dict for {type(self).__name__}:']
            if missing:
                msg.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
            if unexpected:
                msg.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            raise RuntimeError("\n\t".join(msg))
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            for k, v in state_dict.items():
                if k not in own:
                    continue
                t = own[k]
                if tuple(t.shape) != tuple(v.shape):
                    raise RuntimeError(
                        f"Error(s) in loading state_dict for {type(self).__name__}:\n\tsize mismatch for {k}: "
                        f"copying a param with shape {v.shape} from checkpoint, the shape in current model is {t.shape}."
                    )
                t.copy_(v)
        finally:
            _C._set_grad_enabled(prev)
        return _IncompatibleKeys(missing, unexpected)

    # -- calling ---------------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Registers ``hook(module, inputs, output)`` run after ``forward``."""
        h = _RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Registers ``hook(module, inputs)`` run before ``forward``."""
        h = _RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    # -- modes and movement -----------------------------------------------------------------

    def train(self, mode=True):
        """Sets training mode recursively."""
        self.__dict__["training"] = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode recursively."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets ``requires_grad`` on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears the gradients of every parameter."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.detach_().zero_() if p.grad.grad_fn is not None else p.grad.zero_()

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first) and on itself."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply_tensors(self, fn):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            for m in self.modules():
                for k, p in list(m._parameters.items()):
                    if p is None:
                        continue
                    new = fn(p)
                    if new is not p:
                        m._parameters[k] = Parameter(new, p.requires_grad)
                for k, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[k] = fn(b)
        finally:
            _C._set_grad_enabled(prev)
        return self

    def to(self, *args, **kwargs):
        """Moves/casts parameters and buffers (floating ones only for dtypes); returns self."""
        def conv(t):
            dtype = kwargs.get("dtype")
            for a in args:
                if isinstance(a, _C.dtype):
                    dtype = a
            r = t
            dev = kwargs.get("device")
            for a in args:
                if isinstance(a, (str, _C.device)):
                    dev = a
            if dev is not None:
                r = r.to(dev)
            if dtype is not None and r.is_floating_point():
                r = r.to(dtype)
            return r
        return self._apply_tensors(conv)

    def cpu(self):
        """Moves everything to the CPU."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Moves everything to a CUDA device."""
        return self.to("cuda" if device is None else device)

    def float(self):
        return self._apply_tensors(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply_tensors(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply_tensors(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply_tensors(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- printing --------------------------------------------------------------------------

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        for name, m in self._modules.items():
            mod = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {mod}")
        main = type(self).__name__ + "("
        if extra and not lines:
            return main + extra + ")"
        if not lines:
            return main + ")"
        body = ("\n  " + extra if extra else "") + "".join("\n  " + l for l in lines)
        return main + body + "\n)"

    def __dir__(self):
        return list(object.__dir__(self)) + list(self._parameters) + list(self._buffers) + list(self._modules)


class _IncompatibleKeys(tuple):
    def __new__(cls, missing, unexpected):
        return super().__new__(cls, (missing, unexpected))

    @property
    def missing_keys(self):
        return self[0]

    @property
    def unexpected_keys(self):
        return self[1]

    def __repr__(self):
        if not self[0] and not self[1]:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"


# -- containers ---------------------------------------------------------------------------------


class Sequential(Module):
    """Runs its submodules in order; indexable like a list."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self._modules[name] = m
        else:
            for i, m in enumerate(args):
                self._modules[str(i)] = m

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return Sequential(*mods[idx])
        return mods[idx]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Adds a module at the end."""
        self._modules[str(len(self._modules))] = module
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module):
        self._modules[str(len(self._modules))] = module
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        return ModuleList(mods[idx]) if isinstance(idx, slice) else mods[idx]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


# -- layers --------------------------------------------------------------------------------------


class Identity(Module):
    """Returns its input."""

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ W.T + b`` with PyTorch's default initialisation."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_C.empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Kaiming-uniform weight, uniform bias in ±1/sqrt(fan_in)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution layer."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        kh, kw = F._pair(kernel_size)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kh, kw)
        self.stride = F._pair(stride)
        self.padding = padding if isinstance(padding, str) else F._pair(padding)
        self.dilation = F._pair(dilation)
        self.groups = groups
        self.weight = Parameter(_C.empty(out_channels, in_channels // groups, kh, kw, dtype=dtype))
        if bias:
            self.bias = Parameter(_C.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = (in_channels // groups) * kh * kw
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
                + (f", padding={self.padding}" if self.padding not in ((0, 0), "valid") else ""))


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_C.ones(num_features, dtype=dtype))
            self.bias = Parameter(_C.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _C.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _C.tensor(0))

    def forward(self, input):
        training = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
        return F.batch_norm(
            input,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.weight, self.bias, training, self.momentum, self.eps,
        )

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs."""


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) inputs."""


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        if elementwise_affine:
            self.weight = Parameter(_C.ones(*self.normalized_shape, dtype=dtype))
            self.bias = Parameter(_C.zeros(*self.normalized_shape, dtype=dtype)) if bias else None
        else:
            self.weight = None
            self.bias = None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, dtype=None, **kwargs):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = Parameter(_C.randn(num_embeddings, embedding_dim, dtype=dtype))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)


class Dropout(Module):
    """Randomly zeroes elements in training mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim``."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)


class MaxPool2d(Module):
    """2-D max pooling."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding)


class AvgPool2d(Module):
    """2-D average pooling."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding)


def _activation(name, fn, doc):
    def forward(self, input):
        return fn(input)

    return type(name, (Module,), {"forward": forward, "__doc__": doc})


ReLU = _activation("ReLU", F.relu, "Applies ``max(x, 0)`` elementwise.")
Sigmoid = _activation("Sigmoid", F.sigmoid, "Applies the logistic sigmoid.")
Tanh = _activation("Tanh", F.tanh, "Applies tanh.")
GELU = _activation("GELU", F.gelu, "Applies GELU (exact erf form).")
SiLU = _activation("SiLU", F.silu, "Applies x * sigmoid(x).")


class ReLU(Module):  # noqa: F811 - keeps the inplace argument PyTorch accepts
    """Applies ``max(x, 0)`` elementwise."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input)


class LeakyReLU(Module):
    """``x if x > 0 else negative_slope * x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)


class Softmax(Module):
    """Softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class LogSoftmax(Module):
    """Log-softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)


# -- losses ------------------------------------------------------------------------------------


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    """Negative log-likelihood."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(reduction=reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross entropy on logits."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction=reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_Loss):
    """Binary cross entropy on probabilities."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction=reduction)
        self.weight = weight

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(reduction=reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight)
