"""Top-level special-function entry points that take more than the op registry
generates: ``polygamma``/``mvlgamma`` (an integer parameter), and the ops PyTorch
defines as compositions of others (``positive``, ``float_power``, ``ldexp``,
``frexp``), with their ``Tensor`` methods and in-place forms."""

from . import _C, _args
from . import _tensor_methods as _methods
from ._math_ops import _rt, _pretty, _write_out, return_types

_unary = _C._math_unary
_binary = _C._math_binary

__all__ = ["polygamma", "mvlgamma", "positive", "float_power", "ldexp", "ldexp_", "frexp"]

return_type_frexp = return_types.frexp = _rt("frexp", ("mantissa", "exponent"))


def polygamma(n, input, *, out=None):
    r"""polygamma(n, input, *, out=None) -> Tensor

    Computes the :math:`n^{th}` derivative of the digamma function on :attr:`input`.
    :math:`n \geq 0` is called the order of the polygamma function.

    .. math::
        \psi^{(n)}(x) = \frac{d^{(n)}}{dx^{(n)}} \psi(x)

    Args:
        n (int): the order of the polygamma function
        input (Tensor): the input tensor.

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    n = _args.integer(n, "polygamma", "n", 1)
    _args.tensor(input, "polygamma", "input", 2)
    return _write_out(_unary("polygamma", input, float(n)), out)


def _polygamma_method(self, n):
    """See :func:`torch.polygamma`."""
    return _unary("polygamma", self, float(_args.integer(n, "polygamma", "n", 1)))


def _polygamma_(self, n):
    """In-place version of :meth:`~Tensor.polygamma`."""
    return _unary("polygamma", self, float(_args.integer(n, "polygamma_", "n", 1)), inplace=True)


def mvlgamma(input, p, *, out=None):
    r"""mvlgamma(input, p, *, out=None) -> Tensor

    Computes the multivariate log-gamma function with dimension :attr:`p` element-wise, given by

    .. math::
        \log(\Gamma_{p}(a)) = C + \displaystyle \sum_{i=1}^{p} \log\left(\Gamma\left(a - \frac{i - 1}{2}\right)\right)

    where :math:`C = \log(\pi) \cdot \frac{p (p - 1)}{4}` and :math:`\Gamma(-)` is the Gamma function.

    Args:
        input (Tensor): the tensor to compute the multivariate log-gamma function
        p (int): the number of dimensions

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    _args.tensor(input, "mvlgamma", "input", 1)
    p = _args.integer(p, "mvlgamma", "p", 2)
    return _write_out(_unary("mvlgamma", input, float(p)), out)


def _mvlgamma_method(self, p):
    """See :func:`torch.mvlgamma`."""
    return _unary("mvlgamma", self, float(_args.integer(p, "mvlgamma", "p", 1)))


def _mvlgamma_(self, p):
    """In-place version of :meth:`~Tensor.mvlgamma`."""
    return _unary("mvlgamma", self, float(_args.integer(p, "mvlgamma_", "p", 1)), inplace=True)


def positive(input):
    r"""positive(input) -> Tensor

    Returns :attr:`input`. Throws a runtime error if :attr:`input` is a bool tensor.
    """
    _args.tensor(input, "positive", "input", 1)
    if input.dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _float_power_dtype(*xs):
    return _C.complex128 if any(isinstance(x, complex) or (isinstance(x, _C.TensorBase) and x.dtype.is_complex)
                                for x in xs) else _C.float64


def _as_double(x, dtype):
    return x.to(dtype) if isinstance(x, _C.TensorBase) else x


