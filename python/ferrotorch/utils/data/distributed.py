"""``DistributedSampler``: each of ``num_replicas`` processes sees its own slice of the dataset."""

import math

from ... import _C
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    r"""Sampler that restricts data loading to a subset of the dataset.

    Each process (``rank``) of ``num_replicas`` gets every ``num_replicas``-th index of a
    (shuffled, padded) index list, so the processes see disjoint parts of equal size.
    Call :meth:`set_epoch` before each epoch so that shuffling differs between epochs.

    Args:
        dataset: Dataset used for sampling.
        num_replicas (int, optional): Number of processes participating in distributed training.
        rank (int, optional): Rank of the current process within :attr:`num_replicas`.
        shuffle (bool, optional): If ``True`` (default), sampler will shuffle the indices.
        seed (int, optional): random seed used to shuffle the sampler if :attr:`shuffle=True`.
        drop_last (bool, optional): if ``True``, drop the tail of the data to make it evenly
            divisible across the number of replicas; otherwise pad by repeating indices.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            # ferrotorch has no process group to ask: both must be given.
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = _C.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _C.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        indices = indices[self.rank: self.total_size: self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        r"""Sets the epoch for this sampler; with ``shuffle=True`` each epoch gets its own order."""
        self.epoch = epoch
