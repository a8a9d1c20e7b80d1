"""``ferrotorch.Size``: the shape of a tensor, a tuple subclass as in PyTorch."""


class Size(tuple):
    """A tuple of dimension sizes, as returned by ``Tensor.size()`` and ``.shape``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:
            if not isinstance(s, int) and not hasattr(s, "__index__"):
                raise TypeError(
                    f"torch.Size() takes an iterable of 'int' (item {sizes.index(s)} is '{type(s).__name__}')"
                )
        return super().__new__(cls, (int(s.__index__()) if not isinstance(s, int) else s for s in sizes))

    def __repr__(self):
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        """Number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = super().__getitem__(key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))
