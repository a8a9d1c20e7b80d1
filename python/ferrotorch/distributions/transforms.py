"""Invertible transforms with computable log-abs-det-Jacobians."""

import math
import numbers
import weakref

import ferrotorch as torch

from . import constraints
from .utils import _sum_rightmost

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]


class Transform:
    """Abstract class for invertible transformations with computable log det jacobians.

    Args:
        cache_size (int): Size of cache. If zero, no caching is done. If one,
            the latest single value is cached. Only 0 and 1 are supported.
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """Returns the inverse :class:`Transform` of this transform."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """Returns the sign of the determinant of the Jacobian, if applicable."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        """Computes the transform ``x => y``."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """Computes the log det jacobian ``log |dy/dx|`` given input and output."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """Infers the shape of the forward computation, given the input shape."""
        return shape

    def inverse_shape(self, shape):
        """Infers the shapes of the inverse computation, given the output shape."""
        return shape


class _InverseTransform(Transform):
    """Inverts a single :class:`Transform`."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self._inv)})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Composes multiple transforms in a chain (applied first to last).

    Args:
        parts (list of :class:`Transform`): A list of transforms to compose.
        cache_size (int): Size of cache. If zero, no caching is done.
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        body = ",\n    ".join(repr(p) for p in self.parts)
        return self.__class__.__name__ + "(\n    " + body + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """Wraps a transform so that its rightmost ``reinterpreted_batch_ndims``
    dimensions are treated as dependent (summed in the log-det-Jacobian)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self.base_transform)}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Unit-Jacobian transform that reshapes the rightmost part of a tensor."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = torch.Size(tuple(in_shape))
        self.out_shape = torch.Size(tuple(out_shape))
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.new_zeros(batch) if hasattr(x, "new_zeros") else torch.zeros(batch, dtype=x.dtype)

    def forward_shape(self, shape):
        n = len(self.in_shape)
        if len(shape) < n or tuple(shape[len(shape) - n:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[len(shape) - n:]} but got {self.in_shape}")
        return torch.Size(tuple(shape[: len(shape) - n]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        n = len(self.out_shape)
        if len(shape) < n or tuple(shape[len(shape) - n:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[len(shape) - n:]} but got {self.out_shape}")
        return torch.Size(tuple(shape[: len(shape) - n]) + tuple(self.in_shape))


class ExpTransform(Transform):
    r"""Transform via the mapping :math:`y = \exp(x)`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    r"""Transform via the mapping :math:`y = x^{\text{exponent}}`."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = (exponent if isinstance(exponent, torch.Tensor) else torch.tensor(float(exponent)),)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, tuple(getattr(self.exponent, "shape", ())))

    def inverse_shape(self, shape):
        return torch.broadcast_shapes(shape, tuple(getattr(self.exponent, "shape", ())))


class SigmoidTransform(Transform):
    r"""Transform via the mapping :math:`y = \frac{1}{1 + \exp(-x)}`."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        finfo = torch.finfo(x.dtype)
        return torch.sigmoid(x).clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = torch.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        # log sigmoid'(x) = -softplus(-x) - softplus(x)
        return -_softplus(-x) - _softplus(x)


def _softplus(x):
    return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))


