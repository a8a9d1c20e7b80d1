"""Spatial transformers: ``affine_grid`` and ``grid_sample``.

``grid_sample`` follows PyTorch's CPU kernels (coordinate unnormalisation,
border/reflection padding, bilinear/nearest/bicubic taps) with tensor ops:
every tap is one ``gather`` over the flattened input planes, so the whole
output is computed in a handful of vectorised ops and autograd supplies both
the input and the grid gradients.
"""

import math
import warnings

from .. import _C
from .. import _math_ops as _m
from .. import _shape_ops as _s

__all__ = ["GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "affine_grid", "grid_sample"]

GRID_SAMPLE_INTERPOLATION_MODES = {
    "bilinear": 0,
    "nearest": 1,
    "bicubic": 2,
}

GRID_SAMPLE_PADDING_MODES = {
    "zeros": 0,
    "border": 1,
    "reflection": 2,
}

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify "
    "align_corners=True if the old behavior is desired. See the documentation of grid_sample for details."
)


# -- affine_grid ------------------------------------------------------------------------------------


def _base_coords(steps, align_corners, dtype, device):
    """PyTorch's ``linspace_from_neg_one``: ``steps`` points in [-1, 1], pulled
    in by half a pixel unless ``align_corners``."""
    if steps <= 1:
        return _C.zeros(1, dtype=dtype, device=device)
    r = _C.linspace(-1, 1, steps, dtype=dtype, device=device)
    if not align_corners:
        r = r * (steps - 1) / steps
    return r


