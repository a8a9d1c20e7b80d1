"""``ferrotorch.functional``: the functions PyTorch defines in ``torch/functional.py``
(all also in the top-level namespace). Names ferrotorch does not have yet
(``cdist``, ``lu``, ``stft``, ...) are left out of ``__all__`` rather than stubbed.
"""

import ferrotorch as _ft

_NAMES = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
    "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
    "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index",
]

__all__ = [n for n in _NAMES if hasattr(_ft, n)]
globals().update({n: getattr(_ft, n) for n in __all__})
