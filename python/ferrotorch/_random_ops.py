"""Random sampling ops: ``bernoulli``, ``binomial``, ``multinomial``, ``normal``, ``poisson``
and the in-place ``Tensor.xxx_`` samplers (``normal_``, ``uniform_``,
``exponential_``, ``random_``, ``log_normal_``, ``cauchy_``, ``geometric_``,
``bernoulli_``).

Everything draws its randomness from the native ``rand`` / ``randn`` /
``randint`` kernels with the caller's ``generator`` (the default generator when
``None``), so ``manual_seed`` and ``Generator`` objects make every sampler
reproducible. In-place samplers write through ``copy_``: they keep the
receiver's dtype, work on non-contiguous views and bump ``_version``.
"""

import builtins
import math

from . import _C, _args
from . import _tensor_methods as _methods

__all__ = ["bernoulli", "binomial", "multinomial", "normal", "poisson"]

_native_normal = _C.normal

_FLOATS = ("float16", "bfloat16", "float32", "float64")

# PyTorch's names for dtypes in kernel-dispatch errors ("not implemented for 'Long'")
_SCALAR_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}
# ... and the C++ type names some checks print ("you specified long int")
_CPP_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
    "bool": "bool",
}
# inclusive integer ranges of the integral dtypes (random_ bounds)
_INT_RANGES = {
    "int64": (-(2 ** 63), 2 ** 63 - 1), "int32": (-(2 ** 31), 2 ** 31 - 1), "int16": (-(2 ** 15), 2 ** 15 - 1),
    "int8": (-128, 127), "uint8": (0, 255), "bool": (0, 1),
}
# random_() with no bounds on floating dtypes draws integers in [0, 2**digits]
_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _dname(dt):
    return str(dt).replace("torch.", "").replace("ferrotorch.", "")


def _is_float(dt):
    return _dname(dt) in _FLOATS


def _scalar_name(dt):
    n = _dname(dt)
    return _SCALAR_NAMES.get(n, n)


def _not_impl(kernel, dt):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(dt)}\'')


def _work_dtype(dt):
    """The dtype samples are drawn in before the cast to ``dt`` (double for double, else float)."""
    return _C.float64 if _dname(dt) == "float64" else _C.float32


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def _uniform(shape, generator, dtype, device=None):
    """Uniform samples on ``[0, 1)``."""
    return _C.rand(tuple(shape), generator=generator, dtype=dtype, device=device)


def _randn(shape, generator, dtype, device=None):
    return _C.randn(tuple(shape), generator=generator, dtype=dtype, device=device)


def _check_leaf(self):
    if self.requires_grad and self.is_leaf and _C.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _write_(self, values):
    """Writes ``values`` into ``self`` (any layout, any dtype) and returns ``self``."""
    _check_leaf(self)
    if self.requires_grad and _C.is_grad_enabled():
        # a non-leaf: the sample replaces the value, so the graph sees a copy from a constant
        self.copy_(values)
    else:
        with _no_grad():
            self.copy_(values)
    return self


def _check_out(result, out):
    # one out= contract for every op (see _math_ops._write_out)
    from ._math_ops import _write_out
    return _write_out(result, out)


# ----- bernoulli ---------------------------------------------------------------------


def _check_prob_tensor(p):
    if p.device.type == "meta":
        return  # no values to check
    with _no_grad():
        pd = p.double()
        ok = bool(((pd >= 0) & (pd <= 1)).all())
    if not ok:
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")


def _check_prob_scalar(p):
    p = float(p)
    if not (0.0 <= p <= 1.0):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return p


