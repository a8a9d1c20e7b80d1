"""What runs inside a DataLoader worker process, and how tensors cross the process boundary."""

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from .... import _C
from ....multiprocessing import reductions as _reductions
from ....multiprocessing.reductions import _cleanup_shared, _sending_through_shared_memory  # noqa: F401

MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass(frozen=True)
class WorkerInfo:
    """Information about the current DataLoader worker process.

    Attributes:
        id: The current worker id (0 to num_workers - 1)
        num_workers: Total number of workers
        seed: Random seed set for this worker
        dataset: Copy of the dataset object in this worker
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    r"""Returns the information about the current DataLoader worker process:
    a :class:`WorkerInfo` with ``id``, ``num_workers``, ``seed`` and ``dataset`` (this
    process's copy), or ``None`` when called in the main process.
    """
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: object = None


class KeyErrorMessage(str):
    r"""str subclass that returns itself in repr, so a KeyError's message keeps its newlines."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    r"""Carries an exception and its formatted traceback from a worker to the main process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception




# ---------------------------------------------------------------------------------------------
# fetchers
# ---------------------------------------------------------------------------------------------


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---------------------------------------------------------------------------------------------
# the worker loop
# ---------------------------------------------------------------------------------------------


def _seed_worker(seed, worker_id, base_seed):
    random.seed(seed)
    _C.manual_seed(seed)
    ss = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0])
    np.random.seed(ss.generate_state(4))


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers):
    global _worker_info
    try:
        _reductions.send_big_tensors_through_shared_files()
        seed = base_seed + worker_id
        _seed_worker(seed, worker_id, base_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                try:
                    fetcher = _create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            try:
                data_queue.put((idx, data))
            except Exception:
                # The batch itself could not be pickled: report that instead.
                data_queue.put((idx, ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
