"""``ferrotorch.func``: composable function transforms (grad, vjp, jvp, jacobians, vmap).

The transforms run on ferrotorch's reverse-mode autograd: forward-mode products use the
double-vjp trick and ``vmap`` runs the function per batch entry (see each module's notes).
"""

from ._eager import debug_unwrap, functionalize
from ._forward import jvp, linearize
from ._jacobians import hessian, jacfwd, jacrev
from ._modules import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._rearrange import rearrange
from ._reverse import grad, grad_and_value, vjp
from ._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vmap",
    "replace_all_batch_norm_modules_",
    "functionalize",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "vjp",
    "functional_call",
    "stack_module_state",
    "debug_unwrap",
]
