"""``functional_call``: run a module with some of its parameters and buffers swapped out."""

import contextlib
import warnings

__all__ = ["functional_call"]

_MISSING = object()


def _all_named_tensors(module, prefix=""):
    """Every parameter and buffer under every name it is reachable by (tied ones repeated)."""
    out = {}
    for store in ("_parameters", "_buffers"):
        for name, t in module.__dict__.get(store, {}).items():
            if t is not None:
                out[prefix + name] = t
    for name, child in module.__dict__.get("_modules", {}).items():
        if child is not None:
            out.update(_all_named_tensors(child, prefix + name + "."))
    return out


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extends the given tensors to every name tied to the same tensor in ``module``."""
    named = _all_named_tensors(module)
    by_tensor = {}
    for name, tensor in named.items():
        by_tensor.setdefault(id(tensor), set()).add(name)
    tied = {}
    for names in by_tensor.values():
        if len(names) > 1:
            for n in names:
                tied[n] = names
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        group = tied[n]
        provided = group & given_tied
        if len(provided) > 1 and len({id(parameters_and_buffers[k]) for k in provided}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, "
                "which are tied. Consider using tie_weights=False"
            )
    out = dict(parameters_and_buffers)
    for n in given_tied:
        for k in tied[n]:
            out[k] = parameters_and_buffers[n]
    return out


def _resolve(module, name):
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


def _swap(module, name, value):
    """Puts ``value`` at ``name``; returns what was there (``_MISSING`` if nothing)."""
    owner, leaf = _resolve(module, name)
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__.get(store)
        if d is not None and leaf in d:
            old = d[leaf]
            if value is _MISSING:
                del d[leaf]
            else:
                d[leaf] = value
            return old
    old = getattr(owner, leaf, _MISSING)
    if value is _MISSING:
        if old is not _MISSING:
            delattr(owner, leaf)
    else:
        # Not a registered tensor (e.g. a parametrized property or a plain attribute).
        setattr(owner, leaf, value)
    return old


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    tensors = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        names = set(_all_named_tensors(module))
        unexpected = sorted(set(tensors) - names)
        missing = sorted(names - set(tensors))
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(msgs)))
    originals = {}
    try:
        for name, value in tensors.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    r"""Performs a functional call on the module by replacing the module parameters and buffers
    with the provided ones.

    Args:
        module (torch.nn.Module): the module to call
        parameters_and_buffers (dict of str and Tensor): the parameters that will be used in
            the module call.
        args (Any or tuple): arguments to be passed to the module call. If not a tuple, considered a single argument.
        kwargs (dict): keyword arguments to be passed to the module call
        tie_weights (bool, optional): If True, then parameters and buffers tied in the original model
            will be treated as tied in the reparametrized version. Default: True.
        strict (bool, optional): If True, then the parameters and buffers passed in must match the
            parameters and buffers in the original module. Default: False.

    Returns:
        Any: the result of calling ``module``.
    """
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
        "and will be removed in a future version of PyTorch. "
        "Please use `torch.func.functional_call` instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
