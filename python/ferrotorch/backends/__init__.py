"""``ferrotorch.backends``: the backend switches PyTorch code sets and reads.

ferrotorch has one CPU backend of its own, so the accelerator libraries
report unavailable, and the flags (``cudnn.benchmark``,
``cuda.matmul.allow_tf32``, ...) are plain settable attributes that change
no result.
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
