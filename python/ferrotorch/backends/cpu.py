"""``backends.cpu``: facts about the CPU backend."""


def get_cpu_capability():
    """The vector instruction set the CPU kernels dispatch to: ferrotorch's are built
    for the target's baseline, PyTorch's ``"DEFAULT"``."""
    return "DEFAULT"
