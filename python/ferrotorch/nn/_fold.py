"""Sliding-block layout ops: ``unfold`` (im2col), ``fold`` (col2im) and ``conv_tbc``.

All three are composed from differentiable tensor ops (``Tensor.unfold``,
``index_add``, ``matmul``), so autograd covers them without extra rules and no
Python loop ever runs over elements.
"""

from .. import _C
from .. import _math_ops as _m
from . import functional as _F

__all__ = ["unfold", "fold", "conv_tbc"]


def _pair(v, name):
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        return tuple(int(x) for x in v)
    return (int(v), int(v))


def _check_params(kernel, dilation, padding, stride):
    if kernel[0] <= 0 or kernel[1] <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} kernel_width: {kernel[1]}")
    if dilation[0] <= 0 or dilation[1] <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilation_height: {dilation[0]} "
            f"dilation_width: {dilation[1]}")
    if padding[0] < 0 or padding[1] < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {padding[0]} pad_width: {padding[1]}")
    if stride[0] <= 0 or stride[1] <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got stride_height: {stride[0]} stride_width: {stride[1]}")


def _check_float(input, kernel):
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_m._pretty(input.dtype)}'")


def _blocks(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    r"""Extracts sliding local blocks from a batched input tensor (im2col).

    Input ``(N, C, H, W)`` or ``(C, H, W)``; output ``(N, C * kH * kW, L)`` or
    ``(C * kH * kW, L)`` where ``L`` is the number of block positions. The rows
    are ordered channel-major, then kernel row, then kernel column, as PyTorch's.

    See :class:`torch.nn.Unfold` for details.
    """
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_params(k, d, p, s)
    dims = input.dim()
    if dims < 3:
        # PyTorch indexes dim 2 of the (too small) input before any check.
        raise IndexError(f"Dimension out of range (expected to be in range of [{-dims}, {dims - 1}], but got 2)")
    shape = list(input.shape)
    if dims not in (3, 4) or any(v == 0 for v in shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
            f"input, but got: {shape}")
    _check_float(input, "im2col_out_cpu")
    h, w = shape[-2], shape[-1]
    oh, ow = _blocks(h, k[0], d[0], p[0], s[0]), _blocks(w, k[1], d[1], p[1], s[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), calculated shape of the array of sliding blocks as ({oh}, {ow}), but its "
            "components must be at least one.")
    batched = dims == 4
    x = input if batched else input.unsqueeze(0)
    # (N, C, oh, ow, kh, kw): the max-pooling window helper already pads,
    # strides and dilates the last two dims.
    win = _F._windows(x, 2, k, s, p, d, (oh, ow), 0)
    n, c = x.shape[0], x.shape[1]
    out = win.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow)
    return out if batched else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    r"""Combines an array of sliding local blocks into a large tensor (col2im).

    Input ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)``; overlapping values
    are summed into ``(N, C, *output_size)`` or ``(C, *output_size)``.

    See :class:`torch.nn.Fold` for details.
    """
    out_hw = _pair(output_size, "output_size")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_params(k, d, p, s)
    shape = list(input.shape)
    dims = input.dim()
    if dims not in (2, 3) or any(v == 0 for v in shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
            f"for input, but got: {shape}")
    kk = k[0] * k[1]
    if shape[-2] % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={shape[-2]} and kernel_size=({k[0]}, {k[1]}).")
    oh, ow = _blocks(out_hw[0], k[0], d[0], p[0], s[0]), _blocks(out_hw[1], k[1], d[1], p[1], s[1])
    if shape[-1] != oh * ow:
        raise RuntimeError(
            f"Given output_size=({out_hw[0]}, {out_hw[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {oh} * {ow} = {oh * ow}, but got input.size(2)={shape[-1]}.")
    _check_float(input, "col2im_out_cpu")
    batched = dims == 3
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], shape[-2] // kk
    hp, wp = out_hw[0] + 2 * p[0], out_hw[1] + 2 * p[1]
    dev = input.device
    # Flat position in the padded plane of every (kh, kw, block_row, block_col)
    # entry; index_add sums the overlaps (its backward is a gather).
    rows = (_C.arange(k[0], dtype=_C.int64, device=dev) * d[0]).reshape(k[0], 1, 1, 1) \
        + (_C.arange(oh, dtype=_C.int64, device=dev) * s[0]).reshape(1, 1, oh, 1)
    cols = (_C.arange(k[1], dtype=_C.int64, device=dev) * d[1]).reshape(1, k[1], 1, 1) \
        + (_C.arange(ow, dtype=_C.int64, device=dev) * s[1]).reshape(1, 1, 1, ow)
    idx = (rows * wp + cols).reshape(-1)
    src = x.reshape(n, c, kk * oh * ow)
    out = _C.zeros(n, c, hp * wp, dtype=input.dtype, device=dev).index_add(2, idx, src)
    out = out.reshape(n, c, hp, wp)
    if p[0] or p[1]:
        out = out[:, :, p[0]:p[0] + out_hw[0], p[1]:p[1] + out_hw[1]]
    return out if batched else out.squeeze(0)


def conv_tbc(input, weight, bias, pad=0):
    r"""Applies a 1-dimensional sequence convolution over an input sequence.

    Input and output dimensions are (Time, Batch, Channels) - hence TBC.

    Args:
        input: input tensor of shape :math:`(\text{sequence length} \times batch \times \text{in\_channels})`
        weight: filter of shape (:math:`\text{kernel width} \times \text{in\_channels} \times \text{out\_channels}`)
        bias: bias of shape (:math:`\text{out\_channels}`)
        pad: number of timesteps to pad. Default: 0
    """
    from .._tensor_class import Tensor
    if not isinstance(bias, Tensor):
        raise TypeError(f"conv_tbc(): argument 'bias' (position 3) must be Tensor, not {type(bias).__name__}")
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    t, b, cin = input.shape
    kw, wcin, cout = weight.shape
    if cin != wcin:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != cout:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t_out = t + 2 * pad - kw + 1
    if t_out <= 0:
        return _C.zeros(0, b, cout, dtype=input.dtype, device=input.device) + bias * 0
    x = input
    if pad > 0:
        x = _F.pad(x, (0, 0, 0, 0, pad, pad))
    elif pad < 0:
        # A negative pad crops the sequence, as PyTorch's kernel does.
        x = x.narrow(0, -pad, t + 2 * pad)
    # (t_out, B, C_in, K) -> rows of K*C_in taps in the weight's (K, C_in) order.
    win = x.unfold(0, kw, 1).permute(0, 1, 3, 2).reshape(t_out * b, kw * cin)
    out = win.matmul(weight.reshape(kw * cin, cout)) + bias
    return out.reshape(t_out, b, cout)
