"""Stochastic weight averaging: ``AveragedModel`` (SWA/EMA), ``SWALR`` and ``update_bn``."""

import itertools
import math
import warnings

from .. import _C
from ._common import _lerp_
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _ft():
    import ferrotorch

    return ferrotorch


from ..autograd.grad_mode import no_grad as _no_grad  # noqa: E402


def _no_grad_fn(fn):
    def wrapper(*args, **kwargs):
        with _no_grad():
            return fn(*args, **kwargs)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _is_float(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """Returns an in-place exponential-moving-average update over lists of tensors."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @_no_grad_fn
    def ema_update(ema_param_list, current_param_list, _):
        if _is_float(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                _lerp_(p_ema, p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """Returns an in-place running-mean (SWA) update over lists of tensors."""

    @_no_grad_fn
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _is_float(averaged_param_list[0]):
            w = 1 / (num_averaged + 1)
            w = w.item() if isinstance(w, _C.TensorBase) else w
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                _lerp_(p_avg, p_model, w)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, _C.TensorBase):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """Returns a function computing the exponential moving average of one parameter."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @_no_grad_fn
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Returns a function computing the running (SWA) mean of one parameter."""

    @_no_grad_fn
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _module_base():
    from ..nn.modules import Module

    return Module


class AveragedModel(_module_base()):
    r"""Implements averaged model for Stochastic Weight Averaging (SWA) and Exponential Moving Average (EMA).

    Keeps a copy of ``model`` whose parameters are the running average (or ``avg_fn`` /
    ``multi_avg_fn`` average) of the parameters passed to :meth:`update_parameters`.

    Args:
        model (torch.nn.Module): model to use with SWA/EMA
        device (torch.device, optional): if provided, the averaged model will be stored on the ``device``
        avg_fn (function, optional): the averaging function used to update parameters
        multi_avg_fn (function, optional): the averaging function used to update parameters inplace
        use_buffers (bool): if ``True``, it will compute running averages for both the parameters
            and the buffers of the model. (default: ``False``)
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        from ..nn.utils.fusion import _copy_module

        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = _copy_module(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _ft().tensor(0, dtype=_ft().int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Runs the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Folds ``model``'s current parameters (and buffers with ``use_buffers``) into the average."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers()) if self.use_buffers
                       else model.parameters())
        self_detached, model_detached = [], []
        copy_param = int(self.n_averaged) == 0
        with _no_grad():
            for p_avg, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach()
                self_detached.append(p_avg.detach())
                model_detached.append(p_model_)
                if copy_param:
                    p_avg.detach().copy_(p_model_)
            if int(self.n_averaged) > 0:
                if self.multi_avg_fn is not None:
                    # Grouped by dtype, as PyTorch groups by (device, dtype).
                    groups = {}
                    for a, b in zip(self_detached, model_detached):
                        groups.setdefault(a.dtype, ([], []))
                        groups[a.dtype][0].append(a)
                        groups[a.dtype][1].append(b)
                    for avg_list, model_list in groups.values():
                        self.multi_avg_fn(avg_list, model_list, self.n_averaged)
                else:
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_avg, p_model in zip(self_detached, model_detached):
                        p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
            if not self.use_buffers:
                # Buffers (e.g. BatchNorm statistics) follow the latest model.
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    r"""Updates BatchNorm running_mean, running_var buffers in the model.

    It performs one pass over data in ``loader`` to estimate the activation statistics
    for BatchNorm layers in the model (a cumulative average over the batches).

    Args:
        loader (torch.utils.data.DataLoader): dataset loader to compute the
            activation statistics on. Each data batch should be either a
            tensor, or a list/tuple whose first element is a tensor
            containing data.
        model (torch.nn.Module): model for which we seek to update BatchNorm statistics.
        device (torch.device, optional): If set, data will be transferred to
            :attr:`device` before being passed into :attr:`model`.
    """
    from ..nn.modules import _BatchNorm

    with _no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                if hasattr(module, "reset_running_stats"):
                    module.reset_running_stats()
                elif module.track_running_stats:
                    module.running_mean.zero_()
                    module.running_var.fill_(1)
                    module.num_batches_tracked.zero_()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            # A cumulative average: the n-th batch gets weight 1/n (PyTorch's momentum=None).
            for module in momenta:
                if module.track_running_stats:
                    module.momentum = 1.0 / (float(module.num_batches_tracked) + 1.0)
            model(input)
        for module, m in momenta.items():
            module.momentum = m
        model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneals the learning rate in each parameter group to a fixed value.

    Args:
        optimizer (torch.optim.Optimizer): wrapped optimizer
        swa_lr (float or list): the learning rate value for all param groups together or separately for each group.
        anneal_epochs (int): number of epochs in the annealing phase (default: 10)
        anneal_strategy (str): "cos" or "linear"; specifies the annealing strategy (default: "cos")
        last_epoch (int): the index of the last epoch (default: -1)
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """Computes the learning rate of each param group."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # Recover the rate the schedule started from, then move a fraction alpha toward swa_lr.
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Returns the scheduler's state (without the annealing function)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Loads the scheduler's state."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
