"""``torch.fft``: discrete Fourier transforms, with PyTorch's names, signatures,
defaults, dtypes and errors.

The transforms run on the engine's FFT kernels (``rustfft``/``realfft`` on the
CPU) through ``_C._fft``; the op layer composes PyTorch's three primitives
(``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) as PyTorch does and records their
gradients. ``fftfreq``/``rfftfreq``/``fftshift``/``ifftshift`` are tensor
ops.
"""

import ferrotorch as _ft

from .. import _C
from .._tensor_class import Tensor  # noqa: F401 - PyTorch's module re-exports it too
from .._math_ops import _write_out

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

def _int_list(v):
    """``s``/``dim`` as a list of ints (PyTorch accepts one int for an int list)."""
    if v is None:
        return None
    if isinstance(v, int):
        return [v]
    return [int(i) for i in v]


def _transform(name, input, s, dim, norm, out):
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{name}(): argument 'norm' must be str, not {type(norm).__name__}")
    return _write_out(_C._fft(name, input, s, dim, norm), out)


def _one_d(name, doc):
    def f(input, n=None, dim=-1, norm=None, *, out=None):
        return _transform(name, input, None if n is None else [int(n)], [int(dim)], norm, out)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _two_d(name, doc):
    def f(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        return _transform(name + "2", input, _int_list(s), _int_list(dim), norm, out)
    f.__name__ = f.__qualname__ = name + "2"
    f.__doc__ = doc
    return f


def _n_d(name, doc):
    def f(input, s=None, dim=None, norm=None, *, out=None):
        return _transform(name + "n", input, _int_list(s), _int_list(dim), norm, out)
    f.__name__ = f.__qualname__ = name + "n"
    f.__doc__ = doc
    return f


_NORM_DOC = """    norm (str, optional): Normalization mode. For the forward transform
        (:func:`~torch.fft.{fwd}`), these correspond to:

        * ``"forward"`` - normalize by ``1/n``
        * ``"backward"`` - no normalization
        * ``"ortho"`` - normalize by ``1/sqrt(n)`` (making the FFT orthonormal)

        Calling the backward transform (:func:`~torch.fft.{inv}`) with the same
        normalization mode will apply an overall normalization of ``1/n`` between
        the two transforms. This is required to make :func:`~torch.fft.{inv}`
        the exact inverse.

        Default is ``"backward"`` (no normalization).
"""


def _doc_1d(name, what, fwd, inv, n_doc):
    return f"""
{name}(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor

Computes the {what} of :attr:`input`.

Args:
    input (Tensor): the input tensor
    n (int, optional): {n_doc}
    dim (int, optional): The dimension along which to take the one dimensional transform.
{_NORM_DOC.format(fwd=fwd, inv=inv)}
Keyword args:
    out (Tensor, optional): the output tensor.
"""


def _doc_nd(name, what, fwd, inv, dim_default):
    return f"""
{name}(input, s=None, dim={dim_default}, norm=None, *, out=None) -> Tensor

Computes the {what} of :attr:`input`.

Args:
    input (Tensor): the input tensor
    s (Tuple[int], optional): Signal size in the transformed dimensions.
        If given, each dimension ``dim[i]`` will either be zero-padded or
        trimmed to the length ``s[i]`` before computing the transform.
        If a length ``-1`` is specified, no padding is done in that dimension.
        Default: ``s = [input.size(d) for d in dim]``
    dim (Tuple[int], optional): Dimensions to be transformed.
        Default: {"the last two dimensions" if dim_default != "None" else "all dimensions, or the last ``len(s)`` dimensions if :attr:`s` is given"}.
{_NORM_DOC.format(fwd=fwd, inv=inv)}
Keyword args:
    out (Tensor, optional): the output tensor.
"""


_SIGNAL_N = "Signal length. If given, the input will either be zero-padded or trimmed to this length before computing the {}."
_OUTPUT_N = ("Output signal length. This determines the length of the output signal. If given, the input will "
             "either be zero-padded or trimmed to this length before computing the {}. Defaults to even output: "
             "``n=2*(input.size(dim) - 1)``.")

_FAMILIES = (
    # name, what it computes, forward/inverse pair for the norm docs, the 1-D n doc
    ("fft", "one dimensional discrete Fourier transform", "fft", "ifft", _SIGNAL_N.format("FFT")),
    ("ifft", "one dimensional inverse discrete Fourier transform", "fft", "ifft", _SIGNAL_N.format("IFFT")),
    ("rfft", "one dimensional Fourier transform of real-valued", "rfft", "irfft",
     _SIGNAL_N.format("real FFT")),
    ("irfft", "inverse of :func:`~torch.fft.rfft`", "rfft", "irfft", _OUTPUT_N.format("real IFFT")),
    ("hfft", "one dimensional discrete Fourier transform of a Hermitian symmetric", "hfft", "ihfft",
     _OUTPUT_N.format("Hermitian FFT")),
    ("ihfft", "inverse of :func:`~torch.fft.hfft`", "hfft", "ihfft", _SIGNAL_N.format("Hermitian IFFT")),
)

for _name, _what, _fwd, _inv, _n in _FAMILIES:
    globals()[_name] = _one_d(_name, _doc_1d(_name, _what, _fwd, _inv, _n))
    globals()[_name + "2"] = _two_d(_name, _doc_nd(_name + "2", "2 dimensional " + _what.replace("one dimensional ", ""),
                                                   _fwd + "2", _inv + "2", "(-2, -1)"))
    globals()[_name + "n"] = _n_d(_name, _doc_nd(_name + "n", "N dimensional " + _what.replace("one dimensional ", ""),
                                                 _fwd + "n", _inv + "n", "None"))
del _name, _what, _fwd, _inv, _n


def _freq(fname, n, d, out, dtype, layout, device, requires_grad, onesided):
    n = int(n)
    dtype = _ft.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if onesided:
        r = _ft.arange(n // 2 + 1, dtype=dtype, device=device)
    else:
        r = _ft.arange(n, dtype=dtype, device=device) if n >= 0 else _ft.empty(n, dtype=dtype, device=device)
        # The negative frequencies: indices from (n + 1) // 2 on stand for i - n.
        r[(n + 1) // 2:] -= n
    # PyTorch multiplies by 1 / (n d) in double: infinite for n d = 0 (so rfftfreq(0) is [nan]).
    r = r.mul(1.0 / (n * d) if n * d != 0 else float("inf"))
    r = _write_out(r, out)
    if requires_grad:
        r.requires_grad_(True)
    return r


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    r"""
fftfreq(n, d=1.0, *, out=None, dtype=None, layout=torch.strided, device=None, requires_grad=False) -> Tensor

Computes the discrete Fourier Transform sample frequencies for a signal of size :attr:`n`.

For an FFT of length :attr:`n` and with inputs spaced in length unit :attr:`d`, the
frequencies are::

    f = [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)

For even lengths the Nyquist frequency ``f[n/2]`` is taken to be negative, as NumPy does.

Args:
    n (int): the FFT length
    d (float, optional): The sampling length scale (the spacing between samples).

Keyword Args:
    out (Tensor, optional): the output tensor.
    dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.
        Default: if ``None``, uses a global default (see :func:`torch.set_default_dtype`).
    layout (:class:`torch.layout`, optional): the desired layout of returned Tensor.
    device (:class:`torch.device`, optional): the desired device of returned tensor.
    requires_grad (bool, optional): If autograd should record operations on the returned tensor.

Example:

    >>> torch.fft.fftfreq(5)
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
"""
    return _freq("fftfreq", n, d, out, dtype, layout, device, requires_grad, False)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    r"""
rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=torch.strided, device=None, requires_grad=False) -> Tensor

Computes the sample frequencies for :func:`~torch.fft.rfft` with a signal of size :attr:`n`:
the non-negative frequencies of :func:`~torch.fft.fftfreq`, with the Nyquist frequency
(for even :attr:`n`) taken as positive::

    f = torch.arange((n // 2) + 1) / (d * n)

Args:
    n (int): the real FFT length
    d (float, optional): The sampling length scale (the spacing between samples).

Keyword Args:
    out (Tensor, optional): the output tensor.
    dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.
    layout (:class:`torch.layout`, optional): the desired layout of returned Tensor.
    device (:class:`torch.device`, optional): the desired device of returned tensor.
    requires_grad (bool, optional): If autograd should record operations on the returned tensor.

Example:

    >>> torch.fft.rfftfreq(5)
    tensor([0.0000, 0.2000, 0.4000])
"""
    return _freq("rfftfreq", n, d, out, dtype, layout, device, requires_grad, True)


def _shift(input, dim, inverse):
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = _int_list(dim)
    if not dims:
        raise RuntimeError("`shifts` required")  # PyTorch's roll with no dims (a 0-d input, or dim=())
    shifts = [((input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2) for d in dims]
    return _ft.roll(input, shifts, dims)


def fftshift(input, dim=None):
    r"""
fftshift(input, dim=None) -> Tensor

Reorders n-dimensional FFT data, as provided by :func:`~torch.fft.fftn`, to have
negative frequency terms first: the zero-frequency term moves to the centre of each
dimension in :attr:`dim` (a roll by ``n // 2``).

Args:
    input (Tensor): the tensor in FFT order
    dim (int, Tuple[int], optional): The dimensions to rearrange.
        Only dimensions specified here will be rearranged, any other dimensions
        will be left in their original order. Default: All dimensions of :attr:`input`.

Example:

    >>> torch.fft.fftshift(torch.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
"""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    r"""
ifftshift(input, dim=None) -> Tensor

Inverse of :func:`~torch.fft.fftshift` (a roll by ``-(n // 2)``, i.e. ``(n + 1) // 2``).

Args:
    input (Tensor): the tensor in FFT order
    dim (int, Tuple[int], optional): The dimensions to rearrange.
        Only dimensions specified here will be rearranged, any other dimensions
        will be left in their original order. Default: All dimensions of :attr:`input`.

Example:

    >>> f = torch.fft.fftfreq(5)
    >>> torch.fft.ifftshift(torch.fft.fftshift(f))
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
"""
    return _shift(input, dim, True)