def _fmt(v):
    """A number as PyTorch prints it in argument checks (``1`` not ``1.0``)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _bernoulli_values(shape, p, generator, like_dtype, device):
    """``rand < p`` as ``like_dtype``; ``p`` a float or a tensor broadcastable to ``shape``."""
    with _no_grad():
        if isinstance(p, _C.TensorBase):
            work = _C.float64 if _dname(p.dtype) == "float64" else _C.float32
            u = _uniform(shape, generator, work, device)
            return (u < p.to(work)).to(like_dtype)
        u = _uniform(shape, generator, _C.float64, device)
        return (u < p).to(like_dtype)


def bernoulli(input, p=None, *, generator=None, out=None):
    r"""bernoulli(input, p=None, *, generator=None, out=None) -> Tensor

    Draws binary random numbers (0 or 1) from a Bernoulli distribution.

    With ``p`` omitted, ``input`` holds the probabilities (in ``[0, 1]``) of
    drawing a 1 and must be floating point; with a float ``p`` every element
    is 1 with probability ``p`` and ``input`` only gives the shape and dtype.
    The result has the shape and dtype of ``input``.

    Args:
        input (Tensor): the input tensor of probability values.
        p (float, optional): a single probability used for every element.

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling.
        out (Tensor, optional): the output tensor.

    Example::

        >>> a = torch.empty(3, 3).uniform_(0, 1)
        >>> torch.bernoulli(a)
    """
    if p is None:
        if not _is_float(input.dtype):
            raise _not_impl("bernoulli_tensor_cpu_p_", input.dtype)
        _check_prob_tensor(input)
        r = _bernoulli_values(input.shape, input.detach(), generator, input.dtype, input.device)
    else:
        if isinstance(p, _C.TensorBase):
            _check_prob_tensor(p)
        else:
            p = _check_prob_scalar(p)
        r = _bernoulli_values(input.shape, p, generator, input.dtype, input.device)
    return _check_out(r, out)


def _bernoulli_method(self, p=None, *, generator=None):
    """bernoulli(*, generator=None) -> Tensor

    Returns a result tensor where each ``result[i]`` is independently sampled
    from ``Bernoulli(self[i])``. See :func:`torch.bernoulli`.
    """
    return bernoulli(self, p, generator=generator)


def _bernoulli_(self, p=0.5, *, generator=None):
    """bernoulli_(p=0.5, *, generator=None) -> Tensor

    Fills each location of ``self`` with an independent sample from
    ``Bernoulli(p)``. ``p`` is a float or a tensor of probabilities
    broadcastable to ``self``. ``self`` can have integral (or bool) dtype.
    """
    if isinstance(p, _C.TensorBase):
        _check_prob_tensor(p)
        p = p.detach()
    else:
        p = _check_prob_scalar(p)
    return _write_(self, _bernoulli_values(self.shape, p, generator, self.dtype, self.device))


# ----- multinomial -------------------------------------------------------------------


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    r"""multinomial(input, num_samples, replacement=False, *, generator=None, out=None) -> LongTensor

    Returns a tensor where each row contains ``num_samples`` indices sampled
    from the multinomial distribution located in the corresponding row of
    ``input``.

    The rows of ``input`` need not sum to one but must be non-negative, finite
    and have a non-zero sum. Indices are ordered from left to right according
    to when each was sampled. If ``input`` is a vector the result is a vector
    of size ``num_samples``; if it is a matrix with ``m`` rows the result has
    shape ``(m, num_samples)``.

    Without replacement an index is never drawn twice in a row (once the
    non-zero categories are exhausted, zero-probability ones are returned),
    so ``num_samples`` must be at most the number of categories.

    Args:
        input (Tensor): the input tensor containing probabilities.
        num_samples (int): number of samples to draw.
        replacement (bool, optional): whether to draw with replacement or not.

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling.
        out (Tensor, optional): the output tensor.

    Example::

        >>> weights = torch.tensor([0, 10, 3, 0], dtype=torch.float)
        >>> torch.multinomial(weights, 2)
        tensor([1, 2])
    """
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not _is_float(input.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_scalar_name(input.dtype)}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if input.device.type == "meta":
        # shape only: a meta tensor has no probabilities to draw from
        return _check_out(_C.empty(*input.shape[:-1], num_samples, dtype=_C.int64, device=input.device), out)
    with _no_grad():
        p = input.detach().double()
        if p.dim() == 1:
            p = p.unsqueeze(0)
        rows = p.shape[0]
        if n > 0 and not bool(((p >= 0) & p.isfinite()).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if rows > 0 and (n == 0 or not bool((p.sum(1) > 0).all())):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if rows == 0:
            idx = _C.zeros((0, num_samples), dtype=_C.int64)
        elif replacement:
            idx = _sample_with_replacement(p, num_samples, generator)
        else:
            idx = _sample_without_replacement(p, num_samples, generator)
        if input.dim() == 1:
            idx = idx.squeeze(0)
    return _check_out(idx, out)


def _sample_with_replacement(p, num_samples, generator):
    """Inverse-CDF sampling: the index of the first cumulative weight above ``u * total``."""
    rows, n = p.shape
    cdf = p.cumsum(1)
    total = cdf[:, n - 1:n]
    u = _uniform((rows, num_samples), generator, _C.float64) * total
    # the last category with non-zero weight: rounding can never pick a zero-weight tail
    positive = (p > 0).to(_C.int64) * _C.arange(n, dtype=_C.int64)
    last = positive.amax(1, keepdim=True)
    chunk = max(1, (1 << 22) // max(n, 1))  # keep the (rows, chunk, n) comparison small
    parts = []
    for s in range(0, num_samples, chunk):
        uc = u[:, s:s + chunk]
        parts.append((cdf.unsqueeze(1) <= uc.unsqueeze(2)).sum(2))
    idx = parts[0] if len(parts) == 1 else _C._cat(parts, 1)
    return idx.to(_C.int64).minimum(last)


def _sample_without_replacement(p, num_samples, generator):
    """The exponential-race trick PyTorch uses: top-k of ``p / q`` with ``q ~ Exp(1)``."""
    rows, n = p.shape
    u = _uniform((rows, n), generator, _C.float64)
    q = (-u).log1p().neg().clamp(min=1e-300)  # -log(1 - u) ~ Exp(1), kept positive
    keys = p / q
    return keys.topk(num_samples, 1).indices


def _multinomial_method(self, num_samples, replacement=False, *, generator=None):
    """multinomial(num_samples, replacement=False, *, generator=None) -> Tensor

    See :func:`torch.multinomial`.
    """
    return multinomial(self, num_samples, replacement, generator=generator)


# ----- normal ------------------------------------------------------------------------


def _check_std_scalar(std):
    if float(std) < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(float(std))}")


def _zero_grad_link(out, *tensors):
    """``out`` plus a zero-gradient link to any input that requires grad (PyTorch's NormalBackward)."""
    for t in tensors:
        if isinstance(t, _C.TensorBase) and t.requires_grad and _C.is_grad_enabled():
            out = out + (t - t.detach()) * 0
    return out


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    r"""normal(mean, std, *, generator=None, out=None) -> Tensor

    Returns a tensor of random numbers drawn from separate normal
    distributions whose mean and standard deviation are given.

    Forms:

    * ``normal(mean: Tensor, std: Tensor)`` -- elementwise, broadcasting;
      the result has ``mean``'s dtype.
    * ``normal(mean: Tensor, std: float = 1.0)`` -- one ``std`` for all.
    * ``normal(mean: float, std: Tensor)`` -- one ``mean`` for all.
    * ``normal(mean: float, std: float, size, *, dtype=None, ...)`` -- a new
      tensor of shape ``size``.

    Args:
        mean (Tensor or float): the mean(s).
        std (Tensor or float): the standard deviation(s), non-negative.
        size (int...): the output shape when both ``mean`` and ``std`` are numbers.

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling.
        out (Tensor, optional): the output tensor.

    Example::

        >>> torch.normal(mean=torch.arange(1., 11.), std=torch.arange(1, 0, -0.1))
        >>> torch.normal(2, 3, size=(1, 4))
    """
    mt, st = isinstance(mean, _C.TensorBase), isinstance(std, _C.TensorBase)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), "
                            "but expected one of: (Tensor mean, Tensor std), (Tensor mean, float std), "
                            "(float mean, Tensor std), (float mean, float std, tuple of ints size)")
        _check_std_scalar(std)
        if isinstance(size, int):
            size = (size,)
        kw = {}
        if dtype is not None:
            kw["dtype"] = dtype
        if device is not None:
            kw["device"] = device
        r = _native_normal(float(mean), float(std), tuple(size), generator=generator, **kw)
        if requires_grad:
            r.requires_grad_(True)
        return _check_out(r, out)
    if size is not None:
        raise TypeError("normal(): size is only accepted when mean and std are numbers")
    ref = mean if mt else std
    if not _is_float(ref.dtype):
        raise _not_impl("normal_kernel_cpu", ref.dtype)
    if st:
        with _no_grad():
            if std.numel() and not bool((std.detach().double() >= 0).all()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std_scalar(std)
    with _no_grad():
        m = mean.detach() if mt else mean
        s = std.detach() if st else std
        if mt and st:
            shape = (m + s).shape
        else:
            shape = ref.shape
        z = _randn(shape, generator, _work_dtype(ref.dtype), ref.device)
        r = (z * (s.to(z.dtype) if st else float(s)) + (m.to(z.dtype) if mt else float(m))).to(ref.dtype)
    r = _zero_grad_link(r, mean, std)
    return _check_out(r, out)


def _normal_(self, mean=0, std=1, *, generator=None):
    """normal_(mean=0, std=1, *, generator=None) -> Tensor

    Fills ``self`` with elements sampled from the normal distribution
    parameterised by ``mean`` and ``std``.
    """
    if not _is_float(self.dtype):
        raise _not_impl("normal_kernel_cpu", self.dtype)
    _check_std_scalar(std)
    with _no_grad():
        z = _randn(self.shape, generator, _work_dtype(self.dtype), self.device)
        v = z * float(std) + float(mean)
    return _write_(self, v)


# ----- uniform, exponential, log-normal, cauchy, geometric, random ---------------------


def _uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """uniform_(from=0, to=1, *, generator=None) -> Tensor

    Fills ``self`` with numbers sampled from the continuous uniform
    distribution on ``[from, to)``. ``from`` may be passed as ``from_``
    or, as in PyTorch, as the keyword ``from``.
    """
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not _is_float(self.dtype):
        raise _not_impl("check_uniform_bounds", self.dtype)
    lo, hi = float(from_), float(to)
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(lo)} > to={_fmt(hi)}")
    with _no_grad():
        u = _uniform(self.shape, generator, _work_dtype(self.dtype), self.device)
        v = u * (hi - lo) + lo
    return _write_(self, v)


