"""dtype singletons and their PyTorch aliases, and the ``strided`` layout."""

from . import _C

bool = _C.bool  # noqa: A001 - PyTorch shadows the builtin the same way
uint8 = _C.uint8
int8 = _C.int8
int16 = _C.int16
int32 = _C.int32
int64 = _C.int64
float16 = _C.float16
bfloat16 = _C.bfloat16
float32 = _C.float32
float64 = _C.float64
complex64 = _C.complex64
complex128 = _C.complex128

half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128


class layout:
    """A memory layout; ferrotorch has the dense ``strided`` one."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"


strided = layout("strided")

__all__ = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "half", "float", "double", "short", "int", "long",
    "complex64", "complex128", "cfloat", "cdouble",
]
