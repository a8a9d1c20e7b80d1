"""``backends.mkl``: ferrotorch is not built with it."""


def is_available():
    """Whether ferrotorch can use it: never."""
    return False
