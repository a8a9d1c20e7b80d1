"""Tensor methods PyTorch has removed but still defines, so that old code gets
its explanation of what replaces them: ``reinforce``, ``symeig``, ``eig``,
``lstsq`` and ``solve`` raise PyTorch's RuntimeError with its text.
"""

from . import _tensor_methods as _methods


def _reinforce(self, reward):
    """Removed in PyTorch; raises its error pointing at ``torch.distributions``."""
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\n"
        "See https://pytorch.org/docs/main/distributions.html\n\n"
        "Instead of:\n\nprobs = policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
        "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
        "# NOTE: categorical is equivalent to what used to be called multinomial\nm = torch.distributions."
        "Categorical(probs)\naction = m.sample()\nnext_state, reward = env.step(action)\nloss = "
        "-m.log_prob(action) * reward\nloss.backward()\n"
    )


def _symeig(self, eigenvectors=False):
    """Removed in PyTorch 1.9; raises its error naming the ``torch.linalg`` replacement."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. The default behavior has changed from using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


def _eig(self, eigenvectors=False):
    """Removed in PyTorch 1.9; raises its error naming the ``torch.linalg`` replacement."""
    raise RuntimeError(
        'This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)'
    )


def _lstsq(self, other):
    """Removed in PyTorch 1.9; raises its error naming the ``torch.linalg`` replacement."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the returned tuple (although it returns other information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution"
    )


def _solve(self, other):
    """Removed in PyTorch 1.9; raises its error naming the ``torch.linalg`` replacement."""
    raise RuntimeError(
        'This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)'
    )


_methods.define("reinforce", _reinforce)
_methods.define("symeig", _symeig)
_methods.define("eig", _eig)
_methods.define("lstsq", _lstsq)
_methods.define("solve", _solve)
