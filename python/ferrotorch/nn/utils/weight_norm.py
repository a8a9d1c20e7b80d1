"""Weight normalisation (the hook-based ``weight_norm``; PyTorch marks it deprecated)."""

import warnings


__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _ft():
    import ferrotorch

    return ferrotorch


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (over all of them for ``dim=-1``),
    shaped to broadcast against ``v``."""
    if dim == -1:
        return v.norm(pow)
    dims = tuple(d for d in range(v.dim()) if d != dim)
    if not dims:
        return v.abs()
    if pow == 2:
        return (v * v).sum(dim=dims, keepdim=True).sqrt()
    return (v.abs() ** pow).sum(dim=dims, keepdim=True) ** (1.0 / pow)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        from ..parameter import Parameter

        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        from ..parameter import Parameter

        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    r"""Applies weight normalization to a parameter in the given module.

    .. math::
         \mathbf{w} = g \dfrac{\mathbf{v}}{\|\mathbf{v}\|}

    Replaces the parameter ``name`` by ``name_g`` (magnitude) and ``name_v`` (direction),
    recomputing ``name`` before every forward call.

    Args:
        module (Module): containing module
        name (str, optional): name of weight parameter
        dim (int, optional): dimension over which to compute the norm (``None`` for the whole tensor)

    Returns:
        The original module with the weight norm hook
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    r"""Removes the weight normalization reparameterization from a module.

    Args:
        module (Module): containing module
        name (str, optional): name of weight parameter
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