def float_power(input, exponent, *, out=None):
    r"""float_power(input, exponent, *, out=None) -> Tensor

    Raises :attr:`input` to the power of :attr:`exponent`, elementwise, in double precision.
    If neither input is complex returns a ``torch.float64`` tensor,
    and if one or more inputs is complex returns a ``torch.complex128`` tensor.

    Args:
        input (Tensor or Number): the base value(s)
        exponent (Tensor or Number): the exponent value(s)

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    if not isinstance(input, _C.TensorBase) and not isinstance(exponent, _C.TensorBase):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dtype = _float_power_dtype(input, exponent)
    if out is not None and out.dtype != dtype:
        raise RuntimeError(f"the output given to float_power has dtype {_pretty(out.dtype)} but the operation's "
                           f"result requires dtype {_pretty(dtype)}")
    return _write_out(_binary("pow", _as_double(input, dtype), _as_double(exponent, dtype)), out)


def _float_power_method(self, exponent):
    """See :func:`torch.float_power`."""
    return float_power(self, exponent)


def _float_power_(self, exponent):
    """In-place version of :meth:`~Tensor.float_power` (``self`` must already be float64)."""
    dtype = _float_power_dtype(self, exponent)
    if self.dtype != dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_pretty(self.dtype)} but the operation's "
                           f"result requires dtype {_pretty(dtype)}")
    return _binary("pow", self, _as_double(exponent, dtype), inplace=True)


def ldexp(input, other, *, out=None):
    r"""ldexp(input, other, *, out=None) -> Tensor

    Multiplies :attr:`input` by 2 ** :attr:`other`.

    .. math::
        \text{out}_i = \text{input}_i * 2^\text{other}_i

    Args:
        input (Tensor): the input tensor.
        other (Tensor): a tensor of exponents, typically integers.

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    _args.tensor(input, "ldexp", "input", 1)
    _args.tensor(other, "ldexp", "other", 2)
    if out is None and (input.requires_grad or other.requires_grad) and _C.is_grad_enabled():
        return _ldexp_function().apply(input, other)
    return _write_out(_binary("mul", input, _binary("pow", 2.0, other)), out)


_LDEXP_FN = []


def _ldexp_function():
    """PyTorch's ``LdexpBackward0``: both gradients are formed elementwise over the broadcast
    shape before summing (so opposite infinite terms give NaN, as there)."""
    if not _LDEXP_FN:
        import math
        from .autograd import Function

        class Ldexp(Function):
            @staticmethod
            def forward(ctx, input, other):
                p = _binary("pow", 2.0, other)
                result = _binary("mul", input, p)
                ctx.save_for_backward(p, result)
                ctx.shapes = (tuple(input.shape), tuple(other.shape))
                return result

            @staticmethod
            def backward(ctx, grad):
                p, result = ctx.saved_tensors
                g_in = g_other = None
                if ctx.needs_input_grad[0]:
                    g_in = (grad * p).sum_to_size(ctx.shapes[0])
                if ctx.needs_input_grad[1]:
                    # grad * result * ln 2, rounded in that order as PyTorch's.
                    g_other = (grad * result * math.log(2.0)).sum_to_size(ctx.shapes[1])
                return g_in, g_other

        Ldexp._backward_name = "LdexpBackward0"
        _LDEXP_FN.append(Ldexp)
    return _LDEXP_FN[0]


def ldexp_(input, other):
    """In-place version of :func:`torch.ldexp`."""
    _args.tensor(other, "ldexp_", "other", 2)
    return _binary("mul", input, _binary("pow", 2.0, other), inplace=True)


def frexp(input, *, out=None):
    r"""frexp(input, *, out=None) -> (Tensor mantissa, Tensor exponent)

    Decomposes :attr:`input` into mantissa and exponent tensors
    such that :math:`\text{input} = \text{mantissa} \times 2^{\text{exponent}}`.

    The range of mantissa is the open interval (-1, 1).

    Args:
        input (Tensor): the input tensor

    Keyword args:
        out (tuple, optional): the output tensors
    """
    _args.tensor(input, "frexp", "input", 1)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.detach().to(_C.float64)
    regular = x.isfinite() & (x != 0)
    # log2 in float64 can round up just below a power of two: corrected below.
    e = (x.abs().log2().floor() + 1).where(regular, 0.0)
    m = _scale(x, -e)
    e = e.where(~(regular & (m.abs() < 0.5)), e - 1).where(~(regular & (m.abs() >= 1)), e + 1)
    # The mantissa is input * 2^-e through autograd (PyTorch's frexp has a derivative).
    mantissa = _scale(input, -e).where(regular, input)
    return _write_out(return_type_frexp(mantissa, e.to(_C.int32)), out)


def _scale(x, k):
    """``x * 2^k`` in ``x``'s dtype, by two factors so neither overflows (subnormal ``x`` has ``k`` > 1024)."""
    half = (k / 2).floor()
    return x * _binary("pow", 2.0, half).to(x.dtype) * _binary("pow", 2.0, k - half).to(x.dtype)


def _ldexp_method(self, other):
    """See :func:`torch.ldexp`."""
    return ldexp(self, other)


_methods.define("polygamma", _polygamma_method)
_methods.define("polygamma_", _polygamma_)
_methods.define("mvlgamma", _mvlgamma_method)
_methods.define("mvlgamma_", _mvlgamma_)
_methods.define("positive", positive)
_methods.define("float_power", _float_power_method)
_methods.define("float_power_", _float_power_)
_methods.define("ldexp", _ldexp_method)
_methods.define("ldexp_", ldexp_)
_methods.define("frexp", lambda self: frexp(self))
