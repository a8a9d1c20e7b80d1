"""``nn.Parameter``: a tensor that a Module registers as learnable."""

from .. import _C


class Parameter(_C.Tensor):
    """A tensor that requires grad by default and is registered by ``Module``."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        t = _C.Tensor.__new__(cls, data.detach())
        t._register()
        t.requires_grad_(requires_grad)
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))