def _exponential_(self, lambd=1, *, generator=None):
    """exponential_(lambd=1, *, generator=None) -> Tensor

    Fills ``self`` with elements drawn from the exponential distribution
    ``f(x) = lambd * exp(-lambd * x)``.
    """
    if not _is_float(self.dtype):
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_scalar_name(self.dtype)}")
    lambd = float(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    with _no_grad():
        u = _uniform(self.shape, generator, _work_dtype(self.dtype), self.device)
        v = (-u).log1p() * (-1.0 / lambd)  # -log(1 - u) / lambd
    return _write_(self, v)


def _log_normal_(self, mean=1, std=2, *, generator=None):
    """log_normal_(mean=1, std=2, *, generator=None) -> Tensor

    Fills ``self`` with numbers sampled from the log-normal distribution
    whose logarithm is normal with the given ``mean`` and ``std``.
    """
    if not _is_float(self.dtype):
        raise _not_impl("log_normal_cpu", self.dtype)
    if not float(std) > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(float(std))}")
    with _no_grad():
        z = _randn(self.shape, generator, _work_dtype(self.dtype), self.device)
        v = (z * float(std) + float(mean)).exp()
    return _write_(self, v)


def _cauchy_(self, median=0, sigma=1, *, generator=None):
    """cauchy_(median=0, sigma=1, *, generator=None) -> Tensor

    Fills ``self`` with numbers drawn from the Cauchy distribution
    ``f(x) = sigma / (pi * ((x - median)^2 + sigma^2))``.
    """
    if not _is_float(self.dtype):
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {_CPP_NAMES.get(_dname(self.dtype))}")
    if not float(sigma) > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(float(sigma))}")
    with _no_grad():
        u = _uniform(self.shape, generator, _C.float64, self.device)
        v = ((u - 0.5) * math.pi).tan() * float(sigma) + float(median)
    return _write_(self, v)


