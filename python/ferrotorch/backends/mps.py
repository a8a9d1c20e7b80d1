"""``backends.mps``: ferrotorch is not built with it."""


def is_available():
    """Whether ferrotorch can use it: never."""
    return False


def is_built():
    """Whether ferrotorch was built with MPS support: no."""
    return False