def affine_grid(theta, size, align_corners=None):
    r"""Generate 2D or 3D flow field (sampling grid), given a batch of affine matrices :attr:`theta`.

    .. note::
        This function is often used in conjunction with :func:`grid_sample`
        to build `Spatial Transformer Networks`_ .

    Args:
        theta (Tensor): input batch of affine matrices with shape
            (:math:`N \times 2 \times 3`) for 2D or
            (:math:`N \times 3 \times 4`) for 3D
        size (torch.Size): the target output image size.
            (:math:`N \times C \times H \times W` for 2D or
            :math:`N \times C \times D \times H \times W` for 3D)
            Example: torch.Size((32, 3, 24, 24))
        align_corners (bool, optional): if ``True``, consider ``-1`` and ``1``
            to refer to the centers of the corner pixels rather than the image corners.
            Default: ``False``

    Returns:
        output (Tensor): output Tensor of size (:math:`N \times H \times W \times 2`)

    .. _`Spatial Transformer Networks`:
        https://arxiv.org/abs/1506.02025
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
            "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    nd = len(spatial)
    if theta.shape[0] != n:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {nd + 1}] but got: "
            f"[{theta.shape[0]}, {theta.shape[2]}].")
    dt, dev = theta.dtype, theta.device
    # Homogeneous base coordinates (x, y[, z], 1), x varying along the last dim.
    cols = []
    for j in range(nd):
        axis = nd - 1 - j  # x runs along the last spatial dim
        shape = [1] * nd
        shape[axis] = spatial[axis]
        cols.append(_base_coords(spatial[axis], align_corners, dt, dev).reshape(shape).expand(*spatial))
    cols.append(_C.ones(*spatial, dtype=dt, device=dev))
    base = _s.stack(cols, -1).reshape(1, math.prod(spatial), nd + 1)
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape(n, *spatial, nd)


# -- grid_sample ------------------------------------------------------------------------------------

_A = -0.75  # the cubic convolution coefficient PyTorch's bicubic kernels use


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return ((coord + 1) / 2) * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return coord * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = _m.fmod(c, span)
    flips = (c / span).floor()
    return _s.where(_m.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _apply_padding(coord, size, padding_mode, align_corners, nd=2):
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
    coord = coord.clamp(0, size - 1)
    # A NaN coordinate (from a NaN/inf grid value) lands where PyTorch's clip
    # puts it: its vectorised 2-d kernel at 0, the scalar 3-d one at size - 1.
    return _s.where(coord.isnan(), 0.0 if nd == 2 else float(size - 1), coord)


class _Sampler:
    """Gathers taps at integer positions from ``(N, C, *sizes)`` planes."""

    def __init__(self, input, out_shape):
        self.n, self.c = input.shape[0], input.shape[1]
        self.sizes = list(input.shape[2:])
        self.flat = input.reshape(self.n, self.c, -1)
        self.out_shape = out_shape  # grid's spatial shape
        self.q = math.prod(out_shape)
        self.strides = [math.prod(self.sizes[i + 1:]) for i in range(len(self.sizes))]
        self.skip_weights = len(self.sizes) == 3

    def tap(self, coords, finite=None, weight=None):
        """Values at integer ``coords`` (one int64 ``(N, *out)`` tensor per
        spatial dim, dim order), times ``weight``; out-of-range taps (and
        positions where ``finite`` is false) read 0."""
        inside = finite
        flat = None
        for i, ci in enumerate(coords):
            ok = (ci >= 0) & (ci < self.sizes[i])
            inside = ok if inside is None else inside & ok
            term = ci.clamp(0, self.sizes[i] - 1) * self.strides[i]
            flat = term if flat is None else flat + term
        idx = flat.reshape(self.n, 1, self.q).expand(self.n, self.c, self.q)
        vals = self.flat.gather(2, idx)
        inside = inside.reshape(self.n, 1, self.q)
        # where, not a multiply by the mask: an inf at the clamped position must not leak in as NaN.
        if weight is None:
            return _s.where(inside, vals, 0)
        w = weight.reshape(self.n, 1, self.q)
        if self.skip_weights:
            # PyTorch's 3-d kernel skips an out-of-range tap with its weight (a NaN weight adds nothing);
            # the 2-d kernel multiplies the zero it loads (a NaN weight gives NaN).
            return _s.where(inside, vals * w, 0)
        return _s.where(inside, vals, 0) * w


def _weight(w, n, q):
    return w.reshape(n, 1, q)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    r"""Compute grid sample.

    Given an :attr:`input` and a flow-field :attr:`grid`, computes the
    ``output`` using :attr:`input` values and pixel locations from :attr:`grid`.

    Currently, only spatial (4-D) and volumetric (5-D) :attr:`input` are
    supported. For a 4-D input of shape :math:`(N, C, H_\text{in}, W_\text{in})`
    and :attr:`grid` of shape :math:`(N, H_\text{out}, W_\text{out}, 2)`, the output
    has shape :math:`(N, C, H_\text{out}, W_\text{out})`; ``grid[n, h, w]`` holds the
    ``(x, y)`` sampling location, normalised to ``[-1, 1]``.

    Args:
        input (Tensor): input of shape :math:`(N, C, H_\text{in}, W_\text{in})` (4-D case)
                        or :math:`(N, C, D_\text{in}, H_\text{in}, W_\text{in})` (5-D case)
        grid (Tensor): flow-field of shape :math:`(N, H_\text{out}, W_\text{out}, 2)` (4-D case)
                       or :math:`(N, D_\text{out}, H_\text{out}, W_\text{out}, 3)` (5-D case)
        mode (str): interpolation mode to calculate output values
            ``'bilinear'`` | ``'nearest'`` | ``'bicubic'``. Default: ``'bilinear'``
            Note: ``mode='bicubic'`` supports only 4-D input.
        padding_mode (str): padding mode for outside grid values
            ``'zeros'`` | ``'border'`` | ``'reflection'``. Default: ``'zeros'``
        align_corners (bool, optional): if ``True``, the extrema (``-1`` and ``1``)
            refer to the centers of the corner pixels, else to their outer corners.
            Default: ``False``

    Returns:
        output (Tensor): output Tensor
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    ishape, gshape = list(input.shape), list(grid.shape)
    if input.dim() == 0 or grid.dim() == 0 or ishape[0] != gshape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
            f"{ishape} and grid with sizes {gshape}")
    if gshape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {gshape}")
    for i in range(2, input.dim()):
        if ishape[i] <= 0:
            raise RuntimeError(
                f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {ishape} "
                f"with dimension {i} being empty")
    nd = 2 if input.dim() == 4 else 3
    if input.dim() != nd + 2 or grid.dim() != nd + 2:
        raise RuntimeError(
            f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, but got input with "
            f"sizes {ishape} and grid with sizes {gshape}")
    if nd == 3 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"grid_sampler_{nd}d_cpu{'_kernel_impl' if nd == 2 else ''}\" not implemented for "
            f"'{_m._pretty(input.dtype)}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_m._pretty(input.dtype)} but found {_m._pretty(grid.dtype)}")

    out_sp = gshape[1:-1]
    n, c = ishape[0], ishape[1]
    if n == 0 or c == 0 or math.prod(out_sp) == 0:
        return _C.zeros(n, c, *out_sp, dtype=input.dtype, device=input.device)
    samp = _Sampler(input, out_sp)
    q = samp.q
    # Grid component j is the coordinate of spatial dim nd-1-j (x is the width).
    raw = [_unnormalize(grid.select(-1, nd - 1 - i), samp.sizes[i], align_corners) for i in range(nd)]

    if mode == "bicubic":
        out = _bicubic(samp, raw, padding_mode, align_corners)
    else:
        src = [_apply_padding(raw[i], samp.sizes[i], padding_mode, align_corners, nd) for i in range(nd)]
        # Non-finite coordinates read nothing (their int casts are meaningless).
        finite = None
        for v in src:
            f = v.isfinite()
            finite = f if finite is None else finite & f
        if mode == "nearest":
            # nearbyint: ties go to the even neighbour, as PyTorch's kernels.
            out = samp.tap([s.round().to(_C.int64) for s in src], finite)
            if grid.requires_grad:
                # PyTorch's nearest backward gives the grid a zero gradient (not none);
                # `where` on a false mask links it without arithmetic on its values.
                never = _C.zeros((), dtype=_C.bool, device=grid.device)
                out = out + _s.where(never, grid.sum(), 0).to(out.dtype)
        else:
            lo = [s.floor() for s in src]
            lo_i = [v.to(_C.int64) for v in lo]
            # PyTorch's weights: distance to the far corner on each side.
            w_hi = [src[i] - lo[i] for i in range(nd)]
            w_lo = [lo[i] + 1 - src[i] for i in range(nd)]
            out = None
            for corner in range(1 << nd):
                bits = [(corner >> (nd - 1 - i)) & 1 for i in range(nd)]
                w = None
                for i in range(nd):
                    wi = w_hi[i] if bits[i] else w_lo[i]
                    w = wi if w is None else w * wi
                v = samp.tap([lo_i[i] + bits[i] for i in range(nd)], finite, w)
                out = v if out is None else out + v
    return out.reshape(n, c, *out_sp)


def _cubic_coeffs(t):
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(samp, raw, padding_mode, align_corners):
    n, q = samp.n, samp.q
    ys, xs = raw
    y0, x0 = ys.floor(), xs.floor()
    ty, tx = ys - y0, xs - x0
    cy, cx = _cubic_coeffs(ty), _cubic_coeffs(tx)
    h, w = samp.sizes

    def bounded(coord, size):
        # Each tap's position goes through the padding rule on its own, in
        # floating point as PyTorch's kernel (huge coordinates do not wrap).
        if padding_mode != "zeros":
            coord = _apply_padding(coord, size, padding_mode, align_corners)
        return coord.to(_C.int64)

    cols = [bounded(x0 + (j - 1), w) for j in range(4)]
    out = None
    for i in range(4):
        row_c = bounded(y0 + (i - 1), h)
        row = None
        for j in range(4):
            v = samp.tap([row_c, cols[j]]) * _weight(cx[j], n, q)
            row = v if row is None else row + v
        v = row * _weight(cy[i], n, q)
        out = v if out is None else out + v
    return out