def _geometric_(self, p, *, generator=None):
    """geometric_(p, *, generator=None) -> Tensor

    Fills ``self`` with elements drawn from the geometric distribution
    ``P(X = k) = (1 - p)^(k - 1) p`` for ``k = 1, 2, ...``.
    """
    p = float(p)
    if not (0.0 < p < 1.0):
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    with _no_grad():
        u = _uniform(self.shape, generator, _C.float64, self.device)
        v = ((-u).log1p() / math.log1p(-p)).ceil().clamp(min=1.0)  # log(1 - u), 1 - u in (0, 1]
    return _write_(self, v)


def _int_bound_error(which, dt):
    return RuntimeError(f"{which} is out of bounds for {_CPP_NAMES.get(_dname(dt), _dname(dt))}")


def _random_(self, *args, generator=None, **kwargs):
    """random_(from=0, to=None, *, generator=None) -> Tensor

    Fills ``self`` with numbers sampled from the discrete uniform distribution
    over ``[from, to - 1]``; ``random_(to)`` samples ``[0, to - 1]``. Without
    ``to`` the upper bound is the largest value of ``self``'s dtype (for
    floating types, ``2**mantissa_digits``), so every sample is exactly
    representable.
    """
    from_, to = 0, None
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if len(args) == 2:
        from_, to = args
    elif len(args) == 1:
        if "to" in kwargs:
            from_ = args[0]
        else:
            to = args[0]
    from_ = kwargs.pop("from", kwargs.pop("from_", from_))
    to = kwargs.pop("to", to)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    name = _dname(self.dtype)
    lo = int(from_)
    if to is None:
        if name in _INT_RANGES:
            hi_incl = _INT_RANGES[name][1]
        else:
            hi_incl = 2 ** _FLOAT_DIGITS.get(name, 24)
        if lo > hi_incl:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi_incl + 1}")
    else:
        hi = int(to)
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        hi_incl = hi - 1
    if name in _INT_RANGES and name != "bool":
        mn, mx = _INT_RANGES[name]
        if not mn <= lo <= mx:
            raise _int_bound_error("from", self.dtype)
        if not mn <= hi_incl <= mx:
            raise _int_bound_error("to - 1", self.dtype)
    # randint takes an exclusive int64 bound; the full int64 range loses its top value
    hi_excl = builtins.min(hi_incl + 1, 2 ** 63 - 1)
    lo = builtins.max(lo, -(2 ** 63))
    with _no_grad():
        v = _C.randint(lo, hi_excl, tuple(self.shape), generator=generator, dtype=_C.int64, device=self.device)
    return _write_(self, v)


