"""``ferrotorch.optim``: optimizers and learning-rate schedulers."""

from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from ._adafactor import Adafactor  # noqa: F401
from ._muon import Muon  # noqa: F401
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401

__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "swap_in_optimizer_params_and_state"]
