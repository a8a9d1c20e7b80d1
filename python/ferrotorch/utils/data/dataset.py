"""Datasets: the map-style and iterable protocols and their combinators (``torch.utils.data.dataset``)."""

import bisect
import itertools
import math
import warnings

from ... import _C

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
    "ChainDataset", "Subset", "random_split",
]


class Dataset:
    r"""An abstract class representing a :class:`Dataset`.

    All datasets that represent a map from keys to data samples should subclass
    it and overwrite :meth:`__getitem__`; they may overwrite :meth:`__len__`, which
    samplers and the default options of :class:`~ferrotorch.utils.data.DataLoader`
    use, and :meth:`__getitems__` to fetch a whole batch of samples at once.
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):
        return cls


class IterableDataset(Dataset):
    r"""An iterable Dataset: subclasses implement :meth:`__iter__` returning samples.

    With ``num_workers > 0`` each worker process iterates its own copy of the dataset;
    use :func:`~ferrotorch.utils.data.get_worker_info` inside ``__iter__`` to split the
    work, otherwise every worker yields the whole stream.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    r"""Dataset wrapping tensors; sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors (Tensor): tensors that have the same size of the first dimension.
    """

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    r"""Dataset as a stacking of multiple datasets, assembling samples as tuples or dicts.

    Args:
        *args (Dataset): datasets for a tuple-like sample.
        **kwargs (Dataset): datasets for a dict-like sample.

    Example:
        >>> images = ImageDataset()
        >>> texts = TextDataset()
        >>> tuple_stack = StackDataset(images, texts)
        >>> tuple_stack[0] == (images[0], texts[0])
        >>> dict_stack = StackDataset(image=images, text=texts)
        >>> dict_stack[0] == {'image': images[0], 'text': texts[0]}
    """

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or"
                    "``dict``- (via ``kwargs``) like input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            out = [{} for _ in indices]
            for k, d in self.datasets.items():
                items = _fetch_many(d, indices)
                for data, s in zip(items, out):
                    s[k] = data
            return out
        cols = [_fetch_many(d, indices) for d in self.datasets]
        return [tuple(c[i] for c in cols) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(
                "Nested dataset's output size mismatch."
                f" Expected {len(indices)}, got {len(items)}"
            )
        return items
    return [dataset[i] for i in indices]


class ConcatDataset(Dataset):
    r"""Dataset as a concatenation of multiple map-style datasets.

    Args:
        datasets (sequence): List of datasets to be concatenated
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn("cummulative_sizes attribute is renamed to cumulative_sizes", DeprecationWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    r"""Dataset chaining multiple :class:`IterableDataset` s, lazily.

    Args:
        datasets (iterable of IterableDataset): datasets to be chained together
    """

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    r"""Subset of a dataset at specified indices.

    Args:
        dataset (Dataset): The whole Dataset
        indices (sequence): Indices in the whole set selected for subset
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    r"""Randomly split a dataset into non-overlapping new datasets of given lengths.

    If a list of fractions that sum up to 1 is given, the lengths are computed as
    ``floor(frac * len(dataset))`` for each fraction, and the remainder is
    distributed round-robin over the lengths.

    Args:
        dataset (Dataset): Dataset to be split
        lengths (sequence): lengths or fractions of splits to be produced
        generator (Generator): Generator used for the random permutation.

    Example:
        >>> generator1 = ferrotorch.Generator().manual_seed(42)
        >>> random_split(range(10), [3, 7], generator=generator1)
        >>> random_split(range(30), [0.3, 0.3, 0.4], generator=generator1)
    """
    if generator is None:
        from ... import default_generator
        generator = default_generator
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _C.randperm(sum(lengths), generator=generator).tolist()
    out = []
    for offset, length in zip(itertools.accumulate(lengths), lengths):
        out.append(Subset(dataset, indices[offset - length: offset]))
    return out