# ----- poisson -----------------------------------------------------------------------


def poisson(input, generator=None):
    r"""poisson(input, generator=None) -> Tensor

    Returns a tensor of the same size and dtype as ``input`` with each element
    sampled from a Poisson distribution with rate parameter given by the
    corresponding element of ``input``.

    Args:
        input (Tensor): the input tensor containing the (non-negative) rates.
        generator (Generator, optional): a pseudorandom number generator for sampling.

    Example::

        >>> rates = torch.rand(4, 4) * 5
        >>> torch.poisson(rates)
    """
    if not _is_float(input.dtype):
        raise _not_impl("poisson_cpu", input.dtype)
    return _C._poisson(input, generator)


# ----- binomial ----------------------------------------------------------------------


@_args.signature("Tensor count, Tensor prob, Generator? generator=None")
def binomial(count, prob, generator=None):
    r"""binomial(count, prob, generator=None) -> Tensor

    Returns a tensor with each element sampled from a binomial distribution
    with ``count`` trials (a floating-point tensor) and success probability
    ``prob`` (the same dtype; the two broadcast), drawn with PyTorch's CPU
    algorithms (inversion for fewer than 10 expected successes, Hörmann's BTRS
    otherwise) from ferrotorch's generator. A count ``<= 0`` or a probability
    ``<= 0`` gives 0, a probability ``>= 1`` gives ``count``.

    Args:
        count (Tensor): the number of trials.
        prob (Tensor): the probability of success of each trial.
        generator (Generator, optional): a pseudorandom number generator for sampling.

    Example::

        >>> torch.binomial(torch.tensor([10., 100.]), torch.tensor([0.5, 0.2]))
        tensor([ 4., 23.])
    """
    if not count.is_floating_point():
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_SCALAR_NAMES.get(str(count.dtype).replace('torch.', ''), count.dtype)}")
    return _C._binomial(count, prob, generator)


# ----- binding -----------------------------------------------------------------------

_methods.define("bernoulli", _bernoulli_method)
_methods.define("bernoulli_", _bernoulli_)
_methods.define("multinomial", _multinomial_method)
_methods.define("normal_", _normal_)
_methods.define("uniform_", _uniform_)
_methods.define("exponential_", _exponential_)
_methods.define("log_normal_", _log_normal_)
_methods.define("cauchy_", _cauchy_)
_methods.define("geometric_", _geometric_)
_methods.define("random_", _random_)
for _n, _f in (("bernoulli", _bernoulli_method), ("bernoulli_", _bernoulli_), ("multinomial", _multinomial_method),
               ("normal_", _normal_), ("uniform_", _uniform_), ("exponential_", _exponential_),
               ("log_normal_", _log_normal_), ("cauchy_", _cauchy_), ("geometric_", _geometric_),
               ("random_", _random_)):
    _f.__name__ = _n
