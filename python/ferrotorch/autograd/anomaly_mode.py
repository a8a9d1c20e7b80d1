"""Anomaly detection (``detect_anomaly``, ``set_detect_anomaly``).

In anomaly mode every recorded node remembers the Python traceback of its
forward call; a backward that fails or returns NaN raises PyTorch's error and
warns with that traceback. The switch is process-wide, as in PyTorch.
"""

import functools
import warnings

from .. import _C


def is_anomaly_enabled():
    """Is anomaly detection on?"""
    return _C.is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    """Does anomaly detection check gradients for NaN?"""
    return _C.is_anomaly_check_nan_enabled()


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection in the block."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off now (also usable as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False
