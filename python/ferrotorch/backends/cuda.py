"""``backends.cuda``: CUDA matmul switches (recorded; no CUDA backend runs here)."""


class _MatmulFlags:
    """``backends.cuda.matmul``: TF32 and reduced-precision reduction switches."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.allow_fp16_accumulation = False


matmul = _MatmulFlags()


def is_built():
    """Whether ferrotorch was built with CUDA support."""
    return False


def flash_sdp_enabled():
    """Whether the flash scaled-dot-product attention kernel may be used."""
    return False


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient scaled-dot-product attention kernel may be used."""
    return False


def math_sdp_enabled():
    """Whether the reference (math) scaled-dot-product attention may be used: always."""
    return True
