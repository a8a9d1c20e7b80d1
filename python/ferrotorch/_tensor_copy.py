"""``copy.deepcopy`` and ``pickle`` support for tensors (so modules and optimizers can be
deep-copied and tensors sent through ``multiprocessing``)."""

import copy

from . import _C
from . import _tensor_methods as _methods

_NON_LEAF_MESSAGE = (
    "Only Tensors created explicitly by the user "
    "(graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because "
    "of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)


def _copy_attributes(src, dst, memo):
    d = getattr(src, "__dict__", None)
    if d:
        for k, v in d.items():
            setattr(dst, k, copy.deepcopy(v, memo))


def _deepcopy(self, memo):
    from .nn.parameter import Parameter
    if id(self) in memo:
        return memo[id(self)]
    if isinstance(self, Parameter):
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        _copy_attributes(self, result, memo)
        return result
    if not self.is_leaf:
        raise RuntimeError(_NON_LEAF_MESSAGE)
    prev = _C.is_grad_enabled()
    _C._set_grad_enabled(False)
    try:
        # One copy per storage, shared through the memo: tensors that were views of one
        # another stay views of one another, with their strides and offsets.
        st = self.untyped_storage()
        key = ("ferrotorch.storage", st.data_ptr(), self.dtype) if st.nbytes() and st.data_ptr() else None
        flat = memo.get(key) if key is not None else None
        if flat is None:
            n = st.nbytes() // self.element_size()
            flat = self.detach().as_strided((n,), (1,), 0).clone()
            if key is not None:
                memo[key] = flat
        new = flat.as_strided(tuple(self.shape), tuple(self.stride()), self.storage_offset())
    finally:
        _C._set_grad_enabled(prev)
    if self.requires_grad:
        new.requires_grad_()
    if self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    _copy_attributes(self, new, memo)
    memo[id(self)] = new
    return new


def _rebuild_pickled(data, dtype_name, shape, requires_grad, dim_order=None, conj=False):
    import numpy as np
    from .serialization import _NP_BY_DTYPE
    dtype = getattr(_C, dtype_name)
    if dim_order is not None:
        shape = tuple(shape[d] for d in dim_order)
    arr = np.frombuffer(bytearray(data), dtype=_NP_BY_DTYPE[dtype]).reshape(shape)
    t = _C.from_numpy(arr)
    if dtype == _C.bfloat16:
        t = t.view(_C.bfloat16)
    if dim_order is not None:
        # The bytes are in memory order; permuting back restores the sender's layout.
        inverse = [0] * len(dim_order)
        for i, d in enumerate(dim_order):
            inverse[d] = i
        t = t.permute(inverse)
    if conj:  # the bytes are the stored values of a conjugate view (PyTorch keeps the bit)
        t = t.conj().detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_ex(self, proto):
    d = self.detach()
    conj = d.is_conj()
    if conj:  # pickle the stored values and the bit
        d = d.conj()
    if d.device.type != "cpu":
        d = d.cpu()
    dim_order = None
    if not d.is_contiguous():
        # Keep the memory layout (channels-last and other permuted layouts), as PyTorch does: a
        # preserve-format copy is dense, and its dims sorted by stride read it in memory order.
        d = d.clone()
        order = sorted(range(d.dim()), key=lambda i: (-d.stride()[i], i))
        p = d.permute(order)
        if p.is_contiguous() and order != list(range(d.dim())):
            d, dim_order = p, tuple(order)
        else:
            d = d.contiguous()
    name = str(d.dtype).rsplit(".", 1)[-1]
    raw = (d.view(_C.int16) if name == "bfloat16" else d).numpy().tobytes()
    shape = tuple(self.shape)
    if conj:
        return (_rebuild_pickled, (raw, name, shape, self.requires_grad, dim_order, True))
    if dim_order is None:
        return (_rebuild_pickled, (raw, name, shape, self.requires_grad))
    return (_rebuild_pickled, (raw, name, shape, self.requires_grad, dim_order))


_methods.define("__deepcopy__", _deepcopy)
_methods.define("__reduce_ex__", _reduce_ex)
