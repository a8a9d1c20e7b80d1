"""Anomaly detection switches (``detect_anomaly``, ``set_detect_anomaly``)."""

_enabled = False


def is_anomaly_enabled():
    """Is anomaly detection on?"""
    return _enabled


class detect_anomaly:
    """Context manager enabling anomaly detection in the block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        global _enabled
        self._prev = _enabled
        _enabled = True

    def __exit__(self, *exc):
        global _enabled
        _enabled = self._prev
        return False


class set_detect_anomaly:
    """Sets anomaly detection on or off (also usable as a context manager)."""

    def __init__(self, mode, check_nan=True):
        global _enabled
        self._prev = _enabled
        _enabled = bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        global _enabled
        _enabled = self._prev
        return False
