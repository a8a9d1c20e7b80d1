"""``copy.deepcopy`` for tensors, as PyTorch's ``Tensor.__deepcopy__``: graph leaves only,
values cloned (``requires_grad``, ``.grad`` and Python attributes copied), memoised so a
tensor reached twice is copied once. ``Module`` deep copies rely on it."""

import copy

from . import _C


def _tensor_deepcopy(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
            "moment.  If you were attempting to deepcopy a module, this may be because of a "
            "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    prev = _C.is_grad_enabled()
    _C._set_grad_enabled(False)
    try:
        new = self.clone()
    finally:
        _C._set_grad_enabled(prev)
    if type(self) is not _C.Tensor:
        new = _C.Tensor.__new__(type(self), new)
    new.requires_grad_(self.requires_grad)
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    extra = getattr(self, "__dict__", None)
    if extra:
        for k, v in extra.items():
            setattr(new, k, copy.deepcopy(v, memo))
    return new


_C.Tensor.__deepcopy__ = _tensor_deepcopy
