"""``finfo`` and ``iinfo``: numeric limits of dtypes."""

from . import _C


class finfo:
    """Machine limits of a floating dtype (as ``torch.finfo``)."""

    _TABLE = {
        "float16": (11, 5, 65504.0, 2.0 ** -14, 2.0 ** -24, 2.0 ** -10, 3),
        "bfloat16": (8, 8, 3.3895313892515355e38, 1.1754943508222875e-38, 9.183549615799121e-41, 2.0 ** -7, 2),
        "float32": (24, 8, 3.4028234663852886e38, 1.1754943508222875e-38, 1.401298464324817e-45, 2.0 ** -23, 6),
        "float64": (53, 11, 1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, 2.0 ** -52, 15),
    }

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        name = str(dtype).replace("torch.", "")
        if name not in self._TABLE:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle '{dtype}'")
        bits, _exp, self.max, self.tiny, self.smallest_subnormal, self.eps, self.precision = self._TABLE[name]
        self.bits = _C.tensor(0.0, dtype=dtype).element_size() * 8
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -self.precision
        self.dtype = name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:e}, max={self.max:e}, eps={self.eps:e}, "
                f"smallest_normal={self.tiny:e}, tiny={self.tiny:e}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (as ``torch.iinfo``)."""

    def __init__(self, type):
        name = str(type).replace("torch.", "")
        table = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -2 ** 15, 2 ** 15 - 1),
                 "int32": (32, -2 ** 31, 2 ** 31 - 1), "int64": (64, -2 ** 63, 2 ** 63 - 1), "bool": (8, 0, 1)}
        if name not in table:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        self.bits, self.min, self.max = table[name]
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
