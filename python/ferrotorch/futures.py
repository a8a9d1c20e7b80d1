"""``torch.futures``: a ``Future`` holds the eventual result of an asynchronous
computation (``torch.jit.fork``, RPC); ``then``/``add_done_callback`` chain work
on it and ``collect_all``/``wait_all`` join several.

ferrotorch runs everything eagerly on the calling thread, so ``fork`` returns a
completed future; a ``Future`` made by hand is completed by ``set_result`` or
``set_exception`` from any thread, and ``wait`` blocks until then.
"""

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    r"""A placeholder for a value that becomes available later.

    Args:
        devices (list of int, str or torch.device, optional): devices the
            value's tensors may live on. Only CPU exists here, which PyTorch
            (and so ferrotorch) does not list: a CPU device is rejected.
    """

    def __init__(self, devices=None):
        for d in devices or ():
            raise ValueError(f"Expected devices to have indices, got {d}")
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def __repr__(self):
        return f"<ferrotorch.Future object at {hex(id(self))}>"

    def done(self):
        """Whether the future holds its value (or an error)."""
        with self._cond:
            return self._done

    def wait(self):
        """Blocks until the future completes, then returns its value or raises its error."""
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        return self.value()

    def value(self):
        """The value of a completed future (raising the error it completed with).
        A future that is not completed raises ``RuntimeError``."""
        with self._cond:
            if not self._done:
                raise RuntimeError("Future.value() called on a Future that is not completed; call wait() instead")
            if self._error is not None:
                raise self._error
            return self._value

    def _complete(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future "
                                   "can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """Completes the future with ``result``, waking its waiters and running its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Completes the future with the exception ``result``: ``wait``/``value`` raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback):
        """Runs ``callback(self)`` when the future completes (now, if it has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new future completed with ``callback(self)`` once this one completes;
        an error raised by ``callback`` completes it with a ``RuntimeError``."""
        child = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - the callback's error is the child's result
                child.set_exception(RuntimeError(
                    f"Got the following error when running the callback: {type(e).__name__}: {e}"))
                return
            child.set_result(result)

        self.add_done_callback(run)
        return child


def collect_all(futures):
    """A future completed, once every future of ``futures`` has, with that list of futures."""
    futures = list(futures)
    out = Future()
    if not futures:
        out.set_result([])
        return out
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Waits for every future and returns their values (raising the first error)."""
    return [f.wait() for f in futures]
