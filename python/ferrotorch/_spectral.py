"""``torch.stft`` and ``torch.istft`` (and their ``Tensor`` methods).

Both are tensor ops around the engine's FFTs: ``stft`` cuts the (centre-padded)
signal into overlapping frames (``unfold``), weights them by the window and
transforms each frame (``_C._fft`` over the last dim); ``istft`` transforms each
frame back, weights it again, overlap-adds the frames (``fold``) and divides by
the overlap-added squared window. Complex values travel as real views
(``view_as_real``), as everywhere in the FFT code.
"""

import warnings

import ferrotorch as _ft

from . import _tensor_methods as _methods
from . import _C

__all__ = ["stft", "istft"]


def _type_name(t):
    """PyTorch's legacy type name of ``t`` (``torch.FloatTensor``), as its stft messages print it."""
    names = {"float32": "Float", "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
             "float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int"}
    return f"torch.{names.get(str(t.dtype).split('.')[-1], 'Float')}Tensor"


def _cpu_type_name(t):
    names = {"float32": "Float", "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return f"CPU{names.get(str(t.dtype).split('.')[-1], 'Float')}Type"


def _shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _opt(v):
    return "None" if v is None else str(int(v))


def _real_view(t):
    return _ft.view_as_real(t.resolve_conj()) if t.dtype.is_complex else t


def _padded_window(window, win_length, n_fft, dtype, device):
    """The window as ``n_fft`` samples: ``win_length`` ones when absent, centred with zeros when shorter."""
    if window is None:
        window = _ft.ones(win_length, dtype=dtype, device=device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        zeros_l = _ft.zeros((left,) + tuple(window.shape[1:]), dtype=window.dtype, device=window.device)
        zeros_r = _ft.zeros((n_fft - win_length - left,) + tuple(window.shape[1:]), dtype=window.dtype,
                            device=window.device)
        window = _ft.cat([zeros_l, window, zeros_r])
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    r"""Short-time Fourier transform (STFT).

    Computes the Fourier transform of short overlapping windows of the input::

        X[ω, m] = Σ_{k=0}^{win_length-1} window[k] input[m × hop_length + k] exp(-j 2π ω k / n_fft)

    Args:
        input (Tensor): the input tensor of shape `(B?, L)` where `B?` is an optional
            batch dimension
        n_fft (int): size of Fourier transform
        hop_length (int, optional): the distance between neighboring sliding window
            frames. Default: ``None`` (treated as equal to ``floor(n_fft / 4)``)
        win_length (int, optional): the size of window frame and STFT filter.
            Default: ``None``  (treated as equal to :attr:`n_fft`)
        window (Tensor, optional): the optional window function.
            Shape must be 1d and `<= n_fft`.
            Default: ``None`` (treated as window of all :math:`1` s)
        center (bool, optional): whether to pad :attr:`input` on both sides so
            that the :math:`t`-th frame is centered at time :math:`t \times \text{hop\_length}`.
            Default: ``True``
        pad_mode (str, optional): controls the padding method used when
            :attr:`center` is ``True``. Default: ``"reflect"``
        normalized (bool, optional): controls whether to return the normalized STFT results
             Default: ``False``
        onesided (bool, optional): controls whether to return half of results to
            avoid redundancy for real inputs.
            Default: ``True`` for real :attr:`input` and :attr:`window`, ``False`` otherwise.
        return_complex (bool, optional): whether to return a complex tensor, or
            a real tensor with an extra last dimension for the real and
            imaginary components. Required for real inputs.
        align_to_window (bool, optional): only with ``center=False``: align the frames to
            the window's centre rather than to the start of the padded window.

    Returns:
        Tensor: A tensor containing the STFT result with shape `(B?, N, T, C?)` where
           - `B?` is an optional batch dimension from the input.
           - `N` is the number of frequency samples, `(n_fft // 2) + 1` for
             `onesided=True`, or otherwise `n_fft`.
           - `T` is the number of frames, `1 + L // hop_length`
             for `center=True`, or `1 + (L - n_fft) // hop_length` otherwise.
           - `C?` is an optional length-2 dimension of real and imaginary
             components, present when `return_complex=False`.
    """
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        x = _real_view(input)
        if input.dtype.is_complex:
            # Reflect each part: the pad works on (N, C, L) signals, the parts as channels.
            parts = x.reshape(extended + [2]).movedim(-1, -2).reshape(extended[0], extended[1] * 2, extended[2])
            padded = _ft.nn.functional.pad(parts, [pad, pad], pad_mode)
            padded = padded.reshape(extended[0], extended[1], 2, -1).movedim(-2, -1)
            x = padded.reshape(list(padded.shape[3 - signal_dim:-2]) + [padded.shape[-2], 2])
            input = _ft.view_as_complex(x.contiguous())
        else:
            input = _ft.nn.functional.pad(x.reshape(extended), [pad, pad], pad_mode)
            input = input.reshape(tuple(input.shape)[3 - signal_dim:])
    hop = int(n_fft // 4) if hop_length is None else int(hop_length)
    win = int(n_fft) if win_length is None else int(win_length)
    window_desc = "None" if window is None else f"{_type_name(window)}{{{_shape(window)}}}"
    prefix = (f"stft({_type_name(input)}{_shape(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
              f"window={window_desc}, normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
              f"return_complex={int(bool(return_complex))}, align_to_window={_opt(align_to_window)}) : ")
    if input.dim() not in (1, 2):
        raise RuntimeError(prefix + "expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(prefix + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(prefix + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(prefix + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + f"expected a 1D window tensor of size equal to win_length={win}, "
                           f"but got window with size {_shape(window)}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)

    batched = input.dim() == 2
    x = _real_view(input)
    if not batched:
        x = x.unsqueeze(0)
    real_dtype = x.dtype if x.dtype.is_floating_point else _ft.get_default_dtype()
    offset = 0
    if not center and align_to_window:
        offset = (n_fft - win) // 2
    if input.dtype.is_complex:
        frames = x[:, offset:].unfold(1, n_fft, hop).movedim(2, -1)  # (B, T, n_fft, 2)
    else:
        frames = x[:, offset:].unfold(-1, n_fft, hop)  # (B, T, n_fft)
    if window is not None:
        w = _padded_window(window, win, n_fft, real_dtype, input.device)
        w_rv = _real_view(w)
        if input.dtype.is_complex and not w.dtype.is_complex:
            frames = frames * w_rv.unsqueeze(-1)
        elif w.dtype.is_complex:
            frames = _complex_mul(frames if input.dtype.is_complex else _as_complex_rv(frames), w_rv)
        else:
            frames = frames * w_rv
    elif win < n_fft:
        frames = frames * _padded_window(None, win, n_fft, real_dtype, input.device)
    frames_complex = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    norm = "ortho" if normalized else "backward"
    rv = _fft_rv("rfft" if onesided else "fft", frames, frames_complex, None, norm)  # (B, T, F, 2)
    rv = rv.transpose(1, 2)
    if not batched:
        rv = rv.squeeze(0)
    return _ft.view_as_complex(rv) if return_complex else rv


def _fft_rv(name, x, is_complex, n, norm):
    """``torch.fft.<name>`` over the last dim of ``x`` (a real view when ``is_complex``), as a real view."""
    if is_complex:
        x = _ft.view_as_complex(x.contiguous())
    r = _C._fft(name, x, n, [-1], norm)
    return _ft.view_as_real(r.resolve_conj()) if r.dtype.is_complex else r


def _as_complex_rv(t):
    """The real view of the complex tensor with real part ``t``."""
    return _ft.stack([t, _ft.zeros_like(t)], -1)


def _complex_mul(a, b):
    """The product of two complex tensors given by their real views (``b`` broadcasts)."""
    ar, ai = a[..., 0], a[..., 1]
    br, bi = b[..., 0], b[..., 1]
    return _ft.stack([ar * br - ai * bi, ar * bi + ai * br], -1)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    r"""Inverse short time Fourier Transform. This is expected to be the inverse of :func:`~torch.stft`.

    It has the same parameters (+ additional optional parameter of :attr:`length`) and it should return the
    least squares estimation of the original signal. The algorithm will check using the NOLA condition
    (nonzero overlap).

    Args:
        input (Tensor): The input tensor. Expected to be in the format of :func:`~torch.stft`,
            output. That is a complex tensor of shape `(B?, N, T)` where
            - `B?` is an optional batch dimension
            - `N` is the number of frequency samples, `(n_fft // 2) + 1`
              for onesided input, or otherwise `n_fft`.
            - `T` is the number of frames, `1 + length // hop_length` for centered stft,
              or `1 + (length - n_fft) // hop_length` otherwise.
        n_fft (int): Size of Fourier transform
        hop_length (Optional[int]): The distance between neighboring sliding window frames.
            (Default: ``n_fft // 4``)
        win_length (Optional[int]): The size of window frame and STFT filter. (Default: ``n_fft``)
        window (Optional[torch.Tensor]): The optional window function.
            Shape must be 1d and `<= n_fft`
            (Default: ``torch.ones(win_length)``)
        center (bool): Whether :attr:`input` was padded on both sides so that the :math:`t`-th frame is
            centered at time :math:`t \times \text{hop\_length}`.
            (Default: ``True``)
        normalized (bool): Whether the STFT was normalized. (Default: ``False``)
        onesided (Optional[bool]): Whether the STFT was onesided.
            (Default: ``True`` if `n_fft != fft_size` in the input size)
        length (Optional[int]): The amount to trim the signal by (i.e. the
            original signal length). Defaults to `(T - 1) * hop_length` for
            centered stft, or `n_fft + (T - 1) * hop_length` otherwise, where `T`
            is the number of input frames.
        return_complex (Optional[bool]):
            Whether the output should be complex, or if the input should be
            assumed to derive from a real signal and window.
            Note that this is incompatible with ``onesided=True``.
            (Default: ``False``)

    Returns:
        Tensor: Least squares estimation of the original signal of shape `(B?, length)` where
            `B?` is an optional batch dimension from the input tensor.
    """
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    return _istft_rv(_ft.view_as_real(input.resolve_conj()), n_fft, hop_length, win_length, window, center,
                     normalized, onesided, length, return_complex)


def _istft_rv(rv, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex):
    """``istft`` of the complex input whose real view is ``rv``."""
    hop = int(n_fft // 4) if hop_length is None else int(hop_length)
    win = int(n_fft) if win_length is None else int(win_length)
    cdt = "CPUComplexDoubleType" if rv.dtype == _ft.float64 else "CPUComplexFloatType"
    shape = "[" + ", ".join(str(s) for s in rv.shape[:-1]) + "]"
    window_desc = "None" if window is None else f"{_type_name(window)}{{{_shape(window)}}}"
    prefix = (f"istft({cdt}{shape}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={window_desc}, "
              f"center={int(bool(center))}, normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
              f"length={_opt(length)}, return_complex={int(bool(return_complex))}) ")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=3)
    nd = rv.dim()  # the complex input's dims + 1
    if nd not in (3, 4):
        raise RuntimeError(prefix + f": expected a tensor with 3 or 4 dimensions, but got {nd}")
    batched = nd == 4
    if not batched:
        rv = rv.unsqueeze(0)
    n_frames, fft_size = rv.shape[-2], rv.shape[-3]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(prefix + ": expected the frequency dimension (3rd to the last) of the input tensor "
                               f"to match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError(prefix + ": expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {fft_size}")
    if not (0 < hop <= win):
        raise RuntimeError(prefix + f": expected 0 < hop_length <= win_length")
    if not (0 < win <= n_fft):
        raise RuntimeError(prefix + f": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + ": Invalid window shape. window has to be 1D and length of `win_length`")
    complex_window = window is not None and window.dtype.is_complex
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if complex_window and not return_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    w = _padded_window(window, win, n_fft, rv.dtype, rv.device)
    w_rv = _real_view(w)
    norm = "ortho" if normalized else "backward"
    spec = rv.transpose(1, 2)  # (B, T, F, 2)
    if onesided:
        frames = _fft_rv("irfft", spec, True, [n_fft], norm)  # (B, T, n_fft)
        out_complex = False
    else:
        frames = _fft_rv("ifft", spec, True, None, norm)  # (B, T, n_fft, 2)
        out_complex = True
        if not return_complex:
            frames = frames[..., 0]  # the signal is assumed real: its imaginary parts are rounding
            out_complex = False
    if out_complex:
        frames = _complex_mul(frames, w_rv) if complex_window else frames * w_rv.unsqueeze(-1)
        cols = frames.permute(0, 3, 2, 1).reshape(frames.shape[0], 2 * n_fft, n_frames)
    else:
        frames = frames * w_rv
        cols = frames.transpose(1, 2)
    expected = n_fft + hop * (n_frames - 1)
    fold = _ft.nn.functional.fold
    y = fold(cols, output_size=(1, expected), kernel_size=(1, n_fft), stride=(1, hop))  # (B, C, 1, L)
    sq = w_rv.pow(2).sum(-1) if complex_window else w_rv.pow(2)
    env = fold(sq.reshape(1, n_fft, 1).expand(1, n_fft, n_frames), output_size=(1, expected),
               kernel_size=(1, n_fft), stride=(1, hop)).reshape(-1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + int(length)
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    y = y[..., 0, start:end]  # (B, C, L')
    env = env[start:end]
    if env.numel() and bool((env.abs() < 1e-11).any()):
        # PyTorch's message prints the failed check's 0-d bool tensor.
        raise RuntimeError(prefix + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / env
    if out_complex:
        y = y.transpose(1, 2)  # (B, L', 2)
    else:
        y = y[:, 0]
    if length is not None and y.shape[1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=3)
        pad_shape = list(y.shape)
        pad_shape[1] = int(length) - y.shape[1]
        y = _ft.cat([y, _ft.zeros(pad_shape, dtype=y.dtype, device=y.device)], 1)
    if not batched:
        y = y.squeeze(0)
    return _ft.view_as_complex(y.contiguous()) if out_complex else y


def _declare_methods():
    def stft_m(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
               normalized=False, onesided=None, return_complex=None, align_to_window=None):
        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)

    def istft_m(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                onesided=None, length=None, return_complex=False):
        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)

    for f, src in ((stft_m, stft), (istft_m, istft)):
        f.__name__ = f.__qualname__ = src.__name__
        f.__doc__ = src.__doc__
        _methods.define(src.__name__, f)


_declare_methods()
