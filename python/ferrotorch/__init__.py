"""ferrotorch: a PyTorch-compatible tensor library with a Rust core.

Use it as ``import ferrotorch as torch``.
"""

from . import _C
from ._C import (  # noqa: F401
    dtype,
    device,
    Generator,
    UntypedStorage,
    OutOfMemoryError,
    tensor,
    as_tensor,
    from_numpy,
    from_dlpack,
    zeros,
    ones,
    empty,
    full,
    zeros_like,
    ones_like,
    empty_like,
    full_like,
    rand_like,
    randn_like,
    arange,
    linspace,
    logspace,
    eye,
    rand,
    randn,
    randint,
    randperm,
    normal,
    manual_seed,
    initial_seed,
    get_num_threads,
    set_num_threads,
    get_default_dtype,
    set_default_dtype,
    promote_types,
    can_cast,
    result_type,
    memory_allocated,
    max_memory_allocated,
    memory_reserved,
    max_memory_reserved,
    reset_peak_memory_stats,
    empty_cache,
    memory_stats,
    is_grad_enabled,
)
from . import _panic_guard
_panic_guard.install()
from ._size import Size  # noqa: F401
from ._dtypes import *  # noqa: F401,F403
from ._dtypes import layout, strided  # noqa: F401
from . import _tensor  # noqa: F401  (declares the Python half of Tensor)
from ._tensor_str import set_printoptions, get_printoptions  # noqa: F401
from ._functional import *  # noqa: F401,F403
from ._math_ops import *  # noqa: F401,F403
from ._math_ops import return_types  # noqa: F401
from ._special_ops import *  # noqa: F401,F403
from ._shape_ops import *  # noqa: F401,F403
from ._random_ops import *  # noqa: F401,F403
from ._memory_format import *  # noqa: F401,F403
from ._stacking import *  # noqa: F401,F403
from ._view_copies import *  # noqa: F401,F403
from ._diag_ops import *  # noqa: F401,F403
from ._nan_reductions import *  # noqa: F401,F403
from ._histogram import *  # noqa: F401,F403
from ._calculus import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._index_ops import *  # noqa: F401,F403
from ._tensor_factories import *  # noqa: F401,F403
from ._inplace_views import *  # noqa: F401,F403
from ._tensor_predicates import *  # noqa: F401,F403
from ._complex import *  # noqa: F401,F403
from ._tensor_compat import *  # noqa: F401,F403
from ._legacy_types import *  # noqa: F401,F403
from ._global_state import *  # noqa: F401,F403
from ._windows import *  # noqa: F401,F403
from ._inplace_functions import *  # noqa: F401,F403
from ._symbolic import *  # noqa: F401,F403
from ._control_flow import *  # noqa: F401,F403
from . import futures  # noqa: F401
from ._streams import *  # noqa: F401,F403
from ._jit_types import *  # noqa: F401,F403
from ._schema import *  # noqa: F401,F403
from ._benchmark import *  # noqa: F401,F403
from . import cpu  # noqa: F401
from . import _removed_methods  # noqa: F401  (Tensor methods PyTorch removed, with its errors)
from . import linalg  # noqa: F401
from ._linalg_aliases import *  # noqa: F401,F403
from ._householder_qr import *  # noqa: F401,F403
from ._lobpcg import *  # noqa: F401,F403
from ._spectral import stft, istft  # noqa: F401
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: F401
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: F401
from ._nn_aliases import *  # noqa: F401,F403 - ATen's top-level forms of the nn ops
# Every module that declares Tensor methods is imported above; the class is built here.
from ._tensor_class import Tensor  # noqa: F401
from . import special  # noqa: F401
from . import fft  # noqa: F401
from . import cuda  # noqa: F401
from . import autograd  # noqa: F401
from . import nn  # noqa: F401
from .nn._losses import (  # noqa: F401 - also top-level in PyTorch
    cosine_similarity, pairwise_distance, pdist, bilinear, channel_shuffle, native_channel_shuffle,
)
from . import optim  # noqa: F401
from . import amp  # noqa: F401
from . import utils  # noqa: F401
from . import backends  # noqa: F401
from . import functional  # noqa: F401
from .amp import is_autocast_enabled, autocast, GradScaler  # noqa: F401
from .amp.autocast_mode import (  # noqa: F401
    get_autocast_dtype, set_autocast_enabled, set_autocast_dtype, is_autocast_cpu_enabled,
    set_autocast_cpu_enabled, get_autocast_cpu_dtype, set_autocast_cpu_dtype, get_autocast_gpu_dtype,
    set_autocast_gpu_dtype, is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype, set_autocast_ipu_dtype,
    is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype, set_autocast_xla_dtype,
)
from ._finfo import finfo, iinfo  # noqa: F401

__version__ = "0.1.0"

from . import random  # noqa: F401
from .random import default_generator, seed, get_rng_state, set_rng_state, manual_seed, initial_seed  # noqa: F401,F811
from .random import thread_safe_generator  # noqa: F401


def is_tensor(obj):
    """True if ``obj`` is a ferrotorch tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """True if the tensor's dtype is a floating-point type."""
    return input.is_floating_point()


def numel(input):
    """Number of elements of ``input``."""
    return input.numel()


def __getattr__(name):
    # ``ops`` and ``profiler`` load on first use so ``import ferrotorch`` stays lean.
    if name == "ops":
        from ._ops import ops
        globals()["ops"] = ops
        return ops
    if name == "profiler":
        import importlib
        return importlib.import_module(".profiler", __name__)
    if name in ("func", "testing", "distributions"):
        # Loaded on first use so ``import ferrotorch`` stays lean (PyTorch imports them eagerly).
        import importlib
        return importlib.import_module("." + name, __name__)
    if name == "vmap":
        from .func import vmap
        globals()["vmap"] = vmap
        return vmap
    if name in ("PyTorchFileWriter", "PyTorchFileReader"):
        # Loaded on first use with serialization's record writer (which needs NumPy).
        from . import _zip_archive
        return getattr(_zip_archive, name)
    if name in ("serialization", "save", "load"):
        # Loaded on first use: serialization needs NumPy, which ``import ferrotorch`` avoids.
        import importlib
        mod = importlib.import_module(".serialization", __name__)
        return mod if name == "serialization" else getattr(mod, name)
    raise AttributeError(f"module 'ferrotorch' has no attribute '{name}'")


def __dir__():
    # The lazily loaded names are part of the namespace too.
    return sorted(set(globals()) | {"ops", "profiler", "serialization", "save", "load", "func", "testing", "vmap", "distributions"})
