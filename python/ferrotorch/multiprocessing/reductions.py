"""Pickling of tensors between processes (registered with multiprocessing's ForkingPickler).

- A tensor whose storage is in shared memory (:meth:`Tensor.share_memory_`) travels as a
  duplicate of its storage's file descriptor, so the receiving process maps the same pages
  and sees every later write (PyTorch's ``file_descriptor`` sharing strategy).
- Any other tensor travels by value: through the pipe, or, from a DataLoader worker (see
  :func:`send_big_tensors_through_shared_files`), as a file in ``/dev/shm`` that the
  receiver maps and unlinks.
"""

import os
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .. import _C
from .._tensor_class import Tensor


def _rebuild_shared_fd(dup, nbytes, dtype, size, stride, offset, requires_grad):
    t = _C._tensor_from_shared_fd(dup.detach(), nbytes, dtype, size, stride, offset)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_shared_tensor(t):
    """``__reduce__`` for a tensor in shared memory: its descriptor, layout and flags."""
    fd, nbytes = t._shared_fd()
    return (_rebuild_shared_fd, (DupFd(fd), nbytes, t.dtype, list(t.shape), list(t.stride()),
                                 t.storage_offset(), t.requires_grad))


def send_big_tensors_through_shared_files():
    """Called in a DataLoader worker: big tensors it sends travel as files in /dev/shm."""
    global _SHARED_DIR
    _SHARED_DIR = _pick_shared_dir()


def _rebuild_tensor(arr, dtype_name, requires_grad):
    t = _C.from_numpy(arr)
    if dtype_name == "bfloat16":
        t = t.view(_C.bfloat16)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_shared(path, np_dtype, shape, dtype_name, requires_grad):
    # The file is mapped, then its name removed: the mapping lives as long as the tensor
    # and nothing is left behind in /dev/shm.
    try:
        arr = np.memmap(path, dtype=np.dtype(np_dtype), mode="r+", shape=tuple(shape))
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return _rebuild_tensor(arr, dtype_name, requires_grad)


# Set in worker processes: batches bigger than this travel through a file in /dev/shm
# (one copy in, mapped on the other side) instead of through the pipe.
_SHARED_DIR = None
_SHARED_MIN_BYTES = 1 << 15
_shared_counter = 0


def _shared_prefix(pid):
    return os.path.join(_SHARED_DIR or "/dev/shm", f"ferrotorch_dl_{pid}_")


_created = None  # while not None, paths written by _write_shared are also recorded here


def _write_shared(arr):
    global _shared_counter
    _shared_counter += 1
    path = f"{_shared_prefix(os.getpid())}{_shared_counter}"
    with open(path, "wb") as f:
        f.write(memoryview(arr).cast("B"))
    if _created is not None:
        _created.append(path)
    return path


class _sending_through_shared_memory:
    """While active in the main process, big tensors pickled for a starting worker (the
    dataset, ``collate_fn`` ...) travel as /dev/shm files too; the paths are recorded so
    that files of a worker that never read them can be removed at shutdown."""

    def __init__(self, created):
        self.created = created

    def __enter__(self):
        global _SHARED_DIR, _created
        self._saved = (_SHARED_DIR, _created)
        _SHARED_DIR = _pick_shared_dir()
        _created = self.created

    def __exit__(self, *exc):
        global _SHARED_DIR, _created
        _SHARED_DIR, _created = self._saved


def reduce_tensor(t):
    """``__reduce__`` of a tensor sent to another process."""
    if t.is_shared():
        # Already in shared memory: send a handle to the same pages, not a copy.
        return reduce_shared_tensor(t)
    d = t.detach().resolve_conj()  # the values: a conjugate view travels resolved
    if d.device.type != "cpu":
        d = d.cpu()
    d = d.contiguous()
    name = str(d.dtype).rsplit(".", 1)[-1]
    arr = d.view(_C.int16).numpy() if name == "bfloat16" else d.numpy()
    if _SHARED_DIR is not None and arr.nbytes >= _SHARED_MIN_BYTES:
        try:
            path = _write_shared(np.ascontiguousarray(arr))
            return (_rebuild_shared, (path, arr.dtype.str, arr.shape, name, t.requires_grad))
        except OSError:
            pass
    return (_rebuild_tensor, (arr, name, t.requires_grad))


def _cleanup_shared(pid):
    """Removes files a (finished) worker left in /dev/shm for batches nobody received."""
    import glob
    for path in glob.glob(_shared_prefix(pid) + "*"):
        try:
            os.unlink(path)
        except OSError:
            pass


def _pick_shared_dir():
    d = "/dev/shm"
    return d if os.path.isdir(d) and os.access(d, os.W_OK) else None


ForkingPickler.register(Tensor, reduce_tensor)


def _reduce_parameter(p):
    # The data goes through reduce_tensor (shared pages stay shared); the class and flag
    # are rebuilt around it.
    return (type(p), (p.detach(), p.requires_grad))


def _register_parameter():
    from ..nn.parameter import Parameter
    ForkingPickler.register(Parameter, _reduce_parameter)


_register_parameter()
