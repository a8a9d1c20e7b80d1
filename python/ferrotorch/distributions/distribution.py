"""``Distribution``: the abstract base class of all probability distributions."""

import warnings

import ferrotorch as torch

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _size(shape):
    return torch.Size(tuple(shape))


class Distribution:
    r"""Distribution is the abstract base class for probability distributions.

    Args:
        batch_shape (torch.Size): The shape over which parameters are batched.
        event_shape (torch.Size): The shape of a single sample (without batching).
        validate_args (bool, optional): Whether to validate arguments. Default: None.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether validation is enabled or disabled (default: ``__debug__``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=torch.Size(), event_shape=torch.Size(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                    "or initialize the distribution with `validate_args=False` to turn off validation."
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {repr(self)} to satisfy the constraint {repr(constraint)}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """Returns a new distribution with batch dimensions expanded to ``batch_shape``.

        Parameters are expanded views, so no new memory is allocated.
        """
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Maps each argument name to the :class:`Constraint` it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """A :class:`Constraint` describing the support of this distribution."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=torch.Size()):
        """Generates a ``sample_shape`` shaped sample (or batch of samples)."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        """Generates a ``sample_shape`` shaped reparameterized sample."""
        raise NotImplementedError

    def sample_n(self, n):
        """Generates ``n`` samples (deprecated: use ``sample((n,))``)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        """Returns the log of the probability density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """Returns the cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """Returns the inverse cumulative density/mass function evaluated at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Returns a tensor containing all values supported by a discrete distribution."""
        raise NotImplementedError

    def entropy(self):
        """Returns the entropy of the distribution, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """Returns the perplexity ``exp(entropy)``, batched over ``batch_shape``."""
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=torch.Size()):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(tuple(sample_shape))
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual = value.size()
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(tuple(actual)), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {torch.Size(expected)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                "the distribution with `validate_args=False` to turn off validation."
            )
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({repr(support)}) "
                f"of the distribution {repr(self)}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names
        )
        return self.__class__.__name__ + "(" + args + ")"


def _expand_params(dist, cls, batch_shape, names, _instance=None, event_shape=None):
    """Shared ``expand``: broadcasts each named parameter to ``batch_shape`` (+ its event dims)."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = torch.Size(tuple(batch_shape))
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            trailing = tuple(value.shape[len(dist.batch_shape):])
            setattr(new, name, value.expand(tuple(batch_shape) + trailing))
    Distribution.__init__(
        new, batch_shape, dist.event_shape if event_shape is None else event_shape, validate_args=False
    )
    new._validate_args = dist._validate_args
    return new