class SoftplusTransform(Transform):
    r"""Transform via the mapping :math:`\text{Softplus}(x) = \log(1 + \exp(x))`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class TanhTransform(Transform):
    r"""Transform via the mapping :math:`y = \tanh(x)`."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written to stay finite for large |x|.
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(Transform):
    r"""Transform via the mapping :math:`y = |x|`."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    r"""Transform via the pointwise affine mapping :math:`y = \text{loc} + \text{scale} \times x`.

    Args:
        loc (Tensor or float): Location parameter.
        scale (Tensor or float): Scale parameter.
        event_dim (int): Optional size of `event_shape`.
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((torch.as_tensor(a) == torch.as_tensor(b)).all()):
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = torch.full_like(x, math.log(abs(scale)))
        else:
            result = torch.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.size()[: result.dim() - self.event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[: len(shape) - self.event_dim]
        return result.expand(tuple(shape))

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, tuple(getattr(self.loc, "shape", ())), tuple(getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape):
        return torch.broadcast_shapes(shape, tuple(getattr(self.loc, "shape", ())), tuple(getattr(self.scale, "shape", ())))


class SoftmaxTransform(Transform):
    r"""Transform from unconstrained space to the simplex via :math:`y = \exp(x)` then
    normalizing. Not bijective; useful for algorithms operating on unconstrained space."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Transform from unconstrained space to the simplex of one additional
    dimension via a stick-breaking process. Bijective."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _offset(self, n, like):
        return torch.arange(n, 0, -1, dtype=like.dtype, device=like.device)

    def _call(self, x):
        offset = self._offset(x.shape[-1], x)
        z = torch.sigmoid(x - offset.log())
        remaining = torch.cumprod(1 - z, dim=-1)
        ones = torch.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype, device=x.device)
        head = torch.cat([z, ones], -1)
        left = torch.cat([ones, remaining], -1)
        return head * left

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = self._offset(y.shape[-1] - 1, y)
        sf = 1 - y_crop.cumsum(-1)
        tiny = torch.finfo(y.dtype).tiny
        sf = torch.clamp(sf, min=tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = self._offset(x.shape[-1], x)
        x = x - offset.log()
        return (-x + torch.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return torch.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return torch.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Transform from unconstrained matrices to lower-triangular matrices with
    nonnegative diagonal entries (exp of the diagonal, keep the strict lower part)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + torch.diag_embed(torch.diagonal(x, dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + torch.diag_embed(torch.diagonal(y, dim1=-2, dim2=-1).log())


class CumulativeDistributionTransform(Transform):
    """Transform via the cumulative distribution function of a distribution."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class PositiveDefiniteTransform(Transform):
    """Transform from unconstrained matrices to positive-definite matrices:
    ``L = LowerCholeskyTransform()(x)`` then ``L @ L^T``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.transpose(-2, -1)

    def _inverse(self, y):
        L = torch.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(L)


def _tril_strict_indices(n):
    return [(i, j) for i in range(n) for j in range(i)]


class CorrCholeskyTransform(Transform):
    r"""Transforms an unconstrained real vector of length :math:`D(D-1)/2` into the Cholesky
    factor of a D-dimension correlation matrix: ``tanh`` gives partial correlations that a
    row-wise stick-breaking turns into rows of unit norm."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    @staticmethod
    def _dim_from_len(k):
        n = int(round((1 + math.sqrt(1 + 8 * k)) / 2))
        if n * (n - 1) // 2 != k:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return n

    def _fill_strict_lower(self, vec, n, diag_value):
        batch = tuple(vec.shape[:-1])
        flat_idx = [i * n + j for i, j in _tril_strict_indices(n)]
        base = torch.eye(n, dtype=vec.dtype, device=vec.device) * diag_value
        out = base.reshape(n * n).expand(batch + (n * n,)).clone()
        idx = torch.tensor(flat_idx, dtype=torch.long, device=vec.device).expand(batch + (len(flat_idx),))
        out = out.scatter(-1, idx, vec)
        return out.reshape(batch + (n, n))

    def _call(self, x):
        n = self._dim_from_len(x.shape[-1])
        z = self._fill_strict_lower(torch.tanh(x), n, 1.0)
        # Row i keeps 1 - sum of squares of the entries to its left; each entry takes
        # its partial correlation's share of the square root of what remains.
        remaining = torch.cumprod(1 - z.pow(2), dim=-1)
        ones = torch.ones(tuple(z.shape[:-1]) + (1,), dtype=z.dtype, device=z.device)
        shifted = torch.cat([ones, remaining[..., :-1]], -1)
        eye = torch.eye(n, dtype=z.dtype, device=z.device)
        return (z * shifted.clamp(min=0).sqrt()).tril() * (1 - eye) + eye * shifted.clamp(min=0).sqrt()

    def _inverse(self, y):
        n = y.shape[-1]
        sq_cum = torch.cumsum(y.pow(2), dim=-1)
        zeros = torch.zeros(tuple(y.shape[:-1]) + (1,), dtype=y.dtype, device=y.device)
        before = torch.cat([zeros, sq_cum[..., :-1]], -1)
        z = y / (1 - before).clamp(min=torch.finfo(y.dtype).tiny).sqrt()
        flat_idx = torch.tensor([i * n + j for i, j in _tril_strict_indices(n)], dtype=torch.long, device=y.device)
        r = z.reshape(tuple(y.shape[:-2]) + (n * n,)).index_select(-1, flat_idx)
        eps = torch.finfo(y.dtype).eps
        r = r.clamp(min=-1 + eps, max=1 - eps)
        return 0.5 * (torch.log1p(r) - torch.log1p(-r))

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        n = y.shape[-1]
        sq_cum = torch.cumsum(y.pow(2), dim=-1)
        zeros = torch.zeros(tuple(y.shape[:-1]) + (1,), dtype=y.dtype, device=y.device)
        before = torch.cat([zeros, sq_cum[..., :-1]], -1)
        flat_idx = torch.tensor([i * n + j for i, j in _tril_strict_indices(n)], dtype=torch.long, device=y.device)
        stick = before.reshape(tuple(y.shape[:-2]) + (n * n,)).index_select(-1, flat_idx)
        tanh_term = 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))
        return (0.5 * torch.log1p(-stick) + tanh_term).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = self._dim_from_len(shape[-1])
        return torch.Size(tuple(shape[:-1]) + (n, n))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return torch.Size(tuple(shape[:-2]) + (n * (n - 1) // 2,))


class CatTransform(Transform):
    """Applies a sequence of transforms to consecutive slices (of sizes ``lengths``) along ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths must have one entry per transform")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, x, fn):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError("dim out of range")
        if x.size(self.dim) != self.length:
            raise ValueError("input size along dim does not match the total length")
        parts, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            parts.append(fn(t, x.narrow(self.dim, start, n)))
            start += n
        return torch.cat(parts, dim=self.dim)

    def _call(self, x):
        return self._map(x, lambda t, v: t(v))

    def _inverse(self, y):
        return self._map(y, lambda t, v: t.inv(v))

    def log_abs_det_jacobian(self, x, y):
        parts, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            xs, ys = x.narrow(self.dim, start, n), y.narrow(self.dim, start, n)
            ladj = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
            start += n
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return torch.cat(parts, dim=dim)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies a sequence of transforms to the slices of a tensor along ``dim`` and stacks them."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, x):
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError("dim out of range")
        if x.size(self.dim) != len(self.transforms):
            raise ValueError("size of input along dim must equal the number of transforms")

    def _call(self, x):
        self._check(x)
        return torch.stack([t(v) for v, t in zip(self._slices(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y)
        return torch.stack([t.inv(v) for v, t in zip(self._slices(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        parts = [t.log_abs_det_jacobian(a, b) for a, b, t in zip(self._slices(x), self._slices(y), self.transforms)]
        return torch.stack(parts, dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
