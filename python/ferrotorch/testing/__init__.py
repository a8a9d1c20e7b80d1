"""``ferrotorch.testing``: assertions and tensor factories for tests, as in ``torch.testing``."""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor
from ._filecheck import FileCheck

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]
