"""``ferrotorch.utils.backcompat``: PyTorch's switches for warnings about
pre-0.2 broadcasting and ``keepdim`` behaviour. Off by default; ferrotorch
always follows the current semantics, so turning them on issues nothing."""


class Warning:
    """One backward-compatibility warning switch (``enabled``)."""

    def __init__(self, setter, getter):
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value):
        self.setter(value)

    def get_enabled(self):
        return self.getter()

    enabled = property(get_enabled, set_enabled)


_flags = {"broadcast": False, "keepdim": False}


def _set_backcompat_broadcast_warn(value):
    _flags["broadcast"] = bool(value)


def _get_backcompat_broadcast_warn():
    return _flags["broadcast"]


def _set_backcompat_keepdim_warn(value):
    _flags["keepdim"] = bool(value)


def _get_backcompat_keepdim_warn():
    return _flags["keepdim"]


broadcast_warning = Warning(_set_backcompat_broadcast_warn, _get_backcompat_broadcast_warn)
keepdim_warning = Warning(_set_backcompat_keepdim_warn, _get_backcompat_keepdim_warn)
