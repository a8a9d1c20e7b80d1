"""``DataLoader``: batches from a dataset, in this process or in worker processes."""

import itertools
import math
import multiprocessing as python_multiprocessing
import os
import queue
import weakref
import warnings

from ... import _C
from . import _utils
from ._utils.collate import default_collate, default_convert
from ._utils.worker import (
    ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration, _cleanup_shared, _create_fetcher,
    _sending_through_shared_memory, _worker_loop,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    r"""Yields ``None`` forever: the "indices" of an :class:`IterableDataset`."""

    def __iter__(self):
        while True:
            yield None


def _thread_count():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _default_context():
    # Worker processes are forked from a clean server process, not from this one:
    # ferrotorch's native thread pool does not survive ``fork`` of a process that has
    # already used it, so plain ``fork`` would hang the first parallel op in a worker.
    if "forkserver" not in python_multiprocessing.get_all_start_methods():
        return python_multiprocessing.get_context("spawn")  # Windows
    ctx = python_multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["ferrotorch"])
    return ctx


class DataLoader:
    r"""Combines a dataset and a sampler, and provides an iterable over the given dataset.

    Supports map-style and iterable-style datasets, single- or multi-process loading,
    customizing loading order and optional automatic batching (collation), as
    ``torch.utils.data.DataLoader`` does.

    Args:
        dataset (Dataset): dataset from which to load the data.
        batch_size (int, optional): how many samples per batch to load (default: ``1``).
        shuffle (bool, optional): set to ``True`` to have the data reshuffled at every epoch (default: ``False``).
        sampler (Sampler or Iterable, optional): defines the strategy to draw samples from the dataset.
            If specified, :attr:`shuffle` must not be specified.
        batch_sampler (Sampler or Iterable, optional): like :attr:`sampler`, but returns a batch of
            indices at a time. Mutually exclusive with :attr:`batch_size`, :attr:`shuffle`,
            :attr:`sampler`, and :attr:`drop_last`.
        num_workers (int, optional): how many subprocesses to use for data loading. ``0`` means that
            the data will be loaded in the main process. (default: ``0``)
        collate_fn (Callable, optional): merges a list of samples to form a mini-batch of Tensor(s).
        pin_memory (bool, optional): accepted; ferrotorch has no pinned memory, so it changes nothing.
        drop_last (bool, optional): drop the last incomplete batch (default: ``False``)
        timeout (numeric, optional): if positive, the timeout value for collecting a batch from
            workers. Should always be non-negative. (default: ``0``)
        worker_init_fn (Callable, optional): called in each worker with its id, after seeding and
            before data loading. (default: ``None``)
        multiprocessing_context (str or multiprocessing.context.BaseContext, optional): start method
            of the workers; the default is ``'forkserver'`` (see the note below).
        generator (Generator, optional): used by RandomSampler to generate random indexes and by
            multiprocessing to generate ``base_seed`` for workers. (default: ``None``)
        prefetch_factor (int, optional, keyword-only arg): number of batches loaded in advance by
            each worker. (default: ``None`` for ``num_workers == 0``, else ``2``)
        persistent_workers (bool, optional): keep the worker processes alive after a dataset has
            been consumed once. (default: ``False``)
        pin_memory_device (str, optional): accepted and ignored.
        in_order (bool, optional): ``False`` lets batches arrive in completion order.

    .. note:: Workers start with the ``forkserver`` method by default, not ``fork``:
              the dataset, ``collate_fn`` and ``worker_init_fn`` must be picklable (defined at
              module level), and scripts need the ``if __name__ == "__main__":`` guard, as with
              PyTorch on macOS and Windows. Pass ``multiprocessing_context="fork"`` only if this
              process has not run any tensor operation yet.
    """

    _DataLoader__initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                    f"batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError(
                    "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
                )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._DataLoader__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start method in "
                            f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = python_multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading (num_workers > 0), but "
                    f"got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self._DataLoader__initialized and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns when more workers are requested than this process may use CPUs."""
        if not self.num_workers:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
            checked = True
        except AttributeError:
            cpus = os.cpu_count()
            checked = False
        if cpus is None or self.num_workers > cpus:
            suggest = (
                f"Our suggested max number of worker in current system is {cpus}"
                f"{'' if checked else ' (`cpuset` is not taken into account)'}, which is smaller than what "
                "this DataLoader is going to create."
            ) if cpus is not None else "DataLoader is not able to compute a suggested max number of worker in current system."
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. {suggest} "
                "Please be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                "lower the worker number to avoid potential slowness/freeze if necessary.",
                stacklevel=2,
            )


def _stop_and_clean(workers, startup_files):
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=1.0)
        _cleanup_shared(w.pid)
    for path in startup_files:
        try:
            os.unlink(path)
        except OSError:
            pass


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._shared_seed = None
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the device,"
                f"ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=3,
            )
        if loader.pin_memory:
            # ferrotorch has no accelerator to pin memory for.
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(_C.randint(0, 2**62, (), dtype=_C.int64, generator=loader.generator).item()) \
            if loader.generator is not None else int(_C.randint(0, 2**62, (), dtype=_C.int64).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly configuring the "
                    "IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = _create_fetcher(self._dataset_kind == _DatasetKind.Iterable, self._dataset,
                                                self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    r"""Workers take (task id, indices) from their own index queue and put (task id, batch)
    on one shared result queue; batches are handed out in task order, at most
    ``prefetch_factor * num_workers`` tasks outstanding."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or _default_context()
        if ctx.get_start_method() == "fork" and _thread_count() > 1:
            warnings.warn(
                "DataLoader workers started with 'fork' from a process that runs other threads (such as "
                "ferrotorch's thread pool after a large tensor operation): a parallel tensor operation in a "
                "worker may hang. Use multiprocessing_context='forkserver' (the default) or 'spawn'.",
                stacklevel=3,
            )
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._worker_pids_set = False
        self._shutdown = False
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._startup_files = []
        is_iterable = self._dataset_kind == _DatasetKind.Iterable
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_worker_loop,
                args=(is_iterable, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, self._worker_init_fn, i, self._num_workers, self._persistent_workers),
            )
            w.daemon = True
            with _sending_through_shared_memory(self._startup_files):
                w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._data_queue = self._worker_result_queue
        # Runs at shutdown, on garbage collection or at interpreter exit, whichever is first:
        # batches still in flight must not leave files behind in /dev/shm.
        self._finalizer = weakref.finalize(self, _stop_and_clean, self._workers, self._startup_files)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True for _ in range(self._num_workers)]
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration(self._shared_seed))
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=_utils.MP_STATUS_CHECK_INTERVAL):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = []
            for wid, w in enumerate(self._workers):
                if self._workers_status[wid] and not w.is_alive():
                    failed.append(w)
                    self._mark_worker_as_unavailable(wid)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)

            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for wid in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[wid]:
                    self._mark_worker_as_unavailable(wid, shutdown=True)
            for w in self._workers:
                w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            if getattr(self, "_finalizer", None) is not None:
                self._finalizer()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
