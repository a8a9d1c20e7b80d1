"""``ferrotorch.nn``: modules, parameters, functional layers and losses."""

from .parameter import Parameter  # noqa: F401
from .modules import (  # noqa: F401
    Module, Sequential, ModuleList, Identity, Linear, Conv2d, BatchNorm1d, BatchNorm2d, LayerNorm,
    Embedding, Dropout, Flatten, MaxPool2d, AvgPool2d, ReLU, Sigmoid, Tanh, GELU, SiLU, LeakyReLU,
    Softmax, LogSoftmax, MSELoss, L1Loss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
)
from . import functional  # noqa: F401
from . import init  # noqa: F401
