"""``torch.special``: special functions, with PyTorch's names and signatures.

Each function is a native op of the engine's op registry (the Bessel, gamma and
normal-distribution families, the orthogonal polynomials) or an alias of a
top-level op (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is
``digamma``, ...).
"""

import math as _math

import ferrotorch as _ft

from . import _C, _args
from ._tensor_class import Tensor  # noqa: F401 - PyTorch's module re-exports it too
from ._math_ops import _write_out

_unary = _C._math_unary
_binary = _C._math_binary

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc",
    "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
    "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc",
    "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def _unary_fn(name, kernel, doc):
    def fn(input, *, out=None):
        _args.tensor(input, "special_" + name, "input", 1)
        return _write_out(_unary(kernel, input), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "torch.special"
    fn.__doc__ = f"{name}(input, *, out=None) -> Tensor\n\n{doc}\n\nArgs:\n    input (Tensor): the input tensor.\n\n" \
                 "Keyword args:\n    out (Tensor, optional): the output tensor.\n"
    return fn


def _binary_fn(name, kernel, second, doc, tensor_only=False):
    def fn(input, other, *, out=None):
        if tensor_only:
            _args.tensor(input, "special_" + name, "input", 1)
            _args.tensor(other, "special_" + name, second, 2)
        elif not isinstance(input, _C.TensorBase) and not isinstance(other, _C.TensorBase):
            raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return _write_out(_binary(kernel, input, other), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "torch.special"
    fn.__doc__ = f"{name}(input, {second}, *, out=None) -> Tensor\n\n{doc}\n\nArgs:\n" \
                 f"    input (Tensor or Number): the first input.\n    {second} (Tensor or Number): the second input.\n\n" \
                 "Keyword args:\n    out (Tensor, optional): the output tensor.\n"
    if second != "other":
        # PyTorch names the polynomials' degree `n`.
        def poly(input, n, *, out=None):
            return fn(input, n, out=out)
        poly.__name__ = poly.__qualname__ = name
        poly.__module__ = "torch.special"
        poly.__doc__ = fn.__doc__
        return poly
    return fn


_UNARY = {
    "airy_ai": ("special_airy_ai", r"Airy function :math:`\text{Ai}\left(\text{input}\right)`."),
    "bessel_j0": ("special_bessel_j0", "Bessel function of the first kind of order :math:`0`."),
    "bessel_j1": ("special_bessel_j1", "Bessel function of the first kind of order :math:`1`."),
    "bessel_y0": ("special_bessel_y0", "Bessel function of the second kind of order :math:`0`."),
    "bessel_y1": ("special_bessel_y1", "Bessel function of the second kind of order :math:`1`."),
    "modified_bessel_i0": ("special_modified_bessel_i0", "Modified Bessel function of the first kind of order :math:`0`."),
    "modified_bessel_i1": ("special_modified_bessel_i1", "Modified Bessel function of the first kind of order :math:`1`."),
    "modified_bessel_k0": ("special_modified_bessel_k0", "Modified Bessel function of the second kind of order :math:`0`."),
    "modified_bessel_k1": ("special_modified_bessel_k1", "Modified Bessel function of the second kind of order :math:`1`."),
    "scaled_modified_bessel_k0": ("special_scaled_modified_bessel_k0",
                                  "Scaled modified Bessel function of the second kind of order :math:`0`."),
    "scaled_modified_bessel_k1": ("special_scaled_modified_bessel_k1",
                                  "Scaled modified Bessel function of the second kind of order :math:`1`."),
    "spherical_bessel_j0": ("special_spherical_bessel_j0", "Spherical Bessel function of the first kind of order :math:`0`."),
    "digamma": ("digamma", r"Computes the logarithmic derivative of the gamma function on `input`: "
                           r":math:`\digamma(x) = \frac{d}{dx} \ln\left(\Gamma\left(x\right)\right)`."),
    "psi": ("digamma", "Alias for :func:`torch.special.digamma`."),
    "entr": ("special_entr", r"Computes the entropy on :attr:`input` (as defined below), elementwise: "
                             r":math:`-x \ln(x)` for :math:`x > 0`, :math:`0` at :math:`0` and :math:`-\infty` below."),
    "erf": ("erf", "Computes the error function of :attr:`input`."),
    "erfc": ("erfc", "Computes the complementary error function of :attr:`input`."),
    "erfcx": ("special_erfcx", r"Computes the scaled complementary error function for each element of :attr:`input`: "
                               r":math:`\exp(x^2) \operatorname{erfc}(x)`."),
    "erfinv": ("erfinv", "Computes the inverse error function of :attr:`input`."),
    "exp2": ("exp2", r"Computes the base two exponential function of :attr:`input`: :math:`2^{x}`."),
    "expit": ("sigmoid", r"Computes the expit (also known as the logistic sigmoid function) of the elements of "
                         r":attr:`input`: :math:`\frac{1}{1 + e^{-x}}`."),
    "expm1": ("expm1", r"Computes the exponential of the elements minus 1 of :attr:`input`: :math:`e^{x} - 1`."),
    "gammaln": ("lgamma", r"Computes the natural logarithm of the absolute value of the gamma function on :attr:`input`."),
    "i0": ("i0", "Computes the zeroth order modified Bessel function of the first kind for each element of :attr:`input`."),
    "i0e": ("special_i0e", "Computes the exponentially scaled zeroth order modified Bessel function of the first kind."),
    "i1": ("special_i1", "Computes the first order modified Bessel function of the first kind."),
    "i1e": ("special_i1e", "Computes the exponentially scaled first order modified Bessel function of the first kind."),
    "log1p": ("log1p", r"Alias for :func:`torch.log1p`: :math:`\ln(1 + x)`."),
    "log_ndtr": ("special_log_ndtr", "Computes the log of the area under the standard Gaussian probability density "
                                     "function, integrated from minus infinity to :attr:`input`, elementwise."),
    "ndtri": ("special_ndtri", "Computes the argument, x, for which the area under the Gaussian probability density "
                               "function (integrated from minus infinity to x) is equal to :attr:`input`, elementwise."),
    "sinc": ("sinc", r"Computes the normalized sinc of :attr:`input`: :math:`\sin(\pi x) / (\pi x)`, 1 at 0."),
}

for _name, (_kernel, _doc) in _UNARY.items():
    globals()[_name] = _unary_fn(_name, _kernel, _doc)

_BINARY = {
    "xlogy": ("xlogy", False, r"Computes ``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."),
    "xlog1py": ("special_xlog1py", False,
                r"Computes ``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."),
    "zeta": ("special_zeta", False, r"Computes the Hurwitz zeta function, elementwise: "
                                    r":math:`\zeta(x, q) = \sum_{k=0}^{\infty} \frac{1}{(k + q)^x}`."),
    "gammainc": ("igamma", True, "Computes the regularized lower incomplete gamma function."),
    "gammaincc": ("igammac", True, "Computes the regularized upper incomplete gamma function."),
}
for _name, (_kernel, _tensor_only, _doc) in _BINARY.items():
    globals()[_name] = _binary_fn(_name, _kernel, "other", _doc, _tensor_only)

_POLYNOMIALS = {
    "chebyshev_polynomial_t": "Chebyshev polynomial of the first kind :math:`T_{n}(\\text{input})`.",
    "chebyshev_polynomial_u": "Chebyshev polynomial of the second kind :math:`U_{n}(\\text{input})`.",
    "chebyshev_polynomial_v": "Chebyshev polynomial of the third kind :math:`V_{n}(\\text{input})`.",
    "chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind :math:`W_{n}(\\text{input})`.",
    "shifted_chebyshev_polynomial_t": "Chebyshev polynomial of the first kind :math:`T_{n}^{\\ast}(\\text{input})`.",
    "shifted_chebyshev_polynomial_u": "Chebyshev polynomial of the second kind :math:`U_{n}^{\\ast}(\\text{input})`.",
    "shifted_chebyshev_polynomial_v": "Chebyshev polynomial of the third kind :math:`V_{n}^{\\ast}(\\text{input})`.",
    "shifted_chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind :math:`W_{n}^{\\ast}(\\text{input})`.",
    "hermite_polynomial_h": "Physicist's Hermite polynomial :math:`H_{n}(\\text{input})`.",
    "hermite_polynomial_he": "Probabilist's Hermite polynomial :math:`He_{n}(\\text{input})`.",
    "laguerre_polynomial_l": "Laguerre polynomial :math:`L_{n}(\\text{input})`.",
    "legendre_polynomial_p": "Legendre polynomial :math:`P_{n}(\\text{input})`.",
}
for _name, _doc in _POLYNOMIALS.items():
    globals()[_name] = _binary_fn(_name, "special_" + _name, "n", _doc + " The degree ``n`` is truncated to an integer; "
                                  "a negative degree gives 0.")


def ndtr(input, *, out=None):
    r"""ndtr(input, *, out=None) -> Tensor

    Computes the area under the standard Gaussian probability density function,
    integrated from minus infinity to :attr:`input`, elementwise.

    .. math::
        \text{ndtr}(x) = \frac{1}{\sqrt{2 \pi}}\int_{-\infty}^{x} e^{-\frac{1}{2}t^2} dt

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    _args.tensor(input, "special_ndtr", "input", 1)
    # PyTorch's composition: (1 + erf(x / sqrt(2))) * 0.5.
    return _write_out((_unary("erf", input * _math.sqrt(0.5)) + 1) * 0.5, out)


def logit(input, eps=None, *, out=None):
    r"""logit(input, eps=None, *, out=None) -> Tensor

    Returns a new tensor with the logit of the elements of :attr:`input`.
    :attr:`input` is clamped to [eps, 1 - eps] when eps is not None.

    Args:
        input (Tensor): the input tensor.
        eps (float, optional): the epsilon for input clamp bound. Default: ``None``

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    return _ft.logit(input, eps, out=out)


def multigammaln(input, p, *, out=None):
    r"""multigammaln(input, p, *, out=None) -> Tensor

    Computes the multivariate log-gamma function with dimension :attr:`p` element-wise
    (see :func:`torch.mvlgamma`).

    Args:
        input (Tensor): the tensor to compute the multivariate log-gamma function
        p (int): the number of dimensions

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    return _ft.mvlgamma(input, p, out=out)


def polygamma(n, input, *, out=None):
    r"""polygamma(n, input, *, out=None) -> Tensor

    Computes the :math:`n^{th}` derivative of the digamma function on :attr:`input`.

    Args:
        n (int): the order of the polygamma function
        input (Tensor): the input tensor.

    Keyword args:
        out (Tensor, optional): the output tensor.
    """
    return _ft.polygamma(n, input, out=out)


def round(input, *, decimals=0, out=None):
    r"""round(input, *, out=None) -> Tensor

    Alias for :func:`torch.round`.
    """
    return _ft.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    r"""softmax(input, dim, *, dtype=None) -> Tensor

    Computes the softmax function: :math:`\text{Softmax}(x_{i}) = \frac{\exp(x_i)}{\sum_j \exp(x_j)}`
    along :attr:`dim`.

    Args:
        input (Tensor): input
        dim (int): A dimension along which softmax will be computed.
        dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.
            If specified, the input tensor is cast to :attr:`dtype` before the operation is performed.
    """
    return _ft.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    r"""log_softmax(input, dim, *, dtype=None) -> Tensor

    Computes softmax followed by a logarithm along :attr:`dim`, in a numerically stable way.

    Args:
        input (Tensor): input
        dim (int): A dimension along which log_softmax will be computed.
        dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.
            If specified, the input tensor is cast to :attr:`dtype` before the operation is performed.
    """
    return _ft.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    r"""logsumexp(input, dim, keepdim=False, *, out=None)

    Alias for :func:`torch.logsumexp`: the log of summed exponentials of each row of
    :attr:`input` in the given dimension :attr:`dim`, computed stably.
    """
    return _ft.logsumexp(input, dim, keepdim, out=out)


for _f in (ndtr, logit, multigammaln, polygamma, round, softmax, log_softmax, logsumexp):
    _f.__module__ = "torch.special"
del _f, _name
