"""``ferrotorch.nn.functional``."""


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (2-D inputs go through ``addmm`` as in PyTorch)."""
    if input.dim() == 2 and bias is not None:
        return bias.addmm(input, weight.t())
    out = input.matmul(weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input, inplace=False):
    """Rectified linear unit."""
    return input.relu()
