"""``argument_validation``: PyTorch's DataPipe argument checker."""

import functools
import inspect
import typing


def argument_validation(f):
    r"""Decorator that binds each call's arguments to ``f``'s signature before calling it.

    In PyTorch it also checks arguments annotated with a DataPipe type against that
    type; ferrotorch has no DataPipes, so no annotation can name one and the check is
    the signature binding alone (a call that does not fit raises ``TypeError``).
    """
    signature = inspect.signature(f)
    typing.get_type_hints(f)  # unresolvable annotations fail at decoration, as in PyTorch

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        signature.bind(*args, **kwargs)
        return f(*args, **kwargs)

    return wrapper
