"""Argument checks for MixtureSameFamily."""


def _check_mixture(mixture_distribution, component_distribution, categorical_cls):
    if not isinstance(mixture_distribution, categorical_cls):
        raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
    from .distribution import Distribution

    if not isinstance(component_distribution, Distribution):
        raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
    mdbs = tuple(mixture_distribution.batch_shape)
    cdbs = tuple(component_distribution.batch_shape)[:-1]
    for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
        if size1 != 1 and size2 != 1 and size1 != size2:
            raise ValueError(
                f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                f"`component_distribution.batch_shape`({cdbs})"
            )
    km = mixture_distribution.logits.shape[-1]
    kc = component_distribution.batch_shape[-1]
    if km is not None and kc is not None and km != kc:
        raise ValueError(
            f"`mixture_distribution component` ({km}) does not equal `component_distribution.batch_shape[-1]` ({kc})"
        )
