"""``ExponentialFamily``: base for distributions of the form
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))."""

import ferrotorch as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""ExponentialFamily is the abstract base class for probability distributions belonging
    to an exponential family. Subclasses provide ``_natural_params``, ``_log_normalizer``
    and ``_mean_carrier_measure``; the entropy and KL divergence between members of the same
    family then follow from the Bregman divergence of the log normalizer.
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """Entropy via the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with torch.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
