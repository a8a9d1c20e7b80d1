"""``ferrotorch.nn.functional``."""


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    out = input.matmul(weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input, inplace=False):
    """Rectified linear unit."""
    return input.relu()
