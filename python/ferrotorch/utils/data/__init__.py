"""``ferrotorch.utils.data``: datasets, samplers and the DataLoader, as ``torch.utils.data``."""

from .dataset import (  # noqa: F401
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split,
)
from .sampler import (  # noqa: F401
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)
from .distributed import DistributedSampler  # noqa: F401
from ._utils.collate import default_collate, default_convert  # noqa: F401
from ._utils.worker import get_worker_info  # noqa: F401
from .dataloader import DataLoader, _DatasetKind  # noqa: F401
from ._decorator import argument_validation  # noqa: F401

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "argument_validation", "default_collate",
    "default_convert",
    "get_worker_info", "random_split",
]
