"""``skip_init``: build a module without running its parameter initialisation."""

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    r"""Given a module class object and args / kwargs, instantiates the module without initializing
    parameters / buffers.

    The parameters' values are unspecified (as ``torch.empty`` leaves them). The module class
    must accept a ``device`` keyword argument.

    Args:
        module_cls: Class object; should be a subclass of :class:`torch.nn.Module`
        args: args to pass to the module's constructor
        kwargs: kwargs to pass to the module's constructor

    Returns:
        Instantiated module with uninitialized parameters / buffers
    """
    from ..modules import Module

    if not (inspect.isclass(module_cls) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    # There is no meta device to build on here, so the module is built directly on the
    # target device; its initial values are simply left unspecified, as skip_init promises.
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
