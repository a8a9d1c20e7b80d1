"""``backends.opt_einsum``: contraction-order optimisation for ``einsum``."""

enabled = True
strategy = "auto"


def is_available():
    """Whether the ``opt_einsum`` package is importable."""
    try:
        import opt_einsum  # noqa: F401  (availability probe)
    except ImportError:
        return False
    return True
